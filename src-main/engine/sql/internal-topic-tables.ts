/**
 * SQL tables of Kafka's internal topics (issue 11), built beside the log tables (`log-tables.ts`) by
 * walking only the `__transaction_state` and `__cluster_metadata` partitions of the opened folder:
 *
 * - `transactions`: one row per `__transaction_state` record (tombstones included): topic, partition,
 *   record_offset, timestamp (ms) and timestamp_utc, transactional_id, is_tombstone, version (value
 *   version 0–1), producer_id, previous_producer_id, next_producer_id, producer_epoch,
 *   next_producer_epoch (tagged field 3 of TransactionLogValue, Kafka 4.1+, KIP-890), transaction_timeout_ms, state_id and state (Kafka's `TransactionState` name: Empty, Ongoing,
 *   PrepareCommit, PrepareAbort, CompleteCommit, CompleteAbort, Dead, PrepareEpochFence), partitions
 *   (JSON `[{"topic","partitionIds"}]`), last_update_timestamp / start_timestamp (ms, −1 = none) and
 *   their `_utc` TIMESTAMPs, client_transaction_version, key_json / value_json (as
 *   `kafka-dump-log.sh --transaction-log-decoder` of Kafka 4.4+ prints key and payload, transactionStatus
 *   as its state name; JSON), unknown_tagged_fields (tags the value's version does not define, which
 *   dump-log does not print: JSON `[{"path","tag","data":base64}]`, NULL when none), decode_error.
 *   Tagged fields absent from the bytes take Kafka's defaults (−1, −1, −1, 0), as Kafka's
 *   `TransactionLogValue` object does.
 * - `cluster_metadata`: one row per `__cluster_metadata` record: record_offset, type
 *   (`TOPIC_RECORD`…; for KRaft control records the control type, `LEADER_CHANGE`…), version, data
 *   (JSON, exactly as `kafka-dump-log.sh --cluster-metadata-decoder` prints `data`), payload (the whole
 *   text dump-log prints after `payload:`, or its control-record text), is_control, timestamp (ms) and
 *   timestamp_utc, topic, partition, unknown_tagged_fields (JSON, NULL when none), decode_error.
 *
 * Rows of a record that does not decode keep what is known (offset, timestamp, key) with
 * `decode_error` set (`value: byte 3: …`). Values above 1 MiB are not decoded (`too large`), as the
 * decode layer caps them. int64 stays exact (BIGINT; JSON text with all digits).
 */
import type { DuckDBConnection } from './duckdb.ts';
import { clusterMetadataDataText, clusterMetadataJsonText, decodeClusterMetadataRecord, decodeKRaftControlRecord, isKRaftControlType, kraftControlJsonText, unknownTagsText } from '../decode/internal/cluster-metadata.ts';
import { DecodeError } from '../decode/decode-error.ts';
import { toJsonText } from '../decode/json-text.ts';
import { decodeTransactionLogKey, decodeTransactionLogValue, transactionLogKeyText, transactionLogValueText, transactionStateName } from '../decode/internal/transaction-log.ts';
import { allPartitions, type OpenedLogs } from '../log/log-dir.ts';
import { Pacer, recordsOf, walkLog, type LongReadOptions } from '../log/log-walk.ts';
import { ColumnarAppender, SQL_TYPE_OF, type ColumnKind } from './columnar-appender.ts';

/** The tables this module adds. */
export const INTERNAL_TOPIC_TABLES = ['transactions', 'cluster_metadata'] as const;

/** Values larger than this (bytes) are not decoded: `decode_error = 'too large'` (the decode layer's 1 MiB cap). */
export const INTERNAL_DECODE_CAP_BYTES = 1 << 20;

const SCHEMA = 'klx_internal';

