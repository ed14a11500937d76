/**
 * The closed set of error codes that cross every boundary (engine → API → IPC/HTTP → renderer,
 * and the `klx` exit messages). Adding a code here is the only way to add a kind of failure.
 *
 * No Node or DOM imports: this file is shared by the main process and the renderer.
 */
export const ERROR_CODES = [
  /** A v2 batch or legacy message whose declared size runs past the end of the file. */
  'truncated-batch',
  /** Bytes at the end of a `.log` that do not form a batch (reported like kafka-dump-log's "Found N invalid bytes at the end of …", DumpLogSegments). */
  'invalid-tail',
  /** Bytes in the middle of a `.log` that are not a batch; reading resumed at the next valid batch. */
  'corrupt-region',
  /** A magic byte other than 0, 1 or 2. */
  'unknown-magic',
  /** Compression codec bits 5–7 (v2) or a codec the format version does not allow (zstd in v0/v1). */
  'unknown-codec',
  /** A batch length below the minimum (v2: 49, v0: 14, v1: 22) or above what the file can hold. */
  'batch-length-out-of-range',
  /** A batch whose framing is fine but whose content cannot be decoded (bad varint, record overrun, codec failure). */
  'corrupt-batch',
  /**
   * Compressed records that would inflate past klx's memory bound (recordsCount × max.message.bytes, and an absolute
   * ceiling); details name the claimed and allowed sizes. Not a Kafka limit: a broker checks only the compressed
   * batch against max.message.bytes (UnifiedLog.analyzeAndValidateRecords).
   */
  'decompression-limit',
  /** An offset past the int64 range (baseOffset + lastOffsetDelta, or logEndOffset, above 2^63 − 1). */
  'offset-overflow',
  /** A CRC that does not match; on read this is reported on the batch (`crcValid: false`), only thrown where a valid batch is required. */
  'crc-mismatch',
  /** A read that stops at a batch whose CRC fails, as a consumer with `check.crcs=true` does (Kafka's `CorruptRecordException` from `CompletedFetch`); details name the offsets, position and both CRCs. */
  'corrupt-record',
  /** An index or time-index file that fails its sanity check. */
  'corrupt-index',
  /** A segment's `.index` or `.timeindex` file that is not there (a broker rebuilds a missing `.index` by recovering the segment, and creates a missing `.timeindex` empty: Kafka LogLoader.loadSegmentFiles, LogSegment.sanityCheck). */
  'missing-index',
  /** A checkpoint, meta.properties or partition.metadata file that cannot be parsed. */
  'corrupt-checkpoint',
  /** A path that is neither a Kafka log directory, a partition directory nor a segment file. */
  'not-a-log-dir',
  /** A file or folder that does not exist. */
  'not-found',
  /** A fetch or lookup below logStartOffset or at/after logEndOffset. */
  'offset-out-of-range',
  /** A folder is already opened for writing by another writer (lock file held). */
  'locked',
  /** A write asked of a folder opened read-only. */
  'read-only',
  /** A configuration value that is not valid (negative size, not a number, unknown policy...). */
  'invalid-config',
  /** A record the broker would refuse (keyless record on a compacted topic: LogValidator.validateKey; oversize batch: UnifiedLog.analyzeAndValidateRecords...). */
  'invalid-record',
  /** Arguments that do not match the contract. */
  'invalid-argument',
  /** A test-only method (`demo.*`) called on a bridge or app not started for tests (`testMethods` / KLX_TEST_METHODS=1). */
  'test-only',
  /** The user cancelled a long job. */
  'cancelled',
  /** DuckDB ran out of its memory limit on a query (details.memoryLimitBytes); `klx query --memory-limit` raises it. */
  'out-of-memory',
  /** An operating-system I/O failure (disk full, permission denied...). */
  'io-error',
  /** A bug: anything not covered above. */
  'internal',
] as const;

/** One of {@link ERROR_CODES}. */
export type ErrorCode = (typeof ERROR_CODES)[number];

/**
 * The JSON shape of an error on every wire (IPC, HTTP, `klx --json`).
 * `file` is the path as the user gave it or relative to the opened folder; `position` is a byte
 * position inside that file.
 */
export interface ErrorInfo {
  code: ErrorCode;
  message: string;
  file?: string;
  position?: number;
  details?: Record<string, unknown>;
}
