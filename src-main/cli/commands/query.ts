/**
 * `klx query PATH "SQL" [--json | --csv] [--limit N] [--cache-dir DIR] [--no-cache] [--rebuild]
 * [--value-cap BYTES]`: runs one read-only SQL statement (DuckDB's dialect) over the tables of a log
 * directory, partition folder or folder of log directories (see `engine/sql/log-tables.ts`):
 * records, latest, state, segments, batches, holes, partitions, damage, aborted_transactions.
 *
 * The tables are built on first use (progress on stderr when it is a terminal) and cached in
 * `$XDG_CACHE_HOME/kafka-log-explorer` (else `~/.cache/kafka-log-explorer`) until the folder
 * changes. Rows are streamed: NDJSON and CSV are written as they come; the text table sizes its
 * columns on the first 1000 rows.
 *
 * Output: a text table (default); `--json`: one JSON object per row (BLOB as base64, BIGINT beyond
 * ±(2^53 − 1) as a decimal string, TIMESTAMP as ISO-8601); `--csv`: RFC 4180 with a header line
 * (BLOB as base64, nested values as JSON). Errors (refused statements, DuckDB's syntax errors with
 * their `LINE n:` and caret) go to stderr with exit status 1.
 */
import { Option, type Command } from 'commander';
import { KlxError } from '../../engine/errors.ts';
import { DEFAULT_VALUE_CAP_BYTES } from '../../engine/sql/log-tables.ts';
import { SqlSession, toJsonValue, type QueryColumn, type QueryCursor, type SqlValue } from '../../engine/sql/sql-session.ts';
import { defaultCacheDir } from '../../engine/sql/table-cache.ts';
import { OutputWriter, parseNonNegativeInt } from '../output.ts';

interface QueryCommandOptions {
  json?: boolean;
  csv?: boolean;
  limit?: number;
  cacheDir?: string;
  cache: boolean;
  rebuild?: boolean;
  valueCap?: number;
}

const TABLES_HELP = `
Tables (one set for every partition folder under PATH):
  records      one row per record: topic, partition, "offset", timestamp (ms), key/key_text,
               value/value_text (UTF-8 text or NULL), value_size, value_truncated, headers,
               is_tombstone, is_control, control_type, is_transactional, aborted, producer_id,
               batch_base_offset, segment_base_offset, position, partition_id
  latest       the record with the highest offset of each key (tombstones included): what
               compaction keeps. No keyless, control, aborted or below-logStartOffset records.
  state        latest without tombstones: the current value of each key
  segments, batches, holes, partitions, damage, aborted_transactions

Only one SELECT / WITH / EXPLAIN / DESCRIBE / SHOW / SUMMARIZE / PRAGMA table_info statement is
run; anything that would change the tables is refused. "offset" is an SQL keyword: quote it.

Examples:
  klx query /var/kafka-logs 'SELECT key_text, value_text FROM state ORDER BY key_text'
  klx query __consumer_offsets-7 'SELECT count(*) FROM records GROUP BY is_tombstone' --json
  klx query ./logs 'SELECT topic, "partition", min("offset"), max("offset") FROM records GROUP BY ALL'
`;

/** Registers `klx query`. */
export function registerQuery(program: Command): void {
  program
    .command('query')
    .description('run one read-only SQL statement (DuckDB) over the records, latest, state, segments, batches, holes, partitions, damage and aborted_transactions tables of PATH')
    .argument('<path>', 'log directory, partition folder or folder of log directories')
    .argument('<sql>', 'one SELECT statement (quote it for the shell)')
    .addOption(new Option('--json', 'print NDJSON: one object per row (BLOB as base64, BIGINT beyond 2^53 as strings)').conflicts('csv'))
    .addOption(new Option('--csv', 'print CSV with a header line (BLOB as base64)').conflicts('json'))
    .option('--limit <n>', 'print at most N rows', (v) => parseNonNegativeInt(v, '--limit'))
    .option('--cache-dir <dir>', `where the built tables are kept (default ${defaultCacheDir()})`)
    .option('--no-cache', 'build the tables in a temporary folder and delete them afterwards')
    .option('--rebuild', 'rebuild the cached tables even when the folder has not changed')
    .option('--value-cap <bytes>', `keep at most this many bytes of each value in records.value (default ${DEFAULT_VALUE_CAP_BYTES})`, (v) => parseNonNegativeInt(v, '--value-cap'))
    .addHelpText('after', TABLES_HELP)
    .action(async (path: string, sql: string, opts: QueryCommandOptions) => {
      await runQuery(path, sql, opts);
    });
}

