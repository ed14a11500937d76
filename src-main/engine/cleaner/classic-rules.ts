/**
 * The "classic" teaching rule set of the compactor: log compaction as most courses and older
 * write-ups describe it, offered beside Kafka's real rules so a trainer can show both on the same
 * log (`klx compact --rules classic`). Compared with the "kafka" rules (see the table in
 * `cleaner-rules.ts`):
 *
 * - a record without a key is **kept** (the textbook model has nothing to say about it; Kafka drops
 *   it and counts an invalid message: Cleaner.shouldRetainRecord, CleanerStats.invalidMessage);
 * - a tombstone that is the latest for its key goes **in one pass** as soon as
 *   `now − its own timestamp > delete.retention.ms` — no delete horizon is written into the batch,
 *   so batches holding tombstones are not rebuilt just for that;
 * - a transaction marker with no data left goes once `now − its timestamp > delete.retention.ms`.
 *
 * Everything else is Kafka's: the latest offset per key wins, only the cleanable range is mapped,
 * the active segment is never cleaned, offsets are never renumbered, aborted data goes, batches are
 * copied or rebuilt with their baseOffset, lastOffsetDelta, producer fields and codec
 * (LogCleanerManager.cleanableOffsets, Cleaner.buildOffsetMap, Cleaner.cleanInto).
 */
import { KAFKA_RULES, type CleanerRules, type CleanerRulesName } from './cleaner-rules.ts';

/** The classic rules (see the module comment). */
export const CLASSIC_RULES: CleanerRules = {
  name: 'classic',
  keepKeyless: true,
  stampsDeleteHorizon: false,
  keepTombstone(_horizon, timestamp, now, deleteRetentionMs) {
    return !(now - timestamp > deleteRetentionMs);
  },
  removeDiscardableMarker(_horizon, timestamp, now, deleteRetentionMs) {
    return now - timestamp > deleteRetentionMs;
  },
};

/** The rule set of a name. */
export function rulesNamed(name: CleanerRulesName): CleanerRules {
  return name === 'classic' ? CLASSIC_RULES : KAFKA_RULES;
}
