/**
 * The decode layer (issue 11): 1,000,000 Confluent-framed Avro values and 1,000,000 Confluent-framed
 * Protobuf values decoded through the layer (`RecordDecoder`, format `auto` and the chosen
 * `confluent` format) and, in the same run on the same bytes, with `avsc` / `protobufjs` directly.
 * Target: the layer's overhead over the raw library ≤ 25 %.
 *
 * What each side does per value (equivalent work, checked before timing):
 * - raw Avro: `type.decode(bytes, 5)` (skip the 5-byte framing) → avsc's record object;
 * - raw Protobuf: `type.toObject(type.decode(bytes.subarray(6)), { longs: String, enums: String,
 *   bytes: String, json: true })` (framing + message index 0) → the proto3 JSON object;
 * - layer: `decoder.decode(topic, 'value', bytes)` → a `Decoded` whose `json` is that same object
 *   (checked: equal JSON text for every 997th value, and equal sums over every value).
 * Neither side makes JSON text: the layer's `jsonText` is computed on first use, which this bench
 * never asks for. Both sides keep each result (a 1,024-slot ring), as a caller does: otherwise V8
 * may drop the raw library's result objects (escape analysis) but not the layer's.
 *
 * Measurement, for a shared 2-core machine:
 * - long runs: each timed run decodes the 1 M values `passes` times, `passes` chosen in the warm-up
 *   so that the raw library's run takes ≥ 1 CPU s; every case does the same passes. Per round the three
 *   cases of a format run back to back in a rotating order (round r starts with case r mod 3), a GC
 *   before each. Printed: median wall and CPU seconds (CPU: this process, user + system, all threads,
 *   so GC helper threads count) with their min–max, and the overhead as the median (min–max) of the
 *   per-round ratios layer/raw (each ratio from runs seconds apart, under the same load).
 * - short pairs: 10 × iterations blocks of 100,000 values, each block decoded raw, chosen and auto
 *   back to back (rotating order); the median and interquartile range of the per-block CPU-time
 *   ratios. Short neighbours see the same load, so this figure moves little with the load
 *   (a stand-in for an instruction count, which `valgrind --tool=callgrind` gives but this bench does
 *   not need).
 * The 1-minute load average is printed before and after each format.
 *
 * A third table decodes the Avro values as the engine's records hold them, Uint8Array views (not
 * Buffers): there avsc needs a Buffer made per value, the layer reads the views without one.
 * That table is for information; the target is judged on the Buffer tables, where both sides get
 * the Buffers avsc and protobufjs take.
 *
 * The SQL build with decoding over a partition of the same values is `npm run bench -- decode-sql`.
 *
 * Data: generated in memory (Avro with avsc, Protobuf with protobufjs: bench data, not test fixtures). */
import avro from 'avsc';
import protobuf from 'protobufjs';
import { RecordDecoder } from '../src-main/engine/decode/record-decoder.ts';
import { toJsonText } from '../src-main/engine/decode/json-text.ts';
import { SchemaRegistry } from '../src-main/engine/decode/schemas/schema-registry.ts';
import { frame, order, ORDER_AVRO_SCHEMA } from './avro-orders.ts';
import { collectGarbage, fmt3, fmtInt, loadLine, median, printTable, progress, timeIt, type BenchOptions } from './lib.ts';

const N = 1_000_000;
/** Values per short block (about 20 ms of Avro, 100 ms of Protobuf). */
const BLOCK = 100_000;
/** The raw library's timed run lasts at least this long (seconds). */
const MIN_RUN_S = 1;
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

/** Decodes `values[from..to)`, keeps each result, returns the sum of the `qty` fields (the results check). */
type Decode = (values: Buffer[], from: number, to: number) => number;

interface Case {
  label: string;
  run: Decode;
}

const sink: unknown[] = new Array(1024);

/** `[min–max]` of xs with 3 significant digits. */
function range(xs: number[], f: (x: number) => string): string {
  return `${f(Math.min(...xs))}–${f(Math.max(...xs))}`;
}

function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  const at = (s.length - 1) * q;
  const lo = Math.floor(at);
  return s[lo]! + (s[Math.min(lo + 1, s.length - 1)]! - s[lo]!) * (at - lo);
}

const pct = (r: number) => `${((r - 1) * 100).toFixed(1)} %`;
const pctRange = (rs: number[]) => `${((Math.min(...rs) - 1) * 100).toFixed(0)}…${((Math.max(...rs) - 1) * 100).toFixed(0)}`;
const verdict = (r: number) => (r - 1 <= 0.25 ? 'met' : 'NOT met');

