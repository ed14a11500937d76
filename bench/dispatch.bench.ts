/**
 * The main-process side of one records-table page: what `dispatch('log.records', …)` costs per
 * 200-row page (the page the renderer asks for while the user scrolls), split into the handler
 * (read the batches, make the rows), the check of the answer against the contract (`full`: every
 * row; `sampled`: the production default, long arrays spot-checked, see `src-main/api/core/dispatch.ts`)
 * and the JSON text the bridge sends (`JSON.stringify` of the envelope). The bridge and the Electron
 * main process answer on one thread, so these ms delay every other answer and, on a small machine,
 * take a core from the renderer while it paints.
 *
 * Data (generated once into bench/.data/dispatch-200k/, reused while the generator is unchanged):
 * the records of `test/e2e/explorer/big-partition.ts`, 2,000 batches × 100 records in 2 segments.
 * Pages are read forward from 40 offsets spread over the partition, in the same order each run.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createDispatch } from '../src-main/api/core/dispatch.ts';
import { createServerApi } from '../src-main/api/index.ts';
import { contract } from '../src-shared/contract.ts';
import { generateBigPartition } from '../test/e2e/explorer/big-partition.ts';
import { collectGarbage, fmt3, fmtInt, median, printTable, type BenchOptions } from './lib.ts';

/** Bump when the data layout changes so old data is regenerated. */
const GENERATOR = 1;
const BATCHES = 2_000;
const PAGES = 40;
const CALL = { readOnly: true };

interface DataMeta {
  generator: number;
  records: number;
  dir: string;
}

function ensureData(dataDir: string): DataMeta {
  const root = join(dataDir, 'dispatch-200k');
  const metaFile = join(root, 'meta.json');
  if (existsSync(metaFile)) {
    const meta = JSON.parse(readFileSync(metaFile, 'utf8')) as DataMeta;
    if (meta.generator === GENERATOR && existsSync(meta.dir)) {
      console.log(`data: reusing ${root}`);
      return meta;
    }
  }
  console.log(`data: generating ${fmtInt(BATCHES * 100)} records into ${root}`);
  rmSync(root, { recursive: true, force: true });
  mkdirSync(root, { recursive: true });
  const big = generateBigPartition(join(root, 'broker-1'), { batches: BATCHES, segments: 2 });
  const meta: DataMeta = { generator: GENERATOR, records: big.records, dir: big.dir };
  writeFileSync(metaFile, JSON.stringify(meta, null, 2));
  return meta;
}

const ms = (t0: bigint): number => Number(process.hrtime.bigint() - t0) / 1e6;

export async function run(opts: BenchOptions): Promise<void> {
  if (opts.sizeMb !== undefined) console.log('note: --size-mb is ignored by the dispatch bench (the partition is 200,000 records)');
  const meta = ensureData(opts.dataDir);
  const server = createServerApi({ version: 'bench', transport: 'bridge' });
  const full = createDispatch(server.ctx, server.handlers, { responseCheck: 'full' });
  const sampled = createDispatch(server.ctx, server.handlers, { responseCheck: 'sampled' });
  const requests = Array.from({ length: PAGES }, (_, i) => ({ dir: meta.dir, from: String(Math.floor((i * meta.records) / PAGES) + 7), limit: 200 }));
  const parsedRequests = requests.map((r) => contract['log.records'].request.parse(r));
  const opened = await server.dispatch('session.open', { path: join(meta.dir, '..') }, CALL);
  if (!opened.ok) throw new Error(`session.open: ${opened.error.message}`);

  // Warm-up: open the partition (cached per context), JIT every path once.
  for (const r of requests.slice(0, 5)) {
    await full('log.records', r, CALL);
    await sampled('log.records', r, CALL);
  }

  const runs: Record<'handler' | 'checkFull' | 'checkSampled' | 'json' | 'dispatchFull' | 'dispatchSampled', number[]> = {
    handler: [],
    checkFull: [],
    checkSampled: [],
    json: [],
    dispatchFull: [],
    dispatchSampled: [],
  };
  let bytes = 0;
  let rows = 0;
  for (let it = 0; it < opts.iterations; it++) {
    collectGarbage();
    const per = { handler: [] as number[], checkFull: [] as number[], checkSampled: [] as number[], json: [] as number[], dispatchFull: [] as number[], dispatchSampled: [] as number[] };
    for (let i = 0; i < PAGES; i++) {
      let t0 = process.hrtime.bigint();
      const answer = await server.handlers['log.records'](parsedRequests[i]!, CALL);
      per.handler.push(ms(t0));
      t0 = process.hrtime.bigint();
      const checked = contract['log.records'].response.safeParse(answer);
      per.checkFull.push(ms(t0));
      if (!checked.success) throw new Error(`log.records answer does not match the contract: ${checked.error.message}`);
      t0 = process.hrtime.bigint();
      const text = JSON.stringify({ ok: true, result: answer });
      per.json.push(ms(t0));
      bytes = Math.max(bytes, text.length);
      rows = Math.max(rows, answer.rows.length);
      t0 = process.hrtime.bigint();
      const env = await full('log.records', requests[i], CALL);
      per.dispatchFull.push(ms(t0));
      t0 = process.hrtime.bigint();
      const env2 = await sampled('log.records', requests[i], CALL);
      per.dispatchSampled.push(ms(t0));
      if (!env.ok || !env2.ok) throw new Error('log.records failed');
    }
    // The sampled check alone: the dispatch time minus the handler's, measured directly instead.
    for (let i = 0; i < PAGES; i++) {
      const answer = await server.handlers['log.records'](parsedRequests[i]!, CALL);
      const t0 = process.hrtime.bigint();
      await createDispatch(server.ctx, { ...server.handlers, 'log.records': async () => answer }, { responseCheck: 'sampled' })('log.records', requests[i], CALL);
      per.checkSampled.push(ms(t0));
    }
    for (const k of Object.keys(runs) as (keyof typeof runs)[]) runs[k].push(median(per[k]));
  }
  const row = (label: string, xs: number[], note = ''): string[] => [label, `${fmt3(median(xs))} ms`, `${fmt3(Math.min(...xs))} – ${fmt3(Math.max(...xs))} ms`, note];
  console.log(`partition: ${fmtInt(meta.records)} records; pages of ${rows} rows, ${fmtInt(bytes)} bytes of JSON; ${PAGES} pages × ${opts.iterations} runs (median per page, then median / range over runs)`);
  printTable(
    ['per 200-row log.records page', 'median', 'range over runs', ''],
    [
      row('handler (read batches, make rows)', runs.handler),
      row('check the answer: full (every row)', runs.checkFull, 'tests, dev'),
      row('check the answer: sampled (+ request check)', runs.checkSampled, 'production default'),
      row('JSON.stringify of the envelope', runs.json),
      row('dispatch, full check', runs.dispatchFull),
      row('dispatch, sampled check', runs.dispatchSampled),
    ],
  );
}
