/**
 * Repair runs kept in the trash, so that `klx undo` (and the app's Undo) puts back the bytes a
 * `klx repair` replaced, until the trash is emptied (issue 14). Kafka keeps nothing of what its
 * startup recovery removes (`LogLoader` deletes leftovers and `LogSegment.recover` truncates in
 * place); this is the tool's own safety net around the same actions (`engine/log/recovery.ts`).
 *
 * What a repair entry holds (one trash entry per partition folder, operation `repair`; the entries of
 * one `klx repair` share a run id):
 * - `removed`: every file the plan deletes, renames away or replaces (`.deleted`/`.tmp`/`.cleaned`
 *   leftovers, `.swap` files, orphan and rebuilt indexes, deleted segments, `leader-epoch-checkpoint`,
 *   a rewritten log-directory checkpoint), as a hard link made before the change (no copy, no extra
 *   space; a copy on another file system), under its name in the folder;
 * - `created`: every file the plan leaves that did not exist in that form before (rebuilt indexes and
 *   checkpoints with their CRC-32C, a renamed `.swap` with its size, an empty segment);
 * - `truncated`: every `.log` cut in place, with the cut-off bytes copied into the entry
 *   (`<name>.tail-<toBytes>`; the bytes a broker's `LogSegment.recover` would drop) and the CRC-32C of
 *   the last {@link CHECK_BYTES} bytes before the cut, so undo can tell the segment is unchanged
 *   without reading it whole.
 *
 * Crash safety: the entry is complete (every link and tail copy made, the manifest written in state
 * `prepared`) before the first change to the partition: that write is the run's commit point. A
 * crash after it leaves a `prepared` entry that {@link decideRepair} finishes at the next
 * `klx repair` (or undo), before the folder is planned again: the steps that happened stay in the
 * entry (committed), the ones that did not are dropped from it (the next repair plans and keeps them
 * in its own entry), and a crash before any change removes the entry. A `.tmp` file the interrupted
 * atomic write of one of the run's files left is removed then.
 *
 * Undo ({@link undoRepairEntry}) first checks that the folder is what the run left (every created file
 * at its size and CRC, every cut `.log` at its cut size with its last bytes unchanged, no removed file
 * back), then grows each cut `.log` back with its tail, removes the files the run created and moves
 * the kept files back (a rename over a replaced file is atomic), fsyncing the folder.
 */
import { closeSync, existsSync, fsyncSync, ftruncateSync, openSync, readFileSync, readSync, rmSync, statSync, utimesSync, writeSync } from 'node:fs';
import { basename, join } from 'node:path';
import { KlxError } from '../errors.ts';
import { formatLeaderEpochCheckpoint } from '../files/checkpoint.ts';
import { tmpPathFor } from '../files/fsync-write.ts';
import { encodeOffsetIndex } from '../files/offset-index.ts';
import { encodeTimeIndex } from '../files/time-index.ts';
import { encodeTxnIndex } from '../files/txn-index.ts';
import { crc32c } from '../format/crc.ts';
import type { CheckpointRewrite } from '../log/checkpoint-repair.ts';
import { acquireLock, CHECKPOINT_LOCK_FILE } from '../log/log-lock.ts';
import { applyRecovery, type RecoveryAction, type RecoveryFaultHook, type RecoveryPlan, type RecoveryResult } from '../log/recovery.ts';
import { FileSteps, type CleanerFaultHook } from './file-steps.ts';
import { TRASH_FILES, TRASH_MANIFEST, TrashEntry, type TrashEntryInfo, type TrashFile, type TrashManifest, type TruncatedFile } from './trash.ts';

export type { TruncatedFile } from './trash.ts';

/** Bytes before a cut whose CRC-32C undo checks (the cut `.log` is not read whole). */
export const CHECK_BYTES = 1 << 20;

