/**
 * The rows of the consumer-group tables of the SQL view (group-tables.ts creates the tables): every
 * `__consumer_offsets` record decoded (`consumer_offsets`), and the group model with lag and
 * diagnosis (`group_metadata`, `group_offset_rows` behind the `group_offsets` view, `group_members`),
 * written into {@link RowSink}s: DuckDB appenders on the building thread, or {@link RowsRecorder}s in
 * a SQL build thread (`sql-build-worker.ts`) whose chunks the building thread appends, so that the
 * decoding and the group load run off the event loop that answers requests.
 *
 * No DuckDB import here (a build thread loads this module).
 */
import type { ColumnKind } from './columnar-appender.ts';
import { consumerOffsetsJsonText, decodeConsumerOffsetsKey, decodeConsumerOffsetsValue, groupIdOfKey, type OffsetCommitValueData } from '../decode/internal/consumer-offsets.ts';
import { DecodeError } from '../decode/decode-error.ts';
import { describeGroups } from '../groups/group-offsets.ts';
import { loadGroups } from '../groups/groups-load.ts';
import { OFFSETS_TOPIC } from '../groups/offsets-topic.ts';
import type { PartitionLog } from '../log/partition-log.ts';
import { Pacer, recordsOf, walkLog, type LongReadOptions } from '../log/log-walk.ts';

/** A column: its name and how it is written. */
export type Col = readonly [string, ColumnKind];

