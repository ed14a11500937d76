/**
 * Producer state as the partition writer keeps it (spec §9.4; Kafka's `ProducerStateManager`,
 * `ProducerStateEntry`, `ProducerAppendInfo`): who has written, with which epoch and sequences,
 * and which transactions are open, so that an append is checked as a leader checks a client's
 * batch, an ABORT marker gets its `.txnindex` entry, and each roll writes the `M.snapshot` a broker
 * writes (`ProducerStateManager.takeSnapshot`).
 *
 * Loading follows `ProducerStateManager.truncateAndReload` + `UnifiedLog.rebuildProducerState`: the
 * newest snapshot at or below the log end offset whose CRC checks (entries of producers expired at
 * `now` are dropped, `isProducerExpired`), then every batch from its offset to the log end; without
 * a snapshot, every batch from the log start. Replayed batches are not validated (as for
 * `AppendOrigin.REPLICATION`); appended ones are (as for `AppendOrigin.CLIENT`, markers as
 * `COORDINATOR`) with transaction version 0/1 rules (a marker's epoch may equal the producer's).
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { join } from 'node:path';
import { KlxError } from '../errors.ts';
import { CONTROL_ABORT, CONTROL_COMMIT } from '../format/control.ts';
import { MAX_ENTRY_BYTES } from '../format/log-reader.ts';
import { decodeV2Header, decodeV2Records } from '../format/record-batch.ts';
import { V2_HEADER_SIZE, type BatchHeader } from '../format/types.ts';
import { readProducerSnapshot, type ProducerSnapshotEntry } from '../files/producer-snapshot.ts';
import type { PartitionLog } from './partition-log.ts';

/** Kafka's `producer.id.expiration.ms` default: 1 day. */
export const DEFAULT_PRODUCER_ID_EXPIRATION_MS = 86_400_000;
/** `ProducerStateEntry.NUM_BATCHES_TO_RETAIN`: batches remembered per producer for duplicate detection. */
export const NUM_BATCHES_TO_RETAIN = 5;
const INT32_MAX = 2147483647;

/** One remembered data batch (`BatchMetadata`). */
export interface ProducerBatch {
  firstSeq: number;
  lastSeq: number;
  firstOffset: bigint;
  lastOffset: bigint;
  timestamp: bigint;
}

/** The state of one producer (`ProducerStateEntry`). */
export interface ProducerEntry {
  producerId: bigint;
  /** −1 (`NO_PRODUCER_EPOCH`) until a batch sets it. */
  producerEpoch: number;
  coordinatorEpoch: number;
  lastTimestamp: bigint;
  /** First offset of the open transaction, or −1. */
  currentTxnFirstOffset: bigint;
  /** The last data batches of the current epoch, oldest first (at most {@link NUM_BATCHES_TO_RETAIN}). */
  batches: ProducerBatch[];
}

/** A transaction that a marker ends (`CompletedTxn`). */
export interface CompletedTxn {
  producerId: bigint;
  firstOffset: bigint;
  /** Offset of the marker. */
  lastOffset: bigint;
  isAborted: boolean;
}

/** `DefaultRecordBatch.incrementSequence`: sequences wrap from 2^31−1 to 0. */
export function incrementSequence(sequence: number, increment: number): number {
  return sequence > INT32_MAX - increment ? increment - (INT32_MAX - sequence) - 1 : sequence + increment;
}

function emptyEntry(producerId: bigint): ProducerEntry {
  return { producerId, producerEpoch: -1, coordinatorEpoch: -1, lastTimestamp: -1n, currentTxnFirstOffset: -1n, batches: [] };
}

function cloneEntry(e: ProducerEntry): ProducerEntry {
  return { ...e, batches: [...e.batches] };
}

/** `ProducerStateEntry.maybeUpdateProducerEpoch`: a new epoch forgets the batches of the old one. */
function setEpoch(e: ProducerEntry, epoch: number): void {
  if (e.producerEpoch !== epoch) {
    e.batches = [];
    e.producerEpoch = epoch;
  }
}

function addBatch(e: ProducerEntry, epoch: number, b: ProducerBatch): void {
  setEpoch(e, epoch);
  if (e.batches.length === NUM_BATCHES_TO_RETAIN) e.batches.shift();
  e.batches.push(b);
  e.lastTimestamp = b.timestamp;
}

