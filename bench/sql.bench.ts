/**
 * SQL over a log (issue 7): building the DuckDB tables of a 1,000,000-record partition and answering
 * `SELECT count(*) FROM state`, from scratch and from the cache; then a few queries on the open
 * session. Target: build + count under 5 s.
 *
 * Data (generated once into bench/.data/sql-1m/, reused while the parameters are unchanged): one
 * partition `bench-sql-0`, one segment of 10,000 uncompressed v2 batches × 100 records, keys
 * `key-<n·7919 mod 100000>` (100,000 distinct keys, each rewritten ~10 times), JSON values of about
 * 60 bytes, every 50th record a tombstone; `.index` / `.timeindex` as a broker writes them. The
 * `.log` is written batch by batch. `--size-mb` is not used: the bench is defined by its record count.
 */
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { encodeBatch } from '../src-main/engine/format/record-batch.ts';
import { buildOffsetIndexEntries, encodeOffsetIndex, type IndexableBatch } from '../src-main/engine/files/offset-index.ts';
import { buildTimeIndexEntries, encodeTimeIndex } from '../src-main/engine/files/time-index.ts';
import { SqlSession } from '../src-main/engine/sql/sql-session.ts';
import { collectGarbage, fmt3, fmtInt, median, printTable, progress, timeIt, type BenchOptions } from './lib.ts';

const PARAMS = { generator: 1, batches: 10_000, recordsPerBatch: 100, distinctKeys: 100_000, tombstoneEvery: 50 };
const RECORDS = PARAMS.batches * PARAMS.recordsPerBatch;
const TS = 1_700_000_000_000n;

/** The log dir holding `bench-sql-0`, generated when missing or made with other parameters. */
function ensureData(dataDir: string): string {
  const logDir = join(dataDir, 'sql-1m');
  const partDir = join(logDir, 'bench-sql-0');
  const metaFile = join(logDir, 'params.json');
  const logFile = join(partDir, '00000000000000000000.log');
  if (existsSync(metaFile) && existsSync(logFile)) {
    const meta = JSON.parse(readFileSync(metaFile, 'utf8')) as { params: typeof PARAMS; size: number };
    if (JSON.stringify(meta.params) === JSON.stringify(PARAMS) && statSync(logFile).size === meta.size) return logDir;
  }
  rmSync(logDir, { recursive: true, force: true });
  mkdirSync(partDir, { recursive: true });
  const facts: IndexableBatch[] = [];
  const fd = openSync(`${logFile}.tmp`, 'w');
  let position = 0;
  try {
    for (let b = 0; b < PARAMS.batches; b++) {
      if (b % 500 === 0) progress(`generating ${fmtInt(b * PARAMS.recordsPerBatch)} / ${fmtInt(RECORDS)} records`);
      const records = [];
      for (let i = 0; i < PARAMS.recordsPerBatch; i++) {
        const n = b * PARAMS.recordsPerBatch + i;
        records.push({
          key: `key-${(n * 7919) % PARAMS.distinctKeys}`,
          value: n % PARAMS.tombstoneEvery === 0 ? null : JSON.stringify({ id: n, event: 'page_view', user: `user-${n % 977}`, amount: n % 1000 }),
          timestamp: TS + BigInt(n),
        });
      }
      const baseOffset = BigInt(b * PARAMS.recordsPerBatch);
      const buf = encodeBatch({ baseOffset, records });
      writeSync(fd, buf);
      facts.push({ position, size: buf.length, lastOffset: baseOffset + BigInt(PARAMS.recordsPerBatch - 1), maxTimestamp: TS + baseOffset + BigInt(PARAMS.recordsPerBatch - 1) });
      position += buf.length;
    }
  } finally {
    closeSync(fd);
  }
  progress('');
  renameSync(`${logFile}.tmp`, logFile);
  writeFileSync(join(partDir, '00000000000000000000.index'), encodeOffsetIndex(0n, buildOffsetIndexEntries(0n, facts, 4096)));
  writeFileSync(join(partDir, '00000000000000000000.timeindex'), encodeTimeIndex(0n, buildTimeIndexEntries(0n, facts, { indexIntervalBytes: 4096 })));
  writeFileSync(metaFile, JSON.stringify({ params: PARAMS, size: position }, null, 2) + '\n');
  return logDir;
}

