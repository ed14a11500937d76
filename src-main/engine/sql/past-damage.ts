/**
 * The notices of the SQL tables about records that lie past damage (see `past_damage` in
 * `log-tables.ts`): per partition, how many records and how many keys of `latest` lie after damage
 * in its log, where the first damage is, what a consumer does there (CompletedFetch) and what a
 * broker restarting now would do with it (LogLoader.recoverLog, LogSegment.recover). The rule is `klx fetch`'s: the rows stay listed, flagged, and the notice
 * says so. Read from the tables (`klx_internal.first_damage`, `record_rows`, `latest_offsets`), so a
 * table set reused from the cache gives the same notices.
 */
import { basename } from 'node:path';
import type { DuckDBConnection } from './duckdb.ts';
import { allPartitions, type OpenedLogs } from '../log/log-dir.ts';
import { framingConsequence, KRAFT_METADATA_TOPIC, startupRecoveryOf, type StartupRecovery } from '../log/corruption-consequences.ts';
import { framingAt, framingPlace } from '../log/broker-framing.ts';
import type { PartitionLog } from '../log/partition-log.ts';
import { MAX_INFLATED_BYTES_CEILING } from '../format/compression.ts';

/** One notice: `partition` is the folder's path relative to the opened one (its name when it is the one opened). */
export interface SqlNotice {
  partition: string;
  notice: string;
}

/**
 * The past-damage notices of the partitions of `opened` whose logs hold damage with records after it.
 * @param connection a connection to the built tables (schema `klx_internal` as `log-tables.ts` makes it).
 * @returns one notice per such partition, in partition order; none when no record lies past damage.
 * @throws KlxError `internal` when DuckDB fails (the tables are missing).
 */
export async function pastDamageNotices(connection: DuckDBConnection, opened: OpenedLogs): Promise<SqlNotice[]> {
  const reader = await connection.runAndReadAll(
    'SELECT f.partition_id, f.segment_index, f.position, f.kind, f.code, ' +
      '(SELECT count(*) FROM klx_internal.record_rows r WHERE r.partition_id = f.partition_id AND r.past_damage) AS records, ' +
      '(SELECT count(*) FROM klx_internal.record_rows r JOIN klx_internal.latest_offsets l ON r.partition_id = l.partition_id AND r."offset" = l."offset" WHERE r.partition_id = f.partition_id AND r.past_damage) AS latest_keys ' +
      'FROM klx_internal.first_damage f ORDER BY f.partition_id',
  );
  const parts = allPartitions(opened);
  const out: SqlNotice[] = [];
  for (const [pid, segIndex, position, kind, code, records, latestKeys] of reader.getRows() as [number, number, bigint, string, string, bigint, bigint][]) {
    if (records === 0n) continue;
    const { rel, log } = parts[pid]!;
    const seg = log.segments[segIndex]!;
    const startup = startupRecoveryOf(
      log.segments.map((x) => x.baseOffset),
      segIndex,
      log.startupCleanShutdown,
      log.startupRecoveryPoint,
      seg.files.indexSize < 0,
      log.topic,
    );
    const where = `${basename(seg.files.log)} position ${position}`;
    const n = Number(records);
    const k = Number(latestKeys);
    // The offset a consumer reading in order stands at when it reaches the damage: after the last batch before it in its segment.
    const before = await connection.runAndReadAll(
      `SELECT max(last_offset) FROM klx_internal.batch_rows WHERE partition_id = ${Number(pid)} AND segment_base_offset = ${seg.baseOffset} AND "position" < ${Number(position)}`,
    );
    const lastBefore = (before.getRows()[0]?.[0] ?? null) as bigint | null;
    const failAt = lastBefore === null ? seg.baseOffset : lastBefore + 1n;
    out.push({
      partition: rel === '.' ? basename(log.dir) : rel,
      notice:
        `${n} record${n === 1 ? '' : 's'} of records lie${n === 1 ? 's' : ''} past damage in the log (the first: ${kind === code ? code : `${kind} ${code}`} at ${where}): ` +
        `${log.topic === KRAFT_METADATA_TOPIC ? KRAFT_READER : consumerAt(code, log, segIndex, Number(position), failAt, n)}; ${brokerAt(startup, seg.baseOffset, kind)}. ` +
        `${n === 1 ? 'It is' : 'They are'} listed with past_damage = true (past_damage_segment and past_damage_position: the damage at or just before each); ` +
        `${k} key${k === 1 ? '' : 's'} of latest ${k === 1 ? 'has its' : 'have their'} latest value past damage.`,
    });
  }
  return out;
}

/**
 * The notices of the partitions where the build left batches out because their records inflate past
 * this tool's decompression bound (`damage` rows of kind `not-checked`): not damage (a consumer
 * decompresses record by record: CompletedFetch, DefaultRecordBatch), but their records are missing
 * from `records`, `latest` and `state`, so the notice counts them and names the option that reads them.
 * @returns one notice per such partition, in partition order.
 * @throws KlxError `internal` when DuckDB fails (the tables are missing).
 */
