/**
 * Transaction index `N.txnindex` (spec §9.3; Kafka's `TransactionIndex` and `AbortedTxn`).
 *
 * Format: a flat array of 34-byte big-endian entries, no header, not preallocated:
 *
 * | pos | size | field |
 * |---|---|---|
 * | 0  | 2 | version int16 = 0 |
 * | 2  | 8 | producerId int64 |
 * | 10 | 8 | firstOffset int64: first offset of the aborted transaction (may be in an earlier segment) |
 * | 18 | 8 | lastOffset int64: offset of the ABORT marker |
 * | 26 | 8 | lastStableOffset int64: LSO right after this abort |
 *
 * Invariants: the file exists only once a segment receives an ABORT marker of a non-empty transaction;
 * entries are appended in strictly increasing `lastOffset`; every `lastOffset` lies in this segment
 * (≥ base offset B). Kafka's reader (TransactionIndex, AbortedTxn.version) ignores a trailing partial entry (< 34 bytes), checks the version
 * via the first byte only (`> 0` is an error) and its sanity check rejects an entry with
 * `lastOffset < B` (TransactionIndex.sanityCheck); a broker then rebuilds the segment's indexes
 * (LogLoader.loadSegmentFiles recovers it on CorruptIndexException).
 */
import { basename } from 'node:path';
import { KlxError } from '../errors.ts';
import { offsetFromFileName } from './file-names.ts';
import { readFileBytes, writeFileAtomic, type WriteOptions } from './fsync-write.ts';
import type { IndexProblem } from './index-file.ts';

/** Size of one transaction-index entry, in bytes. */
export const TXN_INDEX_ENTRY_SIZE = 34;
/** The only entry version Kafka writes (AbortedTxn.CURRENT_VERSION). */
export const ABORTED_TXN_VERSION = 0;

/** One aborted transaction. Offsets are absolute. */
export interface AbortedTxn {
  /** Entry version (int16; 0). */
  version: number;
  producerId: bigint;
  /** First offset of the aborted transaction. */
  firstOffset: bigint;
  /** Offset of the ABORT marker. */
  lastOffset: bigint;
  /** Last stable offset right after the abort. */
  lastStableOffset: bigint;
}

/** A decoded transaction index file. */
export interface TxnIndexFile {
  /** Segment base offset B. */
  baseOffset: bigint;
  /** Entries up to the first one Kafka could not read (an unknown version: TransactionIndex's iterator throws). */
  entries: AbortedTxn[];
  /** File size in bytes. */
  fileSize: number;
  /** Bytes at the end that do not make a whole entry (ignored, as Kafka's TransactionIndex does). */
  trailingBytes: number;
  problems: IndexProblem[];
}

/** Options of {@link parseTxnIndex} / {@link readTxnIndex}. */
export interface TxnIndexReadOptions {
  /** Segment base offset; by default taken from the file name. */
  baseOffset?: bigint;
  /** Name used in problems (default: the path, or `'<buffer>'`). */
  file?: string;
}

/**
 * Decodes a transaction index held in memory.
 * @returns entries and problems: `txn-last-offset-below-base` and `unsupported-version` are what Kafka
 *   rejects (`kafkaCorrupt`: TransactionIndex.sanityCheck, its iterator); `out-of-order` and `partial-entry` are reported only. Never throws on content.
 */
export function parseTxnIndex(buf: Uint8Array, baseOffset: bigint, opts: Omit<TxnIndexReadOptions, 'baseOffset'> = {}): TxnIndexFile {
  const file = opts.file ?? '<buffer>';
  const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const whole = Math.floor(buf.length / TXN_INDEX_ENTRY_SIZE);
  const entries: AbortedTxn[] = [];
  const problems: IndexProblem[] = [];
  let belowBase = false;
  let outOfOrder = false;
  for (let i = 0; i < whole; i++) {
    const p = i * TXN_INDEX_ENTRY_SIZE;
    const firstByte = view.getInt8(p);
    if (firstByte > ABORTED_TXN_VERSION) {
      problems.push({ kind: 'unsupported-version', file, position: p, reason: `aborted transaction entry ${i} has version ${view.getInt16(p)}; only version 0 is known`, kafkaCorrupt: true });
      break;
    }
    const txn: AbortedTxn = {
      version: view.getInt16(p),
      producerId: view.getBigInt64(p + 2),
      firstOffset: view.getBigInt64(p + 10),
      lastOffset: view.getBigInt64(p + 18),
      lastStableOffset: view.getBigInt64(p + 26),
    };
    if (txn.lastOffset < baseOffset && !belowBase) {
      belowBase = true;
      problems.push({
        kind: 'txn-last-offset-below-base',
        file,
        position: p,
        reason: `last offset ${txn.lastOffset} of aborted transaction entry ${i} (producer ${txn.producerId}) is less than the base offset ${baseOffset}`,
        kafkaCorrupt: true,
      });
    }
    const prev = entries[entries.length - 1];
    if (prev && txn.lastOffset <= prev.lastOffset && !outOfOrder) {
      outOfOrder = true;
      problems.push({ kind: 'out-of-order', file, position: p, reason: `entry ${i} has last offset ${txn.lastOffset}, not above the previous ${prev.lastOffset}`, kafkaCorrupt: false });
    }
    entries.push(txn);
  }
  const trailingBytes = buf.length % TXN_INDEX_ENTRY_SIZE;
  if (trailingBytes !== 0) {
    problems.push({ kind: 'partial-entry', file, position: whole * TXN_INDEX_ENTRY_SIZE, reason: `${trailingBytes} trailing bytes do not make a whole ${TXN_INDEX_ENTRY_SIZE}-byte entry (ignored)`, kafkaCorrupt: false });
  }
  return { baseOffset, entries, fileSize: buf.length, trailingBytes, problems };
}