/** Runs `cases[0]` (the raw library, the peer) and the layer cases of one format; prints their tables. */
async function measure(format: string, values: Buffer[], cases: Case[], opts: BenchOptions): Promise<void> {
  console.log(`\n${format}: ${loadLine()}`);
  // Results first: every case sums the same, and the layer's JSON equals the raw library's.
  const sums = cases.map((c) => c.run(values, 0, N));
  for (let i = 1; i < cases.length; i++) if (sums[i] !== sums[0]) throw new Error(`${cases[i]!.label}: sum ${sums[i]} differs from the raw library's ${sums[0]}`);
  // Warm-up (also picks the passes so that the raw library's run takes ≥ MIN_RUN_S of CPU time:
  // wall time on a loaded machine would pick too few).
  const passesOf = (secondsPerPass: number) => Math.max(1, Math.ceil(MIN_RUN_S / secondsPerPass));
  let passes = 1;
  for (const [i, c] of cases.entries()) {
    collectGarbage();
    progress(`${format}: ${c.label} (warm-up)`);
    const t = await timeIt(() => c.run(values, 0, N));
    if (i === 0) passes = passesOf(t.cpuSeconds);
  }
  const runAll = (c: Case) => () => {
    let s = 0;
    for (let p = 0; p < passes; p++) s += c.run(values, 0, N);
    return s;
  };
  const wall = cases.map(() => [] as number[]);
  const cpu = cases.map(() => [] as number[]);
  for (let round = 0; round < opts.iterations; round++) {
    for (let k = 0; k < cases.length; k++) {
      const i = (round + k) % cases.length;
      collectGarbage();
      progress(`${format}: ${cases[i]!.label} #${round + 1}`);
      const t = await timeIt(runAll(cases[i]!));
      wall[i]!.push(t.seconds);
      cpu[i]!.push(t.cpuSeconds);
    }
  }
  // Short blocks, the three cases back to back per block.
  const blocks = opts.iterations * 10;
  const blockCpu = cases.map(() => [] as number[]);
  const blockWall = cases.map(() => [] as number[]);
  collectGarbage();
  for (let b = 0; b < blocks; b++) {
    if (b % 10 === 0) progress(`${format}: short blocks ${b}/${blocks}`);
    const from = (b * BLOCK) % N;
    for (let k = 0; k < cases.length; k++) {
      const i = (b + k) % cases.length;
      const c0 = process.cpuUsage();
      const t0 = process.hrtime.bigint();
      cases[i]!.run(values, from, from + BLOCK);
      const w = Number(process.hrtime.bigint() - t0) / 1e9;
      const c = process.cpuUsage(c0);
      blockWall[i]!.push(w);
      blockCpu[i]!.push((c.user + c.system) / 1e6);
    }
  }
  progress('');
  const values1M = fmtInt(passes * N);
  const rows = cases.map((c, i) => {
    const rw = wall[i]!.map((w, r) => w / wall[0]![r]!);
    const rc = cpu[i]!.map((w, r) => w / cpu[0]![r]!);
    return [
      c.label,
      fmt3(median(wall[i]!)),
      range(wall[i]!, fmt3),
      fmt3(median(cpu[i]!)),
      range(cpu[i]!, fmt3),
      fmtInt((passes * N) / median(cpu[i]!)),
      i === 0 ? '' : `${pct(median(rw))} (${pctRange(rw)})`,
      i === 0 ? '' : `${pct(median(rc))} (${pctRange(rc)})`,
      i === 0 ? 'peer' : `wall ${verdict(median(rw))}, CPU ${verdict(median(rc))}`,
    ];
  });
  printTable([`${format}: ${values1M} values per run (${passes} × 1 M), ${opts.iterations} rounds`, 'wall s', '(min–max)', 'CPU s', '(min–max)', 'values/CPU s', 'overhead wall (min…max)', 'overhead CPU (min…max)', '≤ 25 %'], rows, new Set([1, 2, 3, 4, 5, 6, 7]));
  const pairRows = cases.slice(1).map((c, j) => {
    const i = j + 1;
    const rc = blockCpu[i]!.map((x, b) => x / blockCpu[0]![b]!);
    const rw = blockWall[i]!.map((x, b) => x / blockWall[0]![b]!);
    return [c.label, pct(median(rc)), `${pct(quantile(rc, 0.25))} … ${pct(quantile(rc, 0.75))}`, pct(median(rw)), `${pct(quantile(rw, 0.25))} … ${pct(quantile(rw, 0.75))}`, verdict(median(rc))];
  });
  printTable([`${format}: ${blocks} blocks of ${fmtInt(BLOCK)} values, next to the raw library`, 'overhead CPU', '(quartiles)', 'overhead wall', '(quartiles)', '≤ 25 %'], pairRows, new Set([1, 2, 3, 4]));
  console.log(`${format} done: ${loadLine()}`);
}