async function runQuery(path: string, sql: string, opts: QueryCommandOptions): Promise<void> {
  const controller = new AbortController();
  const onSigint = () => controller.abort(new KlxError('cancelled', 'interrupted (Ctrl-C)'));
  process.once('SIGINT', onSigint);
  const progress = new ProgressLine(process.stderr);
  let session: SqlSession | undefined;
  try {
    session = await SqlSession.open(path, {
      ...(opts.cache ? { cacheDir: opts.cacheDir ?? defaultCacheDir() } : {}),
      ...(opts.rebuild ? { rebuild: true } : {}),
      ...(opts.valueCap !== undefined ? { valueCapBytes: opts.valueCap } : {}),
      signal: controller.signal,
      onProgress: (p) => progress.show(`${p.phase}: ${p.total ? `${Math.floor((100 * p.done) / p.total)}% of ` : ''}${mib(p.total ?? p.done)}`),
    });
    progress.clear();
    const cursor = await session.cursor(sql, { signal: controller.signal });
    const out = new OutputWriter(process.stdout);
    const limit = opts.limit ?? Infinity;
    const rows = limitedRows(cursor, limit);
    let shown: number;
    if (opts.json) shown = await writeJson(cursor.columns, rows, out);
    else if (opts.csv) shown = await writeCsv(cursor.columns, rows, out);
    else shown = await writeText(cursor.columns, rows, out);
    const more = rows.truncated();
    if (!opts.json && !opts.csv) await out.line(`(${shown} row${shown === 1 ? '' : 's'}${more ? `; more not shown, --limit ${limit}` : ''})`);
    await out.end();
    if (more && (opts.json || opts.csv)) process.stderr.write(`klx: output stopped at --limit ${limit} rows\n`);
  } finally {
    progress.clear();
    process.removeListener('SIGINT', onSigint);
    session?.close();
  }
}

function mib(bytes: number): string {
  return `${(bytes / (1 << 20)).toFixed(1)} MiB`;
}

/** A one-line progress display on a terminal (nothing when stderr is piped). */
class ProgressLine {
  private shown = false;
  private last = 0;
  constructor(private readonly stream: NodeJS.WriteStream) {}
  show(text: string): void {
    if (!this.stream.isTTY) return;
    const now = Date.now();
    if (now - this.last < 100) return;
    this.last = now;
    this.stream.write(`\r${text.slice(0, (this.stream.columns || 80) - 1).padEnd(Math.min(this.stream.columns || 80, 80) - 1)}`);
    this.shown = true;
  }
  clear(): void {
    if (this.shown) this.stream.write(`\r${' '.repeat(Math.min(this.stream.columns || 80, 80) - 1)}\r`);
    this.shown = false;
  }
}

/** Rows of a cursor, stopping after `limit`; `truncated()` tells afterwards whether rows were left. */
function limitedRows(cursor: QueryCursor, limit: number): AsyncIterable<SqlValue[]> & { truncated(): boolean } {
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
            yield row;
          }
        }
      } finally {
        cursor.close();
      }
    },
  };
}

async function writeJson(columns: QueryColumn[], rows: AsyncIterable<SqlValue[]>, out: OutputWriter): Promise<number> {
  let n = 0;
  for await (const row of rows) {
    const o: Record<string, unknown> = {};
    columns.forEach((c, i) => (o[c.name] = toJsonValue(row[i]!)));
    await out.line(JSON.stringify(o));
    n++;
  }
  return n;
}

function csvField(v: SqlValue): string {
  if (v === null) return '';
  let s: string;
  if (typeof v === 'string') s = v;
  else if (typeof v === 'object' && !(v instanceof Uint8Array) && !(v instanceof Date)) s = JSON.stringify(toJsonValue(v));
  else s = String(toJsonValue(v));
  return /[",\r\n]/.test(s) || s !== s.trim() ? `"${s.replaceAll('"', '""')}"` : s;
}

async function writeCsv(columns: QueryColumn[], rows: AsyncIterable<SqlValue[]>, out: OutputWriter): Promise<number> {
  await out.line(columns.map((c) => csvField(c.name)).join(','));
  let n = 0;
  for await (const row of rows) {
    await out.line(row.map(csvField).join(','));
    n++;
  }
  return n;
}

/** Widest a text cell is shown. */
const MAX_CELL = 80;
/** Rows read before the text table's column widths are fixed. */
const WIDTH_SAMPLE = 1000;

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** BLOB for people: its text when it is printable UTF-8, else DuckDB's `\xAB` notation for the other bytes. */
export function blobText(b: Uint8Array): string {
  try {
    const s = utf8.decode(b);
    if (!/[\u0000-\u0008\u000b-\u001f\u007f]/.test(s)) return s;
  } catch {
    // not UTF-8: escape
  }
  let s = '';
  for (const byte of b) s += byte >= 0x20 && byte < 0x7f && byte !== 0x5c ? String.fromCharCode(byte) : `\\x${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  return s;
}

/** A value as the text table shows it. */
export function textCell(v: SqlValue): string {
  if (v === null) return 'NULL';
  if (typeof v === 'string') return v;
  if (typeof v === 'bigint' || typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (v instanceof Uint8Array) return blobText(v);
  if (v instanceof Date) return Number.isNaN(v.getTime()) ? String(v) : v.toISOString();
  if (Array.isArray(v)) return `[${v.map(nestedCell).join(', ')}]`;
  return `{${Object.entries(v).map(([k, x]) => `${k}: ${nestedCell(x)}`).join(', ')}}`;
}

function nestedCell(v: SqlValue): string {
  return typeof v === 'string' ? `'${v}'` : textCell(v);
}

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