export async function notCheckedNotices(connection: DuckDBConnection, opened: OpenedLogs): Promise<SqlNotice[]> {
  const reader = await connection.runAndReadAll(
    'SELECT d.partition_id, count(*) AS batches, sum(b.record_count) AS records, min(b.base_offset) AS first, max(b.last_offset) AS last, ' +
      "max(CAST(regexp_extract(d.reason, 'decompression bound of ([0-9]+) bytes', 1) AS BIGINT)) AS bound " +
      'FROM damage d JOIN klx_internal.batch_rows b ON b.partition_id = d.partition_id AND b.segment_base_offset = d.segment_base_offset AND b."position" = d."position" ' +
      "WHERE d.kind = 'not-checked' GROUP BY d.partition_id ORDER BY d.partition_id",
  );
  const parts = allPartitions(opened);
  return (reader.getRows() as [number, bigint, bigint, bigint, bigint, bigint | null][]).map(([pid, batches, records, first, last, bound]) => {
    const { rel, log } = parts[pid]!;
    const n = Number(batches);
    return {
      partition: rel === '.' ? basename(log.dir) : rel,
      notice:
        `not checked: ${n} batch${n === 1 ? '' : 'es'} (${records} records, offsets ${first}..${last}) inflate${n === 1 ? 's' : ''} past this tool's decompression bound${bound !== null ? ` of ${bound} bytes` : ''}, ` +
        `so ${n === 1 ? 'its' : 'their'} records are not in records, latest or state (damage lists ${n === 1 ? 'it' : 'them'} with kind not-checked). ` +
        `Not damage: a consumer decompresses record by record (CompletedFetch, DefaultRecordBatch). Read ${n === 1 ? 'it' : 'them'} with klx query --max-inflated-bytes <bytes> (up to ${MAX_INFLATED_BYTES_CEILING}), or in the app with Verify's "Read batches up to 1 GiB" (app.decompressionBound), then open the tables again.`,
    };
  });
}

/** Who reads `__cluster_metadata` instead of a consumer, and what it does at damage (KafkaRaftClient). */
const KRAFT_READER = `no consumer reads ${KRAFT_METADATA_TOPIC} (only KRaft voters and observers fetch it: KafkaRaftClient); a KRaft node reading it for its listeners stops at the damage (RecordsIterator.readBatch: CorruptRecordException)`;

/**
 * What a consumer reading in order does at the first damage (at byte `position` of segment `segIndex`, reached at
 * offset `failAt`): by its code for a batch (CompletedFetch), else by how a broker frames the bytes there, which
 * their size field decides (FileLogInputStream.nextBatch: see framingConsequence).
 */
function consumerAt(code: string, log: PartitionLog, segIndex: number, position: number, failAt: bigint, n: number): string {
  const reaches = ` and reaches ${n === 1 ? 'it' : 'them'} only by seeking past it`;
  if (code === 'crc-mismatch') return `a consumer with check.crcs=true (the default) reading in order stops at that batch (CorruptRecordException: CompletedFetch.maybeEnsureValid)${reaches}`;
  if (code === 'corrupt-batch' || code === 'unknown-codec' || code === 'corrupt-record') return `a consumer reading in order fails on that batch's records (CompletedFetch: the batch's record iterator throws)${reaches}`;
  const seg = log.segments[segIndex]!;
  let f;
  try {
    f = framingAt(seg.files.log, position, seg.size);
  } catch {
    return `a consumer reading in order stops at offset ${failAt}${reaches} (the bytes could not be read again to say how a broker frames them)`;
  }
  return framingConsequence(f, framingPlace(log, segIndex, position, failAt), log.topic);
}

/** What a broker restarting now does with the segment holding the first damage (LogLoader, LogSegment.recover). */
function brokerAt(s: StartupRecovery, base: bigint, kind: string): string {
  // LogSegment.recover checks each batch's size and CRC (ensureValid) and its offsets, not the records inside a data
  // batch (a control batch's marker is read, by the producer state update, and a failure there cuts the segment).
  if (kind === 'undecodable-batch' && (s.kind === 'recovered' || s.kind === 'recovered-alone')) {
    return `a broker restarting now recovers segment ${base} (${s.kind === 'recovered' ? 'no clean shutdown, at or after the recovery point: LogLoader.recoverLog' : 'its .index is missing: LogLoader.loadSegmentFiles'}) and keeps a data batch whose CRC is valid (LogSegment.recover checks a batch's size and CRC, not the records inside; only a control batch's marker is read, and a failure there cuts the segment), so the records past the damage stay on disk`;
  }
  switch (s.kind) {
    case 'recovered':
      return `a broker restarting now recovers segment ${base} (no clean shutdown, at or after the recovery point: LogLoader.recoverLog), cuts it at the damage (LogSegment.recover) and deletes the later segments, so the records past the damage would be gone`;
    case 'recovered-alone':
      return `a broker restarting now recovers segment ${base} alone (its .index is missing: LogLoader.loadSegmentFiles) and cuts it at the damage (LogSegment.recover), so the records after it in that segment would be gone`;
    case 'clean-shutdown':
      return `a broker restarting now does not check segment ${base} (clean shutdown: LogLoader.recoverLog recovers no segment), so the records past the damage stay on disk`;
    case 'below-recovery-point':
      return `a broker restarting now does not check segment ${base} (below the recovery point ${s.recoveryPoint}: LogLoader.recoverLog recovers only the segments from the one holding it on), so the records past the damage stay on disk`;
  }
}
