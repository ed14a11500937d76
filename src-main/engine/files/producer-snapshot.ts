/**
 * Producer state snapshot `M.snapshot` (spec §9.4; Kafka's `ProducerStateManager.readSnapshot` /
 * `writeSnapshot` and `storage/src/main/resources/message/ProducerSnapshot.json`).
 *
 * Name: 20-digit offset M + `.snapshot`; M is the log end offset when the snapshot was taken (at
 * every roll, so M is normally a segment base offset; also at shutdown and after recovery).
 *
 * Format (version 1, big-endian):
 *
 * | pos | size | field |
 * |---|---|---|
 * | 0 | 2 | version int16 = 1 |
 * | 2 | 4 | crc uint32 = CRC-32C of bytes `[6, end)` |
 * | 6 | 4 | entry count int32 |
 * | 10 | 46 each | producerId int64, producerEpoch int16, lastSequence int32, lastOffset int64, offsetDelta int32, timestamp int64, coordinatorEpoch int32, currentTxnFirstOffset int64 |
 *
 * Invariants: the CRC matches; the count fits the file. Kafka deletes a snapshot that fails either
 * (`CorruptSnapshotException`), loads the previous one or, with none left, rebuilds producer state
 * from the log (`ProducerStateManager.loadFromSnapshot`); snapshots are only a
 * loading shortcut, so a writer may omit them.
 */
import { basename } from 'node:path';
import { KlxError } from '../errors.ts';
import { crc32c } from '../format/crc.ts';
import { offsetFromFileName } from './file-names.ts';
import { readFileBytes, writeFileAtomic, type WriteOptions } from './fsync-write.ts';

/** The snapshot version Kafka writes and reads (ProducerStateManager.writeSnapshot/readSnapshot). */
export const PRODUCER_SNAPSHOT_VERSION = 1;
/** Byte position where the CRC-covered part (entry count + entries) starts. */
export const PRODUCER_ENTRIES_OFFSET = 6;
/** Size of one producer entry, in bytes. */
export const PRODUCER_ENTRY_SIZE = 46;

/** The state of one producer at snapshot time. */
export interface ProducerSnapshotEntry {
  producerId: bigint;
  /** int16. */
  producerEpoch: number;
  /** Sequence number of the last record of the producer's last batch (int32). */
  lastSequence: number;
  /** Last offset of the producer's last batch. */
  lastOffset: bigint;
  /** lastSequence − firstSequence of that batch (int32). */
  offsetDelta: number;
  /** Max timestamp of that batch, in ms. */
  timestamp: bigint;
  /** Coordinator epoch of the last transaction marker (int32; −1 if none). */
  coordinatorEpoch: number;
  /** First offset of the producer's open transaction, or −1. */
  currentTxnFirstOffset: bigint;
}

/** A decoded snapshot file. */
export interface ProducerSnapshotFile {
  /** Offset M from the file name (when read from a file; otherwise as given, or −1). */
  offset: bigint;
  version: number;
  /** Stored CRC (uint32). */
  crc: number;
  /** CRC-32C of bytes `[6, end)` (uint32). */
  computedCrc: number;
  crcValid: boolean;
  entries: ProducerSnapshotEntry[];
  /** File size in bytes. */
  fileSize: number;
  /** Bytes after the last entry (covered by the CRC, ignored by Kafka's reader, ProducerStateManager.readSnapshot). */
  trailingBytes: number;
}

/** Options of {@link parseProducerSnapshot} / {@link readProducerSnapshot}. */
export interface ProducerSnapshotReadOptions {
  /** Name used in errors. */
  file?: string;
  /** Snapshot offset M (default: from the file name, or −1 for a buffer). */
  offset?: bigint;
  /** Throw on a CRC mismatch instead of reporting `crcValid: false` (what Kafka does: ProducerStateManager.readSnapshot throws CorruptSnapshotException). Default false. */
  requireValidCrc?: boolean;
}

/**
 * Decodes a producer snapshot held in memory and checks its CRC-32C.
 * @throws KlxError `corrupt-checkpoint` (the state-file code; there is no snapshot-specific one) with
 *   the byte position, for a file shorter than 10 bytes, a version other than 1, a count that does not
 *   fit the file, and (with `requireValidCrc`) a CRC mismatch.
 */
