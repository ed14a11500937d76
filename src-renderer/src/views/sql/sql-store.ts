/**
 * The SQL view's state: which folder the tables are for (the opened folder holding the selected
 * partition, or only that partition), its tables (`sql.open`: columns, types, row counts, for the
 * schema sidebar and completion), the editor text and row limit (kept in localStorage), the running
 * job (`sql.query` / `sql.export`, with progress and Cancel; also shown in the status bar), the last
 * result or the last error (DuckDB's message with line and position, for the editor's marker), the
 * State view (`SELECT * FROM state` of the selected partition), the example queries, and the
 * export (CSV / NDJSON of the full result, fetched in chunks and saved through a download).
 */
import { defineStore } from 'pinia';
import { computed, ref, shallowRef, watch } from 'vue';
import { KlxApiError } from '../../../../src-shared/client.ts';
import type { JobMethodName, JobResult, Req } from '../../../../src-shared/contract.ts';
import type { ErrorInfo } from '../../../../src-shared/errors.ts';
import type { PartitionSummary } from '../../../../src-shared/log-types.ts';
import { DEFAULT_SQL_LIMIT, type SqlExportFormat, type SqlOpenResult, type SqlQueryResult } from '../../../../src-shared/sql-types.ts';
import { api, client } from '../../api/client.ts';
import { fromBase64 } from '../../lib/bytes.ts';
import { baseName, bytes as fmtBytes, group } from '../../lib/format.ts';
import { useExplorer } from '../../stores/explorer.ts';
import { useJobs } from '../../stores/jobs.ts';

/** Whether the tables cover the whole opened folder or only the selected partition. */
export type SqlScope = 'folder' | 'partition';

/** The row limits offered (sql.query's maximum is 100,000). */
export const LIMITS = [100, 1000, 10_000, 100_000] as const;

/** An example query for people learning what the tables show. */
export interface SqlExample {
  id: string;
  title: string;
  sql: string;
}

/** The last run's error, with where DuckDB placed it. */
export interface SqlRunError {
  info: ErrorInfo;
  /** The statement that failed (the marker applies only while the editor still holds it). */
  sql: string;
  /** 1-based line and 0-based character index in `sql`, when DuckDB gave them. */
  line: number | null;
  position: number | null;
}

const KEY = 'klx.sql.v1';

interface Saved {
  text?: string;
  limit?: number;
  scope?: SqlScope;
}

function load(): Saved {
  try {
    return JSON.parse(localStorage.getItem(KEY) ?? '{}') as Saved;
  } catch {
    return {};
  }
}

/** `'it''s'` */
function literal(s: string): string {
  return `'${s.replaceAll("'", "''")}'`;
}

const FIRST_TEXT = `-- Tables: records, latest, state, segments, batches, holes, partitions, damage, aborted_transactions.
-- Ctrl+Enter runs the statement. "offset" is an SQL keyword: keep it in double quotes.
SELECT "offset", timestamp, key_text, value_text, is_tombstone
FROM records
ORDER BY "offset"
`;

let seq = 0;

/** A sort by one column of a result (a click on the grid's header). */
export interface SqlSort {
  column: string;
  direction: 'asc' | 'desc';
}

/**
 * The statement that sorts what `sql` returns by one of its columns, for a result cut at the row
 * limit (sorting the rows shown would not give the first rows of the sorted whole): DuckDB sorts
 * the whole result as a subquery, NULLs last as its own default does.
 */
export function orderedSql(sql: string, sort: SqlSort): string {
  const base = sql.trim().replace(/;\s*$/, '');
  return `SELECT * FROM (\n${base}\n) AS klx_sorted ORDER BY "${sort.column.replaceAll('"', '""')}" ${sort.direction === 'asc' ? 'ASC' : 'DESC'} NULLS LAST`;
}

