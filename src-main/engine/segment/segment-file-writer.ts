/**
 * Writes a complete, closed segment in one go: `N.log` from encoded batches, and `.index` /
 * `.timeindex` exactly as a broker rebuilds them for those batches (LogSegment.recover; spec §9.1/§9.2 rebuild rules,
 * trimmed as after a clean shutdown or roll), plus an optional `.txnindex`.
 *
 * Used to generate logs (the demo log directory, test scenarios). It writes plain files with fsync;
 * callers that replace live segments use the crash-safe paths of the writer and the cleaner instead.
 */
import { join } from 'node:path';
import { scanLogBuffer } from '../format/log-reader.ts';
import { segmentFileName } from '../files/file-names.ts';
import { writeFileDurable } from '../files/fsync-write.ts';
import { buildOffsetIndexEntries, encodeOffsetIndex, type IndexableBatch } from '../files/offset-index.ts';
import { buildTimeIndexEntries, encodeTimeIndex } from '../files/time-index.ts';
import { encodeTxnIndex, type AbortedTxnInput } from '../files/txn-index.ts';

export interface SegmentFileOptions {
  /** `index.interval.bytes` (default 4096). */
  indexIntervalBytes?: number;
  /** Bytes appended after the batches (to build damaged examples). */
  tail?: Buffer;
  /** Aborted transactions whose ABORT marker is in this segment. */
  txnIndex?: AbortedTxnInput[];
  /** Leave out the `.index` (a "missing index" example). */
  noIndex?: boolean;
  /** Leave out the `.timeindex`. */
  noTimeIndex?: boolean;
}

/**
 * Writes segment files named after `baseOffset` into `dir`.
 * @param batches encoded entries in file order (v2 batches or legacy messages).
 * @returns the batches' index facts (position, size, lastOffset, maxTimestamp).
 * @throws KlxError `invalid-argument` when an offset does not fit the segment (relative offset overflow).
 */
export function writeSegmentFiles(dir: string, baseOffset: bigint, batches: Buffer[], opts: SegmentFileOptions = {}): IndexableBatch[] {
  const log = Buffer.concat(opts.tail ? [...batches, opts.tail] : batches);
  const name = segmentFileName(baseOffset, '');
  writeFileDurable(join(dir, name + '.log'), log);
  const facts: IndexableBatch[] = [];
  for (const e of scanLogBuffer(Buffer.concat(batches), { verifyCrc: false })) {
    if (e.type === 'batch') facts.push({ position: e.header.position, size: e.header.size, lastOffset: e.header.lastOffset, maxTimestamp: e.header.maxTimestamp });
  }
  const interval = opts.indexIntervalBytes ?? 4096;
  if (!opts.noIndex) writeFileDurable(join(dir, name + '.index'), encodeOffsetIndex(baseOffset, buildOffsetIndexEntries(baseOffset, facts, interval)));
  if (!opts.noTimeIndex) writeFileDurable(join(dir, name + '.timeindex'), encodeTimeIndex(baseOffset, buildTimeIndexEntries(baseOffset, facts, { indexIntervalBytes: interval })));
  if (opts.txnIndex) writeFileDurable(join(dir, name + '.txnindex'), encodeTxnIndex(baseOffset, opts.txnIndex));
  return facts;
}
