/**
 * `klx query PATH "SQL" [--json | --csv] [--limit N] [--cache-dir DIR] [--no-cache] [--rebuild]
 * [--value-cap BYTES] [--memory-limit SIZE] [--key-format F] [--value-format F] [--schemas PATH|ID=FILE|SUBJECT=FILE]...`:
 * runs one read-only SQL statement (DuckDB's dialect) over the tables of a log directory, partition
 * folder or folder of log directories (see `engine/sql/log-tables.ts`):
 * records, latest, state, segments, batches, holes, partitions, damage, aborted_transactions,
 * transactions, cluster_metadata.
 *
 * Decoded columns (`key_decoded`, `value_decoded`, ... and the `schemas` table) are decoded as
 * `klx fetch` decodes (`../decode-options.ts`, shared): `--key-format` / `--value-format` for every
 * topic under PATH, else the formats saved in the app for the folder's topics (its format switchers,
 * `decode-choices.json` in the app's data folder), else `auto`; schemas from the `_schemas`
 * partitions under PATH and `--schemas` (repeatable). Which choices were taken from the app goes to
 * stderr as `klx: note: ...`. The decoded columns are computed when a query reads them: a cached
 * table set serves any formats (the schema files given are part of its fingerprint).
 *
 * The tables are built on first use (progress on stderr when it is a terminal) and cached in
 * `$XDG_CACHE_HOME/kafka-log-explorer` (else `~/.cache/kafka-log-explorer`) until the folder
 * changes. Rows are streamed: NDJSON and CSV are written as they come; the text table sizes its
 * columns on the first 1000 rows.
 *
 * Output: a text table (default); `--json`: one JSON object per row (BLOB as base64, BIGINT beyond
 * ±(2^53 − 1) as a decimal string, TIMESTAMP as ISO-8601); `--csv`: RFC 4180 with a header line
 * (BLOB as base64, nested values as JSON). Errors (refused statements, DuckDB's syntax errors with
 * their `LINE n:` and caret) go to stderr with exit status 1; a query that needs more than DuckDB's
 * memory limit (`--memory-limit`, default in `sql-resources.ts`) is `out-of-memory`, exit 1.
 *
 * What a query read back from the log (values, headers, decoded columns: distinct batches and their
 * bytes in the `.log` files) follows the rows as `(N rows; values read back from ...)`, or goes to
 * stderr as `klx: note: values read back from ...` under `--json` / `--csv`.
 *
 * Ctrl-C stops the build or the query (the record functions fail their next call, DuckDB's
 * connection is interrupted): `klx: cancelled: interrupted (Ctrl-C) ...` says what was left (rows
 * printed, tables not cached), exit 1.
 *
 * A partition holding leftovers of an interrupted cleaner, split or retention (`.swap`, `.cleaned`,
 * `.deleted`) is shown as its segments on disk (the pre-swap ones); what is pending and what a
 * broker does with it at startup (`LogLoader.load`) follows the rows as `(note: PARTITION: ...)`,
 * or goes to stderr as `klx: note: PARTITION: ...` under `--json` / `--csv`.
 */
import { startEntryWorker } from '../../api/core/entry-worker.ts';
import { SQL_BUILD_WORKER } from '../../engine/sql/sql-build-pool.ts';
import { KlxError } from '../../engine/errors.ts';
import { textCell, writeCsv, writeNdjson } from '../../engine/sql/sql-format.ts';
import { SqlSession, type QueryColumn, type QueryCursor, type SqlValue } from '../../engine/sql/sql-session.ts';
import { defaultCacheDir } from '../../engine/sql/sql-defaults.ts';
import { cliDecodeSetupUnder, type CliDecodeFlags } from '../decode-options.ts';
import { OutputWriter, ProgressLine } from '../output.ts';
import { watchSigint } from '../sigint-watch.ts';

export { blobText, textCell } from '../../engine/sql/sql-format.ts';

export interface QueryCommandOptions extends CliDecodeFlags {
  json?: boolean;
  csv?: boolean;
  limit?: number;
  cacheDir?: string;
  cache: boolean;
  rebuild?: boolean;
  valueCap?: number;
  /** DuckDB's memory limit (bytes, parsed by `parseMemorySize`). */
  memoryLimit?: number;
}

