/**
 * What the partition writer puts on disk decodes unchanged in decoders that share no code with ours:
 * kafkajs' own RecordBatch decoder and CRC-32C (a devDependency; codecs it lacks are plugged in from
 * the raw codec libraries, with our own xerial unframing written here from the format description),
 * and Debian's `python3-kafka` (kafka-python's `MemoryRecords` / `DefaultRecordBatch`), when installed
 * (`apt-get install -y python3-kafka python3-snappy python3-lz4 python3-zstandard`).
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { uncompressSync as snappyUncompress } from 'snappy';
import { decompressFrameSync as lz4Decompress } from 'lz4-napi';
import { decompress as zstdDecompress } from 'zstd-napi';
import { afterAll, describe, expect, it } from 'vitest';
import { PartitionWriter, type AppendRecord } from '../../../src-main/engine/log/partition-writer.ts';
import { createPartition } from '../../../src-main/engine/log/partition-create.ts';
import type { Compression } from '../../../src-main/engine/format/types.ts';
import { tempDir } from '../../support/log-builder.ts';

const require = createRequire(import.meta.url);
// kafkajs internals (CommonJS): the v2 RecordBatch decoder, its byte decoder, codec table and CRC-32C.
const Decoder = require('kafkajs/src/protocol/decoder') as new (b: Buffer) => unknown;
const decodeRecordBatch = require('kafkajs/src/protocol/recordBatch/v0/decoder') as (d: unknown) => Promise<KjsBatch>;
const kjsCompression = require('kafkajs/src/protocol/message/compression') as { Codecs: Record<number, () => { decompress(b: Buffer): Promise<Buffer> }>; Types: Record<string, number> };
const kjsCrc32C = require('kafkajs/src/protocol/recordBatch/crc32C') as (b: Buffer) => number;

interface KjsRecord {
  offset: string;
  timestamp: string;
  key: Buffer | null;
  value: Buffer | null;
  headers: Record<string, Buffer | null>;
}
interface KjsBatch {
  firstOffset: string;
  partitionLeaderEpoch: number;
  lastOffsetDelta: number;
  firstTimestamp: string;
  maxTimestamp: string;
  producerId: string;
  producerEpoch: number;
  firstSequence: number;
  timestampType: number;
  inTransaction: boolean;
  isControlBatch: boolean;
  records: KjsRecord[];
}

/** xerial snappy framing (magic, version, compatible version, then length-prefixed raw blocks), unframed independently. */
function unframeXerial(buf: Buffer): Buffer {
  const magic = Buffer.from([0x82, 0x53, 0x4e, 0x41, 0x50, 0x50, 0x59, 0x00]);
  if (!buf.subarray(0, 8).equals(magic)) return snappyUncompress(buf) as Buffer;
  const parts: Buffer[] = [];
  for (let p = 16; p < buf.length; ) {
    const n = buf.readInt32BE(p);
    parts.push(snappyUncompress(buf.subarray(p + 4, p + 4 + n)) as Buffer);
    p += 4 + n;
  }
  return Buffer.concat(parts);
}
kjsCompression.Codecs[kjsCompression.Types.Snappy!] = () => ({ decompress: async (b: Buffer) => unframeXerial(b) });
kjsCompression.Codecs[kjsCompression.Types.LZ4!] = () => ({ decompress: async (b: Buffer) => lz4Decompress(b) });
kjsCompression.Codecs[kjsCompression.Types.ZSTD!] = () => ({ decompress: async (b: Buffer) => zstdDecompress(b) });

/** Splits a `.log` into batches by the length field alone (no shared code). */
function splitBatches(log: Buffer): Buffer[] {
  const out: Buffer[] = [];
  for (let p = 0; p < log.length; ) {
    const size = 12 + log.readInt32BE(p + 8);
    out.push(log.subarray(p, p + size));
    p += size;
  }
  return out;
}

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const TS = 1_700_000_000_000n;
const CODECS: Compression[] = ['none', 'gzip', 'snappy', 'lz4', 'zstd'];

