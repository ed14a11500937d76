/**
 * Delete horizons of a partition: the batches whose v2 attribute bit 6 is set carry, in
 * baseTimestamp, the time after which the cleaner may drop their tombstones and discardable
 * transaction markers (KIP-534; Kafka `Cleaner.shouldRetainRecord` keeps a tombstone while
 * `deleteHorizonMs > now`, `LogCleaner` drops a marker once the horizon ≤ now). Used to show a
 * batch's horizon as a time and how long until it passes, and to offer a cleanup clock "just after
 * the earliest delete horizon".
 *
 * Reads batch headers only (no CRC check, no record decoding); memory is the list of stamped
 * batches, capped at `limit`.
 */
import { scanLogFile } from '../format/log-reader.ts';
import type { PartitionLog } from '../log/partition-log.ts';
import { durationText, timeText } from './decisions.ts';

/** A batch with a delete horizon. */
export interface StampedBatch {
  segment: bigint;
  baseOffset: bigint;
  lastOffset: bigint;
  /** The delete horizon, ms since the epoch. */
  horizon: bigint;
  isControl: boolean;
}

/** A horizon seen from a clock. */
export interface HorizonView {
  horizon: bigint;
  /** now ≥ horizon: the next clean may drop the batch's tombstones / marker. */
  passed: boolean;
  /** horizon − now, ms (negative once passed). */
  remainingMs: bigint;
  /** "2026-12-01 10:00:15.000 (in 1000 ms)" / "… (passed 2.00 min ago)". */
  text: string;
}

/** The horizon of a batch seen at `now` (see {@link HorizonView}). */
export function horizonView(horizon: bigint, now: bigint): HorizonView {
  const remaining = horizon - now;
  const passed = remaining <= 0n;
  return { horizon, passed, remainingMs: remaining, text: `${timeText(horizon)} (${passed ? (remaining === 0n ? 'passes now' : `passed ${durationText(-remaining)} ago`) : `in ${durationText(remaining)}`})` };
}

/**
 * The stamped batches of a partition, oldest offset first, and the earliest horizon.
 * @param limit most batches listed (the earliest horizon is over all of them).
 * @throws KlxError `not-found` / `io-error` when a `.log` cannot be read.
 */
export function deleteHorizons(log: PartitionLog, limit = 10_000): { batches: StampedBatch[]; earliest: bigint | null; total: number } {
  const batches: StampedBatch[] = [];
  let earliest: bigint | null = null;
  let total = 0;
  for (const seg of log.segments) {
    for (const e of scanLogFile(seg.files.log, { verifyCrc: false })) {
      if (e.type !== 'batch') continue;
      const h = e.header;
      if (h.magic < 2 || !h.hasDeleteHorizon) continue;
      total++;
      if (earliest === null || h.baseTimestamp < earliest) earliest = h.baseTimestamp;
      if (batches.length < limit) batches.push({ segment: seg.baseOffset, baseOffset: h.baseOffset, lastOffset: h.lastOffset, horizon: h.baseTimestamp, isControl: h.isControl });
    }
  }
  return { batches, earliest, total };
}

/**
 * The cleanup clock "just after the earliest delete horizon": the earliest horizon + 1 ms (a
 * clean at that `now` drops the tombstones of that batch), or null when no batch has one.
 */
export function justAfterEarliestHorizon(log: PartitionLog): number | null {
  const { earliest } = deleteHorizons(log, 0);
  return earliest === null ? null : Number(earliest) + 1;
}
