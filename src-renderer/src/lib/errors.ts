/**
 * Errors as the UI shows them: a title per error code, the message, the file and byte position it
 * concerns, and a way forward a support engineer can act on. Nothing fails silently: every failed
 * call in the stores becomes a {@link UiError} shown in a notice.
 */
import { KlxApiError } from '../../../src-shared/client.ts';
import type { ErrorCode, ErrorInfo } from '../../../src-shared/errors.ts';

/** An error ready to show. */
export interface UiError {
  id: number;
  /** What was being done, e.g. "Reading records of orders-0". */
  context: string;
  code: ErrorCode;
  title: string;
  message: string;
  file?: string;
  position?: number;
  hint: string;
}

const TITLES: Record<ErrorCode, string> = {
  'truncated-batch': 'Truncated batch',
  'invalid-tail': 'Bytes at the end of a segment are not batches',
  'corrupt-region': 'Corrupt region in a segment',
  'unknown-magic': 'Unknown record format (magic byte)',
  'unknown-codec': 'Unknown compression codec',
  'batch-length-out-of-range': 'Impossible batch length',
  'corrupt-batch': 'Batch cannot be decoded',
  'crc-mismatch': 'CRC mismatch',
  'corrupt-record': 'Corrupt record batch (CRC fails)',
  'decompression-limit': 'Batch not checked: it inflates past the decompression bound',
  'offset-overflow': 'Offset beyond the int64 range',
  'corrupt-index': 'Corrupt index file',
  'missing-index': 'Missing index file',
  'corrupt-checkpoint': 'Unreadable checkpoint file',
  'not-a-log-dir': 'Not a Kafka log directory',
  'not-found': 'Not found',
  'offset-out-of-range': 'Offset out of range',
  locked: 'Folder locked by another writer',
  'read-only': 'Opened read-only',
  'invalid-config': 'Invalid configuration value',
  'invalid-record': 'Record refused',
  'invalid-argument': 'Invalid request',
  'test-only': 'A method for tests only',
  cancelled: 'Cancelled',
  'out-of-memory': 'Query needs more memory than allowed',
  'io-error': 'I/O error',
  internal: 'Internal error',
};