export async function run(opts: BenchOptions): Promise<void> {
  const logDir = ensureData(opts.dataDir);
  const logBytes = statSync(join(logDir, 'bench-sql-0', '00000000000000000000.log')).size;
  console.log(`data: ${fmtInt(RECORDS)} records in ${fmtInt(PARAMS.batches)} batches, ${fmt3(logBytes / 2 ** 20)} MiB of .log (${logDir})`);
  const cacheDir = join(opts.dataDir, 'sql-cache');

  const coldTimes: number[] = [];
  const warmTimes: number[] = [];
  let stateCount: unknown = null;
  let dbBytes = 0;
  for (let i = 0; i <= opts.iterations; i++) {
    // Cold: no cache file, the tables are built from the log.
    rmSync(cacheDir, { recursive: true, force: true });
    collectGarbage();
    const cold = await timeIt(async () => {
      const s = await SqlSession.open(logDir, { cacheDir, onProgress: (p) => progress(`build ${i === 0 ? '(warm-up) ' : ''}${p.phase}: ${p.total ? Math.floor((100 * p.done) / p.total) : 0}%`) });
      try {
        return (await s.query('SELECT count(*) FROM state')).rows[0]![0];
      } finally {
        s.close();
      }
    });
    progress('');
    // Warm: the cache file of the unchanged folder is reused.
    collectGarbage();
    const warm = await timeIt(async () => {
      const s = await SqlSession.open(logDir, { cacheDir });
      try {
        if (!s.reused) throw new Error('the cache was not reused');
        dbBytes = statSync(s.dbPath).size;
        return (await s.query('SELECT count(*) FROM state')).rows[0]![0];
      } finally {
        s.close();
      }
    });
    if (i === 0) continue; // warm-up
    coldTimes.push(cold.seconds);
    warmTimes.push(warm.seconds);
    stateCount = cold.result;
    if (warm.result !== cold.result) throw new Error(`state count differs: ${String(cold.result)} vs ${String(warm.result)}`);
  }

  const s = await SqlSession.open(logDir, { cacheDir });
  const queries: [string, string][] = [
    ['count(*) FROM state', 'SELECT count(*) FROM state'],
    ['count(*) FROM latest WHERE is_tombstone', 'SELECT count(*) FROM latest WHERE is_tombstone'],
    ['value_text LIKE scan of records', `SELECT count(*) FROM records WHERE value_text LIKE '%"user":"user-7"%'`],
    ['top 10 keys by versions', 'SELECT key_text, count(*) AS n FROM records GROUP BY 1 ORDER BY n DESC, 1 LIMIT 10'],
  ];
  const queryRows: string[][] = [];
  try {
    for (const [label, sql] of queries) {
      const times: number[] = [];
      for (let i = 0; i <= opts.iterations; i++) {
        const t = await timeIt(() => s.query(sql));
        if (i > 0) times.push(t.seconds);
      }
      queryRows.push([label, fmt3(median(times) * 1000)]);
    }
  } finally {
    s.close();
  }

  const cold = median(coldTimes);
  printTable(
    ['step (median of ' + opts.iterations + ')', 'seconds', 'records/s', 'note'],
    [
      ['build tables + count(*) FROM state', fmt3(cold), fmtInt(RECORDS / cold), `state = ${String(stateCount)} keys; target < 5 s: ${cold < 5 ? 'met' : 'NOT met'}`],
      ['reopen from cache + count(*) FROM state', fmt3(median(warmTimes)), '', `cache file ${fmt3(dbBytes / 2 ** 20)} MiB`],
    ],
    new Set([1, 2]),
  );
  console.log('');
  printTable(['query on an open session', 'ms'], queryRows, new Set([1]));
  rmSync(cacheDir, { recursive: true, force: true });
}