/** Every 997th value: the layer's JSON text equals the raw library's, and it decoded without error. */
function checkSame(label: string, values: Buffer[], raw: (b: Buffer) => unknown, layer: (b: Buffer) => { json: unknown; ok: boolean; error?: string }): void {
  for (let n = 0; n < N; n += 997) {
    const d = layer(values[n]!);
    const a = toJsonText(raw(values[n]!));
    const b = d.ok && d.error === undefined ? toJsonText(d.json) : `error: ${d.error}`;
    if (a !== b) throw new Error(`${label}, value ${n}: the layer gave ${b}, the raw library ${a}`);
  }
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
  const rawAvro: Decode = (values, from, to) => {
    let s = 0;
    for (let n = from; n < to; n++) {
      const v = avroType.decode(values[n]!, 5).value as { qty: number };
      sink[n & 1023] = v;
      s += v.qty;
    }
    return s;
  };
  const rawPb: Decode = (values, from, to) => {
    let s = 0;
    for (let n = from; n < to; n++) {
      const v = pbType.toObject(pbType.decode(values[n]!.subarray(6)), conv) as { qty?: number };
      sink[n & 1023] = v;
      s += v.qty ?? 0;
    }
    return s;
  };
  const auto = new RecordDecoder({ schemas: registry() });
  const chosen = new RecordDecoder({ schemas: registry(), choices: { 'orders-avro': { value: 'confluent' }, 'orders-proto': { value: 'confluent' } } });
  const layer =
    (dec: RecordDecoder, topic: string): Decode =>
    (values, from, to) => {
      let s = 0;
      for (let n = from; n < to; n++) {
        const d = dec.decode(topic, 'value', values[n]!, null);
        sink[n & 1023] = d;
        s += (d.json as { qty?: number }).qty ?? 0;
      }
      return s;
    };
  checkSame('Avro, chosen', avroValues, (b) => avroType.decode(b, 5).value, (b) => chosen.decode('orders-avro', 'value', b, null));
  checkSame('Avro, auto', avroValues, (b) => avroType.decode(b, 5).value, (b) => auto.decode('orders-avro', 'value', b, null));
  checkSame('Protobuf, chosen', pbValues, (b) => pbType.toObject(pbType.decode(b.subarray(6)), conv), (b) => chosen.decode('orders-proto', 'value', b, null));
  checkSame('Protobuf, auto', pbValues, (b) => pbType.toObject(pbType.decode(b.subarray(6)), conv), (b) => auto.decode('orders-proto', 'value', b, null));
  await measure('Avro', avroValues, [
    { label: 'avsc directly', run: rawAvro },
    { label: 'layer, format confluent', run: layer(chosen, 'orders-avro') },
    { label: 'layer, auto', run: layer(auto, 'orders-avro') },
  ], opts);
  // The same Avro values as the engine's records hold them: Uint8Array views (of 8 KiB slabs here,
  // of segment chunks there). avsc reads Buffers only, so the raw side wraps each view in a Buffer
  // (as the layer did before it read views inside one Buffer per ArrayBuffer).
  const avroViews = avroValues.map((b) => new Uint8Array(b.buffer, b.byteOffset, b.byteLength)) as unknown as Buffer[];
  const rawAvroViews: Decode = (values, from, to) => {
    let s = 0;
    for (let n = from; n < to; n++) {
      const b = values[n]!;
      const v = avroType.decode(Buffer.from(b.buffer, b.byteOffset, b.byteLength), 5).value as { qty: number };
      sink[n & 1023] = v;
      s += v.qty;
    }
    return s;
  };
  checkSame('Avro views, chosen', avroViews, (b) => avroType.decode(Buffer.from(b.buffer, b.byteOffset, b.byteLength), 5).value, (b) => chosen.decode('orders-avro', 'value', b, null));
  await measure('Avro as Uint8Array views', avroViews, [
    { label: 'avsc directly (Buffer.from per view)', run: rawAvroViews },
    { label: 'layer, format confluent', run: layer(chosen, 'orders-avro') },
    { label: 'layer, auto', run: layer(auto, 'orders-avro') },
  ], opts);
  await measure('Protobuf', pbValues, [
    { label: 'protobufjs directly', run: rawPb },
    { label: 'layer, format confluent', run: layer(chosen, 'orders-proto') },
    { label: 'layer, auto', run: layer(auto, 'orders-proto') },
  ], opts);
}
