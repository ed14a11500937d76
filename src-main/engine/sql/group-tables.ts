/**
 * The consumer-group tables of the SQL view (issue 12), built next to the log tables:
 *
 * - `consumer_offsets`: every record of every `__consumer_offsets` partition, decoded (record type,
 *   group, member, committed topic/partition/offset, timestamps, the whole key and value data as JSON text
 *   (as Kafka's JSON converters print it, JsonConverterGenerator: camelCase names; see consumerOffsetsJsonText),
 *   or why it does not decode), streamed;
 * - `group_metadata`: one row per group as the coordinator loads it (type, protocol type, state, offsets_partition_load_failure
 *   when a broker fails to load its partition (CoordinatorLoaderImpl),
 *   generation / epoch, members, topics, total lag);
 * - `group_offsets`: the latest committed offset of each group, topic and partition with the log
 *   offsets of the partition, `lag`, `record_lag`, `diagnosis`, `next_offset` (engine/groups), and
 *   `expired` computed against the clock when queried (from `expires_at`);
 * - `group_members`: the members of classic, KIP-848 consumer and share groups.
 *
 * The rows are made by group-table-rows.ts: in a SQL build thread (`sql-build-worker.ts`, a
 * `groups` task of `sql-build-pool.ts`) when the caller gives `startWorker` and `__consumer_offsets`
 * holds at least {@link GROUPS_IN_THREAD_FROM_BYTES}, so decoding every record and loading the
 * groups never run on the event loop that answers requests; this thread only appends their chunks.
 * Without `startWorker`, in this thread. The tables are the same either way.
 *
 * Memory: the group model grows with groups and committed partitions; `consumer_offsets` rows are
 * appended as they are read (a thread hands over chunks of 2048 rows, at most a few not yet taken).
 */
import type { DuckDBConnection } from './duckdb.ts';
import { OFFSETS_TOPIC } from '../groups/offsets-topic.ts';
import { allPartitions, type OpenedLogs } from '../log/log-dir.ts';
import { Pacer, type LongReadOptions } from '../log/log-walk.ts';
import { ColumnarAppender, SQL_TYPE_OF } from './columnar-appender.ts';
import { appendGroupRows, GROUP_ROWS_COLUMNS, writeGroupTableRows, type Col, type GroupRowsTable, type GroupTablesSummary } from './group-table-rows.ts';
import { SqlBuildPool, type StartSqlBuildWorker } from './sql-build-pool.ts';

export type { GroupTablesSummary } from './group-table-rows.ts';

/** The tables (and the view) this module creates. */
export const GROUP_TABLES = ['consumer_offsets', 'group_metadata', 'group_offsets', 'group_members'] as const;

/** Default of {@link BuildGroupTablesOptions.inThreadFromBytes}: 1 MiB of `__consumer_offsets`. */
export const GROUPS_IN_THREAD_FROM_BYTES = 2 ** 20;

/** Options of {@link buildGroupTables}. */
export interface BuildGroupTablesOptions extends LongReadOptions {
  /** Starts a thread on `sql-build-worker` (`SQL_BUILD_WORKER`): the rows are then made there. */
  startWorker?: StartSqlBuildWorker;
  /** Bytes of `__consumer_offsets` below which the rows are made in this thread even with `startWorker` (starting a thread costs more). */
  inThreadFromBytes?: number;
}

const quote = (n: string) => `"${n.replaceAll('"', '""')}"`;
const create = (name: string, cols: readonly Col[]) => `CREATE TABLE ${name} (${cols.map(([n, k]) => `${quote(n)} ${SQL_TYPE_OF[k]}`).join(', ')})`;

/**
 * Creates and fills the group tables in the database of `connection` (writable, `main` schema).
 * `internalSchema` holds the table behind the `group_offsets` view.
 * @throws KlxError `cancelled`; a build thread's error as it threw it (`internal` when it died);
 *   DuckDB errors as `internal`. Records that do not decode become rows with `decode_error`, never errors.
 */
export async function buildGroupTables(connection: DuckDBConnection, opened: OpenedLogs, internalSchema: string, opts: BuildGroupTablesOptions = {}): Promise<GroupTablesSummary> {
  await connection.run(create('consumer_offsets', GROUP_ROWS_COLUMNS.consumer_offsets));
  await connection.run(create('group_metadata', GROUP_ROWS_COLUMNS.group_metadata));
  await connection.run(create(`${internalSchema}.group_offset_rows`, GROUP_ROWS_COLUMNS.group_offset_rows));
  await connection.run(create('group_members', GROUP_ROWS_COLUMNS.group_members));
  await connection.run(`CREATE VIEW group_offsets AS SELECT *, (expires_at IS NOT NULL AND epoch_ms(current_timestamp) >= expires_at) AS expired FROM ${internalSchema}.group_offset_rows`);
  const logs = allPartitions(opened).map((p) => p.log);
  const offsetsLogs = logs.filter((l) => l.topic === OFFSETS_TOPIC && l.kind === 'normal');
  if (offsetsLogs.length === 0) return { offsetsRecords: 0, groups: 0, groupOffsets: 0, members: 0 };
  const kinds = (t: GroupRowsTable) => GROUP_ROWS_COLUMNS[t].map(([, k]) => k);
  const out: Record<GroupRowsTable, ColumnarAppender> = {
    consumer_offsets: await ColumnarAppender.create(connection, null, 'consumer_offsets', kinds('consumer_offsets')),
    group_metadata: await ColumnarAppender.create(connection, null, 'group_metadata', kinds('group_metadata')),
    group_offset_rows: await ColumnarAppender.create(connection, internalSchema, 'group_offset_rows', kinds('group_offset_rows')),
    group_members: await ColumnarAppender.create(connection, null, 'group_members', kinds('group_members')),
  };
  const bytes = offsetsLogs.reduce((s, l) => s + l.logSize, 0);
  let summary: GroupTablesSummary;
  if (opts.startWorker && bytes >= (opts.inThreadFromBytes ?? GROUPS_IN_THREAD_FROM_BYTES)) {
    const pool = new SqlBuildPool(opts.startWorker, 1);
    try {
      const pacer = new Pacer({ signal: opts.signal, onProgress: opts.onProgress, phase: 'build consumer_offsets and the group tables (in a SQL build thread)', total: bytes });
      const rows: Record<GroupRowsTable, number> = { consumer_offsets: 0, group_metadata: 0, group_offset_rows: 0, group_members: 0 };
      for await (const c of pool.groupRows(pool.submit({ kind: 'groups', dirs: logs.map((l) => l.dir) }))) {
        appendGroupRows(out[c.table], c);
        rows[c.table] += c.rows;
        pacer.throwIfCancelled();
        await pacer.step(c.bytes);
      }
      pacer.finish();
      summary = { offsetsRecords: rows.consumer_offsets, groups: rows.group_metadata, groupOffsets: rows.group_offset_rows, members: rows.group_members };
    } finally {
      await pool.close();
    }
  } else summary = await writeGroupTableRows(logs, out, opts);
  for (const a of Object.values(out)) a.close();
  return summary;
}
