/**
 * One segment of a partition: `N.log` plus its `.index`, `.timeindex` and optional `.txnindex`
 * (spec §10.1; Kafka's `LogSegment`). N is the segment's base offset; every batch in the segment
 * has offsets ≥ N (the first batch may start above N after compaction) and, for index purposes,
 * relative offsets `offset − N` within int32.
 *
 * Reading is lazy and read-only: constructing a segment only records names and sizes; indexes are
 * read on first use (they are bounded: ≤ segment.index.bytes); the `.log` is only ever streamed.
 */
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { scanLogFile, type BatchEntry, type LogEntry, type ScanOptions } from '../format/log-reader.ts';
import type { BatchHeader } from '../format/types.ts';
import { segmentFileName } from '../files/file-names.ts';
import { lookupOffset, parseOffsetIndex, readOffsetIndex, type OffsetIndexFile } from '../files/offset-index.ts';
import { parseTimeIndex, readTimeIndex, type TimeIndexFile } from '../files/time-index.ts';
import { readTxnIndex, type TxnIndexFile } from '../files/txn-index.ts';

/** Facts about a segment's files, known without reading them. */
export interface SegmentFiles {
  log: string;
  index: string;
  timeindex: string;
  txnindex: string;
  /** Byte sizes; −1 when the file is missing. */
  logSize: number;
  indexSize: number;
  timeindexSize: number;
  txnindexSize: number;
  /** mtime of the `.log`, ms since the epoch. */
  logModifiedMs: number;
}

function sizeOf(p: string): number {
  try {
    return statSync(p).size;
  } catch {
    return -1;
  }
}

/** A segment of a partition log. See the module comment. */
export class LogSegment {
  readonly baseOffset: bigint;
  readonly dir: string;
  readonly files: SegmentFiles;
  private cachedIndex?: OffsetIndexFile;
  private cachedTimeIndex?: TimeIndexFile;
  private cachedTxnIndex?: TxnIndexFile | null;
  private cachedLast?: BatchHeader | null;
  private cachedFirst?: BatchHeader | null;

  /**
   * @param absent names of files to treat as missing whatever the folder holds (symlinks the open
   *   refused, `files/symlinks.ts`).
   * @param fileSuffix a transient suffix after each file name (`.swap` reads `N.log.swap` with
   *   `N.index.swap`...), as Kafka's `LogSegment.open(..., fileSuffix)` does; '' for a segment.
   * @throws the `statSync` error when the `.log` file does not exist.
   */
  constructor(dir: string, baseOffset: bigint, absent?: ReadonlySet<string>, fileSuffix = '') {
    this.dir = dir;
    this.baseOffset = baseOffset;
    const base = segmentFileName(baseOffset, '');
    const log = join(dir, base + '.log' + fileSuffix);
    const index = join(dir, base + '.index' + fileSuffix);
    const timeindex = join(dir, base + '.timeindex' + fileSuffix);
    const txnindex = join(dir, base + '.txnindex' + fileSuffix);
    const st = statSync(log);
    const size = (p: string, name: string) => (absent?.has(name) ? -1 : sizeOf(p));
    this.files = { log, index, timeindex, txnindex, logSize: st.size, indexSize: size(index, base + '.index' + fileSuffix), timeindexSize: size(timeindex, base + '.timeindex' + fileSuffix), txnindexSize: size(txnindex, base + '.txnindex' + fileSuffix), logModifiedMs: st.mtimeMs };
  }

  /** Bytes of the `.log` file. */
  get size(): number {
    return this.files.logSize;
  }

  /** The offset index as read from disk (empty contents when the file is missing). */
  offsetIndex(): OffsetIndexFile {
    return (this.cachedIndex ??=
      this.files.indexSize < 0
        ? parseOffsetIndex(new Uint8Array(0), this.baseOffset, { file: this.files.index })
        : readOffsetIndex(this.files.index, { baseOffset: this.baseOffset, logSize: this.files.logSize }));
  }