const TXN_COLUMNS = [
  ['topic', 'varchar'],
  ['partition', 'int32'],
  ['record_offset', 'int64'],
  ['timestamp', 'int64'],
  ['transactional_id', 'varchar'],
  ['is_tombstone', 'bool'],
  ['version', 'int32'],
  ['producer_id', 'int64'],
  ['previous_producer_id', 'int64'],
  ['next_producer_id', 'int64'],
  ['producer_epoch', 'int32'],
  ['next_producer_epoch', 'int32'],
  ['transaction_timeout_ms', 'int32'],
  ['state_id', 'int32'],
  ['state', 'varchar'],
  ['partitions', 'varchar'],
  ['last_update_timestamp', 'int64'],
  ['start_timestamp', 'int64'],
  ['client_transaction_version', 'int32'],
  ['key_json', 'varchar'],
  ['value_json', 'varchar'],
  ['unknown_tagged_fields', 'varchar'],
  ['decode_error', 'varchar'],
] as const satisfies readonly (readonly [string, ColumnKind])[];

const META_COLUMNS = [
  ['topic', 'varchar'],
  ['partition', 'int32'],
  ['record_offset', 'int64'],
  ['timestamp', 'int64'],
  ['is_control', 'bool'],
  ['type', 'varchar'],
  ['version', 'int32'],
  ['data', 'varchar'],
  ['payload', 'varchar'],
  ['unknown_tagged_fields', 'varchar'],
  ['decode_error', 'varchar'],
] as const satisfies readonly (readonly [string, ColumnKind])[];

type Cols<T extends readonly (readonly [string, ColumnKind])[]> = { [K in T[number][0]]: number };
function indexOf<T extends readonly (readonly [string, ColumnKind])[]>(cols: T): Cols<T> {
  return Object.fromEntries(cols.map(([n], i) => [n, i])) as Cols<T>;
}
const T = indexOf(TXN_COLUMNS);
const M = indexOf(META_COLUMNS);

const createSql = (name: string, cols: readonly (readonly [string, ColumnKind])[]) => `CREATE TABLE ${name} (${cols.map(([n, k]) => `"${n}" ${SQL_TYPE_OF[k]}`).join(', ')})`;
const utc = (col: string) => `CASE WHEN ${col} >= 0 THEN epoch_ms(${col}) END`;

/** Counts of what {@link buildInternalTopicTables} wrote. */
export interface InternalTopicTablesSummary {
  transactions: number;
  clusterMetadata: number;
  /** Rows with `decode_error` set, over both tables. */
  decodeErrors: number;
}

function errorText(side: 'key' | 'value', err: unknown): string {
  if (!(err instanceof DecodeError)) throw err;
  return `${side}: byte ${err.position}: ${err.reason}`;
}

/**
 * Creates `transactions` and `cluster_metadata` (tables under `klx_internal`, views in `main`) and fills
 * them from the opened folder's `__transaction_state-*` and `__cluster_metadata-*` partitions (other
 * partitions are not read). Progress phase: `decode internal topics` (bytes of those partitions).
 * @throws KlxError `cancelled` when `opts.signal` is aborted, `io-error` when a `.log` cannot be read,
 *   `internal` when DuckDB refuses the data. Records that do not decode are rows with `decode_error`.
 */
