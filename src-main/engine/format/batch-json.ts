/**
 * The JSON form of a decoded `.log` entry, as printed by `klx dump --json` (one object per v2
 * batch or top-level v0/v1 message, NDJSON). Field names and meanings follow the independent
 * decoder outputs in `shared/kafka-real-data/<case>/EXPECTED.jsonl`:
 *
 * - int64 values print as JSON numbers while they are within ±(2^53−1), otherwise as decimal strings;
 * - keys, values and header values print as base64, or null;
 * - control records add `controlKeyVersion`, `controlType` and a `control` object;
 * - bytes that are not a batch print as `{"type": "invalid-tail" | "corrupt-region", ...}`.
 */
import type { BatchEntry, DamageEntry, LogEntry } from './log-reader.ts';
import type { KafkaRecord } from './types.ts';
import { crcAlgorithm } from './crc.ts';

/** A JSON-safe int64: a number when exactly representable, else a decimal string. */
export function int64Json(v: bigint): number | string {
  return v >= -9007199254740991n && v <= 9007199254740991n ? Number(v) : v.toString();
}

function bytesJson(b: Uint8Array | null): string | null {
  return b === null ? null : Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('base64');
}

/** JSON of one record (offset, timestamp, key/value base64, headers, control fields). */
export function recordJson(r: KafkaRecord): Record<string, unknown> {
  const o: Record<string, unknown> = {
    offset: int64Json(r.offset),
    timestamp: int64Json(r.timestamp),
    key: bytesJson(r.key),
    value: bytesJson(r.value),
    headers: r.headers.map((h) => ({ key: h.key, value: bytesJson(h.value) })),
  };
  if (r.control) {
    o.controlKeyVersion = r.control.version;
    o.controlType = r.control.type;
    o.control = { ...r.control };
  }
  return o;
}

/**
 * JSON of one entry.
 * @param file the file name to print (relative to what the user asked to dump).
 * @param deep include `records` (a batch read without `deep` prints no records).
 */
export function entryJson(e: LogEntry, file: string, deep: boolean): Record<string, unknown> {
  if (e.type !== 'batch') return damageJson(e, file);
  return batchJson(e, file, deep);
}

function damageJson(e: DamageEntry, file: string): Record<string, unknown> {
  return { type: e.type, file, position: e.position, size: e.size, code: e.code, reason: e.reason, zeros: e.zeros };
}

function batchJson(e: BatchEntry, file: string, deep: boolean): Record<string, unknown> {
  const h = e.header;
  const o: Record<string, unknown> = {
    type: 'batch',
    file,
    position: h.position,
    size: h.size,
    magic: h.magic,
    baseOffset: int64Json(h.baseOffset),
    lastOffset: int64Json(h.lastOffset),
    lastOffsetDelta: h.lastOffsetDelta,
    attributes: h.attributes,
    compression: h.compression,
    timestampType: h.timestampType,
    isTransactional: h.isTransactional,
    isControl: h.isControl,
    crc: h.crc,
    crcValid: h.crcValid ?? null,
    computedCrc: h.computedCrc ?? null,
    crcAlgorithm: crcAlgorithm(h.magic),
    baseTimestamp: int64Json(h.baseTimestamp),
    maxTimestamp: int64Json(h.maxTimestamp),
    recordCount: h.recordCount,
    decodeError: e.error ? e.error.reason : null,
  };
  if (h.magic === 2) {
    o.batchLength = h.batchLength;
    o.partitionLeaderEpoch = h.partitionLeaderEpoch;
    o.hasDeleteHorizon = h.hasDeleteHorizon;
    o.producerId = int64Json(h.producerId);
    o.producerEpoch = h.producerEpoch;
    o.baseSequence = h.baseSequence;
  } else {
    o.entryOffset = int64Json(h.lastOffset);
    o.timestamp = int64Json(h.legacyTimestamp ?? -1n);
  }
  if (deep) o.records = (e.records ?? []).map(recordJson);
  return o;
}
