/**
 * A segment being produced by the cleaner: `N.log.cleaned` and its indexes, appended one read chunk
 * at a time (spec §13.8–§13.9; Kafka's `LogSegment.append` on the segment `UnifiedLog.createNewCleanedSegment`
 * opens, then `onBecomeInactiveSegment`, `flush`, `setLastModified`).
 *
 * Index rule, per appended chunk (not per batch), as Kafka ≤ 3.9's `LogSegment.append` (since 4.0,
 * KAFKA-806, a broker checks `index.interval.bytes` per batch inside an append, so its cleaned
 * segments are indexed as densely as the source; spec §13.8 still gives the older rule, kept here): when the bytes appended since the last index entry
 * are strictly more than `index.interval.bytes` *before* this chunk, add the offset-index entry
 * `(chunk's largest offset, chunk's start position)` and the time-index entry
 * `(largest timestamp so far, last offset of the batch that holds it)` when that timestamp is above
 * the last entry's; then count the chunk's bytes. A chunk's largest offset is its largest surviving
 * record offset for a rebuilt batch and the lastOffset for a copied or empty one. On finishing, one
 * final time-index entry `(largest timestamp so far, its offset)` is added if above the last, and the
 * indexes are written trimmed. The aborted transactions whose markers were kept form the new
 * `.txnindex` (created only when there is one).
 *
 * Bytes go through one write buffer of {@link WRITE_BUFFER} bytes: {@link CleanedSegment.stage}
 * copies each output batch into it as soon as the compactor has made it (so the batch may live in
 * a reused read window or scratch buffer), and a full buffer is one write.
 *
 * In counting mode (plans) nothing is written: the same figures are computed.
 */
