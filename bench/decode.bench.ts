/**
 * The decode layer (issue 11): 1,000,000 Confluent-framed Avro values and 1,000,000 Confluent-framed
 * Protobuf values decoded through the layer (`RecordDecoder`, format `auto` and the chosen
 * `confluent` format) and, in the same run on the same bytes, with `avsc` / `protobufjs` directly
 * (skip the 5-byte framing and the message index, decode, convert to the same plain object).
 * Target: the layer's overhead over the raw library ≤ 25 %.
 *
 * Then the SQL build with decoding (`records.value_decoded` etc.) over a partition of the same 1 M
 * Avro records, with `_schemas-0` beside it, against the same build without decoding.
 * Target: ≥ 1,000,000 records/s with decoding.
 *
 * Data: generated in memory (Avro with avsc, Protobuf with protobufjs: bench data, not test
 * fixtures), the partition once into bench/.data/decode-avro-1m/ (reused while unchanged).
 */
import { rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import avro from 'avsc';
import protobuf from 'protobufjs';
import { RecordDecoder } from '../src-main/engine/decode/record-decoder.ts';
import { SchemaRegistry } from '../src-main/engine/decode/schemas/schema-registry.ts';
import { SqlSession } from '../src-main/engine/sql/sql-session.ts';
import { ensureOrdersLog, frame, order, ORDER_AVRO_SCHEMA } from './avro-orders.ts';
import { collectGarbage, fmt3, fmtInt, median, printTable, progress, timeIt, type BenchOptions } from './lib.ts';

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
  const sums = new Map<string, number>();
  for (let i = 0; i <= opts.iterations; i++) {
    // Interleaved so both sides of a ratio see the same machine load.
    for (const [label, fn] of cases) {
      collectGarbage();
      progress(`${label} ${i === 0 ? '(warm-up)' : `#${i}`}`);
      const t = await timeIt(fn);
      sums.set(label, t.result);
      if (i > 0) times.set(label, [...(times.get(label) ?? []), t.seconds]);
    }
  }
  progress('');
  const avroSum = sums.get('Avro: avsc directly');
  const pbSum = sums.get('Protobuf: protobufjs directly');
  for (const [label] of cases) if (sums.get(label) !== (label.startsWith('Avro') ? avroSum : pbSum)) throw new Error(`${label}: results differ from the raw library`);
  const m = (l: string) => median(times.get(l)!);
  const row = (label: string, peer: string) => {
    const over = m(label) / m(peer) - 1;
    return [label, fmt3(m(label)), fmtInt(N / m(label)), label === peer ? '' : `${(over * 100).toFixed(1)} %`, label === peer ? 'peer' : over <= 0.25 ? 'met (≤ 25 %)' : 'NOT met (≤ 25 %)'];
  };
  printTable(
    [`decode 1 M values (median of ${opts.iterations})`, 'seconds', 'values/s', 'overhead', 'target'],
    [row('Avro: avsc directly', 'Avro: avsc directly'), row('Avro: layer, format confluent', 'Avro: avsc directly'), row('Avro: layer, auto', 'Avro: avsc directly'), row('Protobuf: protobufjs directly', 'Protobuf: protobufjs directly'), row('Protobuf: layer, format confluent', 'Protobuf: protobufjs directly'), row('Protobuf: layer, auto', 'Protobuf: protobufjs directly')],
    new Set([1, 2, 3]),
  );

  // SQL build with and without decoding over the same partition.
  const logDir = ensurePartition(opts.dataDir, avroValues);
  const logBytes = statSync(join(logDir, 'orders-avro-0', '00000000000000000000.log')).size;
  console.log(`\nSQL data: ${fmtInt(N)} framed Avro records, ${fmt3(logBytes / 2 ** 20)} MiB of .log, _schemas-0 beside it (${logDir})`);
  const cacheDir = join(opts.dataDir, 'decode-sql-cache');
  const build = { plain: [] as number[], decoded: [] as number[] };
  let check: unknown = null;
  for (let i = 0; i <= opts.iterations; i++) {
    for (const mode of ['plain', 'decoded'] as const) {
      rmSync(cacheDir, { recursive: true, force: true });
      collectGarbage();
      progress(`SQL build ${mode} ${i === 0 ? '(warm-up)' : `#${i}`}`);
      const t = await timeIt(async () => {
        const s = await SqlSession.open(logDir, { cacheDir, decode: mode === 'decoded' ? {} : false });
        try {
          return mode === 'decoded' ? (await s.query(`SELECT count(*) FILTER (WHERE value_format = 'confluent' AND schema_id = 1 AND decode_error IS NULL), sum((value_decoded->>'qty')::INTEGER) FROM records WHERE topic = 'orders-avro'`)).rows[0] : null;
        } finally {
          s.close();
        }
      });
      if (mode === 'decoded') check = t.result;
      if (i > 0) build[mode].push(t.seconds);
    }
  }
  progress('');
  rmSync(cacheDir, { recursive: true, force: true });
  const plain = median(build.plain);
  const decoded = median(build.decoded);
  printTable(
    [`SQL build of 1 M records (median of ${opts.iterations})`, 'seconds', 'records/s', 'note'],
    [
      ['without decoding (peer)', fmt3(plain), fmtInt(N / plain), ''],
      ['with decoding', fmt3(decoded), fmtInt(N / decoded), `${N / decoded >= 1_000_000 ? 'met' : 'NOT met'} (≥ 1,000,000/s); check: ${String(check)}`],
    ],
    new Set([1, 2]),
  );
}
