/**
 * A real, highly compressible batch past this tool's decompression bound (fresh tester's finding 6):
 * batches written by an independent encoder (Debian's python3-kafka, kafka-python's
 * DefaultRecordBatchBuilder, one per codec) holding 2 records of 1.5 MiB of zeros each, i.e. more
 * than recordsCount × max.message.bytes (2 × 1048588) uncompressed. A broker accepts them (it checks
 * max.message.bytes against the compressed batch) and a consumer reads them; this tool reports them
 * as not checked everywhere it ranks data (verify, holes, SQL, the cleaner), never as damage, and
 * reads them with the bound raised (`setMaxInflatedBytes`, `--max-inflated-bytes`). A hostile batch
 * (a frame claiming 1 TiB, then garbage) still gets the typed error at the largest bound.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { compact } from '../../../src-main/engine/cleaner/cleaner.ts';
import { KlxError } from '../../../src-main/engine/errors.ts';
import { MAX_INFLATED_BYTES_CEILING, setMaxInflatedBytes } from '../../../src-main/engine/format/compression.ts';
import { crc32c } from '../../../src-main/engine/format/crc.ts';
import { scanLogFile, type BatchEntry } from '../../../src-main/engine/format/log-reader.ts';
import { encodeBatch } from '../../../src-main/engine/format/record-batch.ts';
import { scanHoles } from '../../../src-main/engine/log/holes.ts';
import { PartitionLog } from '../../../src-main/engine/log/partition-log.ts';
import { verifyPartition } from '../../../src-main/engine/log/verify.ts';
import { buildPartition, rec, tempDir } from '../../support/log-builder.ts';
import { klx } from '../../support/klx-cli.ts';
import { openSql, rows } from '../sql/sql-test-helpers.ts';
import { createServerApi } from '../../../src-main/api/index.ts';
import type { JobResult } from '../../../src-shared/contract.ts';
import { startEntryWorker } from '../../../src-main/api/core/entry-worker.ts';
import type { Worker } from 'node:worker_threads';

const PYTHON = '/usr/bin/python3';
const VALUE = 1572864; // 1.5 MiB of zeros per record
const CODECS = ['gzip', 'snappy', 'lz4', 'zstd'] as const;

/** kafka-python's batches (codec ids 1–4), base offsets 0, 2, 4, 6, two records each (the zstd one at 6 and 8), as raw bytes. */
function pythonBatches(): Buffer[] {
  const script = [
    'import sys, struct, base64, json',
    'from kafka.record.default_records import DefaultRecordBatchBuilder',
    'out = []',
    'for n, codec in enumerate((1, 2, 3, 4)):',
    '    b = DefaultRecordBatchBuilder(magic=2, compression_type=codec, is_transactional=False, producer_id=-1, producer_epoch=-1, base_sequence=-1, batch_size=1 << 30)',
    '    for i in range(2):',
    // The zstd batch holds offsets 6 and 8 (7 compacted away): a batch the holes walk decodes.
    `        d = 2 * i if codec == 4 else i`,
    `        assert b.append(d, 1700000000000 + 2 * n + d, b"k%d" % (2 * n + d), bytes(${VALUE}), []) is not None`,
    '    buf = b.build()',
    '    struct.pack_into(">q", buf, 0, 2 * n)',
    '    out.append(base64.b64encode(bytes(buf)).decode())',
    'print(json.dumps(out))',
  ].join('\n');
  const r = spawnSync(PYTHON, ['-c', script], { encoding: 'utf8', maxBuffer: 64 << 20 });
  if (r.status !== 0) throw new Error(`python3-kafka failed: ${r.stderr}`);
  return (JSON.parse(r.stdout) as string[]).map((b) => Buffer.from(b, 'base64'));
}

/** A partition: the four batches in segment 0, then an uncompressed one at offset 9 in the active segment 9. */
function partition(): { dir: string; batches: Buffer[] } {
  const batches = pythonBatches();
  const after = encodeBatch({ baseOffset: 9n, records: [rec('after', 'small', 1700000000009)] });
  const dir = buildPartition(tempDir('klx-inflate-'), { topic: 'blobs', segments: [{ batches }, { batches: [after] }] });
  return { dir, batches };
}

afterEach(() => setMaxInflatedBytes(null));

