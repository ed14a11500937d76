/**
 * Generates a large partition for the explorer's browser tests and the UI bench: by default
 * 50,000 uncompressed v2 batches × 100 small records = 5,000,000 records, in 5 segments of 10,000
 * batches, with broker-built trimmed `.index` / `.timeindex` files and checkpoints (a clean shutdown).
 *
 * Records: key `user-NNNN` (10,000 distinct keys), value `{"seq":"NNNNNNNNNN","kind":"view|click|buy"}`
 * whose seq is the record's own offset (zero-padded to 10 digits), CreateTime = T0 + offset ms.
 *
 * Speed: 100 template batches are encoded once with `encodeBatch`; every batch is a copy of one of
 * them with its baseOffset, baseTimestamp, maxTimestamp and seq digits patched in and its CRC-32C
 * recomputed, so 5 M records are written in a few seconds instead of encoding each record.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { crc32c } from '../../../src-main/engine/format/crc.ts';
import { encodeBatch } from '../../../src-main/engine/format/record-batch.ts';
import { writeSegmentFiles } from '../../../src-main/engine/segment/segment-file-writer.ts';

/** First record's timestamp: 2024-01-01T00:00:00Z. */
export const BIG_T0 = 1704067200000n;

export interface BigPartitionOptions {
  batches?: number;
  recordsPerBatch?: number;
  segments?: number;
  topic?: string;
  /** Extra characters in each value (a `"pad":"xx…"` member after `kind`), to make records bigger; default 0 (no member). */
  valuePad?: number;
}

export interface BigPartition {
  logDir: string;
  dir: string;
  records: number;
  batches: number;
  segmentBaseOffsets: bigint[];
}

const PLACEHOLDER = '##########';
const KINDS = ['view', 'click', 'buy'];

/**
 * Writes the partition `<logDir>/<topic>-0` (see the module comment).
 * @returns where it is and what it holds.
 */
export function generateBigPartition(logDir: string, opts: BigPartitionOptions = {}): BigPartition {
  const batches = opts.batches ?? 50_000;
  const perBatch = opts.recordsPerBatch ?? 100;
  const segments = opts.segments ?? 5;
  const topic = opts.topic ?? 'clicks';
  const dir = join(logDir, `${topic}-0`);
  mkdirSync(dir, { recursive: true });

  // Templates: record i of template t has key user-(t*perBatch+i mod 10000), a placeholder seq.
  const templates: { buf: Buffer; seqAt: number[] }[] = [];
  for (let t = 0; t < 100; t++) {
    const records = [];
    for (let i = 0; i < perBatch; i++) {
      const user = String((t * perBatch + i * 37) % 10_000).padStart(4, '0');
      const pad = opts.valuePad ? `,"pad":"${'x'.repeat(opts.valuePad)}"` : '';
      records.push({ key: `user-${user}`, value: `{"seq":"${PLACEHOLDER}","kind":"${KINDS[(t + i) % 3]}"${pad}}`, timestamp: BigInt(i) });
    }
    const buf = encodeBatch({ baseOffset: 0n, records, producerId: -1n });
    const seqAt: number[] = [];
    for (let at = buf.indexOf(PLACEHOLDER); at >= 0; at = buf.indexOf(PLACEHOLDER, at + PLACEHOLDER.length)) seqAt.push(at);
    if (seqAt.length !== perBatch) throw new Error(`template ${t}: found ${seqAt.length} placeholders, expected ${perBatch}`);
    templates.push({ buf, seqAt });
  }

  const perSegment = Math.ceil(batches / segments);
  const bases: bigint[] = [];
  let b = 0;
  while (b < batches) {
    const segBase = BigInt(b * perBatch);
    bases.push(segBase);
    const bufs: Buffer[] = [];
    for (let k = 0; k < perSegment && b < batches; k++, b++) {
      const tpl = templates[b % templates.length]!;
      const buf = Buffer.from(tpl.buf);
      const base = BigInt(b * perBatch);
      buf.writeBigInt64BE(base, 0);
      buf.writeBigInt64BE(BIG_T0 + base, 27);
      buf.writeBigInt64BE(BIG_T0 + base + BigInt(perBatch - 1), 35);
      for (let i = 0; i < perBatch; i++) buf.write(String(b * perBatch + i).padStart(10, '0'), tpl.seqAt[i]!, 'latin1');
      buf.writeUInt32BE(crc32c(buf.subarray(21)) >>> 0, 17);
      bufs.push(buf);
    }
    writeSegmentFiles(dir, segBase, bufs);
  }
  const end = BigInt(batches * perBatch);
  const tp = `${topic} 0`;
  for (const name of ['recovery-point-offset-checkpoint', 'replication-offset-checkpoint']) writeFileSync(join(logDir, name), `0\n1\n${tp} ${end}\n`);
  writeFileSync(join(logDir, 'log-start-offset-checkpoint'), '0\n0\n');
  writeFileSync(join(logDir, '.kafka_cleanshutdown'), '{"version":0,"brokerEpoch":1}');
  return { logDir, dir, records: batches * perBatch, batches, segmentBaseOffsets: bases };
}
