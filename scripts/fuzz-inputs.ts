/**
 * The fuzzer's inputs (`scripts/fuzz.ts`, issue 17): the seeds and the mutation recipes. Input K of
 * a campaign with seed S is fully determined by (S, K): the PRNG is mulberry32 seeded with
 * `S * 0x9e3779b1 + K`, so any input replays alone.
 *
 * Seeds: partitions written by the engine's encoder (every codec, keys, values, headers,
 * transactional and control batches) and, when the real broker data sets are beside the
 * repository (`../shared/kafka-real-data`), some of their small `.log` files.
 *
 * Mutations (1–3 rounds per input): bit flips, truncations, insertions, zero runs, a duplicated
 * batch; a header field (batchLength, lastOffsetDelta, recordsCount, baseOffset, attributes, magic,
 * producer fields) set to an extreme with the CRC recomputed; a record's varint (length, key or
 * value length, headers count) set to an extreme with the CRC recomputed; a mutation inside a
 * compressed records area (the records decompressed, flipped, cut or given an extreme varint, then
 * compressed again with the same codec, the batch length and CRC written anew); `.index` and
 * `.timeindex` files built from the log then mutated (entries swapped, offsets or positions set to
 * extremes, a partial entry); checkpoint files (log start, recovery point, cleaner offset,
 * leader-epoch) with extreme or malformed contents.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { mulberry32 } from '../src-main/app/prng.ts';
import { compress, compressionForId, decompress } from '../src-main/engine/format/compression.ts';
import { crc32c } from '../src-main/engine/format/crc.ts';
import { encodeBatch, type BatchSpec } from '../src-main/engine/format/record-batch.ts';

const HERE = dirname(fileURLToPath(import.meta.url));
const REAL = resolve(HERE, '..', '..', 'shared', 'kafka-real-data');

/** One seed partition: a `.log` file's bytes. */
export interface FuzzSeed {
  name: string;
  log: Buffer;
}

/** One input: the files of a partition folder and the recipe that made them. */
export interface FuzzInput {
  from: string;
  log: Buffer;
  index: Buffer | null;
  timeIndex: Buffer | null;
  /** Partition-folder checkpoint files (`leader-epoch-checkpoint`) by name. */
  partitionFiles: Record<string, string>;
  /** Log-directory checkpoint files by name, `TP` standing for `<topic> <partition>`. */
  dirFiles: Record<string, string>;
  recipe: string[];
}

/** The generated seeds: one `.log` each. */
export function generatedSeeds(): FuzzSeed[] {
  const ts = 1700000000000n;
  const recs = (n: number, big = 0) =>
    Array.from({ length: n }, (_, i) => ({ timestamp: ts + BigInt(i * 100), key: `k${i % 5}`, value: big ? 'v'.repeat(big) + i : `value-${i}`, headers: i % 3 === 0 ? [{ key: 'h', value: Buffer.from('x') }] : [] }));
  const seeds: FuzzSeed[] = [];
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

/** Up to `n` of the small `.log` files of the real broker data (when present), spread over sizes. */
export function realSeeds(n: number, maxBytes = 64 * 1024): FuzzSeed[] {
  if (!existsSync(REAL)) return [];
  const found: { path: string; size: number }[] = [];
  const walk = (d: string, depth: number): void => {
    if (depth > 5) return;
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p, depth + 1);
      else if (e.name.endsWith('.log')) {
        const size = statSync(p).size;
        if (size > 61 && size < maxBytes) found.push({ path: p, size });
      }
    }
  };
  walk(REAL, 0);
  found.sort((a, b) => a.size - b.size || (a.path < b.path ? -1 : 1));
  const step = Math.max(1, Math.floor(found.length / n));
  return found.filter((_, i) => i % step === 0).slice(0, n).map((f) => ({ name: `real:${f.path.slice(REAL.length + 1)}`, log: readFileSync(f.path) }));
}

