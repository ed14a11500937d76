/**
 * The consumer-group tables of the SQL view (issue 12), built next to the log tables:
 *
 * - `consumer_offsets`: every record of every `__consumer_offsets` partition, decoded (record type,
 *   group, member, committed topic/partition/offset, timestamps, the whole key and value as JSON text,
 *   or why it does not decode), streamed;
 * - `group_metadata`: one row per group as the coordinator loads it (type, protocol type, state,
 *   generation / epoch, members, topics, total lag);
 * - `group_offsets`: the latest committed offset of each group, topic and partition with the log
 *   offsets of the partition, `lag`, `record_lag`, `diagnosis`, `next_offset` (engine/groups), and
 *   `expired` computed against the clock when queried (from `expires_at`);
 * - `group_members`: the members of classic, KIP-848 consumer and share groups.
 *
 * Memory: the group model grows with groups and committed partitions; `consumer_offsets` rows are
 * appended as they are read.
 */
import type { DuckDBConnection } from './duckdb.ts';
import { decodeConsumerOffsetsKey, decodeConsumerOffsetsValue, groupIdOfKey, type OffsetCommitValueData } from '../decode/internal/consumer-offsets.ts';
import { DecodeError } from '../decode/decode-error.ts';
import { toJsonText } from '../decode/json-text.ts';
import { describeGroups } from '../groups/group-offsets.ts';
import { loadGroups } from '../groups/groups-load.ts';
import { OFFSETS_TOPIC } from '../groups/offsets-topic.ts';
import { allPartitions, type OpenedLogs } from '../log/log-dir.ts';
import { Pacer, recordsOf, walkLog, type LongReadOptions } from '../log/log-walk.ts';
import { ColumnarAppender, SQL_TYPE_OF, type ColumnKind } from './columnar-appender.ts';

/** The tables (and the view) this module creates. */
export const GROUP_TABLES = ['consumer_offsets', 'group_metadata', 'group_offsets', 'group_members'] as const;

type Col = readonly [string, ColumnKind];

const CONSUMER_OFFSETS_COLUMNS = [
  ['partition', 'int32'],
  ['offset', 'int64'],
  ['timestamp', 'int64'],
  ['record_type', 'int32'],
  ['record_type_name', 'varchar'],
  ['group_id', 'varchar'],
  ['member_id', 'varchar'],
  ['topic', 'varchar'],
  ['topic_partition', 'int32'],
  ['committed_offset', 'int64'],
  ['leader_epoch', 'int32'],
  ['metadata', 'varchar'],
  ['commit_timestamp', 'int64'],
  ['expire_timestamp', 'int64'],
  ['value_version', 'int32'],
  ['is_tombstone', 'bool'],
  ['is_transactional', 'bool'],
  ['producer_id', 'int64'],
  ['key_json', 'varchar'],
  ['value_json', 'varchar'],
  ['decode_error', 'varchar'],
  ['file', 'varchar'],
  ['position', 'int64'],
] as const satisfies readonly Col[];

const GROUP_METADATA_COLUMNS = [
  ['group_id', 'varchar'],
  ['type', 'varchar'],
  ['protocol_type', 'varchar'],
  ['protocol', 'varchar'],
  ['state', 'varchar'],
  ['generation', 'int32'],
  ['members', 'int32'],
  ['topics', 'varchar'],
  ['partitions', 'int32'],
  ['total_lag', 'int64'],
  ['total_record_lag', 'int64'],
  ['offsets_partition', 'int32'],
  ['offsets_partition_missing', 'bool'],
  ['problems', 'int32'],
  ['problem_details', 'varchar'],
] as const satisfies readonly Col[];

const GROUP_OFFSET_COLUMNS = [
  ['group_id', 'varchar'],
  ['topic', 'varchar'],
  ['partition', 'int32'],
  ['committed_offset', 'int64'],
  ['leader_epoch', 'int32'],
  ['metadata', 'varchar'],
  ['commit_timestamp', 'int64'],
  ['expire_timestamp', 'int64'],
  ['expires_at', 'int64'],
  ['log_start_offset', 'int64'],
  ['log_end_offset', 'int64'],
  ['high_watermark', 'int64'],
  ['last_stable_offset', 'int64'],
  ['lag', 'int64'],
  ['record_lag', 'int64'],
  ['diagnosis', 'varchar'],
  ['next_offset', 'int64'],
  ['consumer_id', 'varchar'],
  ['host', 'varchar'],
  ['client_id', 'varchar'],
  ['transactional', 'bool'],
  ['detail', 'varchar'],
] as const satisfies readonly Col[];

const GROUP_MEMBER_COLUMNS = [
  ['group_id', 'varchar'],
  ['member_id', 'varchar'],
  ['group_instance_id', 'varchar'],
  ['client_id', 'varchar'],
  ['host', 'varchar'],
  ['session_timeout_ms', 'int32'],
  ['rebalance_timeout_ms', 'int32'],
  ['member_epoch', 'int32'],
  ['subscribed_topics', 'varchar'],
  ['assignment', 'varchar'],
] as const satisfies readonly Col[];

