/**
 * `klx groups DIR [--group G] [--now MS] [--isolation L] [--offsets-partitions N]
 *  [--retention-minutes M] [--json]`: the consumer groups stored in the `__consumer_offsets`
 * partitions under DIR, with what `kafka-consumer-groups.sh --describe` prints (GROUP, TOPIC,
 * PARTITION, CURRENT-OFFSET, LOG-END-OFFSET, LAG, CONSUMER-ID, HOST, CLIENT-ID; its LOG-END-OFFSET is
 * what ListOffsets latest answers a client, the high watermark, so the column prints the high
 * watermark, or the log end offset where replication-offset-checkpoint has none) plus the records
 * actually left (RECORD-LAG), where the consumer continues (NEXT-OFFSET) and a DIAGNOSIS (engine:
 * `engine/groups/`).
 *
 * `--json` prints NDJSON, one object per group, topic and partition: `group, topic, partition,
 * currentOffset, logStartOffset, logEndOffset, lag, recordLag, nextOffset, diagnosis,
 * commitTimestamp, consumerId, host, clientId` (and `localLogEndOffset, highWatermark, lastStableOffset,
 * leaderEpoch, expired, expiresAt, detail`); int64 as JSON numbers within 2^53, else decimal strings.
 * `logEndOffset` is the text's LOG-END-OFFSET (what ListOffsets latest answers: the high watermark, or
 * the log end offset without a replication-offset-checkpoint entry) and `lag` is computed against it
 * as kafka-consumer-groups.sh does (ConsumerGroupCommand.getLag); `localLogEndOffset` is the end of
 * the log on disk (UnifiedLog.logEndOffset). A negative lag is printed `-N (ahead)` and explained
 * in `detail` (and under the table).
 */
import { int64Json } from '../../engine/format/batch-json.ts';
import { KlxError } from '../../engine/errors.ts';
import { describeGroups, type GroupOffsetRow, type IsolationLevel } from '../../engine/groups/group-offsets.ts';
import { loadGroups } from '../../engine/groups/groups-load.ts';
import { allPartitions, openPath } from '../../engine/log/log-dir.ts';
import { OutputWriter } from '../output.ts';

export interface GroupsCliOptions {
  group?: string;
  now?: number;
  isolation?: IsolationLevel;
  offsetsPartitions?: number;
  retentionMinutes?: number;
  json?: boolean;
}

const j = (v: bigint | null) => (v === null ? null : int64Json(v));

/** The NDJSON object of one row; `loadFailure` is its group's offsetsPartitionLoadFailure text (CoordinatorLoaderImpl), or null. */
export function groupRowJson(r: GroupOffsetRow, loadFailure: string | null = null): Record<string, unknown> {
  return {
    group: r.group,
    topic: r.topic,
    partition: r.partition,
    currentOffset: j(r.committedOffset),
    logStartOffset: j(r.logStartOffset),
    logEndOffset: j(r.highWatermark ?? r.logEndOffset),
    localLogEndOffset: j(r.logEndOffset),
    lag: j(r.lag),
    recordLag: r.recordLag,
    nextOffset: j(r.nextOffset),
    diagnosis: r.diagnosis,
    commitTimestamp: j(r.commitTimestamp),
    consumerId: r.consumerId,
    host: r.host,
    clientId: r.clientId,
    highWatermark: j(r.highWatermark),
    lastStableOffset: j(r.lastStableOffset),
    leaderEpoch: r.leaderEpoch,
    expired: r.expired,
    expiresAt: j(r.expiresAt),
    detail: r.detail,
    offsetsPartitionLoadFailure: loadFailure,
  };
}

const HEADERS = ['GROUP', 'TOPIC', 'PARTITION', 'CURRENT-OFFSET', 'LOG-END-OFFSET', 'LAG', 'CONSUMER-ID', 'HOST', 'CLIENT-ID', 'RECORD-LAG', 'NEXT-OFFSET', 'DIAGNOSIS'];

function table(rows: string[][]): string[] {
  const widths = HEADERS.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  return [HEADERS, ...rows].map((r) => r.map((c, i) => c.padEnd(widths[i]!)).join(' ').trimEnd());
}

