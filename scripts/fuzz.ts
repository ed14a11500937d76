/**
 * `npm run fuzz -- [--minutes N] [--iterations N] [--seed S] [--replay K] [--out DIR]`
 *
 * The mutation fuzzer of the read paths (issue 17). Seeds: partitions written by the engine's
 * encoder (every codec, keys, values, headers, transactional and control batches) and, when the
 * real broker data sets are beside the repository (`../shared/kafka-real-data`), their smallest
 * `.log` files. Each input is one seed mutated by a recipe drawn from a PRNG seeded with
 * `--seed` and the input's number: bit flips, truncations, insertions, a length or count field
 * (batchLength, lastOffsetDelta, recordsCount, baseOffset, a record's length varint) set to an
 * extreme with the CRC recomputed, and `.index` / checkpoint mutations.
 *
 * Every input runs on a worker thread of the API's pool (`src-main/api/core/worker-pool.ts`),
 * through open, deep scan, dump, verify, holes, fetch (both ways), time lookup, the repair plan
 * and the retention and compaction previews (`fuzz-worker.ts`). Counted: crashes (an error that
 * is not a typed `KlxError`), hangs (no answer in 5 s: the thread is terminated), typed errors
 * that name no file or byte position, and the process's peak RSS. Each failing input is kept in
 * `--out` with its recipe (`K.json`) and replays alone with `--replay K` (same seed).
 *
 * Exit code 1 when anything failed. CI runs a short fixed-seed campaign through vitest
 * (`test/fuzz-harness.test.ts`, a dozen inputs); long campaigns are run by hand.
 */
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync, existsSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { WorkerPool } from '../src-main/api/core/worker-pool.ts';
import { crc32c } from '../src-main/engine/format/crc.ts';
import { encodeBatch, type BatchSpec } from '../src-main/engine/format/record-batch.ts';
import type { OpOutcome } from './fuzz-worker.ts';
import { mulberry32 } from '../src-main/app/prng.ts';

const HERE = dirname(fileURLToPath(import.meta.url));
const REAL = resolve(HERE, '..', '..', 'shared', 'kafka-real-data');

interface Options {
  minutes: number;
  iterations: number;
  seed: number;
  replay: number | null;
  out: string;
  hangMs: number;
}

function parse(argv: string[]): Options {
  const o: Options = { minutes: 0, iterations: 0, seed: 1, replay: null, out: '', hangMs: 5000 };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const v = (): string => {
      const x = argv[++i];
      if (x === undefined) throw new Error(`${a} needs a value`);
      return x;
    };
    if (a === '--minutes') o.minutes = Number(v());
    else if (a === '--iterations') o.iterations = Number(v());
    else if (a === '--seed') o.seed = Number(v());
    else if (a === '--replay') o.replay = Number(v());
    else if (a === '--out') o.out = resolve(v());
    else if (a === '--hang-ms') o.hangMs = Number(v());
    else if (a === '--help' || a === '-h') {
      console.log('usage: npm run fuzz -- [--minutes N] [--iterations N] [--seed S] [--replay K] [--out DIR] [--hang-ms MS]');
      process.exit(0);
    } else throw new Error(`unknown argument ${a}`);
  }
  if (o.minutes <= 0 && o.iterations <= 0) o.iterations = 200;
  o.out ||= join(tmpdir(), `klx-fuzz-${o.seed}`);
  return o;
}

const prng = mulberry32;

/** The generated seeds: one `.log` each. */
function generatedSeeds(): { name: string; log: Buffer }[] {
  const ts = 1700000000000n;
  const recs = (n: number, big = 0) =>
    Array.from({ length: n }, (_, i) => ({ timestamp: ts + BigInt(i * 100), key: `k${i % 5}`, value: big ? 'v'.repeat(big) + i : `value-${i}`, headers: i % 3 === 0 ? [{ key: 'h', value: Buffer.from('x') }] : [] }));
  const seeds: { name: string; log: Buffer }[] = [];
  for (const compression of ['none', 'gzip', 'snappy', 'lz4', 'zstd'] as const) {
    let base = 0n;
    const batches: Buffer[] = [];
    for (let b = 0; b < 4; b++) {
      const spec: BatchSpec = { baseOffset: base, compression, records: recs(5 + b, b === 3 ? 200 : 0) };
      const buf = encodeBatch(spec);
      batches.push(buf);
      base += BigInt(buf.readInt32BE(23)) + 1n;
    }
    const txn = encodeBatch({ baseOffset: base, compression, isTransactional: true, producerId: 7n, producerEpoch: 0, baseSequence: 0, records: recs(3) });
    base += 3n;
    const marker = encodeBatch({ baseOffset: base, isControl: true, isTransactional: true, producerId: 7n, producerEpoch: 0, records: [{ timestamp: ts, key: Buffer.from([0, 0, 0, 0]), value: Buffer.from([0, 0, 0, 0, 0, 0]) }] });
    seeds.push({ name: `gen-${compression}`, log: Buffer.concat([...batches, txn, marker]) });
  }
  return seeds;
}