/** A file in a repair's plan: its path and, for created files, what it will hold. */
interface Effects {
  removed: Map<string, string>;
  created: Map<string, { size: number; crc32c?: number }>;
  truncated: { file: string; fromBytes: number; toBytes: number }[];
}

function fileCrc(path: string, from: number, to: number): number {
  const len = Math.max(0, to - from);
  const buf = Buffer.alloc(len);
  const fd = openSync(path, 'r');
  try {
    let done = 0;
    while (done < len) {
      const n = readSync(fd, buf, done, len - done, from + done);
      if (n === 0) break;
      done += n;
    }
  } finally {
    closeSync(fd);
  }
  return crc32c(buf);
}

/** What each action of a recovery plan removes, creates and cuts, in plan order. */
function effectsOf(actions: readonly RecoveryAction[]): Effects {
  const fx: Effects = { removed: new Map(), created: new Map(), truncated: [] };
  const keep = (path: string) => {
    const name = basename(path);
    if (fx.removed.has(name) || fx.created.has(name)) return;
    if (existsSync(path)) fx.removed.set(name, path);
  };
  const create = (path: string, bytes: Uint8Array | null, size?: number) => {
    keep(path);
    fx.created.set(basename(path), bytes ? { size: bytes.length, crc32c: crc32c(bytes) } : { size: size ?? 0 });
  };
  for (const a of actions) {
    switch (a.type) {
      case 'delete-file':
        keep(a.file);
        fx.created.delete(basename(a.file));
        break;
      case 'rename': {
        keep(a.from);
        const c = fx.created.get(basename(a.from));
        fx.created.delete(basename(a.from));
        keep(a.to);
        fx.created.set(basename(a.to), c ?? { size: existsSync(a.from) ? statSync(a.from).size : 0 });
        break;
      }
      case 'delete-segment':
        for (const f of a.files) {
          keep(f);
          fx.created.delete(basename(f));
        }
        break;
      case 'rebuild-indexes':
        if (a.index) create(a.index.file, encodeOffsetIndex(a.baseOffset, a.index.entries));
        if (a.timeindex) create(a.timeindex.file, encodeTimeIndex(a.baseOffset, a.timeindex.entries));
        if (a.txnindex) create(a.txnindex.file, encodeTxnIndex(a.baseOffset, a.txnindex.entries));
        break;
      case 'truncate-log': {
        fx.truncated.push({ file: a.file, fromBytes: a.fromBytes, toBytes: a.toBytes });
        const c = fx.created.get(basename(a.file));
        if (c) fx.created.set(basename(a.file), { size: a.toBytes });
        break;
      }
      case 'create-segment':
        for (const f of [a.files.index, a.files.timeindex, a.files.log]) if (!existsSync(f)) create(f, new Uint8Array(0));
        break;
      case 'write-leader-epochs':
        create(a.file, Buffer.from(formatLeaderEpochCheckpoint(a.entries), 'utf8'));
        break;
    }
  }
  return fx;
}

/** What {@link prepareRepairEntry} needs to know about the partition. */
export interface RepairEntryInit {
  trashDir: string;
  runId: string;
  partitionDir: string;
  logDir: string;
  topic: string;
  partition: number;
  /** One line: what the repair does ("3 actions: ..."). */
  summary: string;
}

/**
 * Fills a trash entry (state `prepared`) with everything a repair's actions will remove, create and
 * cut, before any of them runs (see the module comment). Touches nothing in the partition folder.
 * @returns the entry; call {@link TrashEntry.commit} once the actions have run.
 * @throws KlxError `io-error` when the trash cannot be written (the partition is untouched);
 *   a `SimulatedCrash` from `fault`.
 */
