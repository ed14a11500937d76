/**
 * `groups.*` handlers: the consumer groups of an opened folder, loaded from its `__consumer_offsets`
 * partitions by the engine (`engine/groups/`: as Kafka's group coordinator replays them), with lag,
 * record lag, next offset, diagnosis and expiry, and commit histories.
 *
 * - `groups.list` (job): every group with its state, members, topics and total lag; the
 *   `__consumer_offsets` partitions absent from the folder; records that could not be read.
 * - `groups.describe` (job): one group's offsets (the `kafka-consumer-groups.sh --describe` columns
 *   plus record lag, next offset, diagnosis with its sentence, expiry) and members. An unknown group:
 *   `not-found` naming the `__consumer_offsets` partition it would live in.
 * - `groups.history` (job): every commit of a group for one partition, read on demand.
 * - `groups.partitionCommits` (job): the committed offsets of every group in one partition (the
 *   hole map marks them).
 *
 * The loaded groups of a folder are kept (memory grows with groups and committed partitions, not with
 * commit records) until a `log.changed` event touches the folder or its partition folders change
 * (a cheap fingerprint of the listing: segment names and `.log` sizes). Loading walks the files on
 * this thread with the engine's cooperative pacing (yields every ~20 ms, cancellable, with progress).
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { KlxError } from '../../engine/errors.ts';
import { commitHistory } from '../../engine/groups/commit-history.ts';
import { describeGroups, type DescribeOptions, type GroupOffsetRow as EngineRow, type GroupSummary as EngineSummary } from '../../engine/groups/group-offsets.ts';
import { loadGroups, partitionKey, type LoadedGroups } from '../../engine/groups/groups-load.ts';
import { allPartitions, openPath } from '../../engine/log/log-dir.ts';
import type { GroupOffsetRow, GroupSummary } from '../../../src-shared/groups-types.ts';
import { isInsideDir } from '../core/paths.ts';
import type { ApiContext, DomainHandlers, JobContext } from '../core/types.ts';

const s64 = (v: bigint | null): string | null => (v === null ? null : v.toString());

/** A loaded folder and the fingerprint of its listing when loaded. */
interface Loaded {
  root: string;
  offsetsPartitions: number | undefined;
  fingerprint: string;
  loaded: LoadedGroups;
  records: number;
  stale: boolean;
}

/** What identifies the files of the opened partitions cheaply: names and sizes of every segment `.log`. */
function fingerprintOf(root: string): string {
  const parts = allPartitions(openPath(root));
  const out: string[] = [];
  for (const { log } of parts) {
    out.push(log.dir);
    for (const s of log.segments) {
      let size = -1;
      try {
        size = statSync(s.files.log).size;
      } catch {
        // gone: the size stays −1
      }
      out.push(`${s.baseOffset}:${size}`);
    }
  }
  return out.join('\n');
}

function summaryJson(s: EngineSummary): GroupSummary {
  return {
    ...s,
    totalLag: s.totalLag.toString(),
    problems: s.problems.map((p) => ({ file: p.file, position: p.position, offset: p.offset.toString(), reason: p.reason })),
  };
}

function rowJson(r: EngineRow, loaded: LoadedGroups): GroupOffsetRow {
  return {
    group: r.group,
    topic: r.topic,
    partition: r.partition,
    committedOffset: s64(r.committedOffset),
    leaderEpoch: r.leaderEpoch,
    metadata: r.metadata,
    commitTimestamp: s64(r.commitTimestamp),
    expireTimestamp: s64(r.expireTimestamp),
    expiresAt: s64(r.expiresAt),
    expired: r.expired,
    transactional: r.transactional,
    logStartOffset: s64(r.logStartOffset),
    logEndOffset: s64(r.logEndOffset),
    highWatermark: s64(r.highWatermark),
    lastStableOffset: s64(r.lastStableOffset),
    lag: s64(r.lag),
    recordLag: r.recordLag,
    nextOffset: s64(r.nextOffset),
    diagnosis: r.diagnosis,
    detail: r.detail,
    consumerId: r.consumerId,
    host: r.host,
    clientId: r.clientId,
    dir: loaded.partitions.get(partitionKey(r.topic, r.partition))?.dir ?? null,
  };
}

