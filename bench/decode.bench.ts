/**
 * The decode layer (issue 11): 1,000,000 Confluent-framed Avro values and 1,000,000 Confluent-framed
 * Protobuf values decoded through the layer (`RecordDecoder`, format `auto` and the chosen
 * `confluent` format) and, in the same run on the same bytes, with `avsc` / `protobufjs` directly
 * (skip the 5-byte framing and the message index, decode, convert to the same plain object).
 * Target: the layer's overhead over the raw library ≤ 25 %.
 *
 * Both wall and CPU seconds are printed (CPU: this process, all threads): under a loaded machine
 * the CPU figures are the steadier comparison.
 *
 * Then the SQL build with decoding over a partition of the same 1 M Avro records, with `_schemas-0`
 * beside it, as the app builds it (segments read in the SQL build threads): the tables built, then a
 * query that decodes every record (`value_format`, `schema_id`, `decode_error`, `value_decoded->>'qty'`:
 * the decoded columns are computed when a query asks for them, `klx_decoded`). Peers in the same
 * run: the same build without decoding, and DuckDB alone loading the same decoded rows (written
 * once by `klx export`'s writer to Parquet and NDJSON) into a table of a fresh database and
 * answering the same query: what DuckDB's own writes and JSON reads cost for these rows, the floor
 * for any build that stores them. Target: ≥ 1,000,000 records/s with decoding.
 *
 * Data: generated in memory (Avro with avsc, Protobuf with protobufjs: bench data, not test
 * fixtures), the partition once into bench/.data/decode-avro-1m/ (reused while unchanged).
 */