export function prepareRepairEntry(init: RepairEntryInit, actions: readonly RecoveryAction[], fault?: CleanerFaultHook): TrashEntry {
  const steps = new FileSteps(fault);
  const fx = effectsOf(actions);
  const entry = TrashEntry.create(init.trashDir, { runId: init.runId, operation: 'repair', partitionDir: init.partitionDir, logDir: init.logDir, topic: init.topic, partition: init.partition, now: Date.now() }, steps);
  return fillEntry(entry, init.summary, () => {
    for (const path of fx.removed.values()) entry.keep(path);
    for (const [name, c] of fx.created) entry.manifest.created.push({ name, size: c.size, mtimeMs: 0, ...(c.crc32c !== undefined ? { crc32c: c.crc32c } : {}) });
    const truncated: TruncatedFile[] = [];
    for (const t of fx.truncated) {
      const name = basename(t.file);
      const tail = `${name}.tail-${t.toBytes}`;
      const dest = entry.fileInTrash(tail);
      steps.at('link-trash', t.file);
      copyRange(t.file, t.toBytes, t.fromBytes, dest);
      truncated.push({ name, fromBytes: t.fromBytes, toBytes: t.toBytes, tail, tailCrc32c: crc32c(readFileSync(dest)), checkCrc32c: fileCrc(t.file, Math.max(0, t.toBytes - CHECK_BYTES), t.toBytes) });
    }
    return truncated;
  });
}

/**
 * Fills a new `prepared` entry with `fill` (its kept files and created-file records; returns the
 * cut `.log` tails), sets the summary and saves the manifest: the repair's commit point. On a
 * failure the half-made entry is removed (not on a `SimulatedCrash`, which stands for a real crash).
 */
function fillEntry(entry: TrashEntry, summary: string, fill: () => TruncatedFile[]): TrashEntry {
  try {
    entry.manifest.truncated = fill();
    entry.manifest.summary = summary;
    entry.save();
  } catch (err) {
    if ((err as Error).name !== 'SimulatedCrash') entry.discard();
    throw err;
  }
  return entry;
}

/**
 * Keeps a log-directory checkpoint file that a repair rewrites (state `prepared`, before the write),
 * in an entry whose "partition folder" is the log directory.
 * @returns the entry; commit it once the file is written.
 */
export function prepareCheckpointEntry(init: Omit<RepairEntryInit, 'partitionDir' | 'topic' | 'partition'>, files: { path: string; text: string }[], fault?: CleanerFaultHook): TrashEntry {
  const steps = new FileSteps(fault);
  const entry = TrashEntry.create(init.trashDir, { runId: init.runId, operation: 'repair', partitionDir: init.logDir, logDir: init.logDir, topic: basename(init.logDir), partition: 0, now: Date.now() }, steps);
  return fillEntry(entry, init.summary, () => {
    for (const f of files) {
      if (existsSync(f.path)) entry.keep(f.path);
      const bytes = Buffer.from(f.text, 'utf8');
      entry.manifest.created.push({ name: basename(f.path), size: bytes.length, mtimeMs: 0, crc32c: crc32c(bytes) });
    }
    return [];
  });
}

/** Copies bytes `[from, to)` of `file` into a new file `dest`, fsynced (streamed in 1 MiB pieces). */
function copyRange(file: string, from: number, to: number, dest: string): void {
  const src = openSync(file, 'r');
  const out = openSync(dest, 'w');
  try {
    const buf = Buffer.alloc(Math.min(1 << 20, Math.max(1, to - from)));
    let pos = from;
    while (pos < to) {
      const n = readSync(src, buf, 0, Math.min(buf.length, to - pos), pos);
      if (n === 0) throw new KlxError('io-error', `the file ended at byte ${pos} while keeping bytes ${from}..${to} for undo`, { file, position: pos });
      let w = 0;
      while (w < n) w += writeSync(out, buf, w, n - w);
      pos += n;
    }
    fsyncSync(out);
  } finally {
    closeSync(src);
    closeSync(out);
  }
}

function matches(path: string, f: TrashFile): boolean {
  if (!existsSync(path)) return false;
  const st = statSync(path);
  if (!st.isFile() || st.size !== f.size) return false;
  return f.crc32c === undefined || crc32c(readFileSync(path)) === f.crc32c;
}

