/**
 * DuckDB result values (`@duckdb/node-api` JS values) as the JSON cells of `sql.query` (see
 * `src-shared/sql-types.ts`): numbers and int64 as {@link toJsonValue} gives them (exact numbers up
 * to ±(2^53 − 1), decimal strings beyond), timestamps as ISO-8601, BLOBs tagged with a base64
 * prefix of at most {@link CELL_BLOB_BYTES} bytes and their full size, long text and nested values
 * (LIST, STRUCT, MAP) cut to {@link CELL_TEXT_CHARS} characters with their full length, so a page of
 * 100,000 rows of 16 KiB values stays a few megabytes on the wire.
 */
import { textCell as oneLine } from '../../engine/sql/sql-format.ts';
import { toJsonValue, type SqlValue } from '../../engine/sql/sql-session.ts';
import { CELL_BLOB_BYTES, CELL_TEXT_CHARS, type SqlCell } from '../../../src-shared/sql-types.ts';

function cut(text: string, kind: 'text' | 'nested'): SqlCell {
  if (text.length <= CELL_TEXT_CHARS) return kind === 'text' ? text : { t: 'nested', text, length: text.length };
  // Never end on the first half of a surrogate pair.
  let n = CELL_TEXT_CHARS;
  const c = text.charCodeAt(n - 1);
  if (c >= 0xd800 && c <= 0xdbff) n--;
  return { t: kind, text: text.slice(0, n), length: text.length };
}

/** One result value as a wire cell (see the module comment). */
export function toCell(v: SqlValue): SqlCell {
  if (v === null || typeof v === 'boolean') return v;
  if (typeof v === 'string') return cut(v, 'text');
  if (v instanceof Uint8Array) {
    const head = v.subarray(0, CELL_BLOB_BYTES);
    return { t: 'blob', b64: Buffer.from(head.buffer, head.byteOffset, head.byteLength).toString('base64'), size: v.byteLength };
  }
  if (typeof v === 'number' || typeof v === 'bigint' || v instanceof Date) return toJsonValue(v) as number | string;
  return cut(oneLine(v), 'nested');
}

/** A row of values as wire cells. */
export function toCells(row: readonly SqlValue[]): SqlCell[] {
  return row.map(toCell);
}