export const CONSUMER_OFFSETS_COLUMNS = [
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

export const GROUP_METADATA_COLUMNS = [
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
  // a broker's coordinator fails to load the group's __consumer_offsets partition (CoordinatorLoaderImpl): why; NULL when it loads
  ['offsets_partition_load_failure', 'varchar'],
] as const satisfies readonly Col[];

export const GROUP_OFFSET_COLUMNS = [
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

export const GROUP_MEMBER_COLUMNS = [
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

const idx = <T extends readonly Col[]>(cols: T) => Object.fromEntries(cols.map(([n], i) => [n, i])) as { [K in T[number][0]]: number };
const CO = idx(CONSUMER_OFFSETS_COLUMNS);
const GM = idx(GROUP_METADATA_COLUMNS);
const GO = idx(GROUP_OFFSET_COLUMNS);
const MB = idx(GROUP_MEMBER_COLUMNS);

/** The tables whose rows {@link writeGroupTableRows} writes (`group_offset_rows` is behind the `group_offsets` view). */
export type GroupRowsTable = 'consumer_offsets' | 'group_metadata' | 'group_offset_rows' | 'group_members';

/** Columns of each table of {@link GroupRowsTable}. */
export const GROUP_ROWS_COLUMNS: Record<GroupRowsTable, readonly Col[]> = {
  consumer_offsets: CONSUMER_OFFSETS_COLUMNS,
  group_metadata: GROUP_METADATA_COLUMNS,
  group_offset_rows: GROUP_OFFSET_COLUMNS,
  group_members: GROUP_MEMBER_COLUMNS,
};

/** Where rows are written, a column at a time: a DuckDB `ColumnarAppender` or a {@link RowsRecorder}. */
export interface RowSink {
  int32(col: number, v: number): void;
  int64(col: number, v: bigint): void;
  bool(col: number, v: boolean): void;
  varchar(col: number, v: string | null): void;
  null(col: number): void;
  endRow(): void;
  /** Awaited now and then: a recorder hands its full chunk over there (and waits while too many are not taken). */
  ready?(): Promise<void>;
}

/** What {@link writeGroupTableRows} wrote. */
export interface GroupTablesSummary {
  offsetsRecords: number;
  groups: number;
  groupOffsets: number;
  members: number;
}

/** A chunk of rows of one table: `cells` row after row, `columns` cells a row (null for SQL NULL). */
export interface GroupRowsChunk {
  table: GroupRowsTable;
  rows: number;
  cells: (string | number | bigint | boolean | null)[];
  /** Bytes of `__consumer_offsets` read since the previous chunk (progress). */
  bytes: number;
}

/** Rows a {@link RowsRecorder} gathers before handing a chunk over. */
export const GROUP_ROWS_PER_CHUNK = 2048;

/** A {@link RowSink} that gathers rows into {@link GroupRowsChunk}s and hands each full one to `emit`. */
export class RowsRecorder implements RowSink {
  private cells: (string | number | bigint | boolean | null)[] = [];
  private row: (string | number | bigint | boolean | null)[];
  private rows = 0;
  /** Bytes of progress to report with the next chunk. */
  bytes = 0;

  constructor(
    readonly table: GroupRowsTable,
    private readonly emit: (c: GroupRowsChunk) => Promise<void>,
  ) {
    this.row = new Array(GROUP_ROWS_COLUMNS[table].length).fill(null);
  }
  int32(col: number, v: number): void {
    this.row[col] = v;
  }
  int64(col: number, v: bigint): void {
    this.row[col] = v;
  }
  bool(col: number, v: boolean): void {
    this.row[col] = v;
  }
  varchar(col: number, v: string | null): void {
    this.row[col] = v;
  }
  null(col: number): void {
    this.row[col] = null;
  }
  endRow(): void {
    for (let i = 0; i < this.row.length; i++) {
      this.cells.push(this.row[i]!);
      this.row[i] = null;
    }
    this.rows++;
  }
  async ready(): Promise<void> {
    if (this.rows >= GROUP_ROWS_PER_CHUNK) await this.flush();
  }
  /** Hands over the rows gathered (none: nothing, unless progress bytes wait). */
  async flush(): Promise<void> {
    if (this.rows === 0 && this.bytes === 0) return;
    const c: GroupRowsChunk = { table: this.table, rows: this.rows, cells: this.cells, bytes: this.bytes };
    this.cells = [];
    this.rows = 0;
    this.bytes = 0;
    await this.emit(c);
  }
}

/** Writes the rows of chunk `c` into `out` (the appender of `c.table`). */
export function appendGroupRows(out: RowSink, c: GroupRowsChunk): void {
  const kinds = GROUP_ROWS_COLUMNS[c.table].map(([, k]) => k);
  const w = kinds.length;
  for (let r = 0; r < c.rows; r++) {
    for (let i = 0; i < w; i++) {
      const v = c.cells[r * w + i]!;
      if (v === null) out.null(i);
      else if (kinds[i] === 'int32') out.int32(i, v as number);
      else if (kinds[i] === 'int64') out.int64(i, v as bigint);
      else if (kinds[i] === 'bool') out.bool(i, v as boolean);
      else out.varchar(i, v as string);
    }
    out.endRow();
  }
}

function opt64(out: RowSink, col: number, v: bigint | null | undefined): void {
  if (v === null || v === undefined) out.null(col);
  else out.int64(col, v);
}
function opt32(out: RowSink, col: number, v: number | null | undefined): void {
  if (v === null || v === undefined) out.null(col);
  else out.int32(col, v);
}

/**
 * Writes the rows of the group tables for the partitions `logs` (every opened partition: data
 * partitions give lag and diagnosis) into `sinks`.
 * @throws KlxError `cancelled`. Records that do not decode become rows with `decode_error`, never errors.
 */
export async function writeGroupTableRows(logs: readonly PartitionLog[], sinks: Record<GroupRowsTable, RowSink>, opts: LongReadOptions = {}): Promise<GroupTablesSummary> {
  const summary: GroupTablesSummary = { offsetsRecords: 0, groups: 0, groupOffsets: 0, members: 0 };
  const offsetsLogs = logs.filter((l) => l.topic === OFFSETS_TOPIC && l.kind === 'normal');
  if (offsetsLogs.length === 0) return summary;

  // consumer_offsets: every record, streamed
  const co = sinks.consumer_offsets;
  const pacer = new Pacer({ signal: opts.signal, onProgress: opts.onProgress, phase: 'build consumer_offsets', total: offsetsLogs.reduce((s, l) => s + l.logSize, 0) });
  for (const log of offsetsLogs) {
    for (const e of walkLog(log)) {
      if (e.type !== 'batch') continue;
      const h = e.header;
      await pacer.step(h.size);
      await co.ready?.();
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
          keyJson = consumerOffsetsJsonText(k.data);
          const kd = k.data as { MemberId?: string; topic?: string; partition?: number };
          member = kd.MemberId ?? null;
          topic = kd.topic ?? null;
          tp = kd.partition ?? null;
          if (r.value !== null) {
            try {
              const v = decodeConsumerOffsetsValue(k.type, r.value);
              version = v.version;
              valueJson = consumerOffsetsJsonText(v.data);
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

  // the group model, lag and diagnosis
  const loaded = await loadGroups(logs, opts);
  const d = await describeGroups(loaded, opts);
  const gm = sinks.group_metadata;
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
    gm.varchar(GM.offsets_partition_load_failure, g.offsetsPartitionLoadFailure ? `${g.offsetsPartitionLoadFailure.text} (${g.offsetsPartitionLoadFailure.file}: position ${g.offsetsPartitionLoadFailure.position})` : null);
    gm.endRow();
    await gm.ready?.();
    summary.groups++;
  }
  const go = sinks.group_offset_rows;
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
    await go.ready?.();
    summary.groupOffsets++;
  }
  const mb = sinks.group_members;
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
    await mb.ready?.();
    summary.members++;
  }
  return summary;
}
