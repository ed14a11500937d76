/**
 * The producer state the cleaner needs (spec §9.4, §13.1, §13.8; Kafka's `ProducerStateManager`,
 * `ProducerAppendInfo`, `UnifiedLog.lastRecordsOfActiveProducers`, `firstUnstableOffset`):
 *
 * - the **active producers** and, for each, the offset of its last data batch (or none when its last
 *   entry is a transaction marker of a newer epoch) and its epoch: the cleaner keeps the header of a
 *   producer's last batch (RETAIN_EMPTY, Cleaner.cleanInto) so its sequence / epoch state survives;
 * - the **open transactions** (a transactional data batch with no marker of its producer after it),
 *   whose earliest first offset bounds cleaning (the last stable offset).
 *
 * State is loaded as a broker does (ProducerStateManager.loadFromSnapshot, UnifiedLog.rebuildProducerState):
 * from the newest valid `M.snapshot` at or below the log end
 * offset (entries of producers expired at `now` dropped), then by replaying the batches from offset
 * M; without a snapshot the whole log is replayed. A producer is expired when it has no open
 * transaction and `now − timestamp of its last batch ≥ producer.id.expiration.ms` (default 1 day).
 * Replay rules: a data batch sets the producer's epoch, last data offset (its lastOffset) and
 * timestamp (its maxTimestamp), and opens a transaction at its baseOffset when transactional and none
 * is open; a marker (ABORT/COMMIT control batch) closes the transaction, and a marker with a higher
 * epoch forgets the last data batch.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { readProducerSnapshot } from '../files/producer-snapshot.ts';
import { CONTROL_ABORT, CONTROL_COMMIT } from '../format/control.ts';
import { decodeV2Records } from '../format/record-batch.ts';
import type { PartitionLog } from '../log/partition-log.ts';
import { DEFAULT_PRODUCER_ID_EXPIRATION_MS, producerBatches } from '../log/producer-append.ts';

export { DEFAULT_PRODUCER_ID_EXPIRATION_MS };


/** Kafka's `LastRecord` of an active producer. */
export interface LastRecord {
  /** lastOffset of the producer's last data batch, or null. */
  lastDataOffset: bigint | null;
  producerEpoch: number;
}

/** What {@link loadProducerState} finds. */
export interface ProducerState {
  /** Producers not expired at `now`. */
  active: Map<bigint, LastRecord>;
  /** First offset of each open transaction, by producer. */
  openTransactions: Map<bigint, bigint>;
  /** Earliest first offset of an open transaction, or null. */
  firstUnstableOffset: bigint | null;
  /** Offset of the snapshot used, or null when the whole log was replayed. */
  snapshotOffset: bigint | null;
}

interface Entry {
  epoch: number;
  lastDataOffset: bigint;
  lastTimestamp: bigint;
  txnFirstOffset: bigint;
}

/**
 * Loads the producer state of a partition at `now` (see the module comment).
 * @throws KlxError `not-found` / `io-error` when a `.log` cannot be read.
 */
export function loadProducerState(log: PartitionLog, now: number, expirationMs: number = DEFAULT_PRODUCER_ID_EXPIRATION_MS): ProducerState {
  const entries = new Map<bigint, Entry>();
  const leo = log.logEndOffset;
  const nowB = BigInt(now);
  const exp = BigInt(expirationMs);
  const expired = (e: Entry) => e.txnFirstOffset < 0n && nowB - e.lastTimestamp >= exp;
  let snapshotOffset: bigint | null = null;
  const snaps = [...log.listing.snapshots].filter((s) => s.baseOffset <= leo && s.baseOffset >= log.logStartOffset).sort((a, b) => (a.baseOffset < b.baseOffset ? 1 : -1));
  for (const s of snaps) {
    try {
      const snap = readProducerSnapshot(join(log.dir, s.name), { requireValidCrc: true });
      for (const p of snap.entries) {
        const e: Entry = { epoch: p.producerEpoch, lastDataOffset: p.lastOffset, lastTimestamp: p.timestamp, txnFirstOffset: p.currentTxnFirstOffset };
        if (!expired(e)) entries.set(p.producerId, e);
      }
      snapshotOffset = s.baseOffset;
      break;
    } catch {
      // A corrupt snapshot: a broker deletes it and tries the previous one (ProducerStateManager.loadFromSnapshot).
    }
  }
  const from = snapshotOffset ?? log.logStartOffset;
  for (let si = 0; si < log.segments.length; si++) {
    const seg = log.segments[si]!;
    const next = log.segments[si + 1];
    if (next && next.baseOffset <= from) continue;
    if (!existsSync(seg.files.log)) continue;
    for (const e of producerBatches(seg.files.log, seg.positionFor(from))) {
      const h = e.header;
      if (h.lastOffset < from || h.producerId < 0n) continue;
      let st = entries.get(h.producerId);
      if (!st) {
        st = { epoch: h.producerEpoch, lastDataOffset: -1n, lastTimestamp: -1n, txnFirstOffset: -1n };
        entries.set(h.producerId, st);
      }
      if (h.isControl) {
        let marker = false;
        try {
          const recs = decodeV2Records(h, e.read());
          const t = recs[0]?.control?.typeId;
          marker = t === CONTROL_ABORT || t === CONTROL_COMMIT;
        } catch {
          marker = false;
        }
        if (!marker) continue;
        if (h.producerEpoch > st.epoch) st.lastDataOffset = -1n;
        st.epoch = h.producerEpoch;
        st.txnFirstOffset = -1n;
        st.lastTimestamp = h.maxTimestamp;
      } else {
        if (h.producerEpoch > st.epoch) st.lastDataOffset = -1n;
        st.epoch = h.producerEpoch;
        st.lastDataOffset = h.lastOffset;
        st.lastTimestamp = h.maxTimestamp;
        if (h.isTransactional && st.txnFirstOffset < 0n) st.txnFirstOffset = h.baseOffset;
      }
    }
  }
  const active = new Map<bigint, LastRecord>();
  const open = new Map<bigint, bigint>();
  let first: bigint | null = null;
  for (const [pid, e] of entries) {
    if (e.txnFirstOffset >= 0n) {
      open.set(pid, e.txnFirstOffset);
      if (first === null || e.txnFirstOffset < first) first = e.txnFirstOffset;
    }
    if (!expired(e)) active.set(pid, { lastDataOffset: e.lastDataOffset >= 0n ? e.lastDataOffset : null, producerEpoch: e.epoch });
  }
  return { active, openTransactions: open, firstUnstableOffset: first, snapshotOffset };
}
