/**
 * The columnar appender (issue 16): BLOB/VARCHAR values of at most 12 bytes go to DuckDB as inline
 * `string_t` structs in one copy per chunk, longer ones one native call each; what DuckDB reads
 * back must be every value's exact bytes, across chunks (the chunk is reused after each append),
 * with NULLs, values at the 12/13-byte edge and non-ASCII text, and compare equal to the same
 * values written by DuckDB itself (SQL literals).
 */
import { describe, expect, it } from 'vitest';
import { DuckDBInstance } from '../../../src-main/engine/sql/duckdb.ts';
import { ColumnarAppender } from '../../../src-main/engine/sql/columnar-appender.ts';

const KEY_LENGTHS = [0, 1, 11, 12, 13, 40, -1];
const TEXTS = ['', 'a', 'exactly12chr', 'thirteen-chrs', 'ünï', '日本語テキスト', 'x'.repeat(100), null];

function keyOf(i: number): Uint8Array | null {
  const len = KEY_LENGTHS[i % KEY_LENGTHS.length]!;
  if (len < 0) return null;
  return Uint8Array.from({ length: len }, (_, j) => (i * 31 + j * 7) & 0xff);
}
const textOf = (i: number) => TEXTS[i % TEXTS.length]!;

describe('ColumnarAppender', () => {
  it('writes short values inline and long ones by call: every value reads back exactly, over several reused chunks', async () => {
    const instance = await DuckDBInstance.create(':memory:');
    const conn = await instance.connect();
    try {
      await conn.run('CREATE TABLE t (i INTEGER, k BLOB, s VARCHAR)');
      const out = await ColumnarAppender.create(conn, null, 't', ['int32', 'blob', 'varchar']);
      const N = 5000;
      const RANGE = 3000;
      // Rows [0, RANGE): column-wise (blobRange over packed keys); the rest row by row.
      const starts = new Int32Array(RANGE);
      const lengths = new Int32Array(RANGE);
      const packed: number[] = [];
      for (let i = 0; i < RANGE; i++) {
        const k = keyOf(i);
        starts[i] = packed.length;
        lengths[i] = k === null ? -1 : k.length;
        if (k) packed.push(...k);
      }
      const bytes = Uint8Array.from(packed);
      const ids = Int32Array.from({ length: RANGE }, (_, i) => i);
      out.appendRows(RANGE, (row, from, n) => {
        out.int32Range(0, row, ids, from, n);
        out.blobRange(1, row, bytes, starts, lengths, from, n);
        for (let j = 0; j < n; j++) out.varcharAt(2, row + j, textOf(from + j));
      });
      for (let i = RANGE; i < N; i++) {
        out.int32(0, i);
        out.blob(1, keyOf(i));
        out.varchar(2, textOf(i));
        out.endRow();
      }
      out.close();

      const rows = (await conn.runAndReadAll('SELECT i, k, s FROM t ORDER BY i')).getRowsJS();
      expect(rows.length).toBe(N);
      const bad = rows.filter(([i, k, s]) => {
        const want = keyOf(Number(i));
        const got = k === null ? null : Array.from(k as Uint8Array);
        return JSON.stringify(got) !== JSON.stringify(want === null ? null : Array.from(want)) || s !== textOf(Number(i));
      });
      expect(bad).toEqual([]);

      // Equal to (and grouped with) the same values written by DuckDB itself.
      const count = async (sql: string) => Number((await conn.runAndReadAll(sql)).getRowsJS()[0]![0]);
      expect(await count(`SELECT count(*) FROM t WHERE s = 'a'`)).toBe(625);
      expect(await count(`SELECT count(*) FROM t WHERE s = 'exactly12chr'`)).toBe(625);
      expect(await count(`SELECT count(*) FROM t WHERE s = ''`)).toBe(625);
      expect(await count(`SELECT count(*) FROM t WHERE k = ''::BLOB`)).toBe(715);
      expect(await count(`SELECT count(*) FROM t WHERE s IS NULL`)).toBe(625);
      expect(await count(`SELECT count(*) FROM t WHERE k IS NULL`)).toBe(714);
      expect(await count(`SELECT count(DISTINCT s) FROM t`)).toBe(7);
      // Key of row 3 (11 bytes) equals only itself: rows i ≡ 3 (mod 7) with the same i*31 mod 256 pattern.
      const k3 = Buffer.from(keyOf(3)!).toString('hex');
      const same = Array.from({ length: N }, (_, i) => i).filter((i) => { const k = keyOf(i); return k !== null && Buffer.from(k).toString('hex') === k3; }).length;
      expect(await count(`SELECT count(*) FROM t WHERE k = from_hex('${k3}')`)).toBe(same);
    } finally {
      conn.closeSync();
      instance.closeSync();
    }
  });
});