describe('a legit batch past the decompression bound', () => {
  it('is not checked (a typed decompression-limit error naming the option), not damage; with the bound raised every record reads back exactly', () => {
    const { dir, batches } = partition();
    expect(batches.map((b) => b.readInt16BE(21) & 7)).toEqual([1, 2, 3, 4]);
    const log = join(dir, '00000000000000000000.log');
    const entries = [...scanLogFile(log, { deep: true })] as BatchEntry[];
    expect(entries.map((e) => [e.header.baseOffset, e.header.crcValid, e.error?.code ?? null])).toEqual([
      [0n, true, 'decompression-limit'],
      [2n, true, 'decompression-limit'],
      [4n, true, 'decompression-limit'],
      [6n, true, 'decompression-limit'],
    ]);
    const gz = entries[0]!.error!;
    expect(gz.message).toBe(
      `${log}: position 0: batch at baseOffset 0: not checked: its gzip records area would inflate to 3145758 bytes, past this tool's decompression bound of 2097176 bytes (recordsCount × max.message.bytes, at most 268435456); ` +
        'a limit of this tool, not damage (a broker and a consumer decompress record by record: DefaultRecordBatch, CompletedFetch); read it with --max-inflated-bytes <bytes> (up to 2147483648)',
    );
    expect(entries[3]!.error!.details).toMatchObject({ codec: 'zstd', allowedBytes: 2097176, notChecked: true });

    setMaxInflatedBytes(4 << 20);
    const read = [...scanLogFile(log, { deep: true })] as BatchEntry[];
    expect(read.map((e) => e.error ?? null)).toEqual([null, null, null, null]);
    for (const [i, e] of read.entries()) {
      expect(e.header.compression).toBe(CODECS[i]);
      const second = i === 3 ? 8 : 2 * i + 1;
      expect(e.records!.map((r) => [r.offset, Buffer.from(r.key!).toString(), r.value!.length, r.value!.every((b) => b === 0)])).toEqual([
        [BigInt(2 * i), `k${2 * i}`, VALUE, true],
        [BigInt(second), `k${second}`, VALUE, true],
      ]);
    }
  });

  it('verify ranks it info batch-not-checked (no error), holes gives its offsets as not-checked, and the cleaner refuses without marking the partition uncleanable', async () => {
    const { dir } = partition();
    const report = await verifyPartition(PartitionLog.open(dir), { deep: true });
    expect(report.findings.map((f) => [f.severity, f.code, f.position, f.details['codec']])).toEqual([
      ['info', 'batch-not-checked', 0, 'gzip'],
      ['info', 'batch-not-checked', expect.any(Number), 'snappy'],
      ['info', 'batch-not-checked', expect.any(Number), 'lz4'],
      ['info', 'batch-not-checked', expect.any(Number), 'zstd'],
    ]);
    const holes = [];
    for await (const h of scanHoles(PartitionLog.open(dir))) holes.push([h.from, h.to, h.cause]);
    // Dense batches hide no offset (the walk does not decompress them); the zstd batch 6..8 is decompressed to find its gap, and is not checked.
    expect(holes).toEqual([[6n, 8n, 'not-checked']]);
    const out = compact(dir, { now: 1700000100000, config: { 'cleanup.policy': ['compact'] }, trashDir: tempDir('klx-trash-'), dryRun: true });
    const p = out.partitions[0]!;
    expect(p.error?.code).toBe('decompression-limit');
    expect(p.error?.message).toMatch(/: position 0: the cleaner stops: it cannot read the batch: batch at baseOffset 0: not checked: .* read it with --max-inflated-bytes <bytes> \(up to 2147483648\)$/);
    expect(p.uncleanableBytes).toBeUndefined();
    setMaxInflatedBytes(4 << 20);
    const again = await verifyPartition(PartitionLog.open(dir), { deep: true });
    expect(again.findings).toEqual([]);
  });

  it('SQL: the batches left out are damage rows of kind not-checked with a notice, not damaged bytes; with the bound raised their rows are there', async () => {
    const { dir } = partition();
    const s = await openSql(dir);
    expect(await rows(s, 'SELECT "offset", past_damage FROM records')).toEqual([{ offset: 9n, past_damage: false }]);
    expect(await rows(s, 'SELECT kind, code FROM damage ORDER BY "position"')).toEqual(Array.from({ length: 4 }, () => ({ kind: 'not-checked', code: 'decompression-limit' })));
    expect(await rows(s, 'SELECT damaged_bytes, record_count FROM partitions')).toEqual([{ damaged_bytes: 0n, record_count: 1n }]);
    expect(await s.notices()).toEqual([
      {
        partition: 'blobs-0',
        notice:
          "not checked: 4 batches (8 records, offsets 0..8) inflate past this tool's decompression bound of 2097176 bytes, so their records are not in records, latest or state (damage lists them with kind not-checked). " +
          'Not damage: a consumer decompresses record by record (CompletedFetch, DefaultRecordBatch). Read them with klx query --max-inflated-bytes <bytes> (up to 2147483648), or in the app with Verify\'s "Read batches up to 1 GiB" (app.decompressionBound), then open the tables again.',
      },
    ]);
    setMaxInflatedBytes(4 << 20);
    const t = await openSql(dir);
    expect(await rows(t, 'SELECT "offset", key_text, value_size FROM records ORDER BY "offset"')).toEqual([
      ...[0, 1, 2, 3, 4, 5, 6, 8].map((i) => ({ offset: BigInt(i), key_text: `k${i}`, value_size: VALUE })),
      { offset: 9n, key_text: 'after', value_size: 5 },
    ]);
    expect(await t.notices()).toEqual([]);
  });

  it('klx verify exits 0 with the info finding; klx fetch --max-inflated-bytes prints every record; the option refuses 0 and more than 2 GiB', () => {
    const { dir } = partition();
    const v = klx('verify', dir, '--json');
    expect(v.status).toBe(0);
    expect(v.stdout).toContain('"code":"batch-not-checked"');
    const f = klx('fetch', dir, '--offset', '0');
    expect(f.stdout).toContain("-- not checked: offsets 0..1: batch at baseOffset 0: not checked: its gzip records area would inflate");
    expect(f.stderr).toContain('klx: 4 batches not checked');
    const g = klx('fetch', dir, '--offset', '0', '--max-inflated-bytes', String(4 << 20), '--json');
    expect(g.status).toBe(0);
    const recs = g.stdout.trim().split('\n').map((l) => JSON.parse(l) as { type: string; offset?: number }).filter((x) => x.type === 'record');
    expect(recs.map((x) => x.offset)).toEqual([0, 1, 2, 3, 4, 5, 6, 8, 9]);
    expect(klx('fetch', dir, '--offset', '0', '--max-inflated-bytes', '0').stderr).toContain('--max-inflated-bytes must be from 1 to 2147483648');
    expect(klx('verify', dir, '--max-inflated-bytes', String(2 ** 31 + 1)).status).not.toBe(0);
  });
});