export async function buildInternalTopicTables(connection: DuckDBConnection, opened: OpenedLogs, opts: LongReadOptions = {}): Promise<InternalTopicTablesSummary> {
  const parts = allPartitions(opened).filter((p) => p.log.topic === '__transaction_state' || p.log.topic === '__cluster_metadata');
  const pacer = new Pacer({ ...opts, phase: 'decode internal topics', total: parts.reduce((s, p) => s + p.log.logSize, 0) });
  await connection.run(createSql(`${SCHEMA}.transaction_rows`, TXN_COLUMNS));
  await connection.run(createSql(`${SCHEMA}.cluster_metadata_rows`, META_COLUMNS));
  const txnOut = await ColumnarAppender.create(connection, SCHEMA, 'transaction_rows', TXN_COLUMNS.map(([, k]) => k));
  const summary: InternalTopicTablesSummary = { transactions: 0, clusterMetadata: 0, decodeErrors: 0 };
  let metaOut: ColumnarAppender | null = null;
  try {
    metaOut = await ColumnarAppender.create(connection, SCHEMA, 'cluster_metadata_rows', META_COLUMNS.map(([, k]) => k));
    for (const { log } of parts) {
      const isTxn = log.topic === '__transaction_state';
      for (const e of walkLog(log)) {
        if (e.type !== 'batch') continue;
        await pacer.step(e.header.size);
        let records;
        try {
          records = recordsOf(e);
        } catch {
          continue; // a batch whose records cannot be read is a row of `damage` in the log tables
        }
        for (const r of records) {
          if (isTxn) {
            if (r.control) continue; // transaction markers are not transaction-state records
            if (!writeTxnRow(txnOut, log.topic, log.partition, r.offset, r.timestamp, r.key, r.value)) summary.decodeErrors++;
            summary.transactions++;
          } else {
            if (!writeMetaRow(metaOut!, log.topic, log.partition, r.offset, r.timestamp, r.control?.typeId ?? null, r.control?.type ?? null, r.value)) summary.decodeErrors++;
            summary.clusterMetadata++;
          }
        }
      }
    }
    pacer.finish();
  } finally {
    txnOut.close();
    metaOut?.close();
  }
  await connection.run(
    `CREATE VIEW transactions AS SELECT topic, "partition", record_offset, "timestamp", ${utc('"timestamp"')} AS timestamp_utc, transactional_id, is_tombstone, version, ` +
      `producer_id, previous_producer_id, next_producer_id, producer_epoch, next_producer_epoch, transaction_timeout_ms, state_id, state, partitions::JSON AS partitions, ` +
      `last_update_timestamp, ${utc('last_update_timestamp')} AS last_update_utc, start_timestamp, ${utc('start_timestamp')} AS start_utc, ` +
      `client_transaction_version, key_json::JSON AS key_json, value_json::JSON AS value_json, unknown_tagged_fields::JSON AS unknown_tagged_fields, decode_error FROM ${SCHEMA}.transaction_rows`,
  );
  await connection.run(
    `CREATE VIEW cluster_metadata AS SELECT record_offset, type, version, data::JSON AS data, payload, is_control, "timestamp", ${utc('"timestamp"')} AS timestamp_utc, ` +
      `topic, "partition", unknown_tagged_fields::JSON AS unknown_tagged_fields, decode_error FROM ${SCHEMA}.cluster_metadata_rows`,
  );
  return summary;
}

