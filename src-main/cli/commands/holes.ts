/**
 * `klx holes DIR [--partition TOPIC-N] [--json]`: every offset range of a partition that holds no
 * record a consumer would receive (CompletedFetch.nextFetchedRecord), with its cause (engine `scanHoles`: compaction between or inside
 * batches, control records, aborted transactions, below the log start offset, missing segments,
 * empty batches, damaged regions and tails), then totals.
 *
 * Output: a table (from, to, count, cause, segment, detail) and a totals block; or `--json` NDJSON:
 * `{"type":"hole",...}` per range (int64 beyond 2^53 as decimal strings), then
 * `{"type":"summary",...}` with per-cause totals and the offsets missing in [logStartOffset, logEndOffset).
 */
import { int64Json } from '../../engine/format/batch-json.ts';
import { HOLE_CAUSES, scanHolesInParallel, type HoleCause, type OffsetHole } from '../../engine/log/holes.ts';
import { closeScanPool, scanRunner, scanSplitMinBytes } from '../../api/log/scan-pool.ts';
import { OutputWriter } from '../output.ts';
import { openPartitionArg } from './fetch.ts';

export interface HolesCliOptions {
  partition?: string;
  json?: boolean;
}

/** JSON line of a hole. */
export function holeJson(h: OffsetHole): Record<string, unknown> {
  const o: Record<string, unknown> = {
    type: 'hole',
    from: int64Json(h.from),
    to: int64Json(h.to),
    count: int64Json(h.count),
    cause: h.cause,
    segmentBaseOffset: h.segmentBaseOffset === null ? null : int64Json(h.segmentBaseOffset),
    detail: h.detail,
  };
  if (h.position !== undefined) o.position = h.position;
  return o;
}

const COLUMNS = { from: 20, to: 20, count: 12, cause: 26, segment: 20 };

function row(from: string, to: string, count: string, cause: string, segment: string, detail: string): string {
  return `${from.padStart(COLUMNS.from)} ${to.padStart(COLUMNS.to)} ${count.padStart(COLUMNS.count)}  ${cause.padEnd(COLUMNS.cause)} ${segment.padStart(COLUMNS.segment)}  ${detail}`;
}

/** Runs `klx holes` (its options and help are declared in `../registry.ts`). */
export async function runHoles(dir: string, opts: HolesCliOptions): Promise<void> {
  const log = openPartitionArg(dir, opts.partition);
  const out = new OutputWriter(process.stdout);
  const logStart = log.logStartOffset;
  const logEnd = log.logEndOffset;
  const totals = new Map<HoleCause, { ranges: number; offsets: bigint }>(HOLE_CAUSES.map((c) => [c, { ranges: 0, offsets: 0n }]));
  let missing = 0n;
  let ranges = 0;
  if (!opts.json) {
    await out.line(`holes of ${log.topic}-${log.partition} (${log.dir}): log start offset ${logStart}, log end offset ${logEnd}, first segment ${log.segments[0]?.baseOffset ?? '-'}`);
    await out.line(row('from', 'to', 'count', 'cause', 'segment', 'detail'));
  }
  // Big partitions are walked segment by segment on one thread per core (the same holes: scanHolesInParallel).
  for await (const h of scanHolesInParallel(log, { runner: scanRunner(), minBytes: scanSplitMinBytes() })) {
    ranges++;
    const t = totals.get(h.cause)!;
    t.ranges++;
    t.offsets += h.count;
    const lo = h.from > logStart ? h.from : logStart;
    const hi = h.to < logEnd - 1n ? h.to : logEnd - 1n;
    if (hi >= lo) missing += hi - lo + 1n;
    if (opts.json) await out.line(JSON.stringify(holeJson(h)));
    else await out.line(row(String(h.from), h.count > 0n ? String(h.to) : '-', String(h.count), h.cause, h.segmentBaseOffset === null ? '-' : String(h.segmentBaseOffset), h.detail));
  }
  const span = logEnd - logStart;
  if (opts.json) {
    const byCause: Record<string, unknown> = {};
    for (const [c, t] of totals) if (t.ranges > 0) byCause[c] = { ranges: t.ranges, offsets: int64Json(t.offsets) };
    await out.line(JSON.stringify({ type: 'summary', ranges, missingOffsets: int64Json(missing), offsetSpan: int64Json(span), logStartOffset: int64Json(logStart), logEndOffset: int64Json(logEnd), totals: byCause }));
  } else {
    if (ranges === 0) await out.line('(no holes: every offset from the log start to the log end holds a record)');
    await out.line('totals:');
    for (const [c, t] of totals) if (t.ranges > 0) await out.line(`  ${c.padEnd(COLUMNS.cause)} ${String(t.ranges).padStart(8)} ranges ${String(t.offsets).padStart(20)} offsets`);
    await out.line(`  ${missing} of the ${span} offsets in [${logStart}, ${logEnd}) hold no readable record; ${span - missing} do`);
  }
  await out.end();
  await closeScanPool();
}