import { closeSync, fsyncSync, openSync, unlinkSync, utimesSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { errorAt, KlxError } from '../errors.ts';
import { segmentFileName } from '../files/file-names.ts';
import { encodeOffsetIndex, MAX_RELATIVE_OFFSET } from '../files/offset-index.ts';
import { encodeTimeIndex } from '../files/time-index.ts';
import { encodeTxnIndex, type AbortedTxn } from '../files/txn-index.ts';
import { crc32c as nativeCrc32c } from '@node-rs/crc32';
import { crc32c } from '../format/crc.ts';
import type { FileSteps } from './file-steps.ts';
import type { TrashFile } from './trash.ts';

/** Bytes per write of the `.log.cleaned` (Kafka writes a chunk at a time; chunks are coalesced into writes of up to 1 MiB). */
export const WRITE_BUFFER = 1 << 20;

/** The files of a finished cleaned segment (names without the `.cleaned` suffix). */
export interface CleanedSegmentResult {
  baseOffset: bigint;
  /** `.log` bytes. */
  size: number;
  batches: number;
  records: number;
  firstOffset: bigint | null;
  lastOffset: bigint | null;
  offsetIndexEntries: { offset: bigint; position: number }[];
  timeIndexEntries: { timestamp: bigint; offset: bigint }[];
  abortedTxns: AbortedTxn[];
  /** Files written (write mode), with size and CRC-32C. */
  files: TrashFile[];
}

/** A cleaned segment being appended to (see the module comment). */
export class CleanedSegment {
  readonly baseOffset: bigint;
  /** Aborted transactions to index (the cleaner's transaction state appends to it, as Kafka's CleanedTransactionMetadata does). */
  readonly abortedTxns: AbortedTxn[] = [];
  private size = 0;
  private batches = 0;
  private records = 0;
  private firstOffset: bigint | null = null;
  private lastOffset: bigint | null = null;
  private bytesSinceLastIndexEntry = 0;
  private maxTimestampSoFar = -1n;
  private offsetOfMaxTimestampSoFar = -1n;
  private readonly offsetIndex: { offset: bigint; position: number }[] = [];
  private readonly timeIndex: { timestamp: bigint; offset: bigint }[] = [];
  private fd = -1;
  private crc = 0;
  /** The write buffer (write mode, allocated on first use) and the bytes in it. */
  private wbuf: Buffer | null = null;
  private pendingBytes = 0;
  private readonly logPath: string;

  /**
   * @param write false for counting mode (nothing touches the disk).
   * @throws KlxError `io-error` when `N.log.cleaned` cannot be created (it must not exist).
   */
  constructor(
    readonly dir: string,
    baseOffset: bigint,
    private readonly write: boolean,
    private readonly indexIntervalBytes: number,
    private readonly steps: FileSteps,
  ) {
    this.baseOffset = baseOffset;
    this.logPath = join(dir, segmentFileName(baseOffset, '.log.cleaned'));
    if (write) {
      steps.at('write-cleaned', this.logPath);
      this.fd = openSync(this.logPath, 'wx');
    }
  }

  /** `.log` bytes appended so far. */
  get bytes(): number {
    return this.size;
  }

  /**
   * Copies the bytes of one output batch into the write buffer (writing the buffer out when it is
   * full); the chunk they belong to is then recorded with {@link appendChunk}.
   * @throws the OS error of a failed write.
   */
  stage(bytes: Uint8Array): void {
    if (!this.write) return;
    if (this.pendingBytes + bytes.length > WRITE_BUFFER) this.flushPending();
    if (bytes.length >= WRITE_BUFFER) {
      this.writeOut(bytes);
      return;
    }
    this.wbuf ??= Buffer.allocUnsafeSlow(WRITE_BUFFER);
    this.wbuf.set(bytes, this.pendingBytes);
    this.pendingBytes += bytes.length;
  }

  /**
   * Records one chunk of output batches already staged (Kafka `LogSegment.append`).
   * @param batches output batches in the chunk.
   * @param chunkSize their bytes.
   * @param largestOffset the chunk's largest offset (see the module comment).
   * @param largestTimestamp the chunk's largest batch max timestamp, −1 when none.
   * @param offsetOfMaxTimestamp the last offset of the first batch holding it.
   * @param batchRecords records in the chunk's batches (for the figures).
   * @throws KlxError `invalid-argument` when an offset does not fit the segment (relative offset above int32).
   */
  appendChunk(batches: number, chunkSize: number, largestOffset: bigint, largestTimestamp: bigint, offsetOfMaxTimestamp: bigint, batchRecords: number, firstOffset: bigint, lastOffset: bigint): void {
    if (chunkSize === 0) return;
    const rel = largestOffset - this.baseOffset;
    if (rel < 0n || rel > BigInt(MAX_RELATIVE_OFFSET)) {
      throw new KlxError('invalid-argument', `offset ${largestOffset} does not fit a segment with base offset ${this.baseOffset} (relative offset outside 0..${MAX_RELATIVE_OFFSET})`);
    }
    const position = this.size;
    this.size += chunkSize;
    this.batches += batches;
    this.records += batchRecords;
    if (this.firstOffset === null) this.firstOffset = firstOffset;
    this.lastOffset = lastOffset;
    if (largestTimestamp > this.maxTimestampSoFar) {
      this.maxTimestampSoFar = largestTimestamp;
      this.offsetOfMaxTimestampSoFar = offsetOfMaxTimestamp;
    }
    if (this.bytesSinceLastIndexEntry > this.indexIntervalBytes) {
      this.offsetIndex.push({ offset: largestOffset, position });
      this.maybeAppendTime();
      this.bytesSinceLastIndexEntry = 0;
    }
    this.bytesSinceLastIndexEntry += chunkSize;
  }

  private maybeAppendTime(): void {
    const last = this.timeIndex.length ? this.timeIndex[this.timeIndex.length - 1]!.timestamp : -1n;
    if (this.maxTimestampSoFar > last) this.timeIndex.push({ timestamp: this.maxTimestampSoFar, offset: this.offsetOfMaxTimestampSoFar });
  }

  private flushPending(): void {
    if (this.pendingBytes === 0) return;
    const n = this.pendingBytes;
    this.pendingBytes = 0;
    this.writeOut(this.wbuf!.subarray(0, n));
  }

  private writeOut(data: Uint8Array): void {
    this.steps.at('write-cleaned', this.logPath);
    let done = 0;
    while (done < data.length) done += writeSync(this.fd, data, done, data.length - done);
    this.crc = crc32cUpdate(data, this.crc);
  }

  /**
   * Finishes the segment: final time-index entry, the `.log.cleaned` flushed, the index files
   * written and flushed, every file's mtime set to `mtimeMs` (the last source segment's).
   */
  finish(mtimeMs: number): CleanedSegmentResult {
    this.maybeAppendTime();
    const files: TrashFile[] = [];
    if (this.write) {
      this.flushPending();
      this.steps.at('flush-cleaned', this.logPath);
      fsyncSync(this.fd);
      closeSync(this.fd);
      this.fd = -1;
      files.push({ name: segmentFileName(this.baseOffset, '.log'), size: this.size, mtimeMs, crc32c: this.crc >>> 0 });
      const put = (suffix: string, data: Buffer) => {
        const p = join(this.dir, segmentFileName(this.baseOffset, suffix + '.cleaned'));
        this.steps.writeFile('write-cleaned-index', p, data);
        files.push({ name: segmentFileName(this.baseOffset, suffix), size: data.length, mtimeMs, crc32c: crc32c(data) });
      };
      // An index that cannot be encoded names the index file it was for (errorAt).
      const encoded = (suffix: string, encode: () => Buffer) => {
        try {
          return encode();
        } catch (err) {
          throw errorAt(err, { file: join(this.dir, segmentFileName(this.baseOffset, suffix + '.cleaned')) }, `cannot write the cleaned segment's ${suffix}`, 'invalid-argument');
        }
      };
      put('.index', encoded('.index', () => encodeOffsetIndex(this.baseOffset, this.offsetIndex)));
      put('.timeindex', encoded('.timeindex', () => encodeTimeIndex(this.baseOffset, this.timeIndex)));
      if (this.abortedTxns.length > 0) put('.txnindex', encoded('.txnindex', () => encodeTxnIndex(this.baseOffset, this.abortedTxns)));
      const t = new Date(mtimeMs);
      for (const f of files) utimesSync(join(this.dir, f.name + '.cleaned'), t, t);
    }
    return {
      baseOffset: this.baseOffset,
      size: this.size,
      batches: this.batches,
      records: this.records,
      firstOffset: this.firstOffset,
      lastOffset: this.lastOffset,
      offsetIndexEntries: this.offsetIndex,
      timeIndexEntries: this.timeIndex,
      abortedTxns: this.abortedTxns,
      files,
    };
  }

  /** Closes and removes what was written (a rollback). Never throws. */
  abort(): void {
    if (this.fd >= 0) {
      try {
        closeSync(this.fd);
      } catch {
        /* ignore */
      }
      this.fd = -1;
    }
    if (!this.write) return;
    for (const s of ['.log', '.index', '.timeindex', '.txnindex']) {
      try {
        unlinkSync(join(this.dir, segmentFileName(this.baseOffset, s + '.cleaned')));
      } catch {
        /* not there */
      }
    }
  }
}

/** CRC-32C of `data` continuing from the CRC of what came before (native, `@node-rs/crc32`). */
function crc32cUpdate(data: Uint8Array, state: number): number {
  return nativeCrc32c(data, state) >>> 0;
}
