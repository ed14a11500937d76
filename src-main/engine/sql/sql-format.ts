/**
 * How SQL results are written as text, shared by `klx query` (stdout) and the app's `sql.export`
 * (a file the user downloads), so both give byte-identical CSV and NDJSON for the same query:
 * - NDJSON: one JSON object per row, keyed by column name, values by {@link toJsonValue} (BLOB as
 *   base64, BIGINT beyond ±(2^53 − 1) as a decimal string, TIMESTAMP as ISO-8601, lists and
 *   structs as JSON arrays and objects); a JSON column (the decoded `key_decoded`/`value_decoded`
 *   of `records`, `latest`, `state`, the internal-topic tables' JSON) is written as the JSON value
 *   itself, not as a string holding it, with its integers exactly as DuckDB holds them;
 * - CSV: RFC 4180 with a header line; NULL is an empty field and an empty string (or empty BLOB)
 *   a quoted empty field `""` (as PostgreSQL's `COPY … CSV` and DuckDB's `read_csv` tell them
 *   apart: a null key and an empty key differ), a BLOB is its text when it is
 *   printable UTF-8 (a text key reads `order-17`, not `b3JkZXItMTc=`) and base64 otherwise (binary
 *   keys, framed values: their decoded form is in the `*_decoded` columns); nested values are their
 *   JSON; a field is quoted when it holds `"`, `,`, CR or LF or starts or ends with blanks.
 * Lines end with `\n`.
 *
 * Also the one-line text form of a value people read ({@link textCell}: the CLI's text table and
 * the app's nested-value cells).
 */
import { parseJsonExact, toJsonText } from '../decode/json-text.ts';
import { toJsonValue, type QueryColumn, type SqlValue } from './sql-session.ts';

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Where rows are written one line at a time (a newline is added by the sink); must honour back-pressure. */
export interface LineSink {
  line(text: string): Promise<void>;
}

/** A JSON column's text as one line: kept when it has no line break, else re-printed compact (int64 exact). */
function jsonColumnText(text: string): string {
  if (!/[\r\n]/.test(text)) return text;
  return toJsonText(parseJsonExact(text));
}

/** The NDJSON line of one row (no newline). */
export function ndjsonLine(columns: readonly QueryColumn[], row: readonly SqlValue[]): string {
  let line = '{';
  for (let i = 0; i < columns.length; i++) {
    const v = row[i]!;
    const c = columns[i]!;
    if (i > 0) line += ',';
    line += `${JSON.stringify(c.name)}:${c.type === 'JSON' && typeof v === 'string' ? jsonColumnText(v) : JSON.stringify(toJsonValue(v))}`;
  }
  return `${line}}`;
}

/** A BLOB's UTF-8 text when it has no control character other than tab/LF/CR, else null. */
export function printableText(b: Uint8Array): string | null {
  try {
    const s = utf8.decode(b);
    return /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/.test(s) ? null : s;
  } catch {
    return null;
  }
}

/** One CSV field (see the module comment). */
export function csvField(v: SqlValue): string {
  if (v === null) return '';
  let s: string;
  if (typeof v === 'string') s = v;
  else if (v instanceof Uint8Array) s = printableText(v) ?? String(toJsonValue(v));
  else if (typeof v === 'object' && !(v instanceof Uint8Array) && !(v instanceof Date)) s = JSON.stringify(toJsonValue(v));
  else s = String(toJsonValue(v));
  return s === '' || /[",\r\n]/.test(s) || s !== s.trim() ? `"${s.replaceAll('"', '""')}"` : s;
}

/** The CSV header line of `columns` (no newline). */
export function csvHeader(columns: readonly QueryColumn[]): string {
  return columns.map((c) => csvField(c.name)).join(',');
}

/** The CSV line of one row (no newline). */
export function csvLine(row: readonly SqlValue[]): string {
  return row.map(csvField).join(',');
}

/** Writes every row as NDJSON; returns the number of rows written. */
export async function writeNdjson(columns: readonly QueryColumn[], rows: AsyncIterable<SqlValue[]>, out: LineSink): Promise<number> {
  let n = 0;
  for await (const row of rows) {
    await out.line(ndjsonLine(columns, row));
    n++;
  }
  return n;
}

/** Writes the header line then every row as CSV; returns the number of rows written. */
export async function writeCsv(columns: readonly QueryColumn[], rows: AsyncIterable<SqlValue[]>, out: LineSink): Promise<number> {
  await out.line(csvHeader(columns));
  let n = 0;
  for await (const row of rows) {
    await out.line(csvLine(row));
    n++;
  }
  return n;
}

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

/** A value as one line of text for people: NULL, numbers, BLOB as {@link blobText}, `[a, b]` lists, `{k: v}` structs. */
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
