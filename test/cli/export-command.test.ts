/**
 * `klx export` (issue 16, "For users who outgrow one machine") on directories written by real
 * brokers, read in place: the Parquet folder it writes is read back by DuckDB (a reader that is not
 * our code) and compared with the independent decoder's output in EXPECTED.jsonl(.gz): records per
 * partition, first and last offsets, and every key and value byte for byte (an MD5 over them in
 * offset order). NDJSON with --where is parsed back; --out inside the log folder is refused.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, expect, it } from 'vitest';
import { klx } from '../support/klx-cli.ts';
import { describeRealData, expectedBatches, REAL_DATA } from '../support/real-data.ts';

const tmp = mkdtempSync(join(tmpdir(), 'klx-export-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

interface ExpectedRecord {
  offset: number;
  key: string | null;
  value: string | null;
}

/** Records of a case per partition folder name, from EXPECTED.jsonl(.gz). */
function expectedByPartition(caseName: string): Map<string, ExpectedRecord[]> {
  const out = new Map<string, ExpectedRecord[]>();
  for (const b of expectedBatches(caseName)) {
    const part = String(b.file).split('/')[0]!;
    const list = out.get(part) ?? [];
    for (const r of (b.records as ExpectedRecord[] | null) ?? []) list.push(r);
    out.set(part, list);
  }
  return out;
}

/** Records of a case per `<log dir>/<partition folder>` (the file's first two path parts), from EXPECTED.jsonl(.gz). */
function expectedByPartitionPath(caseName: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const b of expectedBatches(caseName)) {
    const part = String(b.file).split('/').slice(0, 2).join('/');
    out.set(part, (out.get(part) ?? 0) + ((b.records as unknown[] | null) ?? []).length);
  }
  return out;
}

async function duck<T>(sql: string): Promise<T[]> {
  const db = await DuckDBInstance.create(':memory:');
  const c = await db.connect();
  try {
    return (await (await c.run(sql)).getRowObjectsJS()) as T[];
  } finally {
    c.closeSync();
    db.closeSync();
  }
}