export function parseProducerSnapshot(buf: Uint8Array, opts: ProducerSnapshotReadOptions = {}): ProducerSnapshotFile {
  const file = opts.file ?? '<buffer>';
  const fail = (reason: string, position: number): KlxError => new KlxError('corrupt-checkpoint', reason, { file, position, details: { kind: 'producer-snapshot' } });
  if (buf.length < PRODUCER_ENTRIES_OFFSET + 4) throw fail(`producer snapshot is ${buf.length} bytes, shorter than its 10-byte header`, 0);
  const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const version = view.getInt16(0);
  if (version !== PRODUCER_SNAPSHOT_VERSION) throw fail(`unknown producer snapshot version ${version}`, 0);
  const crc = view.getUint32(2);
  const computedCrc = crc32c(buf.subarray(PRODUCER_ENTRIES_OFFSET));
  const crcValid = crc === computedCrc;
  if (!crcValid && opts.requireValidCrc) throw fail(`CRC-32C mismatch: stored 0x${crc.toString(16).padStart(8, '0')}, computed 0x${computedCrc.toString(16).padStart(8, '0')}`, 2);
  const count = view.getInt32(6);
  const room = Math.floor((buf.length - 10) / PRODUCER_ENTRY_SIZE);
  if (count < 0 || count > room) throw fail(`entry count ${count} does not fit the ${buf.length - 10} bytes after the header`, 6);
  const entries: ProducerSnapshotEntry[] = new Array(count);
  for (let i = 0; i < count; i++) {
    const p = 10 + i * PRODUCER_ENTRY_SIZE;
    entries[i] = {
      producerId: view.getBigInt64(p),
      producerEpoch: view.getInt16(p + 8),
      lastSequence: view.getInt32(p + 10),
      lastOffset: view.getBigInt64(p + 14),
      offsetDelta: view.getInt32(p + 22),
      timestamp: view.getBigInt64(p + 26),
      coordinatorEpoch: view.getInt32(p + 34),
      currentTxnFirstOffset: view.getBigInt64(p + 38),
    };
  }
  return {
    offset: opts.offset ?? -1n,
    version,
    crc,
    computedCrc,
    crcValid,
    entries,
    fileSize: buf.length,
    trailingBytes: buf.length - 10 - count * PRODUCER_ENTRY_SIZE,
  };
}

/**
 * Reads an `M.snapshot` file; M comes from its name unless `opts.offset` is set.
 * @throws KlxError `not-found`, `io-error`, `invalid-argument` (name without an offset), `corrupt-checkpoint`.
 */
export function readProducerSnapshot(path: string, opts: ProducerSnapshotReadOptions = {}): ProducerSnapshotFile {
  const offset = opts.offset ?? offsetFromFileName(basename(path));
  return parseProducerSnapshot(readFileBytes(path), { ...opts, file: opts.file ?? path, offset });
}

/**
 * Encodes a version-1 producer snapshot with its CRC-32C.
 * @throws KlxError `invalid-argument` for a field outside its integer range.
 */
export function encodeProducerSnapshot(entries: readonly ProducerSnapshotEntry[]): Buffer {
  const buf = Buffer.alloc(10 + entries.length * PRODUCER_ENTRY_SIZE);
  buf.writeInt16BE(PRODUCER_SNAPSHOT_VERSION, 0);
  buf.writeInt32BE(entries.length, 6);
  try {
    entries.forEach((e, i) => {
      const p = 10 + i * PRODUCER_ENTRY_SIZE;
      buf.writeBigInt64BE(e.producerId, p);
      buf.writeInt16BE(e.producerEpoch, p + 8);
      buf.writeInt32BE(e.lastSequence, p + 10);
      buf.writeBigInt64BE(e.lastOffset, p + 14);
      buf.writeInt32BE(e.offsetDelta, p + 22);
      buf.writeBigInt64BE(e.timestamp, p + 26);
      buf.writeInt32BE(e.coordinatorEpoch, p + 34);
      buf.writeBigInt64BE(e.currentTxnFirstOffset, p + 38);
    });
  } catch (err) {
    throw new KlxError('invalid-argument', `producer snapshot entry out of range: ${(err as Error).message}`, { cause: err });
  }
  buf.writeUInt32BE(crc32c(buf.subarray(PRODUCER_ENTRIES_OFFSET)), 2);
  return buf;
}

/**
 * Writes an `M.snapshot` file atomically and durably.
 * @throws KlxError `invalid-argument`, `io-error`; or what `opts.fault` throws.
 */
export function writeProducerSnapshot(path: string, entries: readonly ProducerSnapshotEntry[], opts: WriteOptions = {}): void {
  writeFileAtomic(path, encodeProducerSnapshot(entries), opts);
}