/** One batch per codec (keys, a keyless record, a tombstone, headers incl. a null one, unordered timestamps), then a LogAppendTime and an idempotent batch. */
function writeSample(): { dir: string; log: string; appended: { records: AppendRecord[]; codec: Compression; base: bigint; lat?: bigint; producer?: [bigint, number, number] }[] } {
  const ld = tempDir('klx-indep-');
  dirs.push(ld);
  const { dir } = createPartition(ld, 'indep', 0);
  const appended: { records: AppendRecord[]; codec: Compression; base: bigint; lat?: bigint; producer?: [bigint, number, number] }[] = [];
  const w = PartitionWriter.open(dir, { clock: () => TS + 5000n });
  try {
    for (const codec of CODECS) {
      const records: AppendRecord[] = [
        { key: `key-${codec}`, value: `value for ${codec}: `.repeat(30), headers: [{ key: 'trace', value: 'abc' }, { key: 'empty', value: null }], timestamp: TS + 30n },
        { key: null, value: 'no key', timestamp: TS + 10n },
        { key: Buffer.from([0, 1, 2, 255]), value: null, timestamp: TS + 20n },
      ];
      appended.push({ records, codec, base: w.append(records, { compression: codec }).baseOffset });
    }
    const p: AppendRecord[] = [{ key: 'p', value: 'idempotent', timestamp: TS }];
    appended.push({ records: p, codec: 'lz4', base: w.append(p, { compression: 'lz4', producerId: 4242n, producerEpoch: 3, baseSequence: 17 }).baseOffset, producer: [4242n, 3, 17] });
  } finally {
    w.close();
  }
  const w2 = PartitionWriter.open(dir, { clock: () => TS + 7777n, config: { 'message.timestamp.type': 'LogAppendTime' } });
  try {
    const l: AppendRecord[] = [{ key: 'l', value: 'log append time', timestamp: TS + 1n }, { key: 'm', value: 'x', timestamp: TS + 2n }];
    appended.push({ records: l, codec: 'gzip', base: w2.append(l, { compression: 'gzip' }).baseOffset, lat: TS + 7777n });
  } finally {
    w2.close();
  }
  return { dir, log: join(dir, '00000000000000000000.log'), appended };
}

const bytes = (v: AppendRecord['key']): Buffer | null => (v === null ? null : Buffer.from(v as string | Uint8Array));

