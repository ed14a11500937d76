/**
 * `__transaction_state` records: Kafka's `TransactionLogKey` / `TransactionLogValue`
 * (`transaction-coordinator/src/main/resources/common/message/TransactionLog*.json`), as the
 * transaction coordinator writes them (`TransactionLog.keyToBytes` / `valueToBytes`) and as
 * `kafka-dump-log.sh --transaction-log-decoder` prints them (Kafka 4's `DumpLogSegments`
 * `TransactionLogMessageParser` over `TransactionCoordinatorRecordSerde`):
 * `key: {"type":"0","data":{"transactionalId":"t1"}} payload: {"version":"1","data":{…}}`,
 * `<DELETE>` for a tombstone. `transactionStatus` is printed as the state name
 * (`"CompleteCommit"`), as dump-log does since Kafka 4.4 (KAFKA-20712: `TransactionState.fromId(…).stateName()`,
 * an unknown id as its number in a string); Kafka 4.0–4.3 printed the number (`4`). Kafka 3.x's
 * dump-log printed another, non-JSON text (`TransactionLog.formatRecordKeyAndValue`).
 *
 * Key: int16 record type (0, the only one; Kafka 3 called it the key version), then the
 * TransactionLogKey body (non-flexible string). Value: int16 version (0 or 1; 1 is flexible with
 * the tagged fields PreviousProducerId, NextProducerId, ClientTransactionVersion and, since Kafka 4.1,
 * NextProducerEpoch), then the body.
 * Strings that are not valid UTF-8 read with U+FFFD in place of the bad bytes and bytes after the last
 * field are ignored, as the coordinator reads them (see {@link decodeTransactionLogValue}).
 * Pure: no I/O.
 */
import { DecodeError } from '../decode-error.ts';
import { ProtocolReader } from '../protocol-reader.ts';
import { field as f, message, messageJsonText, readMessage, structArray, type MessageSchema, type UnknownTag } from './message-schema.ts';

/** TransactionLogKey (record type 0, version 0). */
export const TRANSACTION_LOG_KEY: MessageSchema = message('TransactionLogKey', '0', 'none', [f('TransactionalId', 'string', '0')]);

/** TransactionLogValue versions 0–1, as of Kafka 4.1 (tags 0–3). */
export const TRANSACTION_LOG_VALUE: MessageSchema = message('TransactionLogValue', '0-1', '1+', [
  f('ProducerId', 'int64', '0+'),
  f('PreviousProducerId', 'int64', undefined, { tagged: '1+', tag: 0, default: -1 }),
  f('NextProducerId', 'int64', undefined, { tagged: '1+', tag: 1, default: -1 }),
  f('ProducerEpoch', 'int16', '0+'),
  // Kafka 4.1+ (KAFKA-15370, KIP-939): the epoch of NextProducerId
  f('NextProducerEpoch', 'int16', undefined, { tagged: '1+', tag: 3, default: -1 }),
  f('TransactionTimeoutMs', 'int32', '0+'),
  f('TransactionStatus', 'int8', '0+'),
  f('TransactionPartitions', structArray([f('Topic', 'string', '0+'), f('PartitionIds', '[]int32', '0+')]), '0+', { nullable: '0+' }),
  f('TransactionLastUpdateTimestampMs', 'int64', '0+'),
  f('TransactionStartTimestampMs', 'int64', '0+'),
  f('ClientTransactionVersion', 'int16', undefined, { tagged: '1+', tag: 2, default: 0 }),
]);

/** Kafka's transaction states by `TransactionStatus` id (`TransactionState.fromId`). */
export const TRANSACTION_STATES: readonly string[] = ['Empty', 'Ongoing', 'PrepareCommit', 'PrepareAbort', 'CompleteCommit', 'CompleteAbort', 'Dead', 'PrepareEpochFence'];

/** The state name of a `TransactionStatus` id, or `Unknown(<id>)`. */
export function transactionStateName(id: number): string {
  return TRANSACTION_STATES[id] ?? `Unknown(${id})`;
}

/** A decoded `__transaction_state` key. */
export interface TransactionLogKey {
  /** Record type (the key's leading int16; 0 is the only one Kafka defines). */
  type: number;
  data: { transactionalId: string };
}

