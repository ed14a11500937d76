/**
 * The fingerprint of the files a cleanup preview looked at, so that `cleanup.run` runs exactly what
 * was previewed: for every partition folder under the given path, each file's name, size and
 * modification time (the partition writer lock `klx-writer.lock` excepted: it comes and goes with
 * every writer), and the partition's entries in the log directory's offset checkpoints that the
 * cleaner reads or writes (`log-start-offset-checkpoint`, `cleaner-offset-checkpoint`,
 * `replication-offset-checkpoint`). Other partitions' entries in those shared files do not count,
 * so cleaning one partition does not invalidate the preview of its neighbour.
 *
 * A fingerprint is a flat map `key → value` (keys are absolute paths, checkpoint entries
 * `<logDir>/<file>#<topic>-<partition>`); {@link fingerprintChanges} names what differs in words.
 */
import { createHash } from 'node:crypto';
import { readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { readCheckpointEntry } from '../../engine/cleaner/checkpoint-entries.ts';
import { WRITER_LOCK_FILE } from '../../engine/log/log-lock.ts';
import type { PartitionLog } from '../../engine/log/partition-log.ts';

/** Key → value (`<size>:<mtimeMs>` for files, the offset or `none` for checkpoint entries, `present` for partitions). */
export type Fingerprint = Record<string, string>;

/** The log-directory checkpoints whose entry for the partition the cleaner reads or writes. */
export const FINGERPRINT_CHECKPOINTS = ['log-start-offset-checkpoint', 'cleaner-offset-checkpoint', 'replication-offset-checkpoint'] as const;

/**
 * The fingerprint of the given partitions (as opened by the engine).
 * @throws nothing for files that vanish while listing (they are simply absent); `io-error`-like
 *   Node errors only when a partition folder cannot be listed at all.
 */
export function fingerprintOf(logs: readonly PartitionLog[]): Fingerprint {
  const out: Fingerprint = {};
  for (const log of logs) {
    out[`partition:${log.dir}`] = 'present';
    for (const name of readdirSync(log.dir).sort()) {
      if (name === WRITER_LOCK_FILE) continue;
      const p = join(log.dir, name);
      try {
        const st = statSync(p);
        if (st.isFile()) out[p] = `${st.size}:${st.mtimeMs}`;
      } catch {
        // removed between readdir and stat: absent
      }
    }
    const logDir = dirname(log.dir);
    for (const file of FINGERPRINT_CHECKPOINTS) {
      let v: string;
      try {
        v = readCheckpointEntry(logDir, file, log.topic, log.partition)?.toString() ?? 'none';
      } catch {
        v = 'unreadable';
      }
      out[`${join(logDir, file)}#${log.topic}-${log.partition}`] = v;
    }
  }
  return out;
}

/** A short stable hash of a fingerprint plus the request it was taken for (hex, 32 characters). */
export function planIdOf(fp: Fingerprint, request: unknown): string {
  const h = createHash('sha256');
  for (const k of Object.keys(fp).sort()) h.update(`${k}\u0000${fp[k]}\u0000`);
  h.update(JSON.stringify(request, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v)));
  return h.digest('hex').slice(0, 32);
}

function describe(key: string, v: string | undefined): string {
  if (key.startsWith('partition:')) return `partition folder ${key.slice('partition:'.length)}`;
  const hash = key.indexOf('#');
  if (hash >= 0) return `${key.slice(0, hash).split(/[\\/]/).pop()} entry of ${key.slice(hash + 1)}`;
  const name = key.split(/[\\/]/).pop()!;
  if (v === undefined) return name;
  const [size] = v.split(':');
  return `${name} (${Number(size).toLocaleString('en-US')} bytes)`;
}

/**
 * What differs between the fingerprint a preview saw (`before`) and the current one, in words
 * ("00000000000000000000.log changed: 4,096 → 5,120 bytes", "…10.log is new", "cleaner-offset-checkpoint
 * entry of orders-0: 12 → 30"); empty when identical. At most `limit` lines (then "… N more").
 */
export function fingerprintChanges(before: Fingerprint, now: Fingerprint, limit = 8): string[] {
  const out: string[] = [];
  const keys = [...new Set([...Object.keys(before), ...Object.keys(now)])].sort();
  for (const k of keys) {
    const a = before[k];
    const b = now[k];
    if (a === b) continue;
    if (a === undefined) out.push(`${describe(k, b)} is new`);
    else if (b === undefined) out.push(`${describe(k, a)} is gone`);
    else if (k.includes('#')) out.push(`${describe(k, a)}: ${a} → ${b}`);
    else {
      const [sa] = a.split(':');
      const [sb] = b.split(':');
      out.push(sa === sb ? `${describe(k, undefined)} was rewritten (same size, new modification time)` : `${describe(k, undefined)} changed: ${Number(sa).toLocaleString('en-US')} → ${Number(sb).toLocaleString('en-US')} bytes`);
    }
  }
  return out.length > limit ? [...out.slice(0, limit), `… ${out.length - limit} more`] : out;
}