const HINTS: Partial<Record<ErrorCode, string>> = {
  'truncated-batch': "The last batch of the segment is cut (a crash or an incomplete copy). The records before it are intact. A broker cuts it at startup only when it recovers that segment (no clean shutdown, at or after the recovery point: Kafka LogLoader.recoverLog); `klx repair <partition>` says which and cuts it after a preview. After a clean shutdown it keeps them and writes its next batch after them, where a read from an earlier offset frames them with that batch's first bytes (FileRecords.append, FileRecords.searchForOffsetWithSize), so consumers do not get that batch, and the next start after a crash cuts the segment there, losing it (LogSegment.recover): Verify says what these bytes make; only `klx repair --truncate-at-corruption` cuts them then.",
  // Kafka LogLoader.recoverLog recovers the segments from the recovery point on, none after a clean shutdown; LogSegment.recover truncates at the first invalid batch.
  'invalid-tail': "Bytes at the end of the segment are not batches. A broker cuts them at startup only when it recovers that segment (no clean shutdown, at or after the recovery point: Kafka LogLoader.recoverLog, LogSegment.recover); `klx repair <partition>` says which and does the same after a preview. After a clean shutdown it keeps them and writes its next batch after them, where a read from an earlier offset frames them with that batch's first bytes (FileRecords.append, FileRecords.searchForOffsetWithSize), so consumers do not get that batch, and the next start after a crash cuts the segment there, losing it (LogSegment.recover): Verify says what these bytes make; only `klx repair --truncate-at-corruption` cuts them then.",
  'corrupt-region':
    'Valid batches follow the damaged bytes. What consumers meet depends on the size field there (Kafka FileLogInputStream.nextBatch): below 14, a fetch that reaches it fails (CorruptRecordException, "Encountered corrupt message"); past the end of the file, a broker ends the segment there without an error, so consumers silently skip the rest of the segment (LocalLog.read) or wait there in the last one. Run Verify to list every damaged region; copy the partition from a healthy replica if you can.',
  'corrupt-batch': 'The batch frame and CRC are fine but its records cannot be decoded. Run Verify for the full list; the batches around it are still readable.',
  'decompression-limit': "Not damage: the batch's records inflate past this tool's decompression bound (recordsCount × max.message.bytes, at most 256 MiB), which a broker does not have. Read it with `klx … --max-inflated-bytes <bytes>` (up to 2 GiB); the batches around it are read.",
  'offset-overflow': 'A batch claims offsets past 2^63 − 1, which no broker can write. The partition is damaged at that batch; the other partitions are unaffected.',
  'crc-mismatch': 'The bytes changed after the broker wrote them. Run Verify to list every damaged batch; prefer a copy from a healthy replica.',
  'corrupt-record': 'A consumer with check.crcs=true (the default) stops at this batch (Kafka CompletedFetch) until it seeks past it. The explorer still shows its records, flagged.',
  'corrupt-index': 'A broker rebuilds the indexes of the segments it recovers at startup (Kafka LogLoader), not a corrupt index below the recovery point after a clean shutdown; `klx repair <partition>` rebuilds it here after a preview. Records are still readable without it.',
  'missing-index': 'A broker rebuilds a missing .index at startup by recovering the segment, and creates a missing .timeindex empty (Kafka LogLoader.loadSegmentFiles, LogSegment.sanityCheck); `klx repair <partition>` rebuilds it here. Reading works without it (slower seeks).',
  'corrupt-checkpoint':
    'The file cannot be parsed. A broker that reads a malformed checkpoint (a log-directory offset checkpoint, or a partition\'s leader-epoch-checkpoint) takes the whole log directory offline (CheckpointFileWithFailureHandler, LogDirFailureChannel) and shuts down when no directory is left; a number that does not parse is a NumberFormatException instead, and the message says what the broker then does. `klx repair` on the log directory (or Repair in Verify) rewrites a log-directory offset checkpoint from the partitions\' segments, as your choice and not what a broker does, keeping the old file in the trash for Undo.',
  'not-a-log-dir': 'Open a broker log directory (holding meta.properties and <topic>-<partition> folders), one partition folder, or a folder of log directories.',
  'not-found': 'The file or folder is gone or was never there. If files changed on disk, select the partition again to reload it.',
  'offset-out-of-range': 'Pick an offset between logStartOffset and logEndOffset (shown above the table).',
  'unknown-codec': 'The batch names a codec Kafka does not know (ids 5–7). The partition is damaged at that batch.',
  'unknown-magic': 'The bytes at that position are not a Kafka batch. Run Verify to see where valid data resumes.',
  'invalid-argument': 'Check the value typed.',
  'test-only': 'This method exists only on a bridge or app started for tests (KLX_TEST_METHODS=1); nothing was run or changed.',
  'io-error': 'The operating system refused the read (permissions, a disk error, a network file system). Check access to the file.',
  'read-only': 'This window was opened read-only; nothing was changed.',
  cancelled: 'The job was stopped; nothing was changed.',
  'out-of-memory': 'The query holds more in memory than DuckDB may use (an aggregate of many large values per group...): aggregate fewer or smaller values. From the command line, `klx query --memory-limit 2GiB` raises the limit.',
  internal: 'This is a bug in Kafka Log Explorer. The message above helps us fix it.',
};

let nextId = 1;

/** Turns anything thrown by a call into a {@link UiError}. */
export function toUiError(err: unknown, context: string): UiError {
  const info: ErrorInfo =
    err instanceof KlxApiError ? err.info : { code: 'internal', message: err instanceof Error ? err.message : String(err) };
  const reason = (info.details as { reason?: unknown } | undefined)?.reason;
  const hint =
    reason === 'bridge-token'
      ? 'Open the app with the URL `klx serve` or `npm start` printed: the token follows its #token=, and the tab keeps it for reloads (a tab opened without it has none).'
      : reason === 'outside-served-folders'
      ? 'The message says how to serve the other folder too.'
      : reason === 'outside-allowed-folders'
        ? 'Open the folder that holds it first (the folder field above the tree).'
        : (HINTS[info.code] ?? '');
  const title = reason === 'outside-served-folders' ? 'Outside the served folder' : reason === 'bridge-token' ? 'No access to this server' : (TITLES[info.code] ?? info.code);
  const e: UiError = { id: nextId++, context, code: info.code, title, message: info.message, hint };
  if (info.file !== undefined) e.file = info.file;
  if (info.position !== undefined) e.position = info.position;
  return e;
}