describe('the app sets the bound through the API (app.decompressionBound)', () => {
  it('log.verify gives info batch-not-checked findings by default and none once the bound is raised; a bound out of 1..2 GiB is invalid-argument', async () => {
    const { dir } = partition();
    const server = createServerApi({ version: '0.0.0-test', transport: 'bridge', jobs: { progressIntervalMs: 0 } });
    const CALL = { readOnly: true };
    const call = async (method: 'app.decompressionBound' | 'session.open' | 'log.verify', req: unknown) => {
      const env = await server.dispatch(method, req, CALL);
      if (!env.ok) return { error: env.error };
      if (method !== 'log.verify') return env.result;
      const end = await server.ctx.jobs.wait((env.result as { jobId: string }).jobId);
      return (end as { result?: unknown }).result;
    };
    try {
      await call('session.open', { path: dir });
      expect(await call('app.decompressionBound', {})).toEqual({ maxInflatedBytes: null, defaultCeilingBytes: 268435456, maxBytes: 2147483648 });
      const before = (await call('log.verify', { dir })) as JobResult<'log.verify'>;
      // (recovery-needed: the folder has no clean-shutdown marker.)
      expect([before.counts, before.findings.map((f) => [f.severity, f.code])]).toEqual([{ error: 0, warning: 0, info: 5 }, [...Array.from({ length: 4 }, () => ['info', 'batch-not-checked']), ['info', 'recovery-needed']]]);
      expect(await call('app.decompressionBound', { maxInflatedBytes: 4 << 20 })).toEqual({ maxInflatedBytes: 4 << 20, defaultCeilingBytes: 268435456, maxBytes: 2147483648 });
      const after = (await call('log.verify', { dir })) as JobResult<'log.verify'>;
      expect([after.counts, after.findings.map((f) => f.code), after.stats.records]).toEqual([{ error: 0, warning: 0, info: 1 }, ['recovery-needed'], 9]);
      expect(await call('app.decompressionBound', { maxInflatedBytes: 0 })).toMatchObject({ error: { code: 'invalid-argument' } });
      expect(await call('app.decompressionBound', { maxInflatedBytes: null })).toMatchObject({ maxInflatedBytes: null });
    } finally {
      await server.ctx.jobs.shutdown();
    }
  });
});

