/**
 * The SQL build with decoding (issue 11) over a partition of 1,000,000 Confluent-framed Avro values
 * (the values of `npm run bench -- decode`), with `_schemas-0` beside it, as the app builds it
 * (segments read in the SQL build threads): the tables built, then a
 * query that decodes every record (`value_format`, `schema_id`, `decode_error`, `value_decoded->>'qty'`:
 * the decoded columns are computed when a query asks for them, `klx_decoded`). Peers in the same
 * run: the same build without decoding, and DuckDB alone loading the same decoded rows (written
 * once by `klx export`'s writer to Parquet and NDJSON) into a table of a fresh database and
 * answering the same query: what DuckDB's own writes and JSON reads cost for these rows; and the
 * limit of a build that stores them through DuckDB's appender: the appender storing the same decoded rows
 * from data chunks already in memory (read from the Parquet file before the clock starts) plus the
 * same query: no file read, no decoding, no JS per row. Target: ≥ 1,000,000 records/s with decoding.
 *
 * Data: encoded with avsc (bench data, not test fixtures), the partition once into
 * bench/.data/decode-avro-1m/ (reused while unchanged).
 */
import { existsSync, renameSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { DuckDBInstance, type DuckDBDataChunk } from '@duckdb/node-api';
import avro from 'avsc';
import { startEntryWorker } from '../src-main/api/core/entry-worker.ts';
import { RecordDecoder, schemasOf } from '../src-main/engine/decode/record-decoder.ts';
import { allPartitions, openPath } from '../src-main/engine/log/log-dir.ts';
import { writeExport } from '../src-main/engine/sql/record-export.ts';
import { SQL_BUILD_WORKER } from '../src-main/engine/sql/sql-build-pool.ts';
import { duckdbResourceOptions } from '../src-main/engine/sql/sql-resources.ts';
import { SqlSession } from '../src-main/engine/sql/sql-session.ts';
import { ensureOrdersLog, frame, order, ORDER_AVRO_SCHEMA } from './avro-orders.ts';
import { collectGarbage, fmt3, fmtInt, loadLine, median, printTable, progress, timeIt, type BenchOptions } from './lib.ts';

const N = 1_000_000;
const PARAMS = { generator: 1, records: N, perBatch: 100 };

/** The partition `orders-avro-0` with 1 M framed Avro values and `_schemas-0` registering id 1. */
function ensurePartition(dataDir: string): string {
  const type = avro.Type.forSchema(ORDER_AVRO_SCHEMA as avro.Schema);
  return ensureOrdersLog({ logDir: join(dataDir, 'decode-avro-1m'), topic: 'orders-avro', records: N, perBatch: PARAMS.perBatch, params: PARAMS, config: { 'segment.bytes': 1 << 30 }, value: (n) => frame(1, type.toBuffer(order(n))) });
}

export async function run(opts: BenchOptions): Promise<void> {
  const logDir = ensurePartition(opts.dataDir);
  const logBytes = statSync(join(logDir, 'orders-avro-0', '00000000000000000000.log')).size;
  console.log(`SQL data: ${fmtInt(N)} framed Avro records, ${fmt3(logBytes / 2 ** 20)} MiB of .log, _schemas-0 beside it (${logDir})`);
  const cacheDir = join(opts.dataDir, 'decode-sql-cache');
  const peers = await decodedRowFiles(logDir);
  const peerDb = join(opts.dataDir, 'decode-sql-peer.duckdb');
  const QUERY = (table: string) =>
    `SELECT count(*) FILTER (WHERE value_format = 'confluent' AND schema_id = 1 AND decode_error IS NULL), sum((value_decoded->>'qty')::INTEGER) FROM ${table} WHERE topic = 'orders-avro'`;
  const modes = ['plain', 'decoded', 'parquet', 'ndjson', 'floor'] as const;
  const runs = Object.fromEntries(modes.map((k) => [k, [] as { seconds: number; cpuSeconds: number }[]])) as Record<(typeof modes)[number], { seconds: number; cpuSeconds: number }[]>;
  const checks = new Map<string, string>();
  let readBack = { batches: 0, bytes: 0 };
  const startWorker = () => startEntryWorker(SQL_BUILD_WORKER.entry, SQL_BUILD_WORKER.near);
  for (let i = 0; i <= opts.iterations; i++) {
    for (const mode of modes) {
      rmSync(cacheDir, { recursive: true, force: true });
      rmSync(peerDb, { force: true });
      // The floor's rows: data chunks in memory, read before the clock starts.
      const chunks = mode === 'floor' ? await decodedRowChunks(peers.parquet) : null;
      collectGarbage();
      progress(`SQL ${mode} ${i === 0 ? '(warm-up)' : `#${i}`}`);
      const t = await timeIt(async () => {
        if (mode === 'plain' || mode === 'decoded') {
          const s = await SqlSession.open(logDir, { cacheDir, decode: mode === 'decoded' ? {} : false, startWorker });
          try {
            const q = mode === 'decoded' ? QUERY('records') : `SELECT count(*) FROM records WHERE topic = 'orders-avro'`;
            const r = await s.query(q);
            if (mode === 'decoded') readBack = r.readFromLog;
            return r.rows[0]!.map(String).join(', ');
          } finally {
            s.close();
          }
        }
        const reader = mode === 'parquet' ? `read_parquet('${peers.parquet}')` : `read_json('${peers.ndjson}', format = 'newline_delimited')`;
        const instance = await DuckDBInstance.create(peerDb, duckdbResourceOptions());
        const conn = await instance.connect();
        try {
          if (chunks) {
            await conn.run(`CREATE TABLE records (${chunks.columns.join(', ')})`);
            const appender = await conn.createAppender('records');
            for (const c of chunks.chunks) appender.appendDataChunk(c);
            appender.closeSync();
          } else await conn.run(`CREATE TABLE records AS SELECT * FROM ${reader}`);
          await conn.run('CHECKPOINT');
          return (await conn.runAndReadAll(QUERY('records'))).getRowsJS()[0]!.map(String).join(', ');
        } finally {
          conn.closeSync();
          instance.closeSync();
        }
      });
      checks.set(mode, t.result);
      if (i > 0) runs[mode].push(t);
    }
  }
  progress('');
  rmSync(cacheDir, { recursive: true, force: true });
  rmSync(peerDb, { force: true });
  for (const mode of ['parquet', 'ndjson', 'floor'] as const) if (checks.get(mode) !== checks.get('decoded')) throw new Error(`DuckDB from ${mode} answered ${checks.get(mode)}, ours ${checks.get('decoded')}`);
  const sec = (k: (typeof modes)[number]) => median(runs[k].map((r) => r.seconds));
  const cpuOf = (k: (typeof modes)[number]) => median(runs[k].map((r) => r.cpuSeconds));
  const decoded = sec('decoded');
  const row2 = (label: string, k: (typeof modes)[number], note: string) => [label, fmt3(sec(k)), fmt3(cpuOf(k)), fmtInt(N / sec(k)), note];
  printTable(
    [`SQL over 1 M records (median of ${opts.iterations})`, 'seconds', 'CPU s', 'records/s', 'note'],
    [
      row2('ours: build + decoding query', 'decoded', `${N / decoded >= 1_000_000 ? 'met' : 'NOT met'} (≥ 1,000,000/s); answer ${checks.get('decoded')}`),
      row2('ours: build without decoding (peer)', 'plain', `decoding adds ${fmt3(decoded - sec('plain'))} s (${fmt3(cpuOf('decoded') - cpuOf('plain'))} CPU s)`),
      row2('DuckDB: decoded rows from Parquet (peer)', 'parquet', `ours takes ${fmt3(decoded / sec('parquet'))}× its time`),
      row2('DuckDB: decoded rows from NDJSON (peer)', 'ndjson', `ours takes ${fmt3(decoded / sec('ndjson'))}× its time`),
      row2('DuckDB: decoded rows from chunks in memory (floor)', 'floor', `appender + the query, no file read: ours takes ${fmt3(decoded / sec('floor'))}× its time, ${fmt3(cpuOf('decoded') / cpuOf('floor'))}× its CPU`),
    ],
    new Set([1, 2, 3]),
  );
  console.log(`the decoding query read back ${fmtInt(readBack.batches)} batches, ${fmt3(readBack.bytes / 2 ** 20)} MiB of the log's ${fmt3(logBytes / 2 ** 20)} MiB`);
  console.log(loadLine());
}

/**
 * The decoded rows of `orders-avro-0` (the columns of `klx export`, decoded with the folder's
 * `_schemas`) written once as Parquet and NDJSON beside the log dir, for the DuckDB peers.
 */
async function decodedRowFiles(logDir: string): Promise<{ parquet: string; ndjson: string }> {
  const parquet = `${logDir}-decoded-v1.parquet`;
  const ndjson = `${logDir}-decoded-v1.ndjson`;
  const opened = openPath(logDir);
  const log = allPartitions(opened).find((p) => p.log.topic === 'orders-avro')!.log;
  for (const [out, format] of [[parquet, 'parquet'], [ndjson, 'ndjson']] as const) {
    if (existsSync(out) && statSync(out).mtimeMs >= statSync(join(logDir, 'params.json')).mtimeMs) continue;
    progress(`writing the decoded rows as ${format} for the DuckDB peers`);
    rmSync(`${out}.tmp`, { force: true });
    await writeExport([{ log }], { format, out: `${out}.tmp`, decoder: new RecordDecoder({ schemas: schemasOf(opened).registry }) });
    renameSync(`${out}.tmp`, out);
  }
  progress('');
  return { parquet, ndjson };
}

/**
 * The decoded rows of `parquet` as DuckDB data chunks in memory (read through a separate in-memory
 * DuckDB), with the column definitions of a table that holds them: the floor's input.
 */
async function decodedRowChunks(parquet: string): Promise<{ columns: string[]; chunks: DuckDBDataChunk[] }> {
  const instance = await DuckDBInstance.create(':memory:');
  const conn = await instance.connect();
  try {
    const result = await conn.run(`SELECT * FROM read_parquet('${parquet}')`);
    const chunks: DuckDBDataChunk[] = [];
    for (;;) {
      const c = await result.fetchChunk();
      if (!c || c.rowCount === 0) break;
      chunks.push(c);
    }
    return { columns: result.columnNames().map((n, i) => `"${n.replaceAll('"', '""')}" ${result.columnType(i).toString()}`), chunks };
  } finally {
    conn.closeSync();
    instance.closeSync();
  }
}
