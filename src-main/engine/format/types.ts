/**
 * Domain types of the on-disk record format (spec `kafka-log-format.md` §3–§8; Kafka's
 * `RecordBatch`, `DefaultRecordBatch`, `AbstractLegacyRecordBatch`, `DefaultRecord`).
 *
 * Units: offsets are logical record offsets (int64 as `bigint`); timestamps are milliseconds since
 * the epoch (int64 as `bigint`, −1 = none); positions and sizes are bytes (`number`).
 */

/** Compression codec names, in codec-id order (id = index). Kafka's `CompressionType`. */
export const COMPRESSIONS = ['none', 'gzip', 'snappy', 'lz4', 'zstd'] as const;
export type Compression = (typeof COMPRESSIONS)[number];

/**
 * What a batch's timestamps mean (Kafka `TimestampType`): CreateTime (the producer's), LogAppendTime
 * (the broker's), or NoTimestampType for magic 0 messages, which carry no timestamp (timestamps
 * read as −1, `RecordBatch.NO_TIMESTAMP`).
 */
export type TimestampType = 'CreateTime' | 'LogAppendTime' | 'NoTimestampType';

/** `-1` sentinels of the format (spec conventions). */
export const NO_TIMESTAMP = -1n;
export const NO_PRODUCER_ID = -1n;
export const NO_PRODUCER_EPOCH = -1;
export const NO_SEQUENCE = -1;
export const NO_PARTITION_LEADER_EPOCH = -1;

/** v2 attribute bits (spec §4.2). */
export const ATTR_COMPRESSION_MASK = 0x07;
export const ATTR_TIMESTAMP_TYPE = 0x08;
export const ATTR_TRANSACTIONAL = 0x10;
export const ATTR_CONTROL = 0x20;
export const ATTR_DELETE_HORIZON = 0x40;

/** Sizes of the fixed parts (spec §3, §4.1, §8.1). */
export const LOG_OVERHEAD = 12; // offset int64 + size int32
export const HEADER_SIZE_UP_TO_MAGIC = 17;
export const V2_HEADER_SIZE = 61;
export const V2_MIN_BATCH_LENGTH = V2_HEADER_SIZE - LOG_OVERHEAD; // 49
export const V0_MIN_MESSAGE_SIZE = 14;
export const V1_MIN_MESSAGE_SIZE = 22;

/**
 * The header of one entry of a `.log`: a v2 record batch, or a top-level v0/v1 message (for a
 * compressed wrapper, the wrapper). Everything here is known without decompressing, except
 * `baseOffset`/`recordCount` of legacy compressed wrappers, which the reader fills by decoding the
 * (small, rare) inner set.
 */
export interface BatchHeader {
  /** Byte position of the entry in its `.log` file. */
  position: number;
  /** Total entry size in bytes: 12 + batchLength (v2) or 12 + messageSize (v0/v1). */
  size: number;
  magic: 0 | 1 | 2;
  /** v2: first offset of the batch. v0/v1: first (inner) offset. */
  baseOffset: bigint;
  /** v2: baseOffset + lastOffsetDelta. v0/v1: the entry offset (last inner offset). */
  lastOffset: bigint;
  /** lastOffset − baseOffset (v2: as stored, preserved by compaction). */
  lastOffsetDelta: number;
  /** v2: bytes after the length field. v0/v1: messageSize. */
  batchLength: number;
  /** v2 only; −1 for legacy. */
  partitionLeaderEpoch: number;
  /** Stored CRC (CRC-32C for v2, CRC-32 for v0/v1), as uint32. */
  crc: number;
  /** Result of checking the CRC; `undefined` when the reader was asked not to check. */
  crcValid: boolean | undefined;
  /** The CRC computed over the entry's bytes with the same algorithm (uint32), when checked. */
  computedCrc?: number;
  /** Raw attributes (v2: int16; v0/v1: int8). */
  attributes: number;
  compression: Compression;
  timestampType: TimestampType;
  isTransactional: boolean;
  isControl: boolean;
  hasDeleteHorizon: boolean;
  producerId: bigint;
  producerEpoch: number;
  baseSequence: number;
  /** v2: first record's timestamp, or the delete horizon when hasDeleteHorizon; v0/v1: first inner timestamp. */
  baseTimestamp: bigint;
  /** v2: as stored; v0/v1: the wrapper/message timestamp (max inner for compressed CreateTime). */
  maxTimestamp: bigint;
  /** v2: recordsCount as stored; v0/v1: number of (inner) messages. */
  recordCount: number;
  /** v0/v1 only: the timestamp field of the top-level message (−1 for v0). */
  legacyTimestamp?: bigint;
}

/** A record header (v2 only). Keys are UTF-8 strings; values may be null. */
export interface RecordHeader {
  key: string;
  value: Uint8Array | null;
}

/** Decoded control record key and value (spec §7; Kafka's `ControlRecordType`, `EndTransactionMarker`). */
export interface ControlRecordInfo {
  /** Control key version (int16). */
  version: number;
  /** Control type id (int16). */
  typeId: number;
  /** ABORT, COMMIT, LEADER_CHANGE, SNAPSHOT_HEADER, SNAPSHOT_FOOTER, KRAFT_VERSION, KRAFT_VOTERS or UNKNOWN. */
  type: string;
  /** ABORT/COMMIT only: the marker's coordinator epoch. */
  coordinatorEpoch?: number;
  /** ABORT/COMMIT only: the marker value's version. */
  markerVersion?: number;
}

/**
 * One record with absolute offset and timestamp. `key`/`value` are views into decoded bytes.
 *
 * Records of v2 batches (`decodeV2Records`) are read lazily from their batch's bytes: the fields
 * are getters on the record's prototype, not own properties, so spreading a record, `Object.keys`,
 * `structuredClone` or `toEqual` against an object literal do not see them (`plainRecord` makes a
 * plain copy; `toMatchObject` works). Each read of `key`/`value` returns a new view of the same
 * bytes. Nothing in the engine mutates records, hence `readonly`.
 */
export interface KafkaRecord {
  readonly offset: bigint;
  readonly timestamp: bigint;
  /** v2 record attributes byte (unused by Kafka: DefaultRecord writes 0) or the v0/v1 inner message attributes. */
  readonly attributes: number;
  readonly key: Uint8Array | null;
  readonly value: Uint8Array | null;
  readonly headers: RecordHeader[];
  /** v2: the record's timestampDelta as stored (needed to re-encode LogAppendTime batches). */
  readonly timestampDelta?: bigint;
  /** v2: offsetDelta as stored. */
  readonly offsetDelta?: number;
  /** Bytes the record occupies in the (decompressed) records area. */
  readonly sizeInBytes: number;
  /** Present on records of control batches. */
  readonly control?: ControlRecordInfo;
}

/** A batch with its records decoded. */
export interface DecodedBatch {
  header: BatchHeader;
  records: KafkaRecord[];
}