/** What an append of a data batch does to producer state (see {@link ProducerStateTracker.checkData}). */
export interface DataBatchInput {
  producerId: bigint;
  producerEpoch: number;
  baseSequence: number;
  baseOffset: bigint;
  lastOffset: bigint;
  maxTimestamp: bigint;
  isTransactional: boolean;
}

/** A transaction marker to append (see {@link ProducerStateTracker.checkMarker}). */
export interface MarkerInput {
  producerId: bigint;
  producerEpoch: number;
  coordinatorEpoch: number;
  type: 'COMMIT' | 'ABORT';
  offset: bigint;
  timestamp: bigint;
}

/**
 * The producers of one partition and their open transactions, updated append by append.
 * Methods named `check*` validate and return the would-be entry without changing anything;
 * {@link apply} commits it once the batch is on disk.
 */
export class ProducerStateTracker {
  /** Producers by id. */
  readonly producers = new Map<bigint, ProducerEntry>();
  /** The offset up to which the state reflects the log (`lastMapOffset`). */
  mapEndOffset: bigint;
  /** Offset of the newest snapshot file (`lastSnapOffset`), or −1. */
  lastSnapshotOffset: bigint;
  /** The snapshot the state was loaded from, or null when the log was replayed from its start. */
  readonly loadedFromSnapshot: bigint | null;

  private constructor(mapEndOffset: bigint, lastSnapshotOffset: bigint, loadedFromSnapshot: bigint | null) {
    this.mapEndOffset = mapEndOffset;
    this.lastSnapshotOffset = lastSnapshotOffset;
    this.loadedFromSnapshot = loadedFromSnapshot;
  }

  /**
   * Loads the state of a partition up to `logEndOffset` (see the module comment).
   * @param nowMs wall clock (ms) for the expiration of snapshot entries.
   * @throws KlxError `io-error` when a `.log` cannot be read.
   */
  static load(log: PartitionLog, logEndOffset: bigint, nowMs: bigint, expirationMs = DEFAULT_PRODUCER_ID_EXPIRATION_MS): ProducerStateTracker {
    const snaps = [...log.listing.snapshots].sort((a, b) => (a.baseOffset < b.baseOffset ? 1 : -1));
    const newestSnapshot = snaps.length ? snaps[0]!.baseOffset : -1n;
    let loaded: bigint | null = null;
    const producers = new Map<bigint, ProducerEntry>();
    for (const s of snaps) {
      if (s.baseOffset > logEndOffset || s.baseOffset < log.logStartOffset) continue;
      try {
        const snap = readProducerSnapshot(join(log.dir, s.name), { requireValidCrc: true });
        for (const p of snap.entries) {
          if (p.currentTxnFirstOffset < 0n && nowMs - p.timestamp >= BigInt(expirationMs)) continue;
          const e = emptyEntry(p.producerId);
          e.producerEpoch = p.producerEpoch;
          e.coordinatorEpoch = p.coordinatorEpoch;
          e.lastTimestamp = p.timestamp;
          e.currentTxnFirstOffset = p.currentTxnFirstOffset;
          if (p.lastOffset >= 0n) {
            e.batches.push({ firstSeq: incrementSequence(p.lastSequence, -p.offsetDelta), lastSeq: p.lastSequence, firstOffset: p.lastOffset - BigInt(p.offsetDelta), lastOffset: p.lastOffset, timestamp: p.timestamp });
          }
          producers.set(p.producerId, e);
        }
        loaded = s.baseOffset;
        break;
      } catch {
        // A corrupt snapshot: a broker deletes it and tries the previous one (ProducerStateManager.loadFromSnapshot).
      }
    }
    const t = new ProducerStateTracker(logEndOffset, newestSnapshot, loaded);
    for (const [k, v] of producers) t.producers.set(k, v);
    const from = loaded ?? log.logStartOffset;
    for (let si = 0; si < log.segments.length; si++) {
      const seg = log.segments[si]!;
      const next = log.segments[si + 1];
      if (next && next.baseOffset <= from) continue;
      for (const b of producerBatches(seg.files.log, seg.positionFor(from))) {
        const h = b.header;
        if (h.lastOffset < from || h.producerId < 0n || h.baseOffset >= logEndOffset) continue;
        t.replay(h, b.read);
      }
    }
    return t;
  }