/** A decoded `__transaction_state` value (`null` for a tombstone is the caller's). */
export interface TransactionLogValue {
  version: number;
  /** Fields as Kafka's JSON converter prints them (TransactionLogValueJsonConverter; producerId etc. as bigint; tagged fields only when not default). */
  data: Record<string, unknown>;
  unknownTaggedFields: UnknownTag[];
}

/**
 * Decodes a `__transaction_state` key.
 * @throws DecodeError on a null key, a record type other than 0, or bytes that do not match.
 */
export function decodeTransactionLogKey(key: Uint8Array | null): TransactionLogKey {
  if (key === null) throw new DecodeError(0, 'transaction log record without a key');
  const r = new ProtocolReader(key);
  const type = r.int16('record type');
  if (type !== 0) throw new DecodeError(0, `Unknown record type ${type} (TransactionLogKey is type 0)`);
  const msg = readMessage(r, TRANSACTION_LOG_KEY, 0);
  return { type, data: msg.data as { transactionalId: string } };
}

/**
 * Decodes a `__transaction_state` value (not a tombstone).
 * @throws DecodeError on a version other than 0–1 or bytes that do not match. Bytes after the last field
 *   are ignored, as the transaction coordinator ignores them (the generated TransactionLogValue `read` takes
 *   the fields only: TransactionCoordinatorRecordSerde via CoordinatorRecordSerde.deserialize in 4.x,
 *   TransactionLog.readTxnRecordValue in 3.x).
 */
export function decodeTransactionLogValue(value: Uint8Array): TransactionLogValue {
  const r = new ProtocolReader(value);
  const version = r.int16('version');
  const msg = readMessage(r, TRANSACTION_LOG_VALUE, version);
  return { version, data: msg.data, unknownTaggedFields: msg.unknownTaggedFields };
}

/** A decoded `__transaction_state` record: key, and value or `null` for a tombstone. */
export interface TransactionLogRecord {
  key: TransactionLogKey;
  value: TransactionLogValue | null;
}

/** Decodes key and value of one `__transaction_state` record. @throws DecodeError as the two above. */
export function decodeTransactionLogRecord(key: Uint8Array | null, value: Uint8Array | null): TransactionLogRecord {
  return { key: decodeTransactionLogKey(key), value: value === null ? null : decodeTransactionLogValue(value) };
}

/**
 * The `transactionStatus` dump-log prints (Kafka 4.4+, `DumpLogSegments.TransactionLogMessageParser`):
 * the state name of a known id (`TransactionState.stateName`), else the id as a string.
 */
export function dumpLogTransactionStatus(id: number): string {
  return TRANSACTION_STATES[id] ?? String(id);
}

/** TransactionLogValue as dump-log prints it: TransactionStatus as a string (see dumpLogTransactionStatus). */
const TRANSACTION_LOG_VALUE_TEXT: MessageSchema = {
  ...TRANSACTION_LOG_VALUE,
  fields: TRANSACTION_LOG_VALUE.fields.map((fd) => (fd.name === 'TransactionStatus' ? { ...fd, type: 'string' as const } : fd)),
};

/** dump-log's key text: `{"type":"0","data":{"transactionalId":"t1"}}`. */
export function transactionLogKeyText(key: TransactionLogKey): string {
  return `{"type":"${key.type}","data":${messageJsonText(TRANSACTION_LOG_KEY, key.data)}}`;
}

/**
 * dump-log's payload text: `{"version":"1","data":{…}}` with `transactionStatus` as its state name
 * (Kafka 4.4+), or `<DELETE>` for a tombstone. Tagged fields the schema does not know are not printed, as
 * the converters JsonConverterGenerator writes know only the schema's fields (they stay in `unknownTaggedFields`
 * of the decoded value and the SQL `transactions.unknown_tagged_fields` column).
 */
export function transactionLogValueText(value: TransactionLogValue | null): string {
  if (value === null) return '<DELETE>';
  const status = value.data.transactionStatus;
  const data = typeof status === 'number' ? { ...value.data, transactionStatus: dumpLogTransactionStatus(status) } : value.data;
  return `{"version":"${value.version}","data":${messageJsonText(TRANSACTION_LOG_VALUE_TEXT, data)}}`;
}