/** Up to `n` of the smallest `.log` files of the real broker data (when present). */
function realSeeds(n: number): { name: string; log: Buffer }[] {
  if (!existsSync(REAL)) return [];
  const found: { path: string; size: number }[] = [];
  const walk = (d: string, depth: number): void => {
    if (depth > 5) return;
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p, depth + 1);
      else if (e.name.endsWith('.log')) {
        const size = statSync(p).size;
        if (size > 61 && size < 256 * 1024) found.push({ path: p, size });
      }
    }
  };
  walk(REAL, 0);
  found.sort((a, b) => a.size - b.size || (a.path < b.path ? -1 : 1));
  const step = Math.max(1, Math.floor(found.length / n));
  return found.filter((_, i) => i % step === 0).slice(0, n).map((f) => ({ name: `real:${f.path.slice(REAL.length + 1)}`, log: readFileSync(f.path) }));
}

/** Batch starts of a v2 log (by its batchLength fields, stopping at the first that does not fit). */
function batchStarts(b: Buffer): number[] {
  const out: number[] = [];
  for (let p = 0; p + 61 <= b.length; ) {
    out.push(p);
    const len = b.readInt32BE(p + 8);
    if (len < 49 || p + 12 + len > b.length) break;
    p += 12 + len;
  }
  return out;
}

function fixCrc(b: Buffer, start: number): void {
  const len = b.readInt32BE(start + 8);
  const end = Math.min(b.length, start + 12 + Math.max(0, len));
  if (b[start + 16] === 2 && end > start + 21) b.writeUInt32BE(crc32c(b.subarray(start + 21, end)), start + 17);
}

const EXTREMES = [0, 1, -1, 0x7fffffff, -0x80000000, 0x7ffffffe, 48, 49, 61, 65536];