/**
 * Reads and decodes an `N.txnindex` file.
 * @throws KlxError `not-found` / `io-error` when the file cannot be read; `invalid-argument` when no
 *   base offset is given and the name does not start with one. Content problems are reported, not thrown.
 */
export function readTxnIndex(path: string, opts: TxnIndexReadOptions = {}): TxnIndexFile {
  const baseOffset = opts.baseOffset ?? offsetFromFileName(basename(path));
  return parseTxnIndex(readFileBytes(path), baseOffset, { file: opts.file ?? path });
}

/** Result of {@link collectAbortedTxns}. */
export interface TxnIndexSearchResult {
  abortedTransactions: AbortedTxn[];
  /** True when a later segment's index cannot hold more relevant entries (an entry's LSO ≥ the upper bound). */
  isComplete: boolean;
}

/**
 * Kafka `TransactionIndex.collectAbortedTxns`: the aborted transactions overlapping the fetch range
 * `[fetchOffset, upperBoundOffset)`: entries with `lastOffset ≥ fetchOffset` and `firstOffset < upperBoundOffset`,
 * stopping (complete) at the first entry whose `lastStableOffset ≥ upperBoundOffset`.
 */
export function collectAbortedTxns(entries: readonly AbortedTxn[], fetchOffset: bigint, upperBoundOffset: bigint): TxnIndexSearchResult {
  const abortedTransactions: AbortedTxn[] = [];
  for (const t of entries) {
    if (t.lastOffset >= fetchOffset && t.firstOffset < upperBoundOffset) abortedTransactions.push(t);
    if (t.lastStableOffset >= upperBoundOffset) return { abortedTransactions, isComplete: true };
  }
  return { abortedTransactions, isComplete: false };
}

/** An aborted transaction to write; `version` defaults to 0. */
export type AbortedTxnInput = Omit<AbortedTxn, 'version'> & { version?: number };

/**
 * Encodes transaction-index entries (34 bytes each).
 * @throws KlxError `invalid-argument` when last offsets do not strictly increase (Kafka
 *   `TransactionIndex.append` refuses it), a last offset is below the base offset, or a version is not 0.
 */
export function encodeTxnIndex(baseOffset: bigint, entries: readonly AbortedTxnInput[]): Buffer {
  const buf = Buffer.alloc(entries.length * TXN_INDEX_ENTRY_SIZE);
  let prev: bigint | undefined;
  entries.forEach((t, i) => {
    const version = t.version ?? ABORTED_TXN_VERSION;
    if (version !== ABORTED_TXN_VERSION) throw new KlxError('invalid-argument', `aborted transaction ${i}: version ${version} is not supported`);
    if (t.lastOffset < baseOffset) throw new KlxError('invalid-argument', `aborted transaction ${i}: last offset ${t.lastOffset} is below the base offset ${baseOffset}`);
    if (prev !== undefined && t.lastOffset <= prev) throw new KlxError('invalid-argument', `aborted transaction ${i}: last offset ${t.lastOffset} is not above the previous ${prev}`);
    const p = i * TXN_INDEX_ENTRY_SIZE;
    buf.writeInt16BE(version, p);
    buf.writeBigInt64BE(t.producerId, p + 2);
    buf.writeBigInt64BE(t.firstOffset, p + 10);
    buf.writeBigInt64BE(t.lastOffset, p + 18);
    buf.writeBigInt64BE(t.lastStableOffset, p + 26);
    prev = t.lastOffset;
  });
  return buf;
}

/**
 * Writes an `N.txnindex` file atomically and durably (via `<path>.tmp`).
 * @throws KlxError `invalid-argument` (see {@link encodeTxnIndex}), `io-error`; or what `opts.fault` throws.
 */
export function writeTxnIndex(path: string, baseOffset: bigint, entries: readonly AbortedTxnInput[], opts: WriteOptions = {}): void {
  writeFileAtomic(path, encodeTxnIndex(baseOffset, entries), opts);
}
