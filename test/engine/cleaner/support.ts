/**
 * Helpers of the cleaner tests: reading what a partition holds (visible records, every file's
 * bytes), building extra segments and transaction markers, startup recovery through the engine's
 * `recovery.ts`, and crash enumeration (run once recording every file step, then crash at each).
 */
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { segmentFileName } from '../../../src-main/engine/files/file-names.ts';
import { buildOffsetIndexEntries, encodeOffsetIndex } from '../../../src-main/engine/files/offset-index.ts';
import { buildTimeIndexEntries, encodeTimeIndex } from '../../../src-main/engine/files/time-index.ts';
import { CONTROL_ABORT, CONTROL_COMMIT, encodeControlKey, encodeEndTxnMarkerValue } from '../../../src-main/engine/format/control.ts';
import { scanLogBuffer } from '../../../src-main/engine/format/log-reader.ts';
import { decodeV2Records, encodeBatch, type BatchSpec } from '../../../src-main/engine/format/record-batch.ts';
import { applyRecovery, planRecovery } from '../../../src-main/engine/log/recovery.ts';
import { scanLogFile } from '../../../src-main/engine/format/log-reader.ts';
import { PartitionLog } from '../../../src-main/engine/log/partition-log.ts';
import type { CleanerFaultHook, CleanerStep } from '../../../src-main/engine/cleaner/file-steps.ts';
import { buildPartition, rec, singles, tempDir, type BatchInput } from '../../support/log-builder.ts';

export const TS = 1_700_000_000_000;
export const DAY = 86_400_000;

/** One visible record, in a comparable form. */
export interface Rec {
  offset: number;
  key: string | null;
  value: string | null;
  ts: number;
  control?: string;
}

const text = (b: Uint8Array | null) => (b === null ? null : Buffer.from(b).toString('utf8'));

/** Every record (data and control) of a partition at or above its log start offset, in offset order. */
export function visibleRecords(partitionDir: string): Rec[] {
  const log = PartitionLog.open(partitionDir);
  const start = log.logStartOffset;
  const out: Rec[] = [];
  for (const seg of log.segments) {
    for (const e of scanLogFile(seg.files.log, { deep: true })) {
      if (e.type !== 'batch') throw new Error(`damage in ${seg.files.log} at ${e.position}: ${e.reason}`);
      if (e.error) throw e.error;
      const recs = e.records ?? decodeV2Records(e.header, e.bytes);
      for (const r of recs) {
        if (r.offset < start) continue;
        out.push({ offset: Number(r.offset), key: r.control ? null : text(r.key), value: r.control ? null : text(r.value), ts: Number(r.timestamp), ...(r.control ? { control: r.control.type } : {}) });
      }
    }
  }
  return out;
}

/** Offsets of the visible records. */
export function offsets(partitionDir: string): number[] {
  return visibleRecords(partitionDir).map((r) => r.offset);
}

/** Name → bytes of every file of a folder (not recursive), plus the given extra files. */
export function snapshotFiles(dir: string, extra: string[] = []): Map<string, Buffer> {
  const m = new Map<string, Buffer>();
  for (const n of readdirSync(dir).sort()) {
    const p = join(dir, n);
    if (statSync(p).isFile()) m.set(n, readFileSync(p));
  }
  for (const p of extra) if (existsSync(p)) m.set(p, readFileSync(p));
  return m;
}

/** The batches of one `.log` file: [baseOffset, lastOffset, recordCount, size]. */
export function batchesOf(logPath: string): { base: number; last: number; count: number; size: number; attributes: number; bytes: Buffer }[] {
  const out = [];
  for (const e of scanLogFile(logPath)) {
    if (e.type !== 'batch') throw new Error(`damage in ${logPath}`);
    out.push({ base: Number(e.header.baseOffset), last: Number(e.header.lastOffset), count: e.header.recordCount, size: e.header.size, attributes: e.header.attributes, bytes: Buffer.from(e.bytes) });
  }
  return out;
}

