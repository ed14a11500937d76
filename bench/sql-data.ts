/**
 * The partition of the SQL bench (issue 16): `bench-sql-0`, about 200 bytes per record on disk
 * (keys `key-NNNNNNN`, 1,000,000 distinct keys each rewritten ~10 times at 10 M records, JSON values
 * of ~170 bytes, every 50th record a tombstone), 100 records per uncompressed v2 batch, segments
 * rolled at 256 MiB (`segment.bytes`, as the measurement), with `.index` / `.timeindex` as a
 * broker writes them (`log.index.interval.bytes` 4096).
 *
 * Generated once, batch by batch (bounded memory), under `$KLX_BENCH_TMP` or `<tmpdir>/klx-bench`
 * (outside the repository: 2 GB at the default size) and reused while its parameters are unchanged.
 * Not a bench itself (only `*.bench.ts` files are run).
 */
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeBatch } from '../src-main/engine/format/record-batch.ts';
import { buildOffsetIndexEntries, encodeOffsetIndex, type IndexableBatch } from '../src-main/engine/files/offset-index.ts';
import { buildTimeIndexEntries, encodeTimeIndex } from '../src-main/engine/files/time-index.ts';
import { filenamePrefixFromOffset as segmentFileName } from '../src-main/engine/files/file-names.ts';
import { ChunkedFileWriter, fmtInt, progress } from './lib.ts';

/** Records per MiB of `--size-mb` (10 M records at the default 2048 MiB). */
export const RECORDS_PER_MIB = 10_000_000 / 2048;
/** Default size of the SQL bench partition (MiB): the 10 M-record partition. */
export const DEFAULT_SQL_BENCH_MIB = 2048;

const PER_BATCH = 100;
const SEGMENT_BYTES = 256 * 1024 * 1024;
const TS = 1_700_000_000_000n;
const NOTE = 'lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore magna';

/** Where generated bench data lives: `$KLX_BENCH_TMP`, else `<tmpdir>/klx-bench`. */
export function benchTmpDir(): string {
  return process.env.KLX_BENCH_TMP ?? join(tmpdir(), 'klx-bench');
}

/** The record of offset `n`. */
function recordOf(n: number, distinctKeys: number) {
  const k = (n * 7919) % distinctKeys;
  return {
    key: `key-${String(k).padStart(7, '0')}`,
    value: n % 50 === 0 ? null : JSON.stringify({ id: n, event: 'page_view', user: `user-${n % 977}`, amount: n % 1000, ts: 1_700_000_000_000 + n, note: NOTE.slice(0, 40 + (n % 60)) }),
    timestamp: TS + BigInt(n),
  };
}

/**
 * The log dir holding `bench-sql-0` with `records` records (a multiple of 100), generated when
 * missing or made with other parameters.
 * @returns `{ logDir, partDir, records, bytes }` (bytes of `.log` in all segments).
 */
export function ensureSqlBenchPartition(records: number): { logDir: string; partDir: string; records: number; bytes: number } {
  records = Math.max(PER_BATCH, Math.round(records / PER_BATCH) * PER_BATCH);
  const distinctKeys = Math.max(1, Math.min(1_000_000, Math.floor(records / 10)));
  const params = { generator: 1, records, perBatch: PER_BATCH, distinctKeys, segmentBytes: SEGMENT_BYTES };
  const logDir = join(benchTmpDir(), `sql-${records}`);
  const partDir = join(logDir, 'bench-sql-0');
  const metaFile = join(logDir, 'params.json');
  if (existsSync(metaFile)) {
    const meta = JSON.parse(readFileSync(metaFile, 'utf8')) as { params: typeof params; bytes: number };
    if (JSON.stringify(meta.params) === JSON.stringify(params)) return { logDir, partDir, records, bytes: meta.bytes };
  }
  rmSync(logDir, { recursive: true, force: true });
  mkdirSync(partDir, { recursive: true });
  let total = 0;
  let segBase = 0n;
  let out: ChunkedFileWriter | null = null;
  let facts: IndexableBatch[] = [];
  const closeSegment = () => {
    if (!out) return;
    out.close();
    const name = segmentFileName(segBase);
    renameSync(join(partDir, `${name}.log.tmp`), join(partDir, `${name}.log`));
    writeFileSync(join(partDir, `${name}.index`), encodeOffsetIndex(segBase, buildOffsetIndexEntries(segBase, facts, 4096)));
    writeFileSync(join(partDir, `${name}.timeindex`), encodeTimeIndex(segBase, buildTimeIndexEntries(segBase, facts, { indexIntervalBytes: 4096 })));
    total += out.size;
    out = null;
    facts = [];
  };
  for (let b = 0; b < records / PER_BATCH; b++) {
    if (b % 1000 === 0) progress(`generating ${fmtInt(b * PER_BATCH)} / ${fmtInt(records)} records`);
    const baseOffset = BigInt(b * PER_BATCH);
    const recs = [];
    for (let i = 0; i < PER_BATCH; i++) recs.push(recordOf(b * PER_BATCH + i, distinctKeys));
    const buf = encodeBatch({ baseOffset, records: recs });
    if (out !== null && (out as ChunkedFileWriter).size + buf.length > SEGMENT_BYTES) closeSegment();
    if (out === null) {
      segBase = baseOffset;
      out = new ChunkedFileWriter(join(partDir, `${segmentFileName(segBase)}.log.tmp`));
    }
    const w: ChunkedFileWriter = out;
    facts.push({ position: w.size, size: buf.length, lastOffset: baseOffset + BigInt(PER_BATCH - 1), maxTimestamp: TS + baseOffset + BigInt(PER_BATCH - 1) });
    w.write(buf);
  }
  closeSegment();
  progress('');
  writeFileSync(metaFile, JSON.stringify({ params, bytes: total }, null, 2) + '\n');
  return { logDir, partDir, records, bytes: total };
}