/** Runs `klx query` (its options, help and table list are declared in `../registry.ts`). */
export async function runQuery(path: string, sql: string, opts: QueryCommandOptions): Promise<void> {
  const controller = new AbortController();
  // Ctrl-C seen at once, also while the record functions keep the JS thread busy (`../sigint-watch.ts`).
  const sigint = watchSigint(() => controller.abort(new KlxError('cancelled', 'interrupted (Ctrl-C)')));
  const progress = new ProgressLine(process.stderr);
  let session: SqlSession | undefined;
  /** Result rows taken so far (for the cancel message). */
  let written = 0;
  // Formats and schema files, checked before any table is built (an unknown format or an unused schema file: exit 2).
  const { decode, notes: decodeNotes } = cliDecodeSetupUnder(path, opts);
  for (const n of decodeNotes) process.stderr.write(`klx: note: ${n}\n`);
  try {
    session = await SqlSession.open(path, {
      ...(opts.cache ? { cacheDir: opts.cacheDir ?? defaultCacheDir() } : {}),
      ...(opts.rebuild ? { rebuild: true } : {}),
      ...(opts.valueCap !== undefined ? { valueCapBytes: opts.valueCap } : {}),
      ...(opts.memoryLimit !== undefined ? { memoryLimitBytes: opts.memoryLimit } : {}),
      decode,
      // segments decoded in worker threads (issue 16)
      startWorker: () => startEntryWorker(SQL_BUILD_WORKER.entry, SQL_BUILD_WORKER.near),
      signal: controller.signal,
      interrupted: () => sigint.pending(),
      onProgress: (p) => progress.show(`${p.phase}: ${p.total ? `${Math.floor((100 * p.done) / p.total)}% of ` : ''}${mib(p.total ?? p.done)}`),
    });
    progress.clear();
    const cursor = await session.cursor(sql, { signal: controller.signal });
    const out = new OutputWriter(process.stdout);
    const limit = opts.limit ?? Infinity;
    const rows = limitedRows(cursor, limit, () => written++);
    let shown: number;
    if (opts.json) shown = await writeNdjson(cursor.columns, rows, out);
    else if (opts.csv) shown = await writeCsv(cursor.columns, rows, out);
    else shown = await writeText(cursor.columns, rows, out);
    const more = rows.truncated();
    // Values, headers and decoded columns are read back from the segments: say what that cost.
    const cost = readBackNote(session.readFromLog);
    if (!opts.json && !opts.csv) await out.line(`(${shown} row${shown === 1 ? '' : 's'}${more ? `; more not shown, --limit ${limit}` : ''}${cost ? `; ${cost}` : ''})`);
    const notes = await session.notices();
    if (!opts.json && !opts.csv) for (const n of notes) await out.line(`(note: ${n.partition}: ${n.notice})`);
    await out.end();
    if (more && (opts.json || opts.csv)) process.stderr.write(`klx: output stopped at --limit ${limit} rows\n`);
    if (cost && (opts.json || opts.csv)) process.stderr.write(`klx: note: ${cost}\n`);
    if (opts.json || opts.csv) for (const n of notes) process.stderr.write(`klx: note: ${n.partition}: ${n.notice}\n`);
  } catch (err) {
    if (err instanceof KlxError && err.code === 'cancelled' && controller.signal.aborted) {
      // Say what the user did and what is left, not the internal step that noticed it.
      const what = session
        ? `the query was stopped after ${written} row${written === 1 ? '' : 's'} of its result`
        : `the SQL tables were not finished and nothing was cached (the next query builds them from the start)`;
      throw new KlxError('cancelled', `interrupted (Ctrl-C): ${what}; the log was only read, nothing in it changed`, { cause: err });
    }
    throw err;
  } finally {
    progress.clear();
    session?.close();
    sigint.stop();
  }
}

function mib(bytes: number): string {
  return `${(bytes / (1 << 20)).toFixed(1)} MiB`;
}

/**
 * The read-back note: `values read back from N batches (B) of the log`, B the batches' bytes in the
 * `.log` files (bytes below 10 KiB, KiB below 10 MiB, else MiB); '' when nothing was read back.
 */
export function readBackNote(reads: { batches: number; bytes: number }): string {
  if (reads.batches === 0) return '';
  const b = reads.bytes;
  const size = b < 10 * 1024 ? `${b} bytes` : b < 10 * (1 << 20) ? `${(b / 1024).toFixed(1)} KiB` : mib(b);
  return `values read back from ${reads.batches} batch${reads.batches === 1 ? '' : 'es'} (${size}) of the log`;
}

/** Rows of a cursor, stopping after `limit`; `truncated()` tells afterwards whether rows were left. */
function limitedRows(cursor: QueryCursor, limit: number, onRow: () => void): AsyncIterable<SqlValue[]> & { truncated(): boolean } {
  let more = false;
  return {
    truncated: () => more,
    async *[Symbol.asyncIterator]() {
      let n = 0;
      try {
        for (;;) {
          const chunk = await cursor.next();
          if (chunk === null) return;
          for (const row of chunk) {
            if (n >= limit) {
              more = true;
              return;
            }
            n++;
            onRow();
            yield row;
          }
        }
      } finally {
        cursor.close();
      }
    },
  };
}

/** Widest a text cell is shown. */
const MAX_CELL = 80;
/** Rows read before the text table's column widths are fixed. */
const WIDTH_SAMPLE = 1000;

function shorten(s: string): string {
  const flat = s.replace(/\r?\n/g, '⏎');
  return flat.length > MAX_CELL ? flat.slice(0, MAX_CELL - 1) + '…' : flat;
}

const NUMERIC = /^(TINYINT|SMALLINT|INTEGER|BIGINT|HUGEINT|UTINYINT|USMALLINT|UINTEGER|UBIGINT|UHUGEINT|FLOAT|DOUBLE|DECIMAL)/;

async function writeText(columns: QueryColumn[], rows: AsyncIterable<SqlValue[]>, out: OutputWriter): Promise<number> {
  const right = columns.map((c) => NUMERIC.test(c.type));
  const widths = columns.map((c) => Math.min(MAX_CELL, c.name.length));
  const sample: string[][] = [];
  const iter = rows[Symbol.asyncIterator]();
  let n = 0;
  for (;;) {
    if (sample.length >= WIDTH_SAMPLE) break;
    const r = await iter.next();
    if (r.done) break;
    const cells = r.value.map((v) => shorten(textCell(v)));
    cells.forEach((c, i) => (widths[i] = Math.max(widths[i]!, c.length)));
    sample.push(cells);
  }
  const fmt = (cells: string[]) => cells.map((c, i) => (right[i] ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join(' | ').trimEnd();
  await out.line(fmt(columns.map((c) => shorten(c.name))));
  await out.line(widths.map((w) => '-'.repeat(w)).join('-+-'));
  for (const cells of sample) {
    await out.line(fmt(cells));
    n++;
  }
  for (;;) {
    const r = await iter.next();
    if (r.done) break;
    await out.line(fmt(r.value.map((v) => shorten(textCell(v)))));
    n++;
  }
  return n;
}
