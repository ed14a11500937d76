/**
 * The record-retention rule sets of the compactor, side by side (spec §13.5–§13.7; Kafka's
 * `Cleaner.shouldRetainRecord` and `MemoryRecords.filterTo` for the "kafka" rules; see
 * `classic-rules.ts` for the "classic" teaching rules):
 *
 * | question                                   | kafka (Kafka ≥ 3.1, the default)                               | classic (textbook)                                   |
 * |--------------------------------------------|----------------------------------------------------------------|------------------------------------------------------|
 * | a later offset for the same key exists     | drop                                                           | drop                                                 |
 * | record without a key                       | drop, counted as an invalid message (B07)                      | keep                                                 |
 * | tombstone, latest for its key              | keep until the batch's delete horizon has passed; the first    | drop once `now − its own timestamp > delete.retention.ms`, in one pass; no horizon is written |
 * |                                            | pass writes the horizon (`now + delete.retention.ms`, attribute bit 6) |                                              |
 * | tombstone in a v0/v1 batch                 | keep while the segment's mtime > last clean segment's mtime − delete.retention.ms | as classic v2                      |
 * | transaction marker with no data left       | keep with a horizon, drop in a pass at or after it             | drop once `now − its timestamp > delete.retention.ms` |
 * | aborted transaction data, control records, active segment, offsets | identical in both                        | identical                                            |
 */

/** The rule set names. */
export type CleanerRulesName = 'kafka' | 'classic';

/** What differs between the rule sets (everything else is Kafka's). */
export interface CleanerRules {
  name: CleanerRulesName;
  /** Records without a key are kept (classic) or dropped and counted invalid (kafka). */
  keepKeyless: boolean;
  /** Batches that keep tombstones / discardable markers get a delete horizon written (kafka). */
  stampsDeleteHorizon: boolean;
  /**
   * Whether a tombstone that is the latest for its key is kept.
   * @param horizon the batch's delete horizon (v2 attribute bit 6), or null.
   * @param timestamp the tombstone's own timestamp (ms).
   * @param legacy a v0/v1 message; `retainLegacyDeletes` is Kafka's mtime-based answer for it
   *   (Cleaner.cleanSegments: the segment's lastModified > legacyDeleteHorizonMs).
   */
  keepTombstone(horizon: bigint | null, timestamp: bigint, now: bigint, deleteRetentionMs: bigint, legacy: boolean, retainLegacyDeletes: boolean): boolean;
  /**
   * Whether a discardable transaction marker (no data of its transaction left) is removed now.
   * @param horizon the marker batch's delete horizon, or null; `timestamp` its maxTimestamp.
   */
  removeDiscardableMarker(horizon: bigint | null, timestamp: bigint, now: bigint, deleteRetentionMs: bigint): boolean;
}

/** Kafka's rules (≥ 3.1, KIP-534 delete horizon). */
export const KAFKA_RULES: CleanerRules = {
  name: 'kafka',
  keepKeyless: false,
  stampsDeleteHorizon: true,
  keepTombstone(horizon, _timestamp, now, _d, legacy, retainLegacyDeletes) {
    if (legacy) return retainLegacyDeletes;
    return horizon === null || now < horizon;
  },
  removeDiscardableMarker(horizon, _timestamp, now) {
    return horizon !== null && horizon <= now;
  },
};
