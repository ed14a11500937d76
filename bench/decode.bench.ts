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
 * The SQL build with decoding over a partition of the same values is `npm run bench -- decode-sql`.
 *
 * Data: generated in memory (Avro with avsc, Protobuf with protobufjs: bench data, not test fixtures). */
import avro from 'avsc';
import protobuf from 'protobufjs';
import { RecordDecoder } from '../src-main/engine/decode/record-decoder.ts';
import { SchemaRegistry } from '../src-main/engine/decode/schemas/schema-registry.ts';
import { frame, order, ORDER_AVRO_SCHEMA } from './avro-orders.ts';
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

function registry(): SchemaRegistry {
  const r = new SchemaRegistry();
  r.add({ id: 1, subject: 'orders-avro-value', version: 1, schemaType: 'AVRO', schema: JSON.stringify(ORDER_AVRO_SCHEMA), references: [], deleted: false, source: 'bench' });
  r.add({ id: 2, subject: 'orders-proto-value', version: 1, schemaType: 'PROTOBUF', schema: PROTO, references: [], deleted: false, source: 'bench' });
  return r;
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
}