const quote = (n: string) => `"${n.replaceAll('"', '""')}"`;
const create = (name: string, cols: readonly Col[]) => `CREATE TABLE ${name} (${cols.map(([n, k]) => `${quote(n)} ${SQL_TYPE_OF[k]}`).join(', ')})`;
const idx = <T extends readonly Col[]>(cols: T) => Object.fromEntries(cols.map(([n], i) => [n, i])) as { [K in T[number][0]]: number };
const CO = idx(CONSUMER_OFFSETS_COLUMNS);
const GM = idx(GROUP_METADATA_COLUMNS);
const GO = idx(GROUP_OFFSET_COLUMNS);
const MB = idx(GROUP_MEMBER_COLUMNS);

/** What {@link buildGroupTables} wrote. */
export interface GroupTablesSummary {
  offsetsRecords: number;
  groups: number;
  groupOffsets: number;
  members: number;
}

function opt64(out: ColumnarAppender, col: number, v: bigint | null | undefined): void {
  if (v === null || v === undefined) out.null(col);
  else out.int64(col, v);
}
function opt32(out: ColumnarAppender, col: number, v: number | null | undefined): void {
  if (v === null || v === undefined) out.null(col);
  else out.int32(col, v);
}

/**
 * Creates and fills the group tables in the database of `connection` (writable, `main` schema).
 * `internalSchema` holds the table behind the `group_offsets` view.
 * @throws KlxError `cancelled`; DuckDB errors as `internal`. Records that do not decode become rows
 *   with `decode_error`, never errors.
 */
