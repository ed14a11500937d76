/**
 * Control records (spec §7; Kafka's `ControlRecordType`, `EndTransactionMarker`).
 *
 * Key: version int16 + type int16 (4 bytes). ABORT/COMMIT values: version int16 + coordinatorEpoch
 * int32 (6 bytes; longer values from newer versions are accepted and only these fields read).
 * KRaft types (LEADER_CHANGE ... KRAFT_VOTERS) carry their own message schemas; their values are
 * kept as bytes.
 */
import { KlxError } from '../errors.ts';
import type { ControlRecordInfo } from './types.ts';

/** Control record type names by type id. */
export const CONTROL_TYPES: Record<number, string> = {
  0: 'ABORT',
  1: 'COMMIT',
  2: 'LEADER_CHANGE',
  3: 'SNAPSHOT_HEADER',
  4: 'SNAPSHOT_FOOTER',
  5: 'KRAFT_VERSION',
  6: 'KRAFT_VOTERS',
};

/** Type id of the ABORT transaction marker. */
export const CONTROL_ABORT = 0;
/** Type id of the COMMIT transaction marker. */
export const CONTROL_COMMIT = 1;

/**
 * Decodes a control record's key (and for transaction markers, its value).
 * @throws KlxError `corrupt-batch` if the key is shorter than 4 bytes, its version is negative, or
 *   a marker value is shorter than 6 bytes.
 */
export function decodeControlRecord(key: Uint8Array | null, value: Uint8Array | null): ControlRecordInfo {
  if (key === null || key.length < 4) throw new KlxError('corrupt-batch', `control record key must be at least 4 bytes, got ${key === null ? 'null' : key.length}`);
  const dv = new DataView(key.buffer, key.byteOffset, key.byteLength);
  const version = dv.getInt16(0);
  if (version < 0) throw new KlxError('corrupt-batch', `control record key version ${version} is negative`);
  const typeId = dv.getInt16(2);
  const info: ControlRecordInfo = { version, typeId, type: CONTROL_TYPES[typeId] ?? 'UNKNOWN' };
  if (typeId === CONTROL_ABORT || typeId === CONTROL_COMMIT) {
    if (value === null || value.length < 6) throw new KlxError('corrupt-batch', `transaction marker value must be at least 6 bytes, got ${value === null ? 'null' : value.length}`);
    const vv = new DataView(value.buffer, value.byteOffset, value.byteLength);
    info.markerVersion = vv.getInt16(0);
    info.coordinatorEpoch = vv.getInt32(2);
  }
  return info;
}

/** Encodes a control record key (version 0). */
export function encodeControlKey(typeId: number, version = 0): Buffer {
  const b = Buffer.alloc(4);
  b.writeInt16BE(version, 0);
  b.writeInt16BE(typeId, 2);
  return b;
}

/** Encodes an end-transaction marker value (version 0 + coordinatorEpoch). */
export function encodeEndTxnMarkerValue(coordinatorEpoch: number, version = 0): Buffer {
  const b = Buffer.alloc(6);
  b.writeInt16BE(version, 0);
  b.writeInt32BE(coordinatorEpoch, 2);
  return b;
}