/** Runs `klx groups` (its options and help are declared in `../registry.ts`). */
export async function runGroups(dir: string, opts: GroupsCliOptions): Promise<void> {
  const logs = allPartitions(openPath(dir)).map((p) => p.log);
  const loaded = await loadGroups(logs, opts.offsetsPartitions !== undefined ? { offsetsTopicPartitions: opts.offsetsPartitions } : {});
  if (loaded.offsetsTopic.present.length === 0) throw new KlxError('not-found', 'no __consumer_offsets partition folder among the opened ones: open the log directory (or directories) holding __consumer_offsets-N', { file: dir });
  const d = await describeGroups(loaded, {
    ...(opts.group !== undefined ? { group: opts.group } : {}),
    ...(opts.now !== undefined ? { now: BigInt(opts.now) } : {}),
    ...(opts.isolation ? { isolation: opts.isolation } : {}),
    ...(opts.retentionMinutes !== undefined ? { offsetsRetentionMs: BigInt(opts.retentionMinutes) * 60_000n } : {}),
  });
  const out = new OutputWriter(process.stdout);
  if (opts.json) {
    const failures = new Map(d.groups.map((g) => [g.group, g.offsetsPartitionLoadFailure?.text ?? null]));
    for (const r of d.offsets) await out.line(JSON.stringify(groupRowJson(r, failures.get(r.group) ?? null)));
    await out.end();
    return;
  }
  const t = loaded.offsetsTopic;
  await out.line(`__consumer_offsets: ${t.present.length} of ${t.numPartitions} partitions opened${t.numPartitionsAssumed ? ' (offsets.topic.num.partitions assumed; --offsets-partitions N to give it)' : ''}${t.absent.length > 0 ? `; absent: ${compactRanges(t.absent)}` : ''}`);
  await out.line(`now ${new Date(Number(d.now)).toISOString()}, offsets.retention.minutes ${d.offsetsRetentionMs / 60_000n}, record lag for ${d.isolation} consumers`);
  for (const p of loaded.store.problems) await out.line(`! ${p.file}: position ${p.position}: offset ${p.offset}: ${p.reason}`);
  const rows0 = (group: string) => d.offsets.filter((r) => r.group === group);
  for (const g of d.groups) {
    await out.line('');
    const kind = g.type === 'classic' ? `classic ${g.protocolType || '(no protocol type)'}` : g.type;
    await out.line(`Group ${g.group}: ${kind}, state ${g.state}, ${g.members} member${g.members === 1 ? '' : 's'}${g.generation !== null ? `, ${g.type === 'classic' ? 'generation' : 'epoch'} ${g.generation}` : ''}, __consumer_offsets-${g.offsetsPartition}${g.offsetsPartitionMissing ? ' (NOT opened: what is listed may be incomplete)' : ''}; lag ${g.totalLag}${rows0(g.group).some((r) => r.lag !== null && r.lag < 0n && !r.expired) ? ' (negative lags count as 0)' : ''}, record lag ${g.totalRecordLag}${g.expiredOffsets ? `; ${g.expiredOffsets} expired offset${g.expiredOffsets === 1 ? '' : 's'}, not counted in the lag` : ''}`);
    if (g.offsetsPartitionLoadFailure) await out.line(`!! ${g.offsetsPartitionLoadFailure.text} (${g.offsetsPartitionLoadFailure.file}: position ${g.offsetsPartitionLoadFailure.position}); the rows below are what this tool read around it`);
    for (const p of g.problems) await out.line(`! ${p.file}: position ${p.position}: offset ${p.offset}: ${p.reason}`);
    if (g.pendingTransactionalProducers.length > 0) await out.line(`! transactional offset commits of producer ${g.pendingTransactionalProducers.join(', ')} have no COMMIT/ABORT marker yet (not applied)`);
    const rows = d.offsets.filter((r) => r.group === g.group);
    if (rows.length === 0) continue;
    const s = (v: bigint | number | null) => (v === null ? '-' : String(v));
    for (const l of table(rows.map((r) => [r.group, r.topic, String(r.partition), s(r.committedOffset), s(r.highWatermark ?? r.logEndOffset), r.lag !== null && r.lag < 0n ? `${r.lag} (ahead)` : s(r.lag), r.consumerId ?? '-', r.host ?? '-', r.clientId ?? '-', s(r.recordLag), s(r.nextOffset), r.diagnosis + (r.expired ? ' (expired)' : '')]))) await out.line(l);
    for (const r of rows) if (r.diagnosis !== 'ok' || r.expired || (r.lag !== null && r.lag < 0n)) await out.line(`  ${r.topic}-${r.partition}: ${r.detail}${r.expired ? `; the offset expired at ${new Date(Number(r.expiresAt)).toISOString()} (the coordinator deletes it, OffsetMetadataManager.cleanupExpiredOffsets: the consumer resets per auto.offset.reset)` : ''}`);
  }
  await out.end();
}

/** `0-3, 7, 9-12` */
function compactRanges(xs: number[]): string {
  const out: string[] = [];
  for (let i = 0; i < xs.length; ) {
    let k = i;
    while (k + 1 < xs.length && xs[k + 1] === xs[k]! + 1) k++;
    out.push(k === i ? String(xs[i]) : `${xs[i]}-${xs[k]}`);
    i = k + 1;
  }
  return out.join(', ');
}
