/**
 * What the integrity checks report: a {@link Finding} names a file, a byte position in it (when
 * there is one), a reason and a severity:
 * - `error`: data or an index a reader would trust is wrong (CRC mismatch, bytes that are not a
 *   batch, offsets going backwards, an index entry that does not point at the batch it names, an
 *   aborted transaction missing from the `.txnindex`...);
 * - `warning`: something a broker repairs or tolerates at startup (LogLoader.load, LogSegment.recover) but that is not how a cleanly
 *   closed log looks (missing or untrimmed index, stale index entries, zero-filled tail, leftover
 *   `.deleted/.cleaned/.swap` files, checkpoints beyond the log end...);
 * - `info`: facts worth knowing that are normal for real brokers (index entries in the style of older
 *   brokers, the active segment's preallocated index after an unclean stop, a missing `.timeindex`).
 */
import { int64Json } from '../format/batch-json.ts';

// ---------------------------------------------------------------------------------------------
// Findings

/** How bad a finding is; see the module comment. */
export type Severity = 'error' | 'warning' | 'info';

/** Every kind of finding, with its meaning. */
export const FINDING_CODES = {
  'crc-mismatch': 'a batch whose stored CRC does not match its bytes',
  'corrupt-region': 'bytes in the middle of a .log that are not a batch (valid batches follow)',
  'invalid-tail': 'bytes at the end of a .log that are not a batch (a partial or overwritten last batch)',
  'zero-tail': 'zero bytes at the end of a .log (a preallocated file or a crash)',
  'corrupt-batch': 'a batch whose framing and CRC are fine but whose records cannot be decoded',
  'batch-not-checked': 'a batch whose records this tool did not check: they inflate past its decompression bound (--max-inflated-bytes); not damage',
  'offset-not-increasing': 'a batch whose base offset is not above the previous batch\'s last offset',
  'segments-overlap': 'a segment whose first batch is not above the previous segment\'s last offset',
  'offset-below-segment-base': 'a batch whose base offset is below the segment base offset (file name)',
  'offset-overflow': 'a batch whose last offset does not fit the segment\'s int32 relative offsets, or whose next offset would pass 2^63 − 1',
  'invalid-last-offset-delta': 'a v2 batch with a negative lastOffsetDelta',
  'empty-segment': 'a closed segment without batches',
  'no-segment': 'a partition folder without any segment',
  'missing-index': 'a segment without its .index (a broker recovers the segment and rebuilds it at startup: LogLoader.loadSegmentFiles)',
  'missing-time-index': 'a segment without its .timeindex (a broker creates it empty)',
  'corrupt-index': 'an index file that fails Kafka\'s own sanity check (a broker rebuilds it when it recovers the segment: LogSegment.recover, for the segments LogLoader.recoverLog recovers; LogSegment.sanityCheck does not run this check at startup)',
  'untrimmed-index': 'an index file still at its preallocated length (zero slots after the entries)',
  'stale-index-entries': 'index slots after the real entries that break the ordering (left over after a crash)',
  'index-slot-out-of-order': 'one offset- or time-index slot out of order (the first, one in the middle with the slots after it in order again, or the last of a trimmed file)',
  'index-entry-not-batch-start': 'an offset-index entry whose position is not where a batch starts',
  'index-entry-past-end': 'an offset-index entry whose position is at or after the end of the .log',
  'index-entry-below-batch': 'an offset-index entry naming an offset below the batch at its position (lookups would skip records)',
  'index-entry-above-batch': 'an offset-index entry naming an offset above the last offset of the batch at its position',
  'index-entry-older-broker': 'an offset-index entry naming an offset inside its batch rather than the last one, or the last offset of a multi-batch append at its first batch (older brokers)',
  'time-index-entry-past-end': 'a time-index entry naming an offset after the last batch of the segment',
  'time-index-timestamp-mismatch': 'a time-index entry whose timestamp is not the max timestamp of the batch holding its offset',
  'time-index-entry-in-hole': 'a time-index entry naming an offset no batch holds',
  'time-index-missing-final-entry': 'a closed segment whose last time-index entry is below its largest timestamp',
  'time-index-empty': 'a closed segment with timestamps but an empty time index',
  'txn-index-missing-entry': 'an ABORT marker of a non-empty transaction without its .txnindex entry',
  'txn-index-unexpected-entry': 'a .txnindex entry without an ABORT marker of that producer at its last offset',
  'txn-index-entry-mismatch': 'a .txnindex entry whose producer, first offset or last stable offset differs from the log',
  'txn-index-partial-entry': 'trailing bytes of a .txnindex that do not make a whole entry',
  'leftover-file': 'a .deleted, .cleaned or .swap file left by an interrupted operation',
  'orphan-index': 'an index file without its .log (a broker deletes it at startup: LogLoader.loadSegmentFiles)',
  'temp-file': 'a .tmp file left by an interrupted checkpoint or index write',
  'unknown-file': 'a file a broker does not know',
  'symlink-outside': 'a symbolic link whose real path is outside the opened folder: not read (klx reads it with --follow-symlinks)',
  'klx-lock': 'the writer lock file of a running (or crashed) klx writer',
  'corrupt-checkpoint': 'a checkpoint or metadata file that cannot be parsed',
  'checkpoint-beyond-log-end': 'a checkpointed offset above the log end offset',
  'checkpoint-below-log-start': 'a checkpointed offset below the log start offset',
  'leader-epoch-beyond-log-end': 'a leader-epoch entry starting after the log end offset',
  'leader-epoch-order': 'leader-epoch entries whose epochs or start offsets do not increase',
  'snapshot-beyond-log-end': 'a producer snapshot taken at an offset above the log end offset',
  'recovery-needed': 'no clean shutdown: a broker re-validates the segments from the recovery point on',
} as const;

/** One kind of finding (a key of {@link FINDING_CODES}). */
export type FindingCode = keyof typeof FINDING_CODES;

/**
 * One problem or fact found in a partition.
 * `file` is an absolute path; `position` a byte position inside it; `details` holds JSON-safe
 * values (int64 as numbers when exact, else decimal strings).
 */
export interface Finding {
  severity: Severity;
  code: FindingCode;
  file: string;
  position?: number;
  reason: string;
  details: Record<string, unknown>;
}

/** Builds a {@link Finding} (`position` only when given). */
export function finding(severity: Severity, code: FindingCode, file: string, reason: string, details: Record<string, unknown> = {}, position?: number): Finding {
  const f: Finding = { severity, code, file, reason, details };
  if (position !== undefined) f.position = position;
  return f;
}

/** Counts of findings by severity. */
export function countFindings(findings: readonly Finding[]): Record<Severity, number> {
  const c: Record<Severity, number> = { error: 0, warning: 0, info: 0 };
  for (const f of findings) c[f.severity]++;
  return c;
}

/** int64 → JSON-safe value (number when exact, else a decimal string), for `details`. */
export const j = int64Json;