  /** The time index as read from disk (empty contents when the file is missing). */
  timeIndex(): TimeIndexFile {
    return (this.cachedTimeIndex ??=
      this.files.timeindexSize < 0 ? parseTimeIndex(new Uint8Array(0), this.baseOffset, { file: this.files.timeindex }) : readTimeIndex(this.files.timeindex, { baseOffset: this.baseOffset }));
  }

  /** The aborted-transaction index, or null when the segment has none. */
  txnIndex(): TxnIndexFile | null {
    if (this.cachedTxnIndex === undefined) this.cachedTxnIndex = this.files.txnindexSize >= 0 && existsSync(this.files.txnindex) ? readTxnIndex(this.files.txnindex, { baseOffset: this.baseOffset }) : null;
    return this.cachedTxnIndex;
  }

  /**
   * Streams the segment's entries.
   * @param fromOffset start at the index position for this offset (entries before it are skipped
   *   by position only: the first yielded batch may still end before `fromOffset`).
   */
  scan(opts: ScanOptions & { fromOffset?: bigint } = {}): Generator<LogEntry> {
    const start = opts.fromOffset !== undefined ? this.positionFor(opts.fromOffset) : opts.start;
    return scanLogFile(this.files.log, { ...opts, start });
  }

  /**
   * Byte position to start reading for `offset`: the index entry with the largest offset ≤ target,
   * else 0 (spec §9.1 lookup). Index entries past the end of the `.log` are ignored.
   */
  positionFor(offset: bigint): number {
    if (this.files.indexSize <= 0 || offset <= this.baseOffset) return 0;
    const hit = lookupOffset(this.offsetIndex(), offset);
    return hit.position < this.files.logSize ? hit.position : 0;
  }

  /** Header of the first batch, or null for an empty (or unreadable) segment. */
  firstBatch(): BatchHeader | null {
    if (this.cachedFirst === undefined) {
      this.cachedFirst = null;
      for (const e of scanLogFile(this.files.log, { verifyCrc: false, chunkSize: 64 * 1024, resync: false })) {
        if (e.type === 'batch') this.cachedFirst = e.header;
        break;
      }
    }
    return this.cachedFirst;
  }

  /**
   * Header of the last intact batch. Reads from the last usable offset-index entry to the end of
   * the file (a few KiB on a broker-written segment), or the whole file when there is no index.
   */
  lastBatch(): BatchHeader | null {
    if (this.cachedLast === undefined) {
      let start = 0;
      if (this.files.indexSize > 0) {
        const entries = this.offsetIndex().entries;
        for (let i = entries.length - 1; i >= 0; i--) {
          if (entries[i]!.position < this.files.logSize) {
            start = entries[i]!.position;
            break;
          }
        }
      }
      let last: BatchHeader | null = null;
      const walk = (from: number) => {
        for (const e of scanLogFile(this.files.log, { verifyCrc: false, start: from, resync: false })) if (e.type === 'batch') last = e.header;
      };
      walk(start);
      // A stale index entry that does not point at a batch start yields damage; fall back to a full walk.
      if (last === null && start > 0) walk(0);
      this.cachedLast = last;
    }
    return this.cachedLast;
  }

  /** The offset after this segment's last batch, or the base offset when it holds none. */
  nextOffset(): bigint {
    const last = this.lastBatch();
    return last ? last.lastOffset + 1n : this.baseOffset;
  }

  /** Walks batch headers only (no decompression, no CRC unless asked). */
  *batches(opts: { verifyCrc?: boolean } = {}): Generator<BatchEntry> {
    for (const e of scanLogFile(this.files.log, { verifyCrc: opts.verifyCrc ?? false })) if (e.type === 'batch') yield e;
  }

  /** Forgets cached index and batch facts (after the files changed). */
  invalidate(): void {
    this.cachedIndex = undefined;
    this.cachedTimeIndex = undefined;
    this.cachedTxnIndex = undefined;
    this.cachedLast = undefined;
    this.cachedFirst = undefined;
    const st = statSync(this.files.log);
    this.files.logSize = st.size;
    this.files.logModifiedMs = st.mtimeMs;
    this.files.indexSize = sizeOf(this.files.index);
    this.files.timeindexSize = sizeOf(this.files.timeindex);
    this.files.txnindexSize = sizeOf(this.files.txnindex);
  }
}