describe('what the writer writes, read by independent decoders', () => {
  it('a single-record batch with a 2-byte key and a 2-byte value is exactly 72 bytes on disk, as a broker writes it', async () => {
    const ld = tempDir('klx-indep-');
    dirs.push(ld);
    const { dir } = createPartition(ld, 'b72', 0);
    const w = PartitionWriter.open(dir);
    const res = w.append([{ key: 'k1', value: 'v1', timestamp: TS }]);
    w.close();
    expect(res.size).toBe(72);
    const log = readFileSync(join(dir, '00000000000000000000.log'));
    expect(log.length).toBe(72);
    // 61-byte header; record: length 10, attributes, tsDelta 0, offsetDelta 0, key len 2 "k1", value len 2 "v1", 0 headers.
    expect(log.subarray(61).toString('hex')).toBe('14' + '00' + '00' + '00' + '04' + '6b31' + '04' + '7631' + '00');
    expect(log.readInt32BE(8)).toBe(60);
    expect(log.readUInt32BE(17)).toBe(kjsCrc32C(log.subarray(21)));
    const b = await decodeRecordBatch(new Decoder(log));
    expect([b.firstOffset, b.lastOffsetDelta, b.partitionLeaderEpoch, b.firstTimestamp, b.maxTimestamp, b.producerId, b.producerEpoch, b.firstSequence]).toEqual(['0', 0, 0, String(TS), String(TS), '-1', -1, -1]);
    expect(b.records.map((r) => [r.offset, r.timestamp, r.key?.toString(), r.value?.toString()])).toEqual([['0', String(TS), 'k1', 'v1']]);
  });

  it('kafkajs decodes every batch unchanged, for every codec, and its CRC-32C agrees', async () => {
    const { log, appended } = writeSample();
    const batches = splitBatches(readFileSync(log));
    expect(batches).toHaveLength(appended.length);
    for (let i = 0; i < batches.length; i++) {
      const raw = batches[i]!;
      const want = appended[i]!;
      expect(raw.readUInt32BE(17), `CRC of batch ${i}`).toBe(kjsCrc32C(raw.subarray(21)));
      expect(raw.readInt16BE(21) & 0x07).toBe(CODECS.indexOf(want.codec));
      const b = await decodeRecordBatch(new Decoder(raw));
      expect(b.firstOffset).toBe(String(want.base));
      expect(b.lastOffsetDelta).toBe(want.records.length - 1);
      expect(b.partitionLeaderEpoch).toBe(0);
      expect([b.inTransaction, b.isControlBatch]).toEqual([false, false]);
      expect(b.timestampType).toBe(want.lat !== undefined ? 1 : 0);
      const tss = want.records.map((r) => BigInt(r.timestamp!));
      expect(b.firstTimestamp).toBe(String(tss[0]));
      expect(b.maxTimestamp).toBe(String(want.lat ?? tss.reduce((a, x) => (x > a ? x : a))));
      expect([b.producerId, b.producerEpoch, b.firstSequence]).toEqual(want.producer ? [String(want.producer[0]), want.producer[1], want.producer[2]] : ['-1', -1, -1]);
      expect(b.records).toHaveLength(want.records.length);
      b.records.forEach((r, j) => {
        const w = want.records[j]!;
        expect(r.offset).toBe(String(want.base + BigInt(j)));
        expect(r.timestamp).toBe(String(want.lat ?? BigInt(w.timestamp!)));
        expect(r.key).toEqual(bytes(w.key));
        expect(r.value).toEqual(bytes(w.value));
        expect(r.headers).toEqual(Object.fromEntries((w.headers ?? []).map((h) => [h.key, bytes(h.value)])));
      });
    }
  });

  const python = '/usr/bin/python3';
  const probe = spawnSync(python, ['-c', 'import kafka, snappy, lz4.frame, zstandard'], { encoding: 'utf8' });
  const havePython = probe.status === 0;
  it.skipIf(!havePython)(
    `kafka-python (Debian python3-kafka) decodes every batch unchanged${havePython ? '' : ' — SKIPPED: /usr/bin/python3 with kafka, snappy, lz4 and zstandard is not installed (apt-get install -y python3-kafka python3-snappy python3-lz4 python3-zstandard)'}`,
    () => {
      const { log, appended } = writeSample();
      const script = [
        'import json, sys, base64',
        'from kafka.record import MemoryRecords',
        'data = open(sys.argv[1], "rb").read()',
        'mr = MemoryRecords(data)',
        'out = []',
        'while mr.has_next():',
        '    b = mr.next_batch()',
        '    crc_ok = b.validate_crc()',
        '    recs = [{"offset": r.offset, "timestamp": r.timestamp, "key": None if r.key is None else base64.b64encode(r.key).decode(),',
        '             "value": None if r.value is None else base64.b64encode(r.value).decode(),',
        '             "headers": [[k, None if v is None else base64.b64encode(v).decode()] for k, v in r.headers]} for r in b]',
        '    out.append({"base": b.base_offset, "crc_ok": crc_ok, "codec": b.compression_type, "tstype": b.timestamp_type, "records": recs})',
        'print(json.dumps(out))',
      ].join('\n');
      const res = spawnSync(python, ['-c', script, log], { encoding: 'utf8' });
      expect(res.stderr).toBe('');
      expect(res.status).toBe(0);
      const got = JSON.parse(res.stdout) as { base: number; crc_ok: boolean; codec: number; tstype: number; records: { offset: number; timestamp: number; key: string | null; value: string | null; headers: [string, string | null][] }[] }[];
      const b64 = (v: AppendRecord['key']): string | null => bytes(v)?.toString('base64') ?? null;
      expect(got).toEqual(
        appended.map((a) => ({
          base: Number(a.base),
          crc_ok: true,
          codec: CODECS.indexOf(a.codec),
          tstype: a.lat !== undefined ? 1 : 0,
          records: a.records.map((r, j) => ({
            offset: Number(a.base) + j,
            timestamp: Number(a.lat ?? BigInt(r.timestamp!)),
            key: b64(r.key),
            value: b64(r.value),
            headers: (r.headers ?? []).map((h) => [h.key, b64(h.value)]),
          })),
        })),
      );
      expect(statSync(log).size).toBe(splitBatches(readFileSync(log)).reduce((s, b) => s + b.length, 0));
    },
  );
});