describe('a worker thread already running', () => {
  it('uses a bound set in the main thread afterwards (and the default again once it is cleared)', async () => {
    const worker: Worker = startEntryWorker('bound-test-worker', import.meta.url);
    const next = () => new Promise<unknown>((resolve) => worker.once('message', resolve));
    try {
      expect(await next()).toBe('ready');
      const ask = async () => {
        worker.postMessage('bound?');
        return next();
      };
      expect(await ask()).toBe(1048588);
      setMaxInflatedBytes(4 << 20);
      // The broadcast reaches the thread between two of its tasks.
      await new Promise((r) => setTimeout(r, 50));
      expect(await ask()).toBe(4 << 20);
      setMaxInflatedBytes(null);
      await new Promise((r) => setTimeout(r, 50));
      expect(await ask()).toBe(1048588);
    } finally {
      await worker.terminate();
    }
  }, 30_000);
});

describe('a hostile batch still gets the typed error', () => {
  /** A v2 batch of one record whose zstd records area is a frame header claiming `claimed` bytes, then no real block (zero bytes); its CRC is valid. */
  function zstdClaiming(claimed: bigint): Buffer {
    const frame = Buffer.alloc(4 + 1 + 1 + 8 + 64);
    frame.writeUInt32LE(0xfd2fb528, 0);
    frame[4] = 0xc0; // Frame_Content_Size_flag 3 (8 bytes), not single-segment: a window descriptor follows
    frame[5] = 0x50; // window descriptor
    frame.writeBigUInt64LE(claimed, 6);
    const b = Buffer.alloc(61 + frame.length);
    b.writeInt32BE(b.length - 12, 8);
    b[16] = 2;
    b.writeInt16BE(4, 21);
    b.writeBigInt64BE(-1n, 43);
    b.writeInt16BE(-1, 51);
    b.writeInt32BE(-1, 53);
    b.writeInt32BE(1, 57);
    frame.copy(b, 61);
    b.writeUInt32BE(crc32c(b.subarray(21)), 17);
    return b;
  }

  it('a frame claiming 1 TiB is refused even at the largest bound; one claiming 3 MiB with nothing behind it, within the bound, is corrupt-batch', () => {
    const dir = buildPartition(tempDir('klx-inflate-'), { segments: [{ batches: [zstdClaiming(1n << 40n)] }] });
    const log = join(dir, '00000000000000000000.log');
    setMaxInflatedBytes(MAX_INFLATED_BYTES_CEILING);
    const [e] = [...scanLogFile(log, { deep: true })] as BatchEntry[];
    expect(e!.error).toBeInstanceOf(KlxError);
    expect([e!.error!.code, e!.error!.details]).toEqual(['decompression-limit', { codec: 'zstd', claimedBytes: 2 ** 40, allowedBytes: MAX_INFLATED_BYTES_CEILING, notChecked: true }]);
    expect(e!.error!.reason).toContain('that is the most --max-inflated-bytes allows (2 GiB)');
    const dir2 = buildPartition(tempDir('klx-inflate-'), { segments: [{ batches: [zstdClaiming(3n << 20n)] }] });
    setMaxInflatedBytes(4 << 20);
    const [g] = [...scanLogFile(join(dir2, '00000000000000000000.log'), { deep: true })] as BatchEntry[];
    expect(g!.error?.code).toBe('corrupt-batch');
    expect(g!.error?.reason).toMatch(/^batch at baseOffset 0: zstd data cannot be decompressed: /);
  });

  it('setMaxInflatedBytes refuses 0 and more than 2 GiB', () => {
    expect(() => setMaxInflatedBytes(0)).toThrow(expect.objectContaining({ code: 'invalid-argument' }));
    expect(() => setMaxInflatedBytes(MAX_INFLATED_BYTES_CEILING + 1)).toThrow(/must be a number of bytes from 1 to 2147483648/);
  });
});