  /** Applies a batch read from the log without validation (`AppendOrigin.REPLICATION`). */
  private replay(h: BatchHeader, read: () => Buffer): void {
    const e = this.producers.get(h.producerId) ?? emptyEntry(h.producerId);
    if (h.isControl) {
      let marker: { type: number; coordinatorEpoch: number; timestamp: bigint } | null = null;
      try {
        const r = decodeV2Records(h, read())[0];
        const c = r?.control;
        if (c && (c.typeId === CONTROL_ABORT || c.typeId === CONTROL_COMMIT)) marker = { type: c.typeId, coordinatorEpoch: c.coordinatorEpoch ?? -1, timestamp: r!.timestamp };
      } catch {
        marker = null;
      }
      if (!marker) return; // an empty control batch (its transaction was cleaned away) changes nothing
      setEpoch(e, h.producerEpoch);
      e.coordinatorEpoch = marker.coordinatorEpoch;
      e.lastTimestamp = marker.timestamp;
      e.currentTxnFirstOffset = -1n;
    } else {
      addBatch(e, h.producerEpoch, { firstSeq: h.baseSequence, lastSeq: incrementSequence(h.baseSequence, h.lastOffsetDelta), firstOffset: h.baseOffset, lastOffset: h.lastOffset, timestamp: h.maxTimestamp });
      if (h.isTransactional && e.currentTxnFirstOffset < 0n) e.currentTxnFirstOffset = h.baseOffset;
    }
    this.producers.set(h.producerId, e);
  }

  /** The sequence a next batch of this producer and epoch must start with (0 for a new producer or epoch). */
  nextSequence(producerId: bigint, producerEpoch: number): number {
    const e = this.producers.get(producerId);
    if (!e || e.producerEpoch !== producerEpoch || e.batches.length === 0) return 0;
    return incrementSequence(e.batches[e.batches.length - 1]!.lastSeq, 1);
  }

  /** The epoch of a producer (−1 when unknown). */
  epochOf(producerId: bigint): number {
    return this.producers.get(producerId)?.producerEpoch ?? -1;
  }

  /**
   * Checks a data batch as a leader checks a client's (`ProducerAppendInfo.appendDataBatch`,
   * `checkProducerEpoch`, `checkSequence`, `ProducerStateEntry.findDuplicateBatch`).
   * @returns the producer's entry after the batch.
   * @throws KlxError `invalid-record` with Kafka's message for an older epoch
   *   (InvalidProducerEpochException), a sequence out of order (OutOfOrderSequenceException), a
   *   non-transactional batch while the producer's transaction is open (InvalidTxnStateException),
   *   and a duplicate of a recent batch (a broker acknowledges it with the original offsets and
   *   appends nothing: ProducerStateEntry.findDuplicateBatch in UnifiedLog.analyzeAndValidateProducerState).
   */
  checkData(tp: string, b: DataBatchInput): ProducerEntry {
    const current = this.producers.get(b.producerId) ?? emptyEntry(b.producerId);
    const lastSeq = incrementSequence(b.baseSequence, Number(b.lastOffset - b.baseOffset));
    if (b.producerEpoch === current.producerEpoch) {
      const dup = current.batches.find((m) => m.firstSeq === b.baseSequence && m.lastSeq === lastSeq);
      if (dup) {
        throw new KlxError('invalid-record', `duplicate of the batch at offsets ${dup.firstOffset}..${dup.lastOffset} (producer ${b.producerId}, epoch ${b.producerEpoch}, sequences ${b.baseSequence}..${lastSeq}): a broker acknowledges it with those offsets and appends nothing`, {
          details: { producerId: b.producerId.toString(), duplicateOf: { firstOffset: dup.firstOffset.toString(), lastOffset: dup.lastOffset.toString() } },
        });
      }
    }
    if (b.producerEpoch < current.producerEpoch) {
      throw new KlxError('invalid-record', `Epoch of producer ${b.producerId} at offset ${b.baseOffset} in ${tp} is ${b.producerEpoch}, which is smaller than the last seen epoch ${current.producerEpoch} (a broker answers InvalidProducerEpochException)`);
    }
    if (b.producerEpoch !== current.producerEpoch) {
      if (b.baseSequence !== 0 && current.producerEpoch !== -1) {
        throw new KlxError('invalid-record', `Invalid sequence number for new epoch of producer ${b.producerId} at offset ${b.baseOffset} in partition ${tp}: ${b.producerEpoch} (request epoch), ${b.baseSequence} (seq. number), ${current.producerEpoch} (current producer epoch) (a broker answers OutOfOrderSequenceException)`);
      }
    } else {
      const currentLastSeq = current.batches.length ? current.batches[current.batches.length - 1]!.lastSeq : -1;
      const inSequence = b.baseSequence === currentLastSeq + 1 || (b.baseSequence === 0 && currentLastSeq === INT32_MAX);
      if (current.producerEpoch !== -1 && !inSequence) {
        throw new KlxError('invalid-record', `Out of order sequence number for producer ${b.producerId} at offset ${b.baseOffset} in partition ${tp}: ${b.baseSequence} (incoming seq. number), ${currentLastSeq} (current end sequence number) (a broker answers OutOfOrderSequenceException)`);
      }
    }
    const next = cloneEntry(current);
    addBatch(next, b.producerEpoch, { firstSeq: b.baseSequence, lastSeq, firstOffset: b.baseOffset, lastOffset: b.lastOffset, timestamp: b.maxTimestamp });
    if (next.currentTxnFirstOffset >= 0n && !b.isTransactional) {
      throw new KlxError('invalid-record', `Expected transactional write from producer ${b.producerId} at offset ${b.baseOffset} in partition ${tp}: its transaction started at offset ${next.currentTxnFirstOffset} is still open (a broker answers InvalidTxnStateException; end it with --commit or --abort)`);
    }
    if (next.currentTxnFirstOffset < 0n && b.isTransactional) next.currentTxnFirstOffset = b.baseOffset;
    return next;
  }

