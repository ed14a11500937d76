/**
 * The internal-topic decoders of `kafka-dump-log.sh` (Kafka's `DumpLogSegments`: `--offsets-decoder`,
 * `--transaction-log-decoder`, `--cluster-metadata-decoder`) as one entry point: which decoder a topic
 * takes, and a record's key and payload as the JSON texts dump-log prints after `key:` and `payload:`.
 *
 * - `metadata`: no key; payload `{"type":"TOPIC_RECORD","version":0,"data":{…}}`.
 * - `transactions`: key `{"type":"0","data":{"transactionalId":…}}`, payload `{"version":"1","data":{…}}`.
 * - `offsets`: key `{"type":"1","data":{…}}`, payload `{"version":"3","data":{…}}` (the data as the
 *   `__consumer_offsets` decoder gives it).
 * A tombstone's payload is `<DELETE>`. KRaft control records print as dump-log's control line does
 * (`LeaderChange: {…}`). Pure: no I/O.
 */
import { DecodeError } from '../decode-error.ts';
import { clusterMetadataJsonText, decodeClusterMetadataRecord, decodeKRaftControlRecord, isKRaftControlType, kraftControlJsonText } from './cluster-metadata.ts';
import { CONSUMER_OFFSETS_RECORD_TYPES, consumerOffsetsJsonText, consumerOffsetsValueText, decodeConsumerOffsetsRecord } from './consumer-offsets.ts';
import { decodeTransactionLogKey, decodeTransactionLogValue, transactionLogKeyText, transactionLogValueText } from './transaction-log.ts';

/** The decoders of Kafka's internal topics, named as `klx dump --decode` names them. */
export type InternalDecoder = 'offsets' | 'transactions' | 'metadata';

/** Which decoder each internal topic takes. */
export const INTERNAL_TOPIC_DECODERS: Readonly<Record<string, InternalDecoder>> = {
  __consumer_offsets: 'offsets',
  __transaction_state: 'transactions',
  __cluster_metadata: 'metadata',
};

/** The decoder of a topic by its name, or null for a topic that is not one of Kafka's internal topics. */
export function internalDecoderForTopic(topic: string): InternalDecoder | null {
  return INTERNAL_TOPIC_DECODERS[topic] ?? null;
}

/** A record decoded by one of the internal decoders. */
export interface InternalRecordText {
  /**
   * The key's JSON text, or null when the decoder prints no key (metadata) or it did not decode. For a
   * coordinator record of a type the decoder does not know, dump-log's own text in place of the key
   * (DumpLogSegments): `Unknown record type 99 at offset 5, skipping.` (payload null, error null).
   */
  key: string | null;
  /** The value's JSON text, `<DELETE>` for a tombstone, or null when it did not decode. */
  payload: string | null;
  /** Why the record did not decode (`key: byte 3: …` / `value: byte 12: …`), or null. */
  error: string | null;
  /** The record type a coordinator record's key names when the decoder does not know it (its key is then dump-log's skip text, DumpLogSegments), else absent. */
  unknownType?: number;
}

/**
 * What kafka-dump-log prints in place of the key of a `__consumer_offsets` or `__transaction_state` record
 * whose record type (the key's leading int16) its serde does not know, with no payload: the
 * `UnknownRecordTypeException` that GroupCoordinatorRecordSerde / TransactionCoordinatorRecordSerde
 * (`CoordinatorRecordSerde.deserialize`) throw, caught by DumpLogSegments' coordinator record parser
 * (Kafka 4.x; 3.x printed `unknown::version=N` for the transaction log, TransactionLog.formatRecordKeyAndValue).
 */
export function unknownRecordTypeText(type: number, offset: bigint): string {
  return `Unknown record type ${type} at offset ${offset}, skipping.`;
}

/** `key: byte 3: reason` / `value: byte 12: reason` (a reason already naming its side keeps it). */
function sideError(side: 'key' | 'value', err: unknown): string {
  if (!(err instanceof DecodeError)) throw err;
  const named = /^(key|value): /.exec(err.reason);
  return named ? `${named[1]}: byte ${err.position}: ${err.reason.slice(named[0].length)}` : `${side}: byte ${err.position}: ${err.reason}`;
}

/**
 * Decodes one (non-control) record with `decoder`, as dump-log would print it. Never throws for bad
 * bytes: a record that does not decode gives `error` (key and payload texts that did decode are kept);
 * a coordinator record of an unknown type gives dump-log's skip text as its key ({@link unknownRecordTypeText}, DumpLogSegments).
 * @param offset the record's offset (dump-log names it in the skip text).
 */
export function decodeInternalRecordText(decoder: InternalDecoder, key: Uint8Array | null, value: Uint8Array | null, offset: bigint): InternalRecordText {
  switch (decoder) {
    case 'metadata':
      try {
        return { key: null, payload: clusterMetadataJsonText(decodeClusterMetadataRecord(value)), error: null };
      } catch (err) {
        return { key: null, payload: null, error: sideError('value', err) };
      }
    case 'transactions': {
      // TransactionCoordinatorRecordSerde knows record type 0 only
      if (key !== null && key.byteLength >= 2) {
        const type = new DataView(key.buffer, key.byteOffset, 2).getInt16(0);
        if (type !== 0) return { key: unknownRecordTypeText(type, offset), payload: null, error: null, unknownType: type };
      }
      let keyText: string;
      try {
        keyText = transactionLogKeyText(decodeTransactionLogKey(key));
      } catch (err) {
        return { key: null, payload: null, error: sideError('key', err) };
      }
      try {
        return { key: keyText, payload: transactionLogValueText(value === null ? null : decodeTransactionLogValue(value)), error: null };
      } catch (err) {
        return { key: keyText, payload: null, error: sideError('value', err) };
      }
    }
    case 'offsets': {
      // GroupCoordinatorRecordSerde reads the key's type first and nothing else of an unknown type
      if (key !== null && key.byteLength >= 2) {
        const type = new DataView(key.buffer, key.byteOffset, 2).getInt16(0);
        if (CONSUMER_OFFSETS_RECORD_TYPES[type] === undefined) return { key: unknownRecordTypeText(type, offset), payload: null, error: null, unknownType: type };
      }
      try {
        const rec = decodeConsumerOffsetsRecord(key, value);
        const keyText = `{"type":"${rec.key.type}","data":${consumerOffsetsJsonText(rec.key.data)}}`;
        const payload = consumerOffsetsValueText(rec.value);
        return { key: keyText, payload, error: null };
      } catch (err) {
        return { key: null, payload: null, error: sideError('key', err) };
      }
    }
  }
}

/**
 * The text dump-log prints for a KRaft control record (`LeaderChange: {…}`, `SnapshotHeader {…}`,
 * `SnapshotFooter {…}`, `KRaftVersion {…}`, `KRaftVoters {…}`), null for other control types, or an
 * error text when its value does not decode.
 */
export function kraftControlText(typeId: number, value: Uint8Array | null): string | null {
  if (!isKRaftControlType(typeId)) return null;
  try {
    const rec = decodeKRaftControlRecord(typeId, value);
    return `${rec.label} ${kraftControlJsonText(typeId, rec)}`;
  } catch (err) {
    if (err instanceof DecodeError) return `!! control record does not decode: ${err.message}`;
    throw err;
  }
}