/** One mutated input and the recipe that made it. */
function mutate(seed: Buffer, rnd: () => number): { log: Buffer; index: Buffer | null; checkpoint: string | null; recipe: string[] } {
  let b = Buffer.from(seed);
  const recipe: string[] = [];
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  const rounds = 1 + Math.floor(rnd() * 3);
  let index: Buffer | null = null;
  let checkpoint: string | null = null;
  for (let r = 0; r < rounds; r++) {
    const kind = pick(['flip', 'truncate', 'insert', 'field', 'field', 'varint', 'zeros', 'index', 'checkpoint', 'duplicate']);
    const starts = batchStarts(b);
    if (kind === 'flip' && b.length > 0) {
      const n = 1 + Math.floor(rnd() * 8);
      for (let i = 0; i < n; i++) {
        const at = Math.floor(rnd() * b.length);
        b[at]! ^= 1 << Math.floor(rnd() * 8);
        recipe.push(`flip@${at}`);
      }
    } else if (kind === 'truncate' && b.length > 1) {
      const at = Math.floor(rnd() * b.length);
      b = b.subarray(0, at);
      recipe.push(`truncate@${at}`);
    } else if (kind === 'insert') {
      const at = Math.floor(rnd() * (b.length + 1));
      const ins = Buffer.from(Array.from({ length: 1 + Math.floor(rnd() * 64) }, () => Math.floor(rnd() * 256)));
      b = Buffer.concat([b.subarray(0, at), ins, b.subarray(at)]);
      recipe.push(`insert@${at}+${ins.length}`);
    } else if (kind === 'field' && starts.length > 0) {
      const s = pick(starts);
      const field = pick([
        ['batchLength', 8, 4],
        ['lastOffsetDelta', 23, 4],
        ['recordsCount', 57, 4],
        ['baseOffset', 0, 8],
        ['attributes', 21, 2],
        ['magic', 16, 1],
      ] as const);
      const v = pick(EXTREMES);
      if (field[2] === 8) b.writeBigInt64BE(pick([0n, -1n, (1n << 63n) - 1n, (1n << 63n) - 2n, 1n << 62n]), s + field[1]);
      else if (field[2] === 4) b.writeInt32BE(v | 0, s + field[1]);
      else if (field[2] === 2) b.writeInt16BE(Math.floor(rnd() * 65536) - 32768, s + field[1]);
      else b[s + field[1]] = Math.floor(rnd() * 256);
      if (s + field[1] + field[2] <= b.length) fixCrc(b, s);
      recipe.push(`${field[0]}@${s}=${v}+crc`);
    } else if (kind === 'varint' && starts.length > 0) {
      // The first record's length varint of an uncompressed batch, set large (5-byte varint), CRC recomputed.
      const s = pick(starts);
      if (s + 66 <= b.length && (b.readInt16BE(s + 21) & 7) === 0) {
        const big = pick([0x7fffffff, 0x0fffffff, 1 << 20]);
        const zz = (big << 1) >>> 0;
        b[s + 61] = (zz & 0x7f) | 0x80;
        b[s + 62] = ((zz >>> 7) & 0x7f) | 0x80;
        b[s + 63] = ((zz >>> 14) & 0x7f) | 0x80;
        b[s + 64] = ((zz >>> 21) & 0x7f) | 0x80;
        b[s + 65] = (zz >>> 28) & 0x0f;
        fixCrc(b, s);
        recipe.push(`recordLength@${s}=${big}+crc`);
      }
    } else if (kind === 'zeros') {
      const n = pick([12, 61, 4096, 1 << 20]);
      b = Buffer.concat([b, Buffer.alloc(n)]);
      recipe.push(`zeros+${n}`);
    } else if (kind === 'index') {
      index = Buffer.from(Array.from({ length: 8 * (1 + Math.floor(rnd() * 8)) }, () => Math.floor(rnd() * 256)));
      recipe.push(`index:${index.length}`);
    } else if (kind === 'checkpoint') {
      checkpoint = pick(['0\n1\nt 0 -5\n', '0\n1\nt 0 9223372036854775807\n', '0\n2\nt 0 3\n', 'x\n', '0\n1\nt 0 4\n']);
      recipe.push(`checkpoint:${JSON.stringify(checkpoint)}`);
    } else if (kind === 'duplicate' && starts.length > 0) {
      const s = pick(starts);
      const len = Math.max(0, Math.min(b.length - s, 12 + b.readInt32BE(s + 8)));
      b = Buffer.concat([b, b.subarray(s, s + len)]);
      recipe.push(`duplicate@${s}`);
    }
  }
  return { log: b, index, checkpoint, recipe };
}

interface Tally {
  inputs: number;
  ops: number;
  typed: number;
  crashes: number;
  hangs: number;
  unplaced: number;
  kept: number;
}