  /**
   * Checks a transaction marker as a leader checks one from the coordinator
   * (`ProducerAppendInfo.appendEndTxnMarker`, transaction version 0/1: the marker's epoch may equal
   * the producer's).
   * @returns the entry after the marker and the transaction it completes (null for a producer with
   *   no open transaction: an empty transaction, which gets no `.txnindex` entry).
   * @throws KlxError `invalid-record` for an older producer epoch (InvalidProducerEpochException) or
   *   an older coordinator epoch (TransactionCoordinatorFencedException).
   */
  checkMarker(tp: string, m: MarkerInput): { entry: ProducerEntry; completed: CompletedTxn | null } {
    const current = this.producers.get(m.producerId) ?? emptyEntry(m.producerId);
    if (m.producerEpoch < current.producerEpoch) {
      throw new KlxError('invalid-record', `Epoch of producer ${m.producerId} at offset ${m.offset} in ${tp} is ${m.producerEpoch}, which is smaller than the last seen epoch ${current.producerEpoch} (a broker answers InvalidProducerEpochException)`);
    }
    if (current.coordinatorEpoch > m.coordinatorEpoch) {
      throw new KlxError('invalid-record', `Invalid coordinator epoch for producerId ${m.producerId} at offset ${m.offset} in partition ${tp}: ${m.coordinatorEpoch} (zombie), ${current.coordinatorEpoch} (current) (a broker answers TransactionCoordinatorFencedException)`);
    }
    const completed = current.currentTxnFirstOffset >= 0n ? { producerId: m.producerId, firstOffset: current.currentTxnFirstOffset, lastOffset: m.offset, isAborted: m.type === 'ABORT' } : null;
    const next = cloneEntry(current);
    setEpoch(next, m.producerEpoch);
    next.coordinatorEpoch = m.coordinatorEpoch;
    next.currentTxnFirstOffset = -1n;
    next.lastTimestamp = m.timestamp;
    return { entry: next, completed };
  }

  /**
   * The last stable offset recorded with an aborted transaction (`ProducerStateManager.lastStableOffset`):
   * the first offset of the earliest open transaction of another producer, else the marker offset + 1.
   */
  lastStableOffset(c: CompletedTxn): bigint {
    let first: bigint | null = null;
    for (const e of this.producers.values()) {
      if (e.producerId === c.producerId || e.currentTxnFirstOffset < 0n) continue;
      if (first === null || e.currentTxnFirstOffset < first) first = e.currentTxnFirstOffset;
    }
    return first ?? c.lastOffset + 1n;
  }

  /** Records an entry returned by a check once its batch is on disk; `mapEndOffset` = the new log end offset. */
  apply(entry: ProducerEntry, logEndOffset: bigint): void {
    this.producers.set(entry.producerId, entry);
    this.mapEndOffset = logEndOffset;
  }