/** Batch starts of a v2 log (by its batchLength fields, stopping at the first that does not fit). */
export function batchStarts(b: Buffer): number[] {
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
const VARINT_EXTREMES = [0, -1, -2, 0x7fffffff, -0x80000000, 1 << 20, 0x0fffffff];

/** A zigzag varint (Kafka's `ByteUtils.writeVarint`) of a 32-bit value. */
function varint(v: number): Buffer {
  let zz = ((v << 1) ^ (v >> 31)) >>> 0;
  const out: number[] = [];
  while (zz >= 0x80) {
    out.push((zz & 0x7f) | 0x80);
    zz >>>= 7;
  }
  out.push(zz);
  return Buffer.from(out);
}

/** Reads a zigzag varint at `p`: [value, bytes], or null past the end or over 5 bytes. */
function readVarint(b: Buffer, p: number): [number, number] | null {
  let v = 0;
  for (let i = 0; i < 5; i++) {
    if (p + i >= b.length) return null;
    const x = b[p + i]!;
    v |= (x & 0x7f) << (7 * i);
    if ((x & 0x80) === 0) return [(v >>> 1) ^ -(v & 1), i + 1];
  }
  return null;
}

/**
 * The varint fields of the first record of a records area: [position, length] of its length,
 * (attributes byte skipped) timestamp delta, offset delta, key length, value length (when reachable).
 */
function recordVarints(area: Buffer): [number, number][] {
  const out: [number, number][] = [];
  let p = 0;
  const take = (): boolean => {
    const v = readVarint(area, p);
    if (!v) return false;
    out.push([p, v[1]]);
    p += v[1];
    return true;
  };
  if (!take()) return out;
  p += 1; // attributes
  if (!take() || !take() || !take()) return out;
  const keyLen = readVarint(area, out[3]![0])![0];
  if (keyLen > 0) p += keyLen;
  take();
  return out;
}

/** Replaces `area[at, at+len)` by `by`. */
function splice(area: Buffer, at: number, len: number, by: Buffer): Buffer {
  return Buffer.concat([area.subarray(0, at), by, area.subarray(at + len)]);
}

/** A batch with a new records area: batchLength and CRC written anew. */
function withArea(batch: Buffer, area: Buffer): Buffer {
  const b = Buffer.concat([batch.subarray(0, 61), area]);
  b.writeInt32BE(b.length - 12, 8);
  b.writeUInt32BE(crc32c(b.subarray(21)), 17);
  return b;
}

const pickOf = (rnd: () => number) => <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;

/** A mutation of the first record's varints or bytes inside `area` (decompressed records). */
function mutateRecords(area: Buffer, rnd: () => number, recipe: string[]): Buffer {
  const pick = pickOf(rnd);
  const kind = pick(['varint', 'varint', 'flip', 'cut', 'grow'] as const);
  const fields = recordVarints(area);
  if (kind === 'varint' && fields.length > 0) {
    const fi = Math.floor(rnd() * fields.length);
    const [at, len] = fields[fi]!;
    const v = pick(VARINT_EXTREMES);
    recipe.push(`record.${['length', 'timestampDelta', 'offsetDelta', 'keyLength', 'valueLength'][fi]}=${v}`);
    return splice(area, at, len, varint(v));
  }
  if (kind === 'flip' && area.length > 0) {
    const out = Buffer.from(area);
    const at = Math.floor(rnd() * out.length);
    out[at]! ^= 1 << Math.floor(rnd() * 8);
    recipe.push(`flip@${at}`);
    return out;
  }
  if (kind === 'cut' && area.length > 1) {
    const at = Math.floor(rnd() * area.length);
    recipe.push(`cut@${at}`);
    return area.subarray(0, at);
  }
  const n = pick([1, 17, 4096]);
  recipe.push(`grow+${n}`);
  return Buffer.concat([area, Buffer.alloc(n, 0x01)]);
}

function indexFor(log: Buffer, rnd: () => number, time: boolean): Buffer {
  const starts = batchStarts(log);
  const entries: Buffer[] = [];
  for (const s of starts) {
    if (rnd() < 0.5) continue;
    const e = Buffer.alloc(time ? 12 : 8);
    const rel = Number(log.readBigInt64BE(s)) + log.readInt32BE(s + 23);
    if (time) {
      e.writeBigInt64BE(s + 35 <= log.length - 8 ? log.readBigInt64BE(s + 35) : 0n, 0);
      e.writeInt32BE(rel | 0, 8);
    } else {
      e.writeInt32BE(rel | 0, 0);
      e.writeInt32BE(s, 4);
    }
    entries.push(e);
  }
  return Buffer.concat(entries);
}

function mutateIndex(idx: Buffer, rnd: () => number, time: boolean, recipe: string[]): Buffer {
  const pick = pickOf(rnd);
  const size = time ? 12 : 8;
  const n = Math.floor(idx.length / size);
  const kind = pick(['extreme', 'swap', 'partial', 'random', 'preallocated'] as const);
  const name = time ? 'timeindex' : 'index';
  if (kind === 'extreme' && n > 0) {
    const out = Buffer.from(idx);
    const at = Math.floor(rnd() * n) * size + (time ? pick([0, 8]) : pick([0, 4]));
    if (time && at % size === 0) out.writeBigInt64BE(pick([-1n, 0n, (1n << 63n) - 1n, -(1n << 63n)]), at);
    else out.writeInt32BE(pick(EXTREMES) | 0, at);
    recipe.push(`${name}:extreme@${at}`);
    return out;
  }
  if (kind === 'swap' && n > 1) {
    const out = Buffer.from(idx);
    const a = Math.floor(rnd() * n);
    const b = (a + 1) % n;
    idx.copy(out, a * size, b * size, b * size + size);
    idx.copy(out, b * size, a * size, a * size + size);
    recipe.push(`${name}:swap ${a} ${b}`);
    return out;
  }
  if (kind === 'partial') {
    recipe.push(`${name}:partial`);
    return Buffer.concat([idx, Buffer.alloc(1 + Math.floor(rnd() * (size - 1)), 0x7f)]);
  }
  if (kind === 'preallocated') {
    recipe.push(`${name}:preallocated`);
    return Buffer.concat([idx, Buffer.alloc(size * 64)]);
  }
  const out = Buffer.from(Array.from({ length: size * (1 + Math.floor(rnd() * 8)) }, () => Math.floor(rnd() * 256)));
  recipe.push(`${name}:random ${out.length}`);
  return out;
}

const CHECKPOINT_VALUES = ['-5', '0', '3', '9223372036854775807', '-9223372036854775808', '9223372036854775808', '1e3', ''];

/** One mutated input; `rnd` is the input's PRNG. */
export function mutate(seed: FuzzSeed, rnd: () => number): FuzzInput {
  let b = Buffer.from(seed.log);
  const recipe: string[] = [];
  const pick = pickOf(rnd);
  const rounds = 1 + Math.floor(rnd() * 3);
  let index: Buffer | null = null;
  let timeIndex: Buffer | null = null;
  const partitionFiles: Record<string, string> = {};
  const dirFiles: Record<string, string> = {};
  for (let r = 0; r < rounds; r++) {
    const kind = pick(['flip', 'truncate', 'insert', 'field', 'field', 'varint', 'compressed', 'compressed', 'zeros', 'index', 'timeindex', 'checkpoint', 'duplicate'] as const);
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
        ['firstTimestamp', 27, 8],
        ['producerId', 43, 8],
        ['baseSequence', 53, 4],
        ['attributes', 21, 2],
        ['magic', 16, 1],
      ] as const);
      let shown: string;
      if (field[2] === 8) {
        const v = pick([0n, -1n, (1n << 63n) - 1n, (1n << 63n) - 2n, 1n << 62n, -(1n << 63n)]);
        b.writeBigInt64BE(v, s + field[1]);
        shown = String(v);
      } else if (field[2] === 4) {
        const v = pick(EXTREMES);
        b.writeInt32BE(v | 0, s + field[1]);
        shown = String(v);
      } else if (field[2] === 2) {
        const v = Math.floor(rnd() * 65536) - 32768;
        b.writeInt16BE(v, s + field[1]);
        shown = String(v);
      } else {
        const v = Math.floor(rnd() * 256);
        b[s + field[1]] = v;
        shown = String(v);
      }
      if (s + field[1] + field[2] <= b.length) fixCrc(b, s);
      recipe.push(`${field[0]}@${s}=${shown}+crc`);
    } else if (kind === 'varint' && starts.length > 0) {
      // A varint of the first record of an uncompressed batch, set to an extreme, length and CRC anew.
      const s = pick(starts);
      const end = Math.min(b.length, s + 12 + b.readInt32BE(s + 8));
      if (s + 61 < end && (b.readInt16BE(s + 21) & 7) === 0) {
        const sub: string[] = [];
        const batch = withArea(b.subarray(s, s + 61), mutateRecords(b.subarray(s + 61, end), rnd, sub));
        b = Buffer.concat([b.subarray(0, s), batch, b.subarray(end)]);
        recipe.push(`records@${s}:${sub.join(',')}+crc`);
      }
    } else if (kind === 'compressed' && starts.length > 0) {
      // Inside a compressed records area: decompress, mutate, compress again with the same codec.
      const cs = starts.filter((s) => b[s + 16] === 2 && (b.readInt16BE(s + 21) & 7) >= 1 && (b.readInt16BE(s + 21) & 7) <= 4);
      if (cs.length > 0) {
        const s = pick(cs);
        const end = Math.min(b.length, s + 12 + b.readInt32BE(s + 8));
        const codec = compressionForId(b.readInt16BE(s + 21) & 7, 2);
        try {
          const plain = decompress(codec, b.subarray(s + 61, end), 2, 1 << 24);
          const sub: string[] = [];
          const batch = withArea(b.subarray(s, s + 61), compress(codec, mutateRecords(plain, rnd, sub)));
          b = Buffer.concat([b.subarray(0, s), batch, b.subarray(end)]);
          recipe.push(`${codec}@${s}:${sub.join(',')}+recompressed+crc`);
        } catch {
          recipe.push(`${codec}@${s}:undecodable`);
        }
      }
    } else if (kind === 'zeros') {
      const n = pick([12, 61, 4096, 1 << 16]);
      b = Buffer.concat([b, Buffer.alloc(n)]);
      recipe.push(`zeros+${n}`);
    } else if (kind === 'index') {
      index = mutateIndex(indexFor(b, rnd, false), rnd, false, recipe);
    } else if (kind === 'timeindex') {
      timeIndex = mutateIndex(indexFor(b, rnd, true), rnd, true, recipe);
    } else if (kind === 'checkpoint') {
      const file = pick(['log-start-offset-checkpoint', 'recovery-point-offset-checkpoint', 'cleaner-offset-checkpoint', 'replication-offset-checkpoint', 'leader-epoch-checkpoint'] as const);
      const v = pick(CHECKPOINT_VALUES);
      const shape = pick(['ok', 'count', 'version', 'junk'] as const);
      const body = file === 'leader-epoch-checkpoint' ? `${pick(['0', '-1', '0'])} ${v}` : `TP ${v}`;
      const text = shape === 'ok' ? `0\n1\n${body}\n` : shape === 'count' ? `0\n${pick(['2', '-1', '2147483648'])}\n${body}\n` : shape === 'version' ? `7\n1\n${body}\n` : `0\n1\n${body} extra\nx\n`;
      if (file === 'leader-epoch-checkpoint') partitionFiles[file] = text;
      else dirFiles[file] = text;
      recipe.push(`${file}:${JSON.stringify(text)}`);
    } else if (kind === 'duplicate' && starts.length > 0) {
      const s = pick(starts);
      const len = Math.max(0, Math.min(b.length - s, 12 + b.readInt32BE(s + 8)));
      b = Buffer.concat([b, b.subarray(s, s + len)]);
      recipe.push(`duplicate@${s}`);
    }
  }
  return { from: seed.name, log: b, index, timeIndex, partitionFiles, dirFiles, recipe };
}

/** Input `k` of a campaign seeded with `seed`. */
export function inputAt(seeds: readonly FuzzSeed[], seed: number, k: number): FuzzInput {
  const rnd = mulberry32((seed * 0x9e3779b1 + k) >>> 0);
  return mutate(seeds[Math.floor(rnd() * seeds.length)]!, rnd);
}