/** Builds the `groups.*` handlers; drops loaded folders touched by `log.changed`. */
export function groupsHandlers(ctx: ApiContext): DomainHandlers<'groups'> {
  const cache = new Map<string, Loaded>();
  ctx.events.subscribe((e) => {
    if (e.type !== 'log.changed') return;
    for (const l of cache.values()) if (e.dirs.some((d) => isInsideDir(d, l.root) || isInsideDir(l.root, d))) l.stale = true;
  });

  /** The groups of the folder at `path` (resolved inside the opened folders), loaded or reused. */
  const load = async (path: string, offsetsPartitions: number | undefined, job: JobContext): Promise<Loaded> => {
    const root = await ctx.session.resolve(path, job);
    job.progress({ phase: 'checking the folder', done: 0, total: null, bytes: 0 });
    const fingerprint = fingerprintOf(root);
    const hit = cache.get(root);
    if (hit && !hit.stale && hit.fingerprint === fingerprint && hit.offsetsPartitions === offsetsPartitions) return hit;
    const logs = allPartitions(openPath(root)).map((p) => p.log);
    const loaded = await loadGroups(logs, { signal: job.signal, onProgress: (p) => job.progress(p), ...(offsetsPartitions !== undefined ? { offsetsTopicPartitions: offsetsPartitions } : {}) });
    if (loaded.offsetsTopic.present.length === 0) throw new KlxError('not-found', 'no __consumer_offsets partition folder in this folder: open the log directory (or directories) holding __consumer_offsets-N', { file: root });
    const entry: Loaded = { root, offsetsPartitions, fingerprint, loaded, records: loaded.store.counts.records + loaded.store.counts.skipped, stale: false };
    // Keep a few folders only: each holds its groups' state.
    if (cache.size >= 4) cache.delete(cache.keys().next().value!);
    cache.set(root, entry);
    return entry;
  };

  const describeOpts = (req: { now?: string; isolation: 'read_uncommitted' | 'read_committed'; retentionMinutes?: number }, job: JobContext): DescribeOptions => ({
    signal: job.signal,
    onProgress: (p) => job.progress(p),
    isolation: req.isolation,
    ...(req.now !== undefined ? { now: BigInt(req.now) } : {}),
    ...(req.retentionMinutes !== undefined ? { offsetsRetentionMs: BigInt(req.retentionMinutes) * 60_000n } : {}),
  });

  return {
    /** Errors: `invalid-argument` (outside the opened folders), `not-found` (no __consumer_offsets), `not-a-log-dir`, `cancelled`, `io-error`. */
    'groups.list': async (req, job) => {
      const started = performance.now();
      const l = await load(req.path, req.offsetsPartitions, job);
      job.progress({ phase: 'computing lag', done: 0, total: null, bytes: 0 });
      const d = await describeGroups(l.loaded, describeOpts(req, job));
      return {
        root: l.root,
        groups: d.groups.map(summaryJson),
        offsetsTopic: l.loaded.offsetsTopic,
        problems: l.loaded.store.problems.map((p) => ({ file: p.file, position: p.position, offset: p.offset.toString(), reason: p.reason })),
        now: d.now.toString(),
        offsetsRetentionMs: d.offsetsRetentionMs.toString(),
        isolation: d.isolation,
        records: l.records,
        elapsedMs: performance.now() - started,
      };
    },

    /** Errors: as groups.list; `not-found` for a group that is not there (naming its __consumer_offsets partition). */
    'groups.describe': async (req, job) => {
      const l = await load(req.path, req.offsetsPartitions, job);
      job.progress({ phase: `computing the lag of ${req.group}`, done: 0, total: null, bytes: 0 });
      const d = await describeGroups(l.loaded, { ...describeOpts(req, job), group: req.group });
      return {
        summary: summaryJson(d.groups[0]!),
        offsets: d.offsets.map((r) => rowJson(r, l.loaded)),
        members: d.members.map((m) => ({
          memberId: m.memberId,
          groupInstanceId: m.groupInstanceId,
          clientId: m.clientId,
          host: m.host,
          sessionTimeoutMs: m.sessionTimeoutMs,
          rebalanceTimeoutMs: m.rebalanceTimeoutMs,
          memberEpoch: m.memberEpoch,
          subscribedTopics: m.subscribedTopics,
          assignment: m.assignment,
        })),
      };
    },

    /** Errors: as groups.list; `not-found` when the group's __consumer_offsets partition is not opened. */
    'groups.history': async (req, job) => {
      const l = await load(req.path, req.offsetsPartitions, job);
      const h = await commitHistory(l.loaded, req.group, req.topic, req.partition, { signal: job.signal, onProgress: (p) => job.progress(p), maxPoints: req.maxPoints });
      return {
        group: h.group,
        topic: h.topic,
        partition: h.partition,
        offsetsPartition: h.offsetsPartition,
        points: h.points.map((p) => ({ recordOffset: p.recordOffset.toString(), timestamp: p.timestamp.toString(), committedOffset: s64(p.committedOffset), transaction: p.transaction })),
        total: h.total,
        thinned: h.thinned,
        logStartOffset: s64(h.logStartOffset),
        logEndOffset: s64(h.logEndOffset),
      };
    },

    /** Errors: as groups.list; `invalid-argument` when `dir` is not a partition folder of the folder. */
    'groups.partitionCommits': async (req, job) => {
      const l = await load(req.path, req.offsetsPartitions, job);
      const dir = await ctx.session.resolve(req.dir, job);
      const log = [...l.loaded.partitions.values()].find((p) => p.dir === dir);
      if (!log) throw new KlxError('invalid-argument', `not a partition folder of ${l.root}: ${dir}`, { file: join(dir) });
      const d = await describeGroups(l.loaded, { ...describeOpts(req, job), only: { topic: log.topic, partition: log.partition } });
      const commits = d.offsets
        .filter((r) => r.committedOffset !== null)
        .map((r) => ({ group: r.group, committedOffset: r.committedOffset!.toString(), diagnosis: r.diagnosis, expired: r.expired }));
      return { commits };
    },
  };
}