  /** The snapshot entries (`ProducerStateManager.writeSnapshot`), by producer id. */
  snapshotEntries(): ProducerSnapshotEntry[] {
    return [...this.producers.values()]
      .sort((a, b) => (a.producerId < b.producerId ? -1 : a.producerId > b.producerId ? 1 : 0))
      .map((e) => {
        const last = e.batches[e.batches.length - 1];
        return {
          producerId: e.producerId,
          producerEpoch: e.producerEpoch,
          lastSequence: last ? last.lastSeq : -1,
          lastOffset: last ? last.lastOffset : -1n,
          offsetDelta: last ? Number(last.lastOffset - last.firstOffset) : 0,
          timestamp: e.lastTimestamp,
          coordinatorEpoch: e.coordinatorEpoch,
          currentTxnFirstOffset: e.currentTxnFirstOffset,
        };
      });
  }
}

/** Bytes read at a time by {@link producerBatches} where batches are small (up to {@link LARGE_BATCH} bytes). */
const HEADER_WINDOW = 1 << 20;
/** Batches from this size (bytes) are followed by a read of the next header alone ({@link HEADER_READ} bytes), not a window. */
const LARGE_BATCH = HEADER_WINDOW >> 3;
/** Bytes read for one header after a large batch. */
const HEADER_READ = 4096;

/** A batch of {@link producerBatches}: its header, and its bytes read from the file only when asked for. */
class WalkedBatch {
  constructor(
    readonly header: BatchHeader,
    private readonly fd: number,
  ) {}

  /** Reads the whole batch (a new buffer), while the walk is on this batch or later. */
  get read(): () => Buffer {
    const { fd, header } = this;
    return () => {
      const b = Buffer.allocUnsafe(header.size);
      readSync(fd, b, 0, header.size, header.position);
      return b;
    };
  }
}

/**
 * The v2 batch headers of a `.log` from byte `start`, read a window at a time and only where a
 * header lies (the batch itself only on demand): producer state needs no record of data batches.
 * Small batches cost one read of {@link HEADER_WINDOW} bytes per window of them (a file of 10 KB
 * batches: one read per 1 MiB); after a batch of {@link LARGE_BATCH} bytes or more, the next header
 * is read alone ({@link HEADER_READ} bytes), so large batches are never read whole. Legacy messages
 * are skipped (they carry no producer id); the walk stops at the first entry whose framing is
 * impossible, as the log reader sees it (`scanEntries`): a length below the minimum, past the end
 * of the file, or above {@link MAX_ENTRY_BYTES} (a length of 2^31−1 in a file over 2 GiB is damage,
 * never a 2 GiB read).
 */
export function* producerBatches(path: string, start: number): Generator<{ header: BatchHeader; read: () => Buffer }> {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return;
  }
  try {
    const size = fstatSync(fd).size;
    let win: Buffer | null = null;
    const small = Buffer.allocUnsafe(HEADER_READ);
    let cur: Buffer = small;
    let winStart = 0;
    let winLength = 0;
    let lastTotal = 0;
    let pos = start;
    while (pos + V2_HEADER_SIZE <= size) {
      if (pos < winStart || pos + V2_HEADER_SIZE > winStart + winLength) {
        winStart = pos;
        cur = lastTotal >= LARGE_BATCH ? small : (win ??= Buffer.allocUnsafe(Math.min(HEADER_WINDOW, Math.max(HEADER_READ, size - pos))));
        winLength = readSync(fd, cur, 0, Math.min(cur.length, size - pos), pos);
        if (winLength < V2_HEADER_SIZE) return;
      }
      const o = pos - winStart;
      const batchLength = cur.readInt32BE(o + 8);
      const magic = cur.readInt8(o + 16);
      const total = batchLength + 12;
      if (batchLength < 14 || pos + total > size || total > MAX_ENTRY_BYTES || magic < 0 || magic > 2) return;
      if (magic === 2 && batchLength >= V2_HEADER_SIZE - 12) {
        let header: BatchHeader;
        try {
          header = decodeV2Header(cur, o, pos, false);
        } catch {
          return;
        }
        yield new WalkedBatch(header, fd);
      }
      lastTotal = total;
      pos += total;
    }
  } finally {
    closeSync(fd);
  }
}