/** True when `path` is still the file kept as `kept` (same inode; for a copy, same size and mtime). */
function sameAsKept(path: string, kept: string): boolean {
  if (!existsSync(path) || !existsSync(kept)) return false;
  const a = statSync(path);
  const b = statSync(kept);
  if (a.dev === b.dev && a.ino === b.ino) return true;
  return a.dev !== b.dev && a.size === b.size && Math.trunc(a.mtimeMs) === Math.trunc(b.mtimeMs);
}

/** Outcome of {@link decideRepair}, as `interrupted-runs.ts` reports it. */
export interface RepairDecision {
  outcome: 'committed' | 'rolled-back' | 'left';
  reason: string;
  apply?: (steps: FileSteps) => void;
}

/**
 * Decides what to do with the `prepared` entry of a repair a crash interrupted (see the module
 * comment): keep the steps that happened (commit), drop the rest, remove the entry when none happened.
 */
export function decideRepair(info: TrashEntryInfo): RepairDecision {
  const m = info.manifest!;
  const dir = m.partitionDir;
  const inTrash = (name: string) => join(info.path, TRASH_FILES, name);
  const createdNames = new Set(m.created.map((f) => f.name));
  const removedDone: TrashFile[] = [];
  const removedUndone: TrashFile[] = [];
  for (const f of m.removed) {
    const p = join(dir, f.name);
    if (!existsSync(inTrash(f.name))) return { outcome: 'left', reason: `the entry lacks its copy of ${f.name}: entry kept` };
    if (sameAsKept(p, inTrash(f.name))) removedUndone.push(f);
    else if (!existsSync(p) || createdNames.has(f.name)) removedDone.push(f);
    else return { outcome: 'left', reason: `${f.name} is neither the file the repair kept nor gone: the folder changed since; entry kept` };
  }
  const createdDone = m.created.filter((f) => matches(join(dir, f.name), f));
  const truncDone: TruncatedFile[] = [];
  const truncUndone: TruncatedFile[] = [];
  for (const t of m.truncated ?? []) {
    const size = existsSync(join(dir, t.name)) ? statSync(join(dir, t.name)).size : null;
    if (size === t.toBytes) truncDone.push(t);
    else if (size === t.fromBytes) truncUndone.push(t);
    else return { outcome: 'left', reason: `${t.name} is ${size ?? 'missing'}${size === null ? '' : ' bytes'}, neither the ${t.fromBytes} bytes before the cut nor the ${t.toBytes} after: entry kept` };
  }
  // A created name whose kept original is still in place was not replaced yet.
  const undoneNames = new Set(removedUndone.map((f) => f.name));
  const created = createdDone.filter((f) => !undoneNames.has(f.name));
  const done = removedDone.length + created.length + truncDone.length;
  const leftoverTmps = m.created.map((f) => tmpPathFor(join(dir, f.name))).filter((p) => existsSync(p) && !m.removed.some((r) => join(dir, r.name) === p && sameAsKept(p, inTrash(r.name))));
  if (done === 0) {
    return {
      outcome: 'rolled-back',
      reason: 'the repair stopped before changing the folder: entry removed',
      apply: (steps) => {
        for (const p of leftoverTmps) steps.unlink('delete-file', p);
        discard(info);
      },
    };
  }
  return {
    outcome: 'committed',
    reason: `the repair was interrupted after ${done} of ${m.removed.length + m.created.length + (m.truncated?.length ?? 0)} file changes: the entry keeps those (undo restores them), the next repair plans the rest`,
    apply: (steps) => {
      for (const p of leftoverTmps) steps.unlink('delete-file', p);
      for (const f of removedUndone) steps.unlink('delete-file', inTrash(f.name));
      for (const t of truncUndone) steps.unlink('delete-file', inTrash(t.tail));
      m.removed = removedDone;
      m.created = created;
      m.truncated = truncDone;
      m.state = 'committed';
      m.summary = `${m.summary} (interrupted: ${done} file change(s) kept)`;
      m.finishedByRecovery = `finished by recovery after an interruption (${new Date().toISOString()})`;
      steps.writeCheckpoint(join(info.path, TRASH_MANIFEST), JSON.stringify(m, null, 2) + '\n', 'write-manifest');
    },
  };
}