import { existsSync, renameSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import avro from 'avsc';
import protobuf from 'protobufjs';
import { startEntryWorker } from '../src-main/api/core/entry-worker.ts';
import { RecordDecoder, schemasOf } from '../src-main/engine/decode/record-decoder.ts';
import { SchemaRegistry } from '../src-main/engine/decode/schemas/schema-registry.ts';
import { allPartitions, openPath } from '../src-main/engine/log/log-dir.ts';
import { writeExport } from '../src-main/engine/sql/record-export.ts';
import { SQL_BUILD_WORKER } from '../src-main/engine/sql/sql-build-pool.ts';
import { duckdbResourceOptions } from '../src-main/engine/sql/sql-resources.ts';
import { SqlSession } from '../src-main/engine/sql/sql-session.ts';
import { ensureOrdersLog, frame, order, ORDER_AVRO_SCHEMA } from './avro-orders.ts';
import { collectGarbage, fmt3, fmtInt, loadLine, median, printTable, progress, timeIt, type BenchOptions } from './lib.ts';

const N = 1_000_000;
const PROTO = `syntax = "proto3";
package bench;
message Order {
  string id = 1;
  double amount = 2;
  int32 qty = 3;
  int64 ts = 4;
  enum Status { NEW = 0; PAID = 1; SHIPPED = 2; }
  Status status = 5;
  string note = 6;
}
`;
const PARAMS = { generator: 1, records: N, perBatch: 100 };

function registry(): SchemaRegistry {
  const r = new SchemaRegistry();
  r.add({ id: 1, subject: 'orders-avro-value', version: 1, schemaType: 'AVRO', schema: JSON.stringify(ORDER_AVRO_SCHEMA), references: [], deleted: false, source: 'bench' });
  r.add({ id: 2, subject: 'orders-proto-value', version: 1, schemaType: 'PROTOBUF', schema: PROTO, references: [], deleted: false, source: 'bench' });
  return r;
}

/** The partition `orders-avro-0` with 1 M framed Avro values and `_schemas-0` registering id 1. */
function ensurePartition(dataDir: string, avroValues: Buffer[]): string {
  return ensureOrdersLog({ logDir: join(dataDir, 'decode-avro-1m'), topic: 'orders-avro', records: N, perBatch: PARAMS.perBatch, params: PARAMS, config: { 'segment.bytes': 1 << 30 }, value: (n) => avroValues[n]! });
}

export async function run(opts: BenchOptions): Promise<void> {
  progress('encoding 1 M Avro and 1 M Protobuf values');
  const avroType = avro.Type.forSchema(ORDER_AVRO_SCHEMA as avro.Schema);
  const root = protobuf.parse(PROTO, { keepCase: true }).root;
  const pbType = root.lookupType('bench.Order');
  const avroValues: Buffer[] = new Array(N);
  const pbValues: Buffer[] = new Array(N);
  for (let n = 0; n < N; n++) {
    const o = order(n);
    avroValues[n] = frame(1, avroType.toBuffer(o));
    const p = { ...o, status: n % 3, note: o.note ?? '' };
    pbValues[n] = frame(2, pbType.encode(pbType.fromObject(p)).finish(), 0);
  }
  progress('');
  const conv: protobuf.IConversionOptions = { longs: String, enums: String, bytes: String, json: true };
  const rawAvro = () => {
    let s = 0;
    for (let n = 0; n < N; n++) {
      const b = avroValues[n]!;
      const v = avroType.decode(b, 5).value as { qty?: number };
      s += v.qty ?? 0;
    }
    return s;
  };
  const rawPb = () => {
    let s = 0;
    for (let n = 0; n < N; n++) {
      const b = pbValues[n]!;
      const v = pbType.toObject(pbType.decode(b.subarray(6)), conv) as { qty?: number };
      s += v.qty ?? 0;
    }
    return s;
  };
  const auto = new RecordDecoder({ schemas: registry() });
  const chosen = new RecordDecoder({ schemas: registry(), choices: { 'orders-avro': { value: 'confluent' }, 'orders-proto': { value: 'confluent' } } });
  const layer = (values: Buffer[], topic: string, choice?: string) => () => {
    const dec = choice ? chosen : auto;
    let s = 0;
    for (let n = 0; n < N; n++) {
      const d = dec.decode(topic, 'value', values[n]!, null);
      s += (d.json as { qty?: number }).qty ?? 0;
    }
    return s;
  };
  const cases: [string, () => number][] = [
    ['Avro: avsc directly', rawAvro],
    ['Avro: layer, format confluent', layer(avroValues, 'orders-avro', 'confluent')],
    ['Avro: layer, auto', layer(avroValues, 'orders-avro')],
    ['Protobuf: protobufjs directly', rawPb],
    ['Protobuf: layer, format confluent', layer(pbValues, 'orders-proto', 'confluent')],
    ['Protobuf: layer, auto', layer(pbValues, 'orders-proto')],
  ];
  const times = new Map<string, number[]>();
  const cpu = new Map<string, number[]>();
  const sums = new Map<string, number>();
  for (let i = 0; i <= opts.iterations; i++) {
    // Interleaved so both sides of a ratio see the same machine load.
    for (const [label, fn] of cases) {
      collectGarbage();
      progress(`${label} ${i === 0 ? '(warm-up)' : `#${i}`}`);
      const t = await timeIt(fn);
      sums.set(label, t.result);
      if (i > 0) times.set(label, [...(times.get(label) ?? []), t.seconds]);
      if (i > 0) cpu.set(label, [...(cpu.get(label) ?? []), t.cpuSeconds]);
    }
  }
  progress('');
  const avroSum = sums.get('Avro: avsc directly');
  const pbSum = sums.get('Protobuf: protobufjs directly');
  for (const [label] of cases) if (sums.get(label) !== (label.startsWith('Avro') ? avroSum : pbSum)) throw new Error(`${label}: results differ from the raw library`);
  const m = (l: string) => median(times.get(l)!);
  const mc = (l: string) => median(cpu.get(l)!);
  const row = (label: string, peer: string) => {
    const over = m(label) / m(peer) - 1;
    const overCpu = mc(label) / mc(peer) - 1;
    const verdict = (o: number) => (o <= 0.25 ? 'met' : 'NOT met');
    return [
      label,
      fmt3(m(label)),
      fmt3(mc(label)),
      fmtInt(N / m(label)),
      label === peer ? '' : `${(over * 100).toFixed(1)} %`,
      label === peer ? '' : `${(overCpu * 100).toFixed(1)} %`,
      label === peer ? 'peer' : `≤ 25 %: wall ${verdict(over)}, CPU ${verdict(overCpu)}`,
    ];
  };
  printTable(
    [`decode 1 M values (median of ${opts.iterations})`, 'seconds', 'CPU s', 'values/s', 'overhead', 'CPU overhead', 'target'],
    [row('Avro: avsc directly', 'Avro: avsc directly'), row('Avro: layer, format confluent', 'Avro: avsc directly'), row('Avro: layer, auto', 'Avro: avsc directly'), row('Protobuf: protobufjs directly', 'Protobuf: protobufjs directly'), row('Protobuf: layer, format confluent', 'Protobuf: protobufjs directly'), row('Protobuf: layer, auto', 'Protobuf: protobufjs directly')],
    new Set([1, 2, 3, 4, 5]),
  );
  console.log(loadLine());

  // SQL build with and without decoding over the same partition.
  const logDir = ensurePartition(opts.dataDir, avroValues);
  const logBytes = statSync(join(logDir, 'orders-avro-0', '00000000000000000000.log')).size;
  console.log(`\nSQL data: ${fmtInt(N)} framed Avro records, ${fmt3(logBytes / 2 ** 20)} MiB of .log, _schemas-0 beside it (${logDir})`);
  const cacheDir = join(opts.dataDir, 'decode-sql-cache');
  const peers = await decodedRowFiles(logDir);
  const peerDb = join(opts.dataDir, 'decode-sql-peer.duckdb');
  const QUERY = (table: string) =>
    `SELECT count(*) FILTER (WHERE value_format = 'confluent' AND schema_id = 1 AND decode_error IS NULL), sum((value_decoded->>'qty')::INTEGER) FROM ${table} WHERE topic = 'orders-avro'`;
  const modes = ['plain', 'decoded', 'parquet', 'ndjson'] as const;
  const runs = Object.fromEntries(modes.map((k) => [k, [] as { seconds: number; cpuSeconds: number }[]])) as Record<(typeof modes)[number], { seconds: number; cpuSeconds: number }[]>;
  const checks = new Map<string, string>();
  const startWorker = () => startEntryWorker(SQL_BUILD_WORKER.entry, SQL_BUILD_WORKER.near);
  for (let i = 0; i <= opts.iterations; i++) {
    for (const mode of modes) {
      rmSync(cacheDir, { recursive: true, force: true });
      rmSync(peerDb, { force: true });
      collectGarbage();
      progress(`SQL ${mode} ${i === 0 ? '(warm-up)' : `#${i}`}`);
      const t = await timeIt(async () => {
        if (mode === 'plain' || mode === 'decoded') {
          const s = await SqlSession.open(logDir, { cacheDir, decode: mode === 'decoded' ? {} : false, startWorker });
          try {
            const q = mode === 'decoded' ? QUERY('records') : `SELECT count(*) FROM records WHERE topic = 'orders-avro'`;
            return (await s.query(q)).rows[0]!.map(String).join(', ');
          } finally {
            s.close();
          }
        }
        const reader = mode === 'parquet' ? `read_parquet('${peers.parquet}')` : `read_json('${peers.ndjson}', format = 'newline_delimited')`;
        const instance = await DuckDBInstance.create(peerDb, duckdbResourceOptions());
        const conn = await instance.connect();
        try {
          await conn.run(`CREATE TABLE records AS SELECT * FROM ${reader}`);
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
  for (const mode of ['parquet', 'ndjson'] as const) if (checks.get(mode) !== checks.get('decoded')) throw new Error(`DuckDB from ${mode} answered ${checks.get(mode)}, ours ${checks.get('decoded')}`);
  const sec = (k: (typeof modes)[number]) => median(runs[k].map((r) => r.seconds));
  const cpuOf = (k: (typeof modes)[number]) => median(runs[k].map((r) => r.cpuSeconds));
  const decoded = sec('decoded');
  const row2 = (label: string, k: (typeof modes)[number], note: string) => [label, fmt3(sec(k)), fmt3(cpuOf(k)), fmtInt(N / sec(k)), note];
  printTable(
    [`SQL over 1 M records (median of ${opts.iterations})`, 'seconds', 'CPU s', 'records/s', 'note'],
    [
      row2('ours: build + decoding query', 'decoded', `${N / decoded >= 1_000_000 ? 'met' : 'NOT met'} (≥ 1,000,000/s); answer ${checks.get('decoded')}`),
      row2('ours: build without decoding (peer)', 'plain', `decoding adds ${fmt3(decoded - sec('plain'))} s (${fmt3(cpuOf('decoded') - cpuOf('plain'))} CPU s)`),
      row2('DuckDB: decoded rows from Parquet (peer)', 'parquet', `the floor: ours takes ${fmt3(decoded / sec('parquet'))}× its time`),
      row2('DuckDB: decoded rows from NDJSON (peer)', 'ndjson', `ours takes ${fmt3(decoded / sec('ndjson'))}× its time`),
    ],
    new Set([1, 2, 3]),
  );
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