/** Hints shown in the Verify view itself, for the codes whose usual hint says to run Verify. */
const VERIFY_HINTS: Record<string, string> = {
  'crc-mismatch': 'The bytes changed after the broker wrote them; prefer a copy from a healthy replica. A consumer with check.crcs=true (the default) stops at this batch (Kafka CompletedFetch).',
  'corrupt-region': 'Valid batches follow the damaged bytes; copy the partition from a healthy replica if you can.',
  'corrupt-batch': 'The batch frame and CRC are fine but its records cannot be decoded; the batches around it are still readable.',
  'unknown-magic': 'The bytes at that position are not a Kafka batch; the next finding (or the end of the segment) says where valid data resumes.',
};

/**
 * The way forward for an error or finding code (also used for verify findings). In the Verify view
 * (`where` = `verify`) a hint never tells the user to run Verify.
 */
export function hintFor(code: string, where: 'verify' | 'elsewhere' = 'elsewhere'): string {
  if (where === 'verify' && VERIFY_HINTS[code] !== undefined) return VERIFY_HINTS[code]!;
  const findingHints: Record<string, string> = {
    // LogLoader.loadSegmentFiles: a missing .index fails LogSegment.sanityCheck and the segment is recovered; a missing .timeindex is created empty.
    'missing-index': HINTS['missing-index']!,
    // LogSegment.onBecomeInactiveSegment and close trim the indexes (AbstractIndex.trimToValidSize).
    'untrimmed-index': 'The index is still at its preallocated size; a broker trims it on roll or clean shutdown. `klx repair` trims it.',
    'stale-index-entries': 'Entries left after a crash; `klx repair` rebuilds the index.',
    // DefaultRecordBatch and CompletedFetch decompress record by record: a broker has no bound on a whole records area.
    'batch-not-checked': "Not damage: this tool did not inflate the batch's records (past its decompression bound). Read it with `klx verify … --max-inflated-bytes <bytes>` (up to 2 GiB).",
    // AbstractIndex.largestLowerBoundSlotFor binary-searches every slot; LogSegment.recover rebuilds the index only for recovered segments.
    'index-slot-out-of-order': 'One index slot is out of order; a broker\'s lookups may land on it. `klx repair` rebuilds the index from the .log.',
    // LogLoader.removeTempFilesAndCollectSwapFiles: valid .swap files completed, invalid ones, .cleaned and .deleted deleted.
    'leftover-file': 'Left by an interrupted cleaner or deletion; a broker finishes or deletes it at startup. `klx repair` does the same after a preview.',
    'orphan-index': 'An index without its .log; a broker deletes it at startup.',
    'invalid-tail': HINTS['invalid-tail']!,
    // LogSegment.recover stops at the first invalid batch (a zero length) and truncates there; only for segments LogLoader.recoverLog recovers.
    'zero-tail': 'Zero bytes after the last batch (preallocation or a crash). A broker truncates them at startup only when it recovers that segment (no clean shutdown, at or after the recovery point: Kafka LogLoader.recoverLog, LogSegment.recover); `klx repair` says which and does the same. After a clean shutdown a broker keeps them (18 or more zero bytes at the end of the last segment stop it loading the log: LogSegment.readNextOffset); Verify says what they make.',
    'recovery-needed': 'No clean-shutdown marker: a broker re-validates these segments at startup. Normal after a crash or a copy of a running broker.',
  };
  return findingHints[code] ?? HINTS[code as ErrorCode] ?? '';
}