/** A fault hook that records every step it is called for. */
export function recordingHook(): { hook: CleanerFaultHook; steps: { step: CleanerStep; path: string }[] } {
  const steps: { step: CleanerStep; path: string }[] = [];
  return { hook: (step, path) => void steps.push({ step, path }), steps };
}

/** A fault hook that throws `error` (default: a crash) at the `n`-th step call (0-based). */
export function faultAt(n: number, error: unknown = new Error('crash')): CleanerFaultHook {
  let i = 0;
  return () => {
    if (i++ === n) throw error;
  };
}

/** An errno-style error, as the OS gives (ENOSPC, EROFS, EACCES). */
export function osError(code: string): NodeJS.ErrnoException {
  const e = new Error(`${code}: simulated`) as NodeJS.ErrnoException;
  e.code = code;
  return e;
}

/** Appends a new segment at `base` holding `batches` (encoded in order, offsets running on from `base`). */
export function addSegment(dir: string, base: bigint, batches: (Omit<BatchSpec, 'baseOffset'> & { baseOffset?: bigint })[]): void {
  let next = base;
  const bufs = batches.map((b) => {
    const buf = encodeBatch({ ...b, baseOffset: b.baseOffset ?? next });
    next = buf.readBigInt64BE(0) + BigInt(buf.readInt32BE(23)) + 1n;
    return buf;
  });
  const log = Buffer.concat(bufs);
  const name = segmentFileName(base, '');
  writeFileSync(join(dir, name + '.log'), log);
  const headers = [...scanLogBuffer(log)].flatMap((e) => (e.type === 'batch' ? [{ position: e.header.position, size: e.header.size, lastOffset: e.header.lastOffset, maxTimestamp: e.header.maxTimestamp }] : []));
  writeFileSync(join(dir, name + '.index'), encodeOffsetIndex(base, buildOffsetIndexEntries(base, headers)));
  writeFileSync(join(dir, name + '.timeindex'), encodeTimeIndex(base, buildTimeIndexEntries(base, headers)));
}

/** A transaction marker batch (ABORT or COMMIT) of `producerId`. */
export function marker(type: 'ABORT' | 'COMMIT', producerId: bigint, ts = 1000, epoch = 0): Omit<BatchSpec, 'baseOffset'> {
  return {
    isControl: true,
    isTransactional: true,
    producerId,
    producerEpoch: epoch,
    records: [{ key: encodeControlKey(type === 'ABORT' ? CONTROL_ABORT : CONTROL_COMMIT), value: encodeEndTxnMarkerValue(0), timestamp: BigInt(ts) }],
  };
}

/** Broker-style recovery through the engine's recovery (`recovery.ts`): plan, then apply. */
export async function recover(dir: string): Promise<void> {
  const plan = await planRecovery(dir);
  await applyRecovery(plan);
}

/**
 * The partition of case B15 (`../shared/cases/kafka-behaviour-cases.md`) in a new temp folder:
 * producer 5 aborts offsets 0–1 (marker at 3) and commits offset 4 (marker at 5), an ABORT of
 * producer 9 that guards no data at 2, producer 6 aborts 6–7 (marker at 8); then k6 at 9 in a
 * second segment. Returns the partition folder.
 */
export function buildB15Partition(): string {
  const txn = (pid: bigint, recs: ReturnType<typeof rec>[]): BatchInput => ({ isTransactional: true, producerId: pid, producerEpoch: 0, baseSequence: 0, records: recs });
  return buildPartition(tempDir(), {
    segments: [
      {
        baseOffset: 0n,
        batches: [txn(5n, [rec('k1', 'v1'), rec('k2', 'v2')]), marker('ABORT', 9n), marker('ABORT', 5n), txn(5n, [rec('k3', 'v3')]), marker('COMMIT', 5n), txn(6n, [rec('k4', 'v4'), rec('k5', 'v5')]), marker('ABORT', 6n)],
        txnIndex: [
          { producerId: 5n, firstOffset: 0n, lastOffset: 3n, lastStableOffset: 4n },
          { producerId: 6n, firstOffset: 6n, lastOffset: 8n, lastStableOffset: 9n },
        ],
      },
      { baseOffset: 9n, batches: singles(rec('k6', 'v6')) },
    ],
  });
}