/** Writes one `transactions` row. @returns false when the record did not decode. */
function writeTxnRow(out: ColumnarAppender, topic: string, partition: number, offset: bigint, timestamp: bigint, key: Uint8Array | null, value: Uint8Array | null): boolean {
  out.varchar(T.topic, topic);
  out.int32(T.partition, partition);
  out.int64(T.record_offset, offset);
  out.int64(T.timestamp, timestamp);
  out.bool(T.is_tombstone, value === null);
  const valueCols = [T.version, T.producer_id, T.previous_producer_id, T.next_producer_id, T.producer_epoch, T.next_producer_epoch, T.transaction_timeout_ms, T.state_id, T.state, T.partitions, T.last_update_timestamp, T.start_timestamp, T.client_transaction_version, T.value_json, T.unknown_tagged_fields];
  const fail = (reason: string, keyDone: boolean): boolean => {
    if (!keyDone) {
      out.null(T.transactional_id);
      out.null(T.key_json);
    }
    for (const c of valueCols) out.null(c);
    out.varchar(T.decode_error, reason);
    out.endRow();
    return false;
  };
  try {
    const k = decodeTransactionLogKey(key);
    out.varchar(T.transactional_id, k.data.transactionalId);
    out.varchar(T.key_json, transactionLogKeyText(k));
  } catch (err) {
    return fail(errorText('key', err), false);
  }
  if (value === null) {
    for (const c of valueCols) out.null(c);
    out.null(T.decode_error);
    out.endRow();
    return true;
  }
  if (value.length > INTERNAL_DECODE_CAP_BYTES) return fail('too large', true);
  let v;
  try {
    v = decodeTransactionLogValue(value);
  } catch (err) {
    return fail(errorText('value', err), true);
  }
  const d = v.data;
  out.int32(T.version, v.version);
  out.int64(T.producer_id, d.producerId as bigint);
  out.int64(T.previous_producer_id, (d.previousProducerId as bigint | undefined) ?? -1n);
  out.int64(T.next_producer_id, (d.nextProducerId as bigint | undefined) ?? -1n);
  out.int32(T.producer_epoch, d.producerEpoch as number);
  out.int32(T.next_producer_epoch, (d.nextProducerEpoch as number | undefined) ?? -1);
  out.int32(T.transaction_timeout_ms, d.transactionTimeoutMs as number);
  out.int32(T.state_id, d.transactionStatus as number);
  out.varchar(T.state, transactionStateName(d.transactionStatus as number));
  out.varchar(T.partitions, d.transactionPartitions === null ? null : toJsonText(d.transactionPartitions));
  out.int64(T.last_update_timestamp, d.transactionLastUpdateTimestampMs as bigint);
  out.int64(T.start_timestamp, d.transactionStartTimestampMs as bigint);
  out.int32(T.client_transaction_version, (d.clientTransactionVersion as number | undefined) ?? 0);
  out.varchar(T.value_json, transactionLogValueText(v));
  out.varchar(T.unknown_tagged_fields, v.unknownTaggedFields.length > 0 ? unknownTagsText(v.unknownTaggedFields) : null);
  out.null(T.decode_error);
  out.endRow();
  return true;
}

/** Writes one `cluster_metadata` row. @returns false when the record did not decode. */
function writeMetaRow(out: ColumnarAppender, topic: string, partition: number, offset: bigint, timestamp: bigint, controlTypeId: number | null, controlType: string | null, value: Uint8Array | null): boolean {
  out.varchar(M.topic, topic);
  out.int32(M.partition, partition);
  out.int64(M.record_offset, offset);
  out.int64(M.timestamp, timestamp);
  out.bool(M.is_control, controlTypeId !== null);
  const fail = (type: string | null, reason: string): boolean => {
    out.varchar(M.type, type);
    for (const c of [M.version, M.data, M.payload, M.unknown_tagged_fields]) out.null(c);
    out.varchar(M.decode_error, reason);
    out.endRow();
    return false;
  };
  if (value !== null && value.length > INTERNAL_DECODE_CAP_BYTES) return fail(controlType, 'too large');
  if (controlTypeId !== null) {
    if (!isKRaftControlType(controlTypeId)) return fail(controlType, `control type ${controlType} (${controlTypeId}) is not a KRaft control record`);
    try {
      const c = decodeKRaftControlRecord(controlTypeId, value);
      const json = kraftControlJsonText(controlTypeId, c);
      out.varchar(M.type, controlType);
      out.int32(M.version, c.data.version as number);
      out.varchar(M.data, json);
      out.varchar(M.payload, `${c.label} ${json}`);
      out.varchar(M.unknown_tagged_fields, c.unknownTaggedFields.length > 0 ? unknownTagsText(c.unknownTaggedFields) : null);
    } catch (err) {
      return fail(controlType, errorText('value', err));
    }
  } else {
    try {
      const rec = decodeClusterMetadataRecord(value);
      out.varchar(M.type, rec.type);
      out.int32(M.version, rec.version);
      out.varchar(M.data, clusterMetadataDataText(rec));
      out.varchar(M.payload, clusterMetadataJsonText(rec));
      out.varchar(M.unknown_tagged_fields, rec.unknownTaggedFields.length > 0 ? unknownTagsText(rec.unknownTaggedFields) : null);
    } catch (err) {
      return fail(null, errorText('value', err));
    }
  }
  out.null(M.decode_error);
  out.endRow();
  return true;
}