export const useSql = defineStore('sql', () => {
  const explorer = useExplorer();
  const jobs = useJobs();
  const saved = load();

  // The selected partition by default (issue 14): the folder only when the user picks it.
  const scope = ref<SqlScope>('partition');
  const text = ref(saved.text ?? FIRST_TEXT);
  const limit = ref<number>(LIMITS.includes(saved.limit as (typeof LIMITS)[number]) ? saved.limit! : DEFAULT_SQL_LIMIT);
  /** Schemas by folder path. */
  const schemas = shallowRef(new Map<string, SqlOpenResult>());
  const schemaError = ref<ErrorInfo | null>(null);
  const result = shallowRef<(SqlQueryResult & { sql: string; path: string }) | null>(null);
  const error = shallowRef<SqlRunError | null>(null);
  /** The UI job key of the running query or export, if any. */
  const runningKey = ref<string | null>(null);
  const runningKind = ref<'query' | 'export' | null>(null);
  const openingKey = ref<string | null>(null);
  /** The last export, for the status line. */
  const exported = ref<{ fileName: string; rows: number; bytes: number } | null>(null);
  /** The folder whose table build was cancelled (the sidebar then offers to build them). */
  const cancelledPath = ref<string | null>(null);
  /** Files of the last result's folder changed after it ran (a cleanup, an append...). */
  const resultStale = ref(false);
  /** The last run was cancelled (the result shown, if any, is of an earlier run). */
  const runCancelled = ref(false);

  watch([text, limit, scope], () => {
    const s: Saved = { text: text.value, limit: limit.value, scope: scope.value };
    localStorage.setItem(KEY, JSON.stringify(s));
  });

  /** The opened folder holding the selected partition. */
  const rootOfPartition = computed(() => {
    const p = explorer.partition;
    if (!p) return null;
    return explorer.roots.find((r) => r.logDirs.some((d) => d.partitions.some((x) => x.dir === p.dir) || d.pending.some((x) => x.dir === p.dir)))?.root ?? p.dir;
  });
  /** How many partitions that folder holds. */
  const folderPartitions = computed(() => {
    const root = rootOfPartition.value;
    return explorer.roots.find((r) => r.root === root)?.logDirs.reduce((n, d) => n + d.partitions.length + d.pending.length, 0) ?? 1;
  });
  /** The folder the SQL tables are for. */
  const path = computed(() => (scope.value === 'partition' || folderPartitions.value <= 1 ? explorer.partition?.dir ?? null : rootOfPartition.value));
  /** True when the tables hold other partitions than the selected one (queries then filter by topic and partition). */
  const multiPartition = computed(() => path.value !== null && path.value !== explorer.partition?.dir && folderPartitions.value > 1);
  const schema = computed(() => (path.value ? schemas.value.get(path.value) ?? null : null));
  const running = computed(() => (runningKey.value ? jobs.jobs.get(runningKey.value) ?? null : null));
  const opening = computed(() => (openingKey.value ? jobs.jobs.get(openingKey.value) ?? null : null));

  /**
   * Runs a job through the jobs store (status bar, Cancel). The jobs store files jobs by a `dir`:
   * it is given as a non-enumerable property, which neither JSON nor IPC's structured clone carries,
   * so the strict request schema never sees it.
   */
  function runJob<M extends JobMethodName>(method: M, request: Req<M> & { path: string }, label: string, key: string): Promise<JobResult<M>> {
    Object.defineProperty(request, 'dir', { value: request.path, enumerable: false });
    return jobs.run(method, request as unknown as Req<M> & { dir: string }, label, key);
  }

  /** The `topic = … AND "partition" = …` condition of the selected partition (`alias.` prefixed), or '' when the tables hold only it. */
  function partitionFilter(p: PartitionSummary | null, alias = ''): string {
    if (!p || !multiPartition.value) return '';
    return `${alias}topic = ${literal(p.topic)} AND ${alias}"partition" = ${p.partition}`;
  }

  /** Loads the tables of the current folder (building them if needed) unless already known. */
  async function ensureSchema(force = false): Promise<void> {
    const p = path.value;
    if (!p || (!force && schemas.value.has(p)) || openingKey.value === `sql-open:${p}`) return;
    const key = `sql-open:${p}`;
    openingKey.value = key;
    schemaError.value = null;
    cancelledPath.value = null;
    try {
      const r = await runJob('sql.open', { path: p }, `SQL tables of ${baseName(p)}`, key);
      schemas.value = new Map(schemas.value).set(p, r);
    } catch (err) {
      if (err instanceof KlxApiError && err.code === 'cancelled') cancelledPath.value = p;
      else {
        schemaError.value = err instanceof KlxApiError ? err.info : { code: 'internal', message: String(err) };
        explorer.report(err, `Preparing the SQL tables of ${p}`);
      }
    } finally {
      if (openingKey.value === key) openingKey.value = null;
    }
  }

  /** The ORDER BY the shown result ran with after a header click on a limited result (null: the statement's own order). */
  const serverSort = ref<SqlSort | null>(null);
  /** The statement of the shown result before any header sort was added. */
  let sortBase: string | null = null;

  /**
   * A header click on a limited result: runs the statement again sorted by that column in DuckDB
   * ({@link orderedSql}), or as it was (`sort` null).
   */
  async function sortOnServer(sort: SqlSort | null): Promise<void> {
    const base = sortBase ?? result.value?.sql;
    if (!base) return;
    await run(sort ? orderedSql(base, sort) : base, { base, sort });
  }

  /** Runs `sql` (default: the editor text) with the current limit; the result or error replaces the last one. */
  async function run(sql: string = text.value, sorted: { base: string; sort: SqlSort | null } | null = null): Promise<void> {
    const p = path.value;
    if (!p || sql.trim() === '') return;
    cancel();
    const key = `sql-run:${++seq}`;
    runningKey.value = key;
    runningKind.value = 'query';
    runCancelled.value = false;
    try {
      const r = await runJob('sql.query', { path: p, sql, limit: limit.value }, `SQL query on ${baseName(p)}`, key);
      result.value = { ...r, sql, path: p };
      serverSort.value = sorted?.sort ?? null;
      sortBase = sorted ? sorted.base : sql;
      resultStale.value = false;
      error.value = null;
      // The tables were (re)built before the query: their row counts changed.
      if (r.tablesOpened || !schemas.value.has(p)) void ensureSchema(true);
    } catch (err) {
      if (err instanceof KlxApiError && err.code === 'cancelled') {
        if (runningKey.value === key) runCancelled.value = true;
        return;
      }
      const info: ErrorInfo = err instanceof KlxApiError ? err.info : { code: 'internal', message: err instanceof Error ? err.message : String(err) };
      const d = info.details ?? {};
      error.value = { info, sql, line: typeof d.line === 'number' ? d.line : null, position: typeof d.position === 'number' ? d.position : null };
    } finally {
      if (runningKey.value === key) {
        runningKey.value = null;
        runningKind.value = null;
      }
    }
  }

  /** Cancels the running query or export. */
  function cancel(): void {
    if (runningKey.value) jobs.cancel(runningKey.value);
  }

  /** Cancels building the tables. */
  function cancelOpening(): void {
    if (openingKey.value) jobs.cancel(openingKey.value);
  }

  /** The State view's statement: the current value of every key of the selected partition. */
  function stateSql(): string {
    const p = explorer.partition;
    const where = partitionFilter(p);
    return `-- State of ${p?.name ?? 'the partition'}: the latest value of every key, tombstones left out\n-- (what a read_committed consumer reading from the start ends with once the high watermark and last stable offset reach the log end:\n--  CompletedFetch; compaction keeps at least these records: Cleaner.shouldRetainRecord)\nSELECT * FROM state${where ? `\nWHERE ${where}` : ''}\nORDER BY key\n`;
  }

  /** Shows the State view: puts its statement in the editor and runs it. */
  async function stateView(): Promise<void> {
    text.value = stateSql();
    await run(text.value);
  }

  /** Example queries, filtered to the selected partition when the tables hold several. */
  const examples = computed<SqlExample[]>(() => {
    const p = explorer.partition;
    const w = partitionFilter(p);
    const wr = partitionFilter(p, 'r.');
    const and = (cond: string, extra: string) => (cond ? `${cond} AND ${extra}` : extra);
    const where = (cond: string) => (cond ? `\nWHERE ${cond}` : '');
    return [
      {
        id: 'state',
        title: 'Current state of each key',
        sql: `-- The latest value of every key (tombstones left out): the state a read_committed consumer rebuilds (CompletedFetch)\nSELECT key_text, value_text, "offset", timestamp\nFROM state${where(w)}\nORDER BY key\n`,
      },
      {
        id: 'compaction',
        title: 'What compaction would remove',
        sql:
          `-- Records compaction removes: every data record older than the latest record of its key,\n` +
          `-- and keyless records. (The cleaner only cleans closed segments below the last stable offset and\n` +
          `-- older than min.compaction.lag.ms, LogCleanerManager.cleanableOffsets, and\n` +
          `-- drops a tombstone itself at a clean past its delete horizon: the first clean that kept it\n` +
          `-- + delete.retention.ms, Kafka 3.1+ LogCleaner.)\n` +
          `SELECT r."offset", r.key_text, r.value_text, r.is_tombstone, l."offset" AS superseded_by\n` +
          `FROM records r\nLEFT JOIN latest l ON l.partition_id = r.partition_id AND l.key = r.key\n` +
          `WHERE ${and(wr, 'NOT r.is_control AND (l."offset" IS NULL OR l."offset" <> r."offset")')}\nORDER BY r."offset"\n`,
      },
      {
        id: 'holes',
        title: 'Holes by cause',
        sql: `-- Offsets that hold no deliverable record, grouped by why\nSELECT cause, count(*) AS ranges, sum(offset_count) AS offsets, min(from_offset) AS first, max(to_offset) AS last\nFROM holes${where(w)}\nGROUP BY cause\nORDER BY offsets DESC\n`,
      },
      {
        id: 'segments',
        title: 'Records per segment',
        sql: `-- Each segment file: its offsets, records, batches and bytes\nSELECT base_offset, next_offset, record_count, batch_count, size_bytes, is_active, file\nFROM segments${where(w)}\nORDER BY base_offset\n`,
      },
      {
        id: 'versions',
        title: 'Keys with the most versions',
        sql: `-- How many records each key has on disk (what compaction collapses to one)\nSELECT key_text, count(*) AS versions, count(*) FILTER (WHERE is_tombstone) AS tombstones, max("offset") AS latest_offset\nFROM records\nWHERE ${and(w, 'key IS NOT NULL AND NOT is_control')}\nGROUP BY ALL\nORDER BY versions DESC, key_text\nLIMIT 50\n`,
      },
      {
        id: 'partitions',
        title: 'Partitions at a glance',
        sql: `-- logStartOffset, logEndOffset, checkpoints and counts of every partition in the tables\nSELECT topic, "partition", cleanup_policy, log_start_offset, log_end_offset, high_watermark, cleaner_checkpoint, record_count, segment_count, log_size_bytes\nFROM partitions\nORDER BY topic, "partition"\n`,
      },
    ];
  });

  /** Runs an example (its text replaces the editor's). */
  async function runExample(id: string): Promise<void> {
    const e = examples.value.find((x) => x.id === id);
    if (!e) return;
    text.value = e.sql;
    await run(e.sql);
  }

  /**
   * Exports the full result of `sql` (default: the editor text) as CSV or NDJSON: the main process
   * writes it to a temporary file, the page fetches it in 4 MiB chunks and saves it as a download
   * (Electron asks where to save it), then the temporary file is deleted.
   */
  async function exportAs(format: SqlExportFormat, sql: string = text.value): Promise<void> {
    const p = path.value;
    if (!p || sql.trim() === '') return;
    cancel();
    const key = `sql-export:${++seq}`;
    runningKey.value = key;
    runningKind.value = 'export';
    exported.value = null;
    try {
      const r = await runJob('sql.export', { path: p, sql, format }, `Exporting ${format.toUpperCase()} from ${baseName(p)}`, key);
      const chunks: Uint8Array[] = [];
      for (let start = 0; ; ) {
        const c = await api['sql.exportRead']({ exportId: r.exportId, start });
        const b = fromBase64(c.base64);
        chunks.push(b);
        start += b.length;
        if (c.eof || b.length === 0) break;
      }
      await api['sql.exportDiscard']({ exportId: r.exportId }).catch(() => undefined);
      const blob = new Blob(chunks as BlobPart[], { type: format === 'csv' ? 'text/csv' : 'application/x-ndjson' });
      const a = document.createElement('a');
      a.href = URL.createObjectURL(blob);
      a.download = r.fileName;
      document.body.appendChild(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(a.href), 10_000);
      exported.value = { fileName: r.fileName, rows: r.rows, bytes: r.bytes };
    } catch (err) {
      if (err instanceof KlxApiError && err.code === 'cancelled') return;
      explorer.report(err, `Exporting ${format.toUpperCase()}`);
    } finally {
      if (runningKey.value === key) {
        runningKey.value = null;
        runningKind.value = null;
      }
    }
  }

  /** A progress line for a running job: "Building tables: 45 % · 12.3 MiB of 27 MiB", "Reading rows: 40,000"... */
  function progressText(j: { phase: string; done: number; total: number | null } | null): string {
    if (!j) return '';
    const pct = j.total ? `${Math.min(100, Math.round((j.done / j.total) * 100))} %` : '';
    if (j.phase === 'build SQL tables') return `Building tables: ${pct} · ${fmtBytes(j.done)}${j.total ? ` of ${fmtBytes(j.total)}` : ''} of .log read`;
    if (j.phase.startsWith('find holes of ')) return `Finding holes of ${j.phase.slice(14)}: ${pct}`;
    if (j.phase === 'checking the SQL tables' || j.phase === 'starting') return 'Checking the SQL tables…';
    if (j.phase === 'counting table rows') return 'Counting table rows…';
    if (j.phase === 'running the query') return 'Running…';
    if (j.phase === 'reading rows') return `Reading rows: ${group(j.done)}`;
    if (j.phase === 'exporting rows') return `Exporting: ${group(j.done)} rows`;
    return j.phase;
  }

  // Partitions changed on disk (cleanup, append, roll): their table sets are rebuilt on next use;
  // forget the schemas (row counts) of folders holding them.
  client.onEvent((e) => {
    if (e.type !== 'log.changed') return;
    const inside = (d: string, root: string) => d === root || d.startsWith(root.endsWith('/') ? root : `${root}/`) || d.startsWith(`${root}\\`);
    const touches = (root: string) => e.dirs.some((d) => inside(d, root) || inside(root, d));
    const keep = [...schemas.value].filter(([root]) => !touches(root));
    if (keep.length !== schemas.value.size) schemas.value = new Map(keep);
    if (result.value && touches(result.value.path)) resultStale.value = true;
    // The SQL view is on screen: rebuild its tables now (otherwise when it is next shown).
    if (path.value && touches(path.value) && explorer.view === 'sql') void ensureSchema(true);
  });

  return {
    scope,
    serverSort,
    sortOnServer,
    text,
    limit,
    path,
    multiPartition,
    folderPartitions,
    rootOfPartition,
    schema,
    schemas,
    schemaError,
    result,
    error,
    running,
    runningKind,
    opening,
    exported,
    cancelledPath,
    resultStale,
    runCancelled,
    examples,
    ensureSchema,
    run,
    cancel,
    cancelOpening,
    stateSql,
    stateView,
    runExample,
    exportAs,
    progressText,
    partitionFilter,
  };
});
