/**
 * Browsing decodes only what is on screen (issue 11): the first page of the records table (200
 * rows, as the Records view asks for it) of a 5,000,000-record partition of Confluent-framed Avro
 * values, with `_schemas-0` beside it, through the API as the app calls it (`log.open`, then
 * `log.records`: main decodes the page's keys and values). Each iteration starts a fresh API (cold:
 * the folder's decoder reads `_schemas` and compiles the schema on that first page). Limit: the
 * first rows on screen within 0.5 s; printed beside the same page read by the engine without
 * decoding (`readForward`, the peer) in the same run, and the machine load.
 *
 * Data: bodies encoded with avsc (bench data, not test fixtures), written once into
 * bench/.data/browse-avro-5m/ (reused while the parameters are unchanged).
 */
import { join } from 'node:path';
import avro from 'avsc';
import { createServerApi } from '../src-main/api/index.ts';
import { openPath } from '../src-main/engine/log/log-dir.ts';
import { readForward } from '../src-main/engine/log/fetch.ts';
import type { RecordRow } from '../src-shared/log-types.ts';
import { ensureOrdersLog, frame, order, ORDER_AVRO_SCHEMA } from './avro-orders.ts';
import { collectGarbage, fmt3, fmtInt, loadLine, median, printTable, progress, timeIt, type BenchOptions } from './lib.ts';

const N = 5_000_000;
const PAGE = 200;
const LIMIT_S = 0.5;
const PARAMS = { generator: 1, records: N, perBatch: 1000 };
function ensureLog(dataDir: string): string {
  const type = avro.Type.forSchema(ORDER_AVRO_SCHEMA as avro.Schema);
  return ensureOrdersLog({ logDir: join(dataDir, 'browse-avro-5m'), topic: 'orders', records: N, perBatch: PARAMS.perBatch, params: PARAMS, value: (n) => frame(1, type.toBuffer(order(n))) });
}

export async function run(opts: BenchOptions): Promise<void> {
  const logDir = ensureLog(opts.dataDir);
  const dir = join(logDir, 'orders-0');
  const api: number[] = [];
  const peer: number[] = [];
  let check = '';
  for (let i = 0; i <= opts.iterations; i++) {
    collectGarbage();
    progress(`first page ${i === 0 ? '(warm-up)' : `#${i}`}`);
    const t = await timeIt(async () => {
      const server = createServerApi({ version: 'bench', transport: 'bridge' });
      const open = await server.dispatch('log.open', { path: logDir }, { readOnly: true });
      if (!open.ok) throw new Error(open.error.message);
      const page = await server.dispatch('log.records', { dir, from: 'start', limit: PAGE }, { readOnly: true });
      if (!page.ok) throw new Error(page.error.message);
      const rows = (page.result as { rows: RecordRow[] }).rows;
      return `${rows.length} rows, row 0 ${rows[0]!.valueDecoded?.format} id ${rows[0]!.valueDecoded?.schemaId}: ${rows[0]!.valueDecoded?.text?.slice(0, 40)}…`;
    });
    check = t.result;
    collectGarbage();
    const p = await timeIt(async () => {
      const log = openPath(logDir).logDirs[0]!.partitions.find((x) => x.topic === 'orders')!;
      return (await readForward(log, log.logStartOffset, PAGE, { includeControl: true })).records.length;
    });
    if (i > 0) {
      api.push(t.seconds);
      peer.push(p.seconds);
    }
  }
  progress('');
  const a = median(api);
  const b = median(peer);
  printTable(
    [`first page (${PAGE} rows) of ${fmtInt(N)} Avro records, cold (median of ${opts.iterations})`, 'seconds', 'note'],
    [
      ['engine page without decoding (peer)', fmt3(b), ''],
      ['log.open + log.records, decoded', fmt3(a), `${a <= LIMIT_S ? 'met' : 'NOT met'} (≤ ${LIMIT_S} s)`],
    ],
    new Set([1]),
  );
  console.log(`check: ${check}\n${loadLine()}`);
}