function discard(info: TrashEntryInfo): void {
  rmSync(info.path, { recursive: true, force: true });
}

/** Why the folder no longer is what the repair left (undo would lose a change made since), or null. */
export function repairConflicts(m: TrashManifest, entryDir: string): string | null {
  const dir = m.partitionDir;
  if (!existsSync(dir)) return `the folder ${dir} no longer exists`;
  const createdNames = new Set(m.created.map((f) => f.name));
  const truncNames = new Set((m.truncated ?? []).map((t) => t.name));
  for (const f of m.created) {
    if (truncNames.has(f.name)) continue;
    const p = join(dir, f.name);
    if (!existsSync(p)) return `${f.name}, written by the repair, is gone`;
    if (!matches(p, f)) return `${f.name}, written by the repair, changed since`;
  }
  for (const t of m.truncated ?? []) {
    const p = join(dir, t.name);
    const size = existsSync(p) ? statSync(p).size : null;
    if (size !== t.toBytes) return `${t.name}, cut to ${t.toBytes} bytes by the repair, is ${size ?? 'missing'}${size === null ? '' : ' bytes'} now`;
    if (fileCrc(p, Math.max(0, t.toBytes - CHECK_BYTES), t.toBytes) !== t.checkCrc32c) return `${t.name}, cut by the repair, changed since`;
    if (!existsSync(join(entryDir, TRASH_FILES, t.tail))) return `the entry lacks the cut-off bytes of ${t.name}`;
  }
  for (const f of m.removed) {
    if (!createdNames.has(f.name) && existsSync(join(dir, f.name))) return `${f.name}, removed by the repair, exists again`;
    if (!existsSync(join(entryDir, TRASH_FILES, f.name))) return `the entry lacks ${f.name}`;
  }
  return null;
}

/** What undoing one repair entry did. */
export interface RepairUndone {
  restored: string[];
  removed: string[];
}

/**
 * Puts back the bytes a repair replaced (see the module comment). The caller has checked
 * {@link repairConflicts} and holds the partition's writer lock.
 * @throws KlxError `io-error`; a `SimulatedCrash` from the steps' fault hook.
 */