async function main(): Promise<void> {
  const o = parse(process.argv.slice(2));
  mkdirSync(o.out, { recursive: true });
  const seeds = [...generatedSeeds(), ...realSeeds(8)];
  const pool = new WorkerPool({ entry: 'fuzz-worker', near: import.meta.url, size: 1, cancelGraceMs: 20 });
  const work = mkdtempSync(join(tmpdir(), 'klx-fuzz-run-'));
  const trashDir = join(work, 'trash');
  const tally: Tally = { inputs: 0, ops: 0, typed: 0, crashes: 0, hangs: 0, unplaced: 0, kept: 0 };
  const byKind = new Map<string, number>();
  const started = Date.now();
  const deadline = o.minutes > 0 ? started + o.minutes * 60_000 : Infinity;
  let slowest = { ms: 0, k: -1 };
  let peakRssKb = 0;
  const sampler = setInterval(() => (peakRssKb = Math.max(peakRssKb, Math.round(process.memoryUsage.rss() / 1024))), 100);
  console.log(`fuzz: seed ${o.seed}, ${seeds.length} seeds (${seeds.filter((s) => s.name.startsWith('real:')).length} from real broker data), ${o.minutes > 0 ? `${o.minutes} min` : `${o.iterations} inputs`}, failing inputs kept in ${o.out}`);
  for (let k = o.replay ?? 0; ; k++) {
    if (o.replay !== null ? k > o.replay : o.iterations > 0 ? k >= o.iterations : Date.now() >= deadline) break;
    const rnd = prng((o.seed * 0x9e3779b1 + k) >>> 0);
    const seed = seeds[Math.floor(rnd() * seeds.length)]!;
    const m = mutate(seed.log, rnd);
    const dir = join(work, `t-${k % 4}`);
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    const logFile = join(dir, '00000000000000000000.log');
    writeFileSync(logFile, m.log);
    if (m.index) writeFileSync(join(dir, '00000000000000000000.index'), m.index);
    if (m.checkpoint) writeFileSync(join(work, 'log-start-offset-checkpoint'), m.checkpoint.replace('t 0 ', `t ${k % 4} `));
    else rmSync(join(work, 'log-start-offset-checkpoint'), { force: true });
    tally.inputs++;
    // A thread starts (seconds from TypeScript source under load) before the clock does.
    if (pool.stats().threads === 0) await pool.run('ping', null);
    const ac = new AbortController();
    const timer = setTimeout(() => ac.abort(), o.hangMs);
    const t0 = Date.now();
    let outcomes: OpOutcome[];
    try {
      outcomes = await pool.run<OpOutcome[]>('target', { dir, logFile, trashDir }, { signal: ac.signal, label: `input ${k}` });
    } catch (err) {
      outcomes = [{ op: 'all', outcome: 'crash', code: ac.signal.aborted ? 'hang' : 'thread', message: (err as Error).message }];
      if (ac.signal.aborted) tally.hangs++;
    } finally {
      clearTimeout(timer);
    }
    const ms = Date.now() - t0;
    if (ms > slowest.ms) slowest = { ms, k };
    let failed = false;
    for (const x of outcomes) {
      tally.ops++;
      if (x.outcome === 'typed') {
        tally.typed++;
        byKind.set(x.code!, (byKind.get(x.code!) ?? 0) + 1);
      }
      if (x.outcome === 'crash' && x.code !== 'hang') tally.crashes++;
      if (x.unplaced) tally.unplaced++;
      if (x.outcome === 'crash' || x.unplaced) failed = true;
    }
    if (failed || o.replay !== null) {
      const bad = outcomes.filter((x) => x.outcome === 'crash' || x.unplaced);
      if (failed) {
        tally.kept++;
        writeFileSync(join(o.out, `${k}.log`), m.log);
        writeFileSync(join(o.out, `${k}.json`), JSON.stringify({ seed: o.seed, input: k, from: seed.name, recipe: m.recipe, failures: bad }, null, 2));
      }
      if (tally.kept <= 20 || o.replay !== null) console.log(`input ${k} (${seed.name}; ${m.recipe.join(', ')}): ${JSON.stringify(o.replay !== null ? outcomes : bad)}`);
    }
    if (tally.inputs % 500 === 0) console.log(`  ${tally.inputs} inputs, ${((Date.now() - started) / 1000).toFixed(0)} s, crashes ${tally.crashes}, hangs ${tally.hangs}, unplaced ${tally.unplaced}, peak RSS ${(peakRssKb / 1024).toFixed(0)} MiB`);
  }
  clearInterval(sampler);
  peakRssKb = Math.max(peakRssKb, process.resourceUsage().maxRSS);
  await pool.shutdown();
  rmSync(work, { recursive: true, force: true });
  const secs = (Date.now() - started) / 1000;
  console.log(
    `fuzz: ${tally.inputs} inputs in ${secs.toFixed(0)} s (${(tally.inputs / secs).toFixed(1)}/s), ${tally.ops} operations: ${tally.crashes} crashes, ${tally.hangs} hangs (> ${o.hangMs} ms), ${tally.unplaced} typed errors without file/position, ${tally.typed} typed errors (${[...byKind].sort((a, b) => b[1] - a[1]).map(([c, n]) => `${c} ${n}`).join(', ')}); slowest input ${slowest.k} ${slowest.ms} ms; peak RSS ${(peakRssKb / 1024).toFixed(0)} MiB`,
  );
  process.exitCode = tally.crashes + tally.hangs + tally.unplaced > 0 ? 1 : 0;
}

await main();