export async function buildGroupTables(connection: DuckDBConnection, opened: OpenedLogs, internalSchema: string, opts: LongReadOptions = {}): Promise<GroupTablesSummary> {
  await connection.run(create('consumer_offsets', CONSUMER_OFFSETS_COLUMNS));
  await connection.run(create('group_metadata', GROUP_METADATA_COLUMNS));
  await connection.run(create(`${internalSchema}.group_offset_rows`, GROUP_OFFSET_COLUMNS));
  await connection.run(create('group_members', GROUP_MEMBER_COLUMNS));
  await connection.run(`CREATE VIEW group_offsets AS SELECT *, (expires_at IS NOT NULL AND epoch_ms(current_timestamp) >= expires_at) AS expired FROM ${internalSchema}.group_offset_rows`);
  const summary: GroupTablesSummary = { offsetsRecords: 0, groups: 0, groupOffsets: 0, members: 0 };
  const logs = allPartitions(opened).map((p) => p.log);
  const offsetsLogs = logs.filter((l) => l.topic === OFFSETS_TOPIC && l.kind === 'normal');
  if (offsetsLogs.length === 0) return summary;

  // consumer_offsets: every record, streamed
  const co = await ColumnarAppender.create(connection, null, 'consumer_offsets', CONSUMER_OFFSETS_COLUMNS.map(([, k]) => k));
  const pacer = new Pacer({ signal: opts.signal, onProgress: opts.onProgress, phase: 'build consumer_offsets', total: offsetsLogs.reduce((s, l) => s + l.logSize, 0) });
  for (const log of offsetsLogs) {
    for (const e of walkLog(log)) {
      if (e.type !== 'batch') continue;
      const h = e.header;
      await pacer.step(h.size);
      if (h.isControl) continue;
      let records;
      try {
        records = recordsOf(e);
      } catch {
        continue; // damaged batches are rows of the `damage` table
      }
      for (const r of records) {
        co.int32(CO.partition, log.partition);
        co.int64(CO.offset, r.offset);
        co.int64(CO.timestamp, r.timestamp);
        co.int64(CO.producer_id, h.producerId);
        co.bool(CO.is_transactional, h.isTransactional);
        co.bool(CO.is_tombstone, r.value === null);
        co.varchar(CO.file, e.segment.files.log);
        co.int64(CO.position, BigInt(h.position));
        let error: string | null = null;
        let keyJson: string | null = null;
        let valueJson: string | null = null;
        let type: number | null = null;
        let typeName: string | null = null;
        let group: string | null = null;
        let member: string | null = null;
        let topic: string | null = null;
        let tp: number | null = null;
        let version: number | null = null;
        let commit: OffsetCommitValueData | null = null;
        try {
          if (r.key === null) throw new DecodeError(0, 'key: a __consumer_offsets record always has a key');
          const k = decodeConsumerOffsetsKey(r.key);
          type = k.type;
          typeName = k.recordType;
          group = groupIdOfKey(k);
          keyJson = toJsonText(k.data);
          const kd = k.data as { MemberId?: string; topic?: string; partition?: number };
          member = kd.MemberId ?? null;
          topic = kd.topic ?? null;
          tp = kd.partition ?? null;
          if (r.value !== null) {
            try {
              const v = decodeConsumerOffsetsValue(k.type, r.value);
              version = v.version;
              valueJson = toJsonText(v.data);
              if (k.recordType === 'OffsetCommit') commit = v.data as OffsetCommitValueData;
            } catch (err) {
              throw err instanceof DecodeError ? new DecodeError(err.position, `value: ${err.reason}`) : err;
            }
          }
        } catch (err) {
          error = err instanceof DecodeError ? `byte ${err.position}: ${err.reason}` : String(err);
        }
        opt32(co, CO.record_type, type);
        co.varchar(CO.record_type_name, typeName);
        co.varchar(CO.group_id, group);
        co.varchar(CO.member_id, member);
        co.varchar(CO.topic, topic);
        opt32(co, CO.topic_partition, tp);
        opt64(co, CO.committed_offset, commit?.offset);
        opt32(co, CO.leader_epoch, commit?.leaderEpoch);
        co.varchar(CO.metadata, commit?.metadata ?? null);
        opt64(co, CO.commit_timestamp, commit?.commitTimestamp);
        opt64(co, CO.expire_timestamp, commit?.expireTimestamp);
        opt32(co, CO.value_version, version);
        co.varchar(CO.key_json, keyJson);
        co.varchar(CO.value_json, valueJson);
        co.varchar(CO.decode_error, error);
        co.endRow();
        summary.offsetsRecords++;
      }
    }
  }
  pacer.finish();
  co.close();

  // the group model, lag and diagnosis
  const loaded = await loadGroups(logs, opts);
  const d = await describeGroups(loaded, opts);
  const gm = await ColumnarAppender.create(connection, null, 'group_metadata', GROUP_METADATA_COLUMNS.map(([, k]) => k));
  for (const g of d.groups) {
    gm.varchar(GM.group_id, g.group);
    gm.varchar(GM.type, g.type);
    gm.varchar(GM.protocol_type, g.protocolType);
    gm.varchar(GM.protocol, g.protocol);
    gm.varchar(GM.state, g.state);
    opt32(gm, GM.generation, g.generation);
    gm.int32(GM.members, g.members);
    gm.varchar(GM.topics, g.topics.join(','));
    gm.int32(GM.partitions, g.partitions);
    gm.int64(GM.total_lag, g.totalLag);
    gm.int64(GM.total_record_lag, BigInt(g.totalRecordLag));
    gm.int32(GM.offsets_partition, g.offsetsPartition);
    gm.bool(GM.offsets_partition_missing, g.offsetsPartitionMissing);
    gm.int32(GM.problems, g.problems.length);
    gm.varchar(GM.problem_details, g.problems.length ? g.problems.map((p) => `${p.file}: position ${p.position}: offset ${p.offset}: ${p.reason}`).join('\n') : null);
    gm.endRow();
    summary.groups++;
  }
  gm.close();
  const go = await ColumnarAppender.create(connection, internalSchema, 'group_offset_rows', GROUP_OFFSET_COLUMNS.map(([, k]) => k));
  for (const r of d.offsets) {
    go.varchar(GO.group_id, r.group);
    go.varchar(GO.topic, r.topic);
    go.int32(GO.partition, r.partition);
    opt64(go, GO.committed_offset, r.committedOffset);
    opt32(go, GO.leader_epoch, r.leaderEpoch);
    go.varchar(GO.metadata, r.metadata);
    opt64(go, GO.commit_timestamp, r.commitTimestamp);
    opt64(go, GO.expire_timestamp, r.expireTimestamp);
    opt64(go, GO.expires_at, r.expiresAt);
    opt64(go, GO.log_start_offset, r.logStartOffset);
    opt64(go, GO.log_end_offset, r.logEndOffset);
    opt64(go, GO.high_watermark, r.highWatermark);
    opt64(go, GO.last_stable_offset, r.lastStableOffset);
    opt64(go, GO.lag, r.lag);
    opt64(go, GO.record_lag, r.recordLag === null ? null : BigInt(r.recordLag));
    go.varchar(GO.diagnosis, r.diagnosis);
    opt64(go, GO.next_offset, r.nextOffset);
    go.varchar(GO.consumer_id, r.consumerId);
    go.varchar(GO.host, r.host);
    go.varchar(GO.client_id, r.clientId);
    go.bool(GO.transactional, r.transactional);
    go.varchar(GO.detail, r.detail);
    go.endRow();
    summary.groupOffsets++;
  }
  go.close();
  const mb = await ColumnarAppender.create(connection, null, 'group_members', GROUP_MEMBER_COLUMNS.map(([, k]) => k));
  for (const m of d.members) {
    mb.varchar(MB.group_id, m.group);
    mb.varchar(MB.member_id, m.memberId);
    mb.varchar(MB.group_instance_id, m.groupInstanceId);
    mb.varchar(MB.client_id, m.clientId);
    mb.varchar(MB.host, m.host);
    opt32(mb, MB.session_timeout_ms, m.sessionTimeoutMs);
    opt32(mb, MB.rebalance_timeout_ms, m.rebalanceTimeoutMs);
    opt32(mb, MB.member_epoch, m.memberEpoch);
    mb.varchar(MB.subscribed_topics, m.subscribedTopics === null ? null : m.subscribedTopics.join(','));
    mb.varchar(MB.assignment, m.assignment.join(','));
    mb.endRow();
    summary.members++;
  }
  mb.close();
  return summary;
}