describeRealData('klx export on real broker data', () => {
  it.each(['kafka-2.8.0-snappy', 'multisegment-rolled'])('%s: Parquet through DuckDB, one folder per topic and partition, every record as the independent decoder read it', async (caseName) => {
    const out = join(tmp, `${caseName}-pq`);
    const r = klx('export', join(REAL_DATA, caseName), '--format', 'parquet', '--out', out, '--json');
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const expected = expectedByPartition(caseName);
    const total = [...expected.values()].reduce((n, l) => n + l.length, 0);
    expect(JSON.parse(r.stdout)).toMatchObject({ format: 'parquet', out, records: total });
    const rows = await duck<{ topic: string; partition: number; n: bigint; lo: bigint; hi: bigint; digest: string }>(
      `SELECT topic, "partition", count(*) AS n, min("offset") AS lo, max("offset") AS hi,
              md5(string_agg(coalesce(base64("key"), '-') || ':' || coalesce(base64("value"), '-'), ',' ORDER BY "offset")) AS digest
       FROM read_parquet('${out}/**/*.parquet', hive_partitioning = false) GROUP BY ALL ORDER BY ALL`,
    );
    const got = new Map(rows.map((x) => [`${x.topic}-${x.partition}`, x]));
    for (const [part, recs] of expected) {
      if (recs.length === 0) continue;
      const x = got.get(part);
      expect(x, part).toBeDefined();
      const sorted = [...recs].sort((a, b) => a.offset - b.offset);
      expect(Number(x!.n), part).toBe(recs.length);
      expect(Number(x!.lo), part).toBe(sorted[0]!.offset);
      expect(Number(x!.hi), part).toBe(sorted[sorted.length - 1]!.offset);
      const digest = createHash('md5').update(sorted.map((e) => `${e.key ?? '-'}:${e.value ?? '-'}`).join(',')).digest('hex');
      expect(x!.digest, part).toBe(digest);
    }
    expect(rows.length).toBe([...expected.values()].filter((l) => l.length > 0).length);
    // Hive-style folders: what Spark, Trino and DuckDB read as partition columns.
    expect(existsSync(join(out, `topic=${rows[0]!.topic}`, `partition=${rows[0]!.partition}`))).toBe(true);
  }, 240_000);

  it('NDJSON with --where: the offsets asked for, bytes as base64, decoded key beside them', () => {
    const out = join(tmp, 'rolled-where.ndjson');
    const r = klx('export', join(REAL_DATA, 'multisegment-rolled'), '--format', 'ndjson', '--out', out, '--where', '"offset" BETWEEN 30618 AND 30621');
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^exported 4 records from 1 partition to /);
    const lines = readFileSync(out, 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    const want = expectedByPartition('multisegment-rolled').get('invoice-1')!.filter((e) => e.offset >= 30618 && e.offset <= 30621);
    expect(lines.map((l) => [l.offset, l.key, l.value, l.segment_base_offset])).toEqual(want.map((e) => [e.offset, e.key, e.value, e.offset >= 30620 ? 30620 : 0]));
    // The keys are 4-byte big-endian ints: the decode layer reads them as such.
    expect(lines.map((l) => l.key_decoded)).toEqual(want.map((e) => Buffer.from(e.key!, 'base64').readInt32BE(0)));
  }, 120_000);

  it('retention-log-start (two brokers\' log dirs, kafka/ and kafka2/): a log_dir column and a log_dir= folder level keep the replicas apart; counts per log dir, topic and partition as the independent decoder read them', async () => {
    const caseName = 'retention-log-start';
    const out = join(tmp, `${caseName}-pq`);
    const r = klx('export', join(REAL_DATA, caseName), '--format', 'parquet', '--out', out, '--json', '--up-to', 'log-end', '--no-decode');
    expect(r.status, r.stderr).toBe(0);
    const want = new Map<string, number>();
    for (const [part, recs] of expectedByPartitionPath(caseName)) if (recs > 0) want.set(part, recs);
    const total = [...want.values()].reduce((n, x) => n + x, 0);
    expect(JSON.parse(r.stdout)).toMatchObject({ records: total, notExported: [], highWatermarkStops: [] });
    const rows = await duck<{ log_dir: string; topic: string; partition: number; n: bigint }>(
      `SELECT log_dir, topic, "partition", count(*) AS n FROM read_parquet('${out}/**/*.parquet', hive_partitioning = false) GROUP BY ALL ORDER BY ALL`,
    );
    expect(new Map(rows.map((x) => [`${x.log_dir}/${x.topic}-${x.partition}`, Number(x.n)]))).toEqual(want);
    expect(new Set(rows.map((x) => x.log_dir))).toEqual(new Set(['kafka', 'kafka2']));
    const first = rows[0]!;
    expect(existsSync(join(out, `log_dir=${first.log_dir}`, `topic=${first.topic}`, `partition=${first.partition}`))).toBe(true);
    // By default every partition stops at its high watermark: what is left out is named, and adds up.
    const hwOut = join(tmp, `${caseName}-hw.ndjson`);
    const d = klx('export', join(REAL_DATA, caseName), '--format', 'ndjson', '--out', hwOut, '--json', '--no-decode');
    expect(d.status, d.stderr).toBe(0);
    const summary = JSON.parse(d.stdout) as { records: number; highWatermarkStops: { records: number }[] };
    expect(summary.records + summary.highWatermarkStops.reduce((n, x) => n + x.records, 0)).toBe(total);
  }, 240_000);

  it('refuses an output inside the log folder and writes nothing', () => {
    const dir = join(REAL_DATA, 'multisegment-rolled');
    const r = klx('export', dir, '--format', 'csv', '--out', join(dir, 'x.csv'));
    expect(r.status).toBe(2); // invalid-argument: a refusal of what was asked (klx --help, exit codes)
    expect(r.stderr).toContain('never writes into the log folder');
    expect(existsSync(join(dir, 'x.csv'))).toBe(false);
  });
});
