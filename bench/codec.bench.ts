/**
 * Record-batch codec: decode + CRC of every v2 batch and record of a `.log` segment, ours
 * (`scanLogFile`, deep, verifyCrc) against kafkajs's own RecordBatch decoder, in the same run.
 *
 * Data (generated once into bench/.data/, reused while the parameters are unchanged): a segment of
 * uncompressed batches (default 256 MiB) of 100 records × 200 bytes (16-byte key, ~175-byte
 * printable JSON-ish value, no headers, timestamps spread over a ~100 ms linger, an idempotent
 * producer), and a second segment holding the same records in gzip batches. Both are written with
 * the project's `encodeBatch`.
 *
 * Both decoders read the file through the same `FileSource` in the same 1 MiB windows.
 */
import { existsSync, mkdirSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { crc32c } from '../src-main/engine/format/crc.ts';
import { DEFAULT_CHUNK_SIZE, FileSource, scanLogFile } from '../src-main/engine/format/log-reader.ts';
import { encodeBatch, type RecordSpec } from '../src-main/engine/format/record-batch.ts';
import { V2_HEADER_SIZE, type Compression } from '../src-main/engine/format/types.ts';
import { sizeOfVarint, sizeOfVarlong } from '../src-main/engine/format/varint.ts';
import { ALNUM, cachedMeta, ChunkedFileWriter, collectGarbage, fmt3, fmtInt, median, prng, printTable, progress, timeIt, type BenchOptions } from './lib.ts';

// ---------------------------------------------------------------------------------------------
// kafkajs internals (CommonJS, untyped): the decoder its Fetch path uses for magic-2 batches.

const require = createRequire(import.meta.url);
interface KafkajsRecord {
  key: Buffer | null;
  value: Buffer | null;
  offset: string;
  timestamp: string;
  headers: Record<string, unknown>;
}
type KafkajsDecoder = new (buf: Buffer) => object;
const KafkajsDecoder = require('kafkajs/src/protocol/decoder') as KafkajsDecoder;
const kafkajsDecodeRecordBatch = require('kafkajs/src/protocol/recordBatch/v0/decoder') as (decoder: object) => Promise<{ records: KafkajsRecord[] }>;
const KAFKAJS_VERSION = (require('kafkajs/package.json') as { version: string }).version;

// ---------------------------------------------------------------------------------------------
// Data

const DEFAULT_SIZE_MB = 256;

interface DataParams {
  /** Bump when the generator changes so old files are regenerated. */
  generator: number;
  sizeMb: number;
  recordsPerBatch: number;
  recordSize: number;
  keySize: number;
  distinctKeys: number;
  lingerMs: number;
  seed: number;
}

interface DataMeta {
  params: DataParams;
  batches: number;
  records: number;
  files: Record<'none' | 'gzip', { path: string; size: number }>;
}

const EVENTS = ['page_view', 'click', 'add_to_cart', 'checkout', 'search', 'login', 'logout', 'scroll'];

/** Bytes a record with these fields takes in the records area (length varint included). */
function recordSize(tsDelta: number, offsetDelta: number, keyLen: number, valueLen: number): number {
  const body = 1 + sizeOfVarlong(BigInt(tsDelta)) + sizeOfVarint(offsetDelta) + sizeOfVarint(keyLen) + keyLen + sizeOfVarint(valueLen) + valueLen + sizeOfVarint(0);
  return sizeOfVarint(body) + body;
}

/** A JSON-ish printable value of exactly `len` bytes: a few structured fields, then random filler. */
function makeValue(rand: () => number, seq: number, len: number): Buffer {
  const head = `{"id":${seq},"user":"u${String(Math.floor(rand() * 1e6)).padStart(6, '0')}","event":"${EVENTS[Math.floor(rand() * EVENTS.length)]}","amount":${(rand() * 1000).toFixed(2)},"data":"`;
  const fill = len - head.length - 2;
  let s = head;
  for (let i = 0; i < fill; i++) s += ALNUM[Math.floor(rand() * 64)];
  s += '"}';
  return Buffer.from(s, 'latin1');
}

function dataFiles(dir: string, p: DataParams): { meta: string; none: string; gzip: string } {
  const stem = `codec-${p.sizeMb}mb`;
  return { meta: join(dir, `${stem}.json`), none: join(dir, `${stem}-none.log`), gzip: join(dir, `${stem}-gzip.log`) };
}

function loadMeta(dir: string, p: DataParams): DataMeta | null {
  const meta = cachedMeta<DataMeta>(dataFiles(dir, p).meta, p);
  if (!meta) return null;
  for (const c of ['none', 'gzip'] as const) {
    if (!existsSync(meta.files[c].path) || statSync(meta.files[c].path).size !== meta.files[c].size) return null;
  }
  return meta;
}

/** Writes both segments, batch by batch (bounded memory: ~4 MiB of pending output per file). */
function generate(dir: string, p: DataParams): DataMeta {
  mkdirSync(dir, { recursive: true });
  const f = dataFiles(dir, p);
  const batchBytes = V2_HEADER_SIZE + p.recordsPerBatch * p.recordSize;
  const batches = Math.floor((p.sizeMb * 2 ** 20) / batchBytes);
  const rand = prng(p.seed);
  const out = { none: new ChunkedFileWriter(`${f.none}.tmp`), gzip: new ChunkedFileWriter(`${f.gzip}.tmp`) };
  let ts = 1_700_000_000_000;
  const t0 = Date.now();
  for (let b = 0; b < batches; b++) {
    const baseOffset = b * p.recordsPerBatch;
    ts += 1 + Math.floor(rand() * 20);
    const baseTs = ts;
    const records: RecordSpec[] = new Array(p.recordsPerBatch);
    for (let i = 0; i < p.recordsPerBatch; i++) {
      // Records arrive during the linger: timestamps grow by 0–2 ms each, at most lingerMs apart
      // (the first record's timestamp is the batch's baseTimestamp).
      if (i > 0) ts = Math.min(baseTs + p.lingerMs, ts + Math.floor(rand() * 3));
      const key = Buffer.from(`key-${String(Math.floor(rand() * p.distinctKeys)).padStart(p.keySize - 4, '0')}`, 'latin1');
      const fixed = recordSize(ts - baseTs, i, key.length, 0);
      let valueLen = p.recordSize - fixed;
      // The value length varint itself takes bytes: shrink until the record is exactly recordSize.
      while (recordSize(ts - baseTs, i, key.length, valueLen) > p.recordSize) valueLen--;
      records[i] = { timestamp: BigInt(ts), key, value: makeValue(rand, baseOffset + i, valueLen) };
    }
    for (const codec of ['none', 'gzip'] as const satisfies Compression[]) {
      const bytes = encodeBatch({ baseOffset: BigInt(baseOffset), records, compression: codec, producerId: 4242n, producerEpoch: 0, baseSequence: baseOffset % 2 ** 31 });
      if (codec === 'none' && bytes.length !== batchBytes) throw new Error(`generator bug: batch of ${bytes.length} bytes, expected ${batchBytes}`);
      out[codec].write(bytes);
    }
    if (b > 0 && b % 2000 === 0) progress(`  generating: ${b}/${batches} batches`);
  }
  for (const o of Object.values(out)) o.close();
  renameSync(`${f.none}.tmp`, f.none);
  renameSync(`${f.gzip}.tmp`, f.gzip);
  const meta: DataMeta = {
    params: p,
    batches,
    records: batches * p.recordsPerBatch,
    files: { none: { path: f.none, size: out.none.size }, gzip: { path: f.gzip, size: out.gzip.size } },
  };
  writeFileSync(f.meta, JSON.stringify(meta, null, 2) + '\n');
  progress('');
  console.log(`  generated ${batches} batches in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  return meta;
}

// ---------------------------------------------------------------------------------------------
// Decoders under test

interface PassResult {
  batches: number;
  records: number;
  /** Sum of key and value lengths: proves the records were materialised, and both sides agree. */
  payloadBytes: number;
}

/** Ours: the streaming reader, deep (records decoded) or shallow (headers + CRC only). */
function decodeOurs(path: string, deep: boolean): PassResult {
  let batches = 0;
  let records = 0;
  let payloadBytes = 0;
  for (const e of scanLogFile(path, { deep, verifyCrc: true })) {
    if (e.type !== 'batch') throw new Error(`ours: ${e.type} at position ${e.position}: ${e.reason}`);
    if (e.header.crcValid !== true) throw new Error(`ours: CRC mismatch at position ${e.header.position}`);
    batches++;
    if (!deep) {
      records += e.header.recordCount;
      continue;
    }
    if (e.error) throw e.error;
    const recs = e.records!;
    records += recs.length;
    for (let i = 0; i < recs.length; i++) {
      const r = recs[i]!;
      payloadBytes += (r.key?.length ?? 0) + (r.value?.length ?? 0);
    }
  }
  return { batches, records, payloadBytes };
}

/**
 * kafkajs: the same 1 MiB windows over the same FileSource as `scanEntries`, each batch's bytes fed
 * to kafkajs's RecordBatch decoder and awaited in turn, as its Fetch response decoder
 * (`requests/fetch/v4/decodeMessages.js`) does. kafkajs does not check CRCs, so the bench checks
 * them on its behalf with the same CRC-32C function ours uses.
 */
async function decodeKafkajs(path: string): Promise<PassResult> {
  const src = new FileSource(path);
  let win: Buffer = Buffer.alloc(0);
  let winStart = 0;
  const ensure = (pos: number, len: number): number => {
    if (pos < winStart || pos + len > winStart + win.length) {
      win = src.read(pos, Math.max(DEFAULT_CHUNK_SIZE, len));
      winStart = pos;
    }
    return pos - winStart;
  };
  let batches = 0;
  let records = 0;
  let payloadBytes = 0;
  try {
    for (let pos = 0; pos < src.size; ) {
      let off = ensure(pos, V2_HEADER_SIZE);
      const total = win.readInt32BE(off + 8) + 12;
      off = ensure(pos, total);
      const bytes = win.subarray(off, off + total);
      if (crc32c(bytes.subarray(21)) !== bytes.readUInt32BE(17)) throw new Error(`kafkajs: CRC mismatch at position ${pos}`);
      const batch = await kafkajsDecodeRecordBatch(new KafkajsDecoder(bytes));
      batches++;
      const recs = batch.records;
      records += recs.length;
      for (let i = 0; i < recs.length; i++) {
        const r = recs[i]!;
        payloadBytes += (r.key?.length ?? 0) + (r.value?.length ?? 0);
      }
      pos += total;
    }
  } finally {
    src.close();
  }
  return { batches, records, payloadBytes };
}

// ---------------------------------------------------------------------------------------------

interface Contender {
  name: string;
  codec: 'none' | 'gzip';
  decode: () => PassResult | Promise<PassResult>;
  peerOf?: string;
  times: number[];
  cpuTimes: number[];
  result?: PassResult;
}

export async function run(opts: BenchOptions): Promise<void> {
  const params: DataParams = {
    generator: 1,
    sizeMb: opts.sizeMb ?? DEFAULT_SIZE_MB,
    recordsPerBatch: 100,
    recordSize: 200,
    keySize: 16,
    distinctKeys: 100_000,
    lingerMs: 100,
    seed: 0x5eed,
  };
  let meta = loadMeta(opts.dataDir, params);
  if (meta) console.log(`data: reusing ${opts.dataDir}`);
  else {
    console.log(`data: generating ${params.sizeMb} MiB into ${opts.dataDir} (once; reused by later runs)`);
    meta = generate(opts.dataDir, params);
  }
  const mb = (n: number) => (n / 1e6).toFixed(1);
  console.log(
    `  ${meta.batches} batches × ${params.recordsPerBatch} records × ${params.recordSize} B (key ${params.keySize} B, value ~${params.recordSize - 25} B, no headers) = ${fmtInt(meta.records)} records\n` +
      `  none: ${mb(meta.files.none.size)} MB   gzip: ${mb(meta.files.gzip.size)} MB (${(meta.files.none.size / meta.files.gzip.size).toFixed(2)}× smaller)`,
  );

  const none = meta.files.none.path;
  const gzip = meta.files.gzip.path;
  const contenders: Contender[] = [
    { name: 'ours (deep)', codec: 'none', decode: () => decodeOurs(none, true), times: [], cpuTimes: [] },
    { name: `kafkajs ${KAFKAJS_VERSION}`, codec: 'none', decode: () => decodeKafkajs(none), peerOf: 'ours (deep)', times: [], cpuTimes: [] },
    { name: 'ours (shallow)', codec: 'none', decode: () => decodeOurs(none, false), times: [], cpuTimes: [] },
    { name: 'ours (deep, sync gunzip)', codec: 'gzip', decode: () => decodeOurs(gzip, true), times: [], cpuTimes: [] },
    { name: `kafkajs ${KAFKAJS_VERSION} (async unzip)`, codec: 'gzip', decode: () => decodeKafkajs(gzip), peerOf: 'ours (deep, sync gunzip)', times: [], cpuTimes: [] },
    { name: 'ours (shallow)', codec: 'gzip', decode: () => decodeOurs(gzip, false), times: [], cpuTimes: [] },
  ];

  // One warm-up, then the contenders take turns in every iteration so drift hits them alike.
  console.log(`  measuring: 1 warm-up + ${opts.iterations} timed iterations of ${contenders.length} passes`);
  for (let it = 0; it <= opts.iterations; it++) {
    for (const c of contenders) {
      collectGarbage();
      const { seconds, cpuSeconds, result } = await timeIt(c.decode);
      if (result.records !== meta.records || result.batches !== meta.batches) {
        throw new Error(`${c.name} on ${c.codec}: decoded ${result.batches} batches / ${result.records} records, expected ${meta.batches} / ${meta.records}`);
      }
      if (it > 0) {
        c.times.push(seconds);
        c.cpuTimes.push(cpuSeconds);
      }
      c.result = result;
    }
    progress(`  ${it === 0 ? 'warm-up' : `iteration ${it}/${opts.iterations}`} done`);
  }
  for (const peer of contenders.filter((c) => c.peerOf !== undefined)) {
    const ours = contenders.find((c) => c.codec === peer.codec && c.name === peer.peerOf)!;
    if (ours.result!.payloadBytes !== peer.result!.payloadBytes) {
      throw new Error(`${peer.codec}: ${ours.name} and ${peer.name} disagree on the key+value bytes (${ours.result!.payloadBytes} vs ${peer.result!.payloadBytes})`);
    }
  }

  const rows = contenders.map((c) => {
    const t = median(c.times);
    const fileSize = meta.files[c.codec].size;
    const peer = contenders.find((p) => p.codec === c.codec && p.peerOf === c.name);
    const ratio = peer ? `${(median(peer.times) / t).toFixed(1)}×` : '';
    const cpuRatio = peer ? `${(median(peer.cpuTimes) / median(c.cpuTimes)).toFixed(1)}×` : '';
    return [
      c.codec,
      c.name,
      `${t.toFixed(3)} (${Math.min(...c.times).toFixed(3)}–${Math.max(...c.times).toFixed(3)})`,
      median(c.cpuTimes).toFixed(3),
      fmt3(fileSize / t / 1e6),
      fmt3(meta.files.none.size / t / 1e6),
      fmtInt(meta.records / t),
      ratio,
      cpuRatio,
    ];
  });
  progress('');
  console.log('');
  printTable(['codec', 'decoder', 'wall s: median (min–max)', 'CPU s', 'file MB/s', 'uncompr. MB/s', 'records/s', 'ours/kafkajs', '(CPU)'], rows, new Set([2, 3, 4, 5, 6, 7, 8]));
  console.log(`
notes:
  - MB = 10^6 bytes. "file MB/s": bytes of the .log read per second; "uncompr. MB/s": the same records
    as an uncompressed segment (${mb(meta.files.none.size)} MB) per second, from the median wall time of
    ${opts.iterations} runs after 1 warm-up. "ours/kafkajs" = kafkajs median wall time / ours; "(CPU)" = the same
    for median process CPU time (all threads), steadier when other processes share the cores.
  - deep = CRC-32C of every batch checked + every record decoded (offset, timestamp, key, value,
    headers); shallow = batch headers + CRC only, nothing decompressed (ours only; kafkajs has no such pass).
  - Both sides read through the same FileSource in the same 1 MiB windows (src-main/engine/format/log-reader.ts).
  - kafkajs ${KAFKAJS_VERSION}: src/protocol/recordBatch/v0/decoder.js fed each batch as new Decoder(bytes), awaited in
    turn as its Fetch decoder does. kafkajs does NOT verify batch CRCs ("The library is currently not
    performing CRC validations"), so the bench adds crc32c (@node-rs/crc32, the function ours uses) on its side.
  - kafkajs gzip = its codec (promisified zlib.unzip, threadpool callback per batch); ours = gunzipSync.
  - Representation differs as each library does it: ours bigint offsets/timestamps and Uint8Array
    views; kafkajs Long → string offsets/timestamps and Buffer slices.`);
}