export function undoRepairEntry(info: TrashEntryInfo, steps: FileSteps): RepairUndone {
  const m = info.manifest!;
  const dir = m.partitionDir;
  const out: RepairUndone = { restored: [], removed: [] };
  // 1. Cut .log files grow back (first: a renamed .swap kept in the trash may share their inode).
  for (const t of m.truncated ?? []) {
    const p = join(dir, t.name);
    const tail = readFileSync(join(info.path, TRASH_FILES, t.tail));
    steps.at('restore-file', p);
    const fd = openSync(p, 'r+');
    try {
      ftruncateSync(fd, t.toBytes);
      let w = 0;
      while (w < tail.length) w += writeSync(fd, tail, w, tail.length - w, t.toBytes + w);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    out.restored.push(`${t.name} (${tail.length} bytes from position ${t.toBytes})`);
  }
  // 2. Files the repair created that replaced nothing go.
  const removedNames = new Set(m.removed.map((f) => f.name));
  for (const f of m.created) {
    if (removedNames.has(f.name)) continue;
    steps.unlink('delete-file', join(dir, f.name));
    out.removed.push(f.name);
  }
  // 3. Kept files come back (over the repair's version where it replaced one: an atomic rename).
  for (const f of m.removed) {
    const to = join(dir, f.name);
    steps.move('restore-file', join(info.path, TRASH_FILES, f.name), to);
    const t = new Date(f.mtimeMs);
    utimesSync(to, t, t);
    out.restored.push(f.name);
  }
  steps.fsyncDir(dir);
  return out;
}

/** Options of {@link applyRepairWithTrash}. */
export interface RepairWithTrashOptions {
  trashDir: string;
  runId: string;
  /** The partition's log directory (the entry records it). */
  logDir: string;
  signal?: AbortSignal;
  /** Fault hook of the trash steps (tests). */
  fault?: CleanerFaultHook;
  /** Fault hook of the recovery steps (tests). */
  faultHook?: RecoveryFaultHook;
}

/**
 * Applies a recovery plan with its files kept in the trash: prepares the entry, runs the actions
 * (`applyRecovery`, crash-safe step by step), commits the entry. The caller holds the partition's
 * writer lock. A plan without actions writes no entry.
 * @returns what `applyRecovery` did and the trash entry id (null without actions).
 * @throws what `applyRecovery` and {@link prepareRepairEntry} throw; a failure after the entry is
 *   prepared leaves it `prepared` for {@link decideRepair} (the next repair finishes it).
 */
export async function applyRepairWithTrash(plan: RecoveryPlan, opts: RepairWithTrashOptions): Promise<RecoveryResult & { trashEntry: string | null }> {
  if (plan.actions.length === 0) return { dir: plan.dir, done: [], trashEntry: null };
  const summary = `repair: ${plan.actions.length} action(s) (${[...new Set(plan.actions.map((a) => a.type))].join(', ')}), log end offset ${plan.logEndOffsetBefore} → ${plan.logEndOffsetAfter}`;
  const entry = prepareRepairEntry({ trashDir: opts.trashDir, runId: opts.runId, partitionDir: plan.dir, logDir: opts.logDir, topic: plan.topic, partition: plan.partition, summary }, plan.actions, opts.fault);
  let result: RecoveryResult;
  try {
    result = await applyRecovery(plan, { lock: false, ...(opts.signal ? { signal: opts.signal } : {}), ...(opts.faultHook ? { faultHook: opts.faultHook } : {}) });
  } catch (err) {
    // A refusal, a cancel or an I/O error (not a crash): keep what was done, drop the rest, now.
    if (err instanceof KlxError) decideRepair({ id: entry.manifest.id, path: entry.dir, manifest: entry.manifest, bytes: 0 }).apply?.(new FileSteps());
    throw err;
  }
  if (result.done.every((d) => d.skipped)) entry.discard();
  else entry.commit(summary);
  return { ...result, trashEntry: entry.manifest.id };
}

/**
 * Rewrites a log directory's unparsable offset checkpoints (`engine/log/checkpoint-repair.ts`) with
 * the old files kept in the trash (one entry, its "partition folder" the log directory), under the
 * log directory's checkpoint lock.
 * @returns the trash entry id, or null when there was nothing to rewrite.
 * @throws KlxError `locked` when another writer holds the checkpoint lock; `io-error`; a
 *   `SimulatedCrash` from `fault` (the entry then stays `prepared` for {@link decideRepair}).
 */
export function rewriteCheckpointsWithTrash(logDir: string, rewrites: readonly CheckpointRewrite[], opts: { trashDir: string; runId: string; fault?: CleanerFaultHook }): string | null {
  if (rewrites.length === 0) return null;
  const lock = acquireLock(join(logDir, CHECKPOINT_LOCK_FILE), { purpose: 'klx repair: checkpoint rewrite', what: `log directory ${logDir}` });
  try {
    const summary = `repair: rewrote ${rewrites.map((r) => r.name).join(', ')}`;
    const entry = prepareCheckpointEntry({ trashDir: opts.trashDir, runId: opts.runId, logDir, summary }, rewrites.map((r) => ({ path: r.file, text: r.text })), opts.fault);
    const steps = new FileSteps(opts.fault);
    for (const r of rewrites) steps.writeCheckpoint(r.file, r.text);
    entry.commit(summary);
    return entry.manifest.id;
  } finally {
    lock.release();
  }
}
