/**
 * `klx offset-for-time DIR --timestamp MS|ISO-DATE|earliest|latest [--isolation LEVEL] [--partition TOPIC-N] [--json]`:
 * the first offset whose record has a timestamp at or after the target, as a broker answers a
 * consumer's ListOffsets / `offsetsForTimes` (engine `listOffsets`; Kafka
 * `Partition.fetchOffsetForTimestamp`, `ReplicaManager.fetchOffset`, `UnifiedLog.fetchOffsetByTimestamp`).
 * `earliest` is the log start offset; `latest` the consumer's last fetchable offset: the high
 * watermark (read_uncommitted; offline: `replication-offset-checkpoint`, else the log end offset with
 * a note) or the last stable offset (read_committed). A record at or past that offset is not an
 * answer. When no record qualifies the answer is Kafka's "offset −1, timestamp −1" (exit status 0:
 * it is an answer, not an error).
 *
 * Output: one text line (and a `note: ...` line when the high watermark is not the checkpointed one),
 * or with `--json` one object `{"found":bool,"target":...,"offset":...,"timestamp":...,"leaderEpoch":...,
 * "segmentBaseOffset":...,"isolation":...,"lastFetchableOffset":...,"limit":"high-watermark"|
 * "last-stable-offset"|"log-end","logEndOffset":...,"pastLimitOffset":...|null,"note":...|null}`.
 */
import { instantUtc } from '../time-arg.ts';
import { int64Json } from '../../engine/format/batch-json.ts';
import type { IsolationLevel } from '../../engine/log/read-defaults.ts';
import { EARLIEST_TIMESTAMP, LATEST_TIMESTAMP, listOffsets, type FetchableLimit } from '../../engine/log/time-lookup.ts';
import { OutputWriter } from '../output.ts';
import { openPartitionArg, problemText } from './fetch.ts';

export interface OffsetForTimeCliOptions {
  timestamp: bigint;
  partition?: string;
  /** Default read_uncommitted. */
  isolation?: IsolationLevel;
  json?: boolean;
}

const LIMIT_NAME: Record<FetchableLimit['kind'], string> = { 'high-watermark': 'the high watermark', 'last-stable-offset': 'the last stable offset', 'log-end': 'the log end offset' };

function when(ts: bigint): string {
  return ts >= 0n && ts < 8640000000000000n ? ` (${new Date(Number(ts)).toISOString()})` : '';
}

/** Runs `klx offset-for-time` (its options and help are declared in `../registry.ts`). */
export async function runOffsetForTime(dir: string, opts: OffsetForTimeCliOptions): Promise<void> {
  const log = openPartitionArg(dir, opts.partition);
  const isolation = opts.isolation ?? 'read_uncommitted';
  const { answer: r, limit, pastLimit } = await listOffsets(log, opts.timestamp, isolation, { onProblem: (p) => process.stderr.write(problemText(p) + '\n') });
  const out = new OutputWriter(process.stdout);
  const target = opts.timestamp === EARLIEST_TIMESTAMP ? 'earliest' : opts.timestamp === LATEST_TIMESTAMP ? 'latest' : `timestamp ${opts.timestamp}${when(opts.timestamp)}`;
  const limitText = `${LIMIT_NAME[limit.kind]} ${limit.offset}`;
  if (opts.json) {
    await out.line(
      JSON.stringify({
        found: r !== null,
        target: int64Json(opts.timestamp),
        ...(opts.timestamp >= 0n ? { targetUtc: instantUtc(opts.timestamp) } : {}),
        offset: int64Json(r?.offset ?? -1n),
        timestamp: int64Json(r?.timestamp ?? -1n),
        leaderEpoch: r?.leaderEpoch ?? null,
        segmentBaseOffset: r?.segmentBaseOffset == null ? null : int64Json(r.segmentBaseOffset),
        isolation,
        lastFetchableOffset: int64Json(limit.offset),
        limit: limit.kind,
        logEndOffset: int64Json(log.logEndOffset),
        pastLimitOffset: pastLimit === null ? null : int64Json(pastLimit.offset),
        note: limit.note,
      }),
    );
  } else {
    if (r === null && pastLimit !== null) {
      await out.line(`${target}: no record a ${isolation} consumer may fetch has a timestamp at or after it (offset -1, timestamp -1): the first one, offset ${pastLimit.offset} timestamp ${pastLimit.timestamp}, is at or past ${limitText} (Kafka ReplicaManager.fetchOffset)`);
    } else if (r === null) {
      await out.line(`${target}: no record has a timestamp at or after it (offset -1, timestamp -1)`);
    } else if (opts.timestamp === LATEST_TIMESTAMP) {
      await out.line(`${target}: offset ${r.offset}${r.leaderEpoch !== null ? ` leader epoch ${r.leaderEpoch}` : ''} (${isolation}: ${LIMIT_NAME[limit.kind]}; log end offset ${log.logEndOffset}; Kafka Partition.fetchOffsetForTimestamp)`);
    } else if (r.timestamp < 0n) {
      await out.line(`${target}: offset ${r.offset}${r.leaderEpoch !== null ? ` leader epoch ${r.leaderEpoch}` : ''}`);
    } else {
      await out.line(`${target}: offset ${r.offset} timestamp ${r.timestamp}${when(r.timestamp)}${r.leaderEpoch !== null ? ` leader epoch ${r.leaderEpoch}` : ''} (segment ${r.segmentBaseOffset})`);
    }
    if (limit.note !== null && opts.timestamp !== EARLIEST_TIMESTAMP) await out.line(`note: ${limit.note}`);
  }
  await out.end();
}
