/**
 * Builds partition folders for tests from batch specs, the way a broker lays them out: 20-digit
 * segment names, `.log` of encoded v2 batches, `.index`/`.timeindex` rebuilt with Kafka's rules
 * (trimmed, as after a clean shutdown), optional `.txnindex`, and checkpoint files in the log dir.
 *
 * Scenario helper for the behaviour cases: `rec('k1', 'a', 1000)` is one record; a segment is a
 * list of batches; by default every record is its own single-record batch (the cases' notation).
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeBatch, type BatchSpec, type RecordSpec } from '../../src-main/engine/format/record-batch.ts';
import type { AbortedTxnInput } from '../../src-main/engine/files/txn-index.ts';
import { writeSegmentFiles } from '../../src-main/engine/segment/segment-file-writer.ts';
import { encodeControlKey, encodeEndTxnMarkerValue } from '../../src-main/engine/format/control.ts';

/** A batch to put in a segment: a spec without baseOffset (taken from `offset` or the running offset), or raw bytes. */
export type BatchInput = (Omit<BatchSpec, 'baseOffset'> & { baseOffset?: bigint }) | Buffer;

export interface SegmentInput {
  /** Segment base offset (file name); default: the first batch's base offset or the running offset. */
  baseOffset?: bigint;
  batches: BatchInput[];
  /** Extra bytes appended to the `.log` (damage). */
  tail?: Buffer;
  txnIndex?: AbortedTxnInput[];
  /** Skip writing the .index / .timeindex. */
  noIndex?: boolean;
  noTimeIndex?: boolean;
}

export interface PartitionInput {
  topic?: string;
  partition?: number;
  segments: SegmentInput[];
  indexIntervalBytes?: number;
}

export interface CheckpointInput {
  logStartOffset?: bigint;
  highWatermark?: bigint;
  recoveryPoint?: bigint;
  cleanerOffset?: bigint;
  cleanShutdown?: boolean;
}

/** A fresh temporary folder. */
export function tempDir(prefix = 'klx-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** One record: key/value strings (null for a null key or a tombstone), CreateTime `ts` ms. */
export function rec(key: string | null, value: string | null, ts: number | bigint = 1000, headers?: RecordSpec['headers']): RecordSpec {
  return { key, value, timestamp: BigInt(ts), ...(headers ? { headers } : {}) };
}

/** Single-record batches, one per record (the cases' default notation). */
export function singles(...records: RecordSpec[]): BatchInput[] {
  return records.map((r) => ({ records: [r] }));
}

/**
 * Writes a partition folder `<logDir>/<topic>-<partition>` and its checkpoints.
 * Offsets run on from batch to batch unless a batch gives `baseOffset`.
 * @returns the partition folder path.
 */
export function buildPartition(logDir: string, input: PartitionInput, cp: CheckpointInput = {}): string {
  const topic = input.topic ?? 'test';
  const partition = input.partition ?? 0;
  const dir = join(logDir, `${topic}-${partition}`);
  mkdirSync(dir, { recursive: true });
  let next = 0n;
  for (const seg of input.segments) {
    const bufs: Buffer[] = [];
    for (const b of seg.batches) {
      if (Buffer.isBuffer(b)) {
        bufs.push(b);
        next = b.readBigInt64BE(0) + BigInt(b.readInt32BE(23)) + 1n;
        continue;
      }
      const baseOffset = b.baseOffset ?? next;
      const buf = encodeBatch({ ...b, baseOffset });
      bufs.push(buf);
      next = baseOffset + BigInt(buf.readInt32BE(23)) + 1n;
    }
    const base = seg.baseOffset ?? (bufs[0] ? bufs[0].readBigInt64BE(0) : next);
    writeSegmentFiles(dir, base, bufs, { indexIntervalBytes: input.indexIntervalBytes, tail: seg.tail, txnIndex: seg.txnIndex, noIndex: seg.noIndex, noTimeIndex: seg.noTimeIndex });
  }
  const tp = `${topic} ${partition}`;
  const write = (file: string, v: bigint | undefined) => {
    if (v !== undefined) writeFileSync(join(logDir, file), `0\n1\n${tp} ${v}\n`);
  };
  write('log-start-offset-checkpoint', cp.logStartOffset);
  write('replication-offset-checkpoint', cp.highWatermark);
  write('recovery-point-offset-checkpoint', cp.recoveryPoint);
  write('cleaner-offset-checkpoint', cp.cleanerOffset);
  if (cp.cleanShutdown) writeFileSync(join(logDir, '.kafka_cleanshutdown'), '{"version":0,"brokerEpoch":1}');
  return dir;
}

/**
 * A v2 batch of `count` records at `baseOffset` that is exactly `size` bytes (the last value is
 * padded), timestamps `ts`, `ts`+1, …
 * @throws Error when no padding gives that size (a size below the batch's minimum).
 */
export function batchOfSize(baseOffset: bigint, count: number, size: number, ts: number): Buffer {
  const make = (pad: number) =>
    encodeBatch({ baseOffset, records: Array.from({ length: count }, (_, i) => rec(`k${baseOffset + BigInt(i)}`, i === count - 1 ? 'v'.repeat(pad) : `v${i}`, ts + i)) });
  let pad = 0;
  for (let i = 0; i < 10; i++) {
    const b = make(pad);
    if (b.length === size) return b;
    pad += size - b.length;
  }
  throw new Error(`cannot build a ${size}-byte batch`);
}

/**
 * The cleanup tests' compacted-looking partition `orders-0` under `logDir`, one record per batch,
 * timestamps `ts`, `ts`+1, …, three segments:
 * - 0: k1=a k2=b k1=c k3=d k2=<tombstone> k4=e (offsets 0..5)
 * - 6: k1=f k3=g <no key>=x k5=h (offsets 6..9)
 * - 10 (active): k1=i k6=j (offsets 10..11)
 * Returns the partition folder.
 */
export function buildCompactedOrders(logDir: string, ts: number): string {
  return buildPartition(logDir, {
    topic: 'orders',
    segments: [
      { batches: singles(rec('k1', 'a', ts), rec('k2', 'b', ts + 1), rec('k1', 'c', ts + 2), rec('k3', 'd', ts + 3), rec('k2', null, ts + 4), rec('k4', 'e', ts + 5)) },
      { batches: singles(rec('k1', 'f', ts + 6), rec('k3', 'g', ts + 7), rec(null, 'x', ts + 8), rec('k5', 'h', ts + 9)) },
      { batches: singles(rec('k1', 'i', ts + 10), rec('k6', 'j', ts + 11)) },
    ],
  });
}

/**
 * A COMMIT or ABORT marker of producer `pid` at `offset`: a control batch (attributes 0x30) of one
 * control record, its EndTxnMarker value carrying `coordinatorEpoch` (default 0), at `timestamp` ms
 * (default 1000).
 */
export function markerBatch(pid: number, type: 'COMMIT' | 'ABORT', offset: number, opts: { coordinatorEpoch?: number; timestamp?: number } = {}): BatchInput {
  return {
    baseOffset: BigInt(offset),
    isControl: true,
    isTransactional: true,
    producerId: BigInt(pid),
    producerEpoch: 0,
    records: [{ key: encodeControlKey(type === 'ABORT' ? 0 : 1), value: encodeEndTxnMarkerValue(opts.coordinatorEpoch ?? 0), timestamp: BigInt(opts.timestamp ?? 1000) }],
  };
}
