/**
 * `klx offset-for-time DIR --timestamp MS|ISO-DATE|earliest|latest [--partition TOPIC-N] [--json]`:
 * the first offset whose record has a timestamp at or after the target, as Kafka's ListOffsets /
 * `offsetsForTimes` answers it (engine `offsetForTimestamp`; Kafka `UnifiedLog.fetchOffsetByTimestamp`).
 * `earliest` is the log start offset, `latest` the log end offset. When no record qualifies the answer
 * is Kafka's "offset −1, timestamp −1" (exit status 0: it is an answer, not an error).
 *
 * Output: one text line, or with `--json` one object
 * `{"found":bool,"offset":...,"timestamp":...,"leaderEpoch":...,"segmentBaseOffset":...}`.
 */
import { int64Json } from '../../engine/format/batch-json.ts';
import { EARLIEST_TIMESTAMP, LATEST_TIMESTAMP, offsetForTimestamp } from '../../engine/log/time-lookup.ts';
import { OutputWriter } from '../output.ts';
import { openPartitionArg, problemText } from './fetch.ts';

export interface OffsetForTimeCliOptions {
  timestamp: bigint;
  partition?: string;
  json?: boolean;
}

function when(ts: bigint): string {
  return ts >= 0n && ts < 8640000000000000n ? ` (${new Date(Number(ts)).toISOString()})` : '';
}

/** Runs `klx offset-for-time` (its options and help are declared in `../registry.ts`). */
export async function runOffsetForTime(dir: string, opts: OffsetForTimeCliOptions): Promise<void> {
  const log = openPartitionArg(dir, opts.partition);
  const r = await offsetForTimestamp(log, opts.timestamp, { onProblem: (p) => process.stderr.write(problemText(p) + '\n') });
  const out = new OutputWriter(process.stdout);
  const target = opts.timestamp === EARLIEST_TIMESTAMP ? 'earliest' : opts.timestamp === LATEST_TIMESTAMP ? 'latest' : `timestamp ${opts.timestamp}${when(opts.timestamp)}`;
  if (opts.json) {
    await out.line(
      JSON.stringify({
        found: r !== null,
        target: int64Json(opts.timestamp),
        offset: int64Json(r?.offset ?? -1n),
        timestamp: int64Json(r?.timestamp ?? -1n),
        leaderEpoch: r?.leaderEpoch ?? null,
        segmentBaseOffset: r?.segmentBaseOffset == null ? null : int64Json(r.segmentBaseOffset),
      }),
    );
  } else if (r === null) {
    await out.line(`${target}: no record has a timestamp at or after it (offset -1, timestamp -1)`);
  } else if (r.timestamp < 0n) {
    await out.line(`${target}: offset ${r.offset}${r.leaderEpoch !== null ? ` leader epoch ${r.leaderEpoch}` : ''}`);
  } else {
    await out.line(`${target}: offset ${r.offset} timestamp ${r.timestamp}${when(r.timestamp)}${r.leaderEpoch !== null ? ` leader epoch ${r.leaderEpoch}` : ''} (segment ${r.segmentBaseOffset})`);
  }
  await out.end();
}
