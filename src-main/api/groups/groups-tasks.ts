/**
 * The work behind the `groups.*` handlers, run in the groups worker thread (`groups-worker.ts`): the
 * consumer groups of a folder loaded from its `__consumer_offsets` partitions by the engine
 * (`engine/groups/`, as Kafka's group coordinator replays them:
 * GroupMetadataManager.replay, OffsetMetadataManager.replay), with lag, record lag, next offset,
 * diagnosis and expiry, and commit histories, answered in the wire shapes of the contract.
 *
 * The loaded groups of a folder are kept (memory grows with groups and committed partitions, not with
 * commit records) until {@link GroupsTasks.invalidate} names a folder inside or around it (a
 * `log.changed` event) or its partition folders change (a cheap fingerprint of the listing: segment
 * names and `.log` sizes). Paths arrive resolved and confined by the main thread (the session's
 * opened folders); nothing here writes.
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { KlxError } from '../../engine/errors.ts';
import { commitHistory } from '../../engine/groups/commit-history.ts';
import { describeGroups, type DescribeOptions, type GroupOffsetRow as EngineRow, type GroupSummary as EngineSummary } from '../../engine/groups/group-offsets.ts';
import { loadGroups, partitionKey, type LoadedGroups } from '../../engine/groups/groups-load.ts';
import { allPartitions, openPath } from '../../engine/log/log-dir.ts';
import type { JobProgress } from '../../../src-shared/contract.ts';
import type { CommitHistoryResult, GroupDescribeResult, GroupOffsetRow, GroupSummary, GroupsListResult, PartitionCommitsResult } from '../../../src-shared/groups-types.ts';
import { isInsideDir } from '../core/paths.ts';

const s64 = (v: bigint | null): string | null => (v === null ? null : v.toString());

/** Options every groups task takes (the request's, with its path resolved). */
export interface GroupsTaskOptions {
  /** The opened folder (resolved, real path). */
  root: string;
  offsetsPartitions?: number;
  /** ms since the epoch, as a decimal string. */
  now?: string;
  isolation: 'read_uncommitted' | 'read_committed';
  retentionMinutes?: number;
}

/** The tasks and their arguments. */
export interface GroupsTaskArgs {
  list: GroupsTaskOptions;
  describe: GroupsTaskOptions & { group: string };
  history: GroupsTaskOptions & { group: string; topic: string; partition: number; maxPoints: number };
  /** `dir`: a partition folder (resolved). */
  partitionCommits: GroupsTaskOptions & { dir: string };
}

/** The tasks' results (the contract's wire results). */
export interface GroupsTaskResults {
  list: GroupsListResult;
  describe: GroupDescribeResult;
  history: CommitHistoryResult;
  partitionCommits: PartitionCommitsResult;
}

export type GroupsTaskKind = keyof GroupsTaskArgs;

/** How a task is run: a cancel signal and a progress callback. */
export interface GroupsTaskRun {
  signal: AbortSignal;
  progress(p: JobProgress): void;
}

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
    offsetsPartitionLoadFailure: s.offsetsPartitionLoadFailure ? { ...s.offsetsPartitionLoadFailure, offset: s.offsetsPartitionLoadFailure.offset.toString() } : null,
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

/** The groups tasks with their cache of loaded folders (one instance per worker thread). */
export class GroupsTasks {
  private readonly cache = new Map<string, Loaded>();

  /** Marks stale every loaded folder inside or around one of `dirs` (files there changed). */
  invalidate(dirs: readonly string[]): void {
    for (const l of this.cache.values()) if (dirs.some((d) => isInsideDir(d, l.root) || isInsideDir(l.root, d))) l.stale = true;
  }

  /**
   * Runs one task.
   * @throws KlxError `not-found` (no `__consumer_offsets` partition folder; a group that is not there,
   *   naming the partition it would live in), `invalid-argument` (a `dir` that is not a partition
   *   folder of the folder), `not-a-log-dir`, `cancelled`, `io-error`.
   */
  async run<K extends GroupsTaskKind>(kind: K, args: GroupsTaskArgs[K], run: GroupsTaskRun): Promise<GroupsTaskResults[K]> {
    switch (kind) {
      case 'list':
        return (await this.list(args, run)) as GroupsTaskResults[K];
      case 'describe':
        return (await this.describe(args as GroupsTaskArgs['describe'], run)) as GroupsTaskResults[K];
      case 'history':
        return (await this.history(args as GroupsTaskArgs['history'], run)) as GroupsTaskResults[K];
      case 'partitionCommits':
        return (await this.partitionCommits(args as GroupsTaskArgs['partitionCommits'], run)) as GroupsTaskResults[K];
      default:
        throw new KlxError('invalid-argument', `unknown groups task ${String(kind)}`);
    }
  }

  /** The groups of the folder `root`, loaded or reused. */
  private async load(o: GroupsTaskOptions, run: GroupsTaskRun): Promise<Loaded> {
    run.progress({ phase: 'checking the folder', done: 0, total: null, bytes: 0 });
    const fingerprint = fingerprintOf(o.root);
    const hit = this.cache.get(o.root);
    if (hit && !hit.stale && hit.fingerprint === fingerprint && hit.offsetsPartitions === o.offsetsPartitions) return hit;
    const logs = allPartitions(openPath(o.root)).map((p) => p.log);
    const loaded = await loadGroups(logs, { signal: run.signal, onProgress: (p) => run.progress(p), ...(o.offsetsPartitions !== undefined ? { offsetsTopicPartitions: o.offsetsPartitions } : {}) });
    if (loaded.offsetsTopic.present.length === 0) throw new KlxError('not-found', 'no __consumer_offsets partition folder in this folder: open the log directory (or directories) holding __consumer_offsets-N', { file: o.root });
    const entry: Loaded = { root: o.root, offsetsPartitions: o.offsetsPartitions, fingerprint, loaded, records: loaded.store.counts.records + loaded.store.counts.skipped, stale: false };
    // Keep a few folders only: each holds its groups' state.
    if (this.cache.size >= 4) this.cache.delete(this.cache.keys().next().value!);
    this.cache.set(o.root, entry);
    return entry;
  }

  private describeOpts(o: GroupsTaskOptions, run: GroupsTaskRun): DescribeOptions {
    return {
      signal: run.signal,
      onProgress: (p) => run.progress(p),
      isolation: o.isolation,
      ...(o.now !== undefined ? { now: BigInt(o.now) } : {}),
      ...(o.retentionMinutes !== undefined ? { offsetsRetentionMs: BigInt(o.retentionMinutes) * 60_000n } : {}),
    };
  }

  private async list(o: GroupsTaskArgs['list'], run: GroupsTaskRun): Promise<GroupsListResult> {
    const started = performance.now();
    const l = await this.load(o, run);
    run.progress({ phase: 'computing lag', done: 0, total: null, bytes: 0 });
    const d = await describeGroups(l.loaded, this.describeOpts(o, run));
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
  }

  private async describe(o: GroupsTaskArgs['describe'], run: GroupsTaskRun): Promise<GroupDescribeResult> {
    const l = await this.load(o, run);
    run.progress({ phase: `computing the lag of ${o.group}`, done: 0, total: null, bytes: 0 });
    const d = await describeGroups(l.loaded, { ...this.describeOpts(o, run), group: o.group });
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
  }

  private async history(o: GroupsTaskArgs['history'], run: GroupsTaskRun): Promise<CommitHistoryResult> {
    const l = await this.load(o, run);
    const h = await commitHistory(l.loaded, o.group, o.topic, o.partition, { signal: run.signal, onProgress: (p) => run.progress(p), maxPoints: o.maxPoints });
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
  }

  private async partitionCommits(o: GroupsTaskArgs['partitionCommits'], run: GroupsTaskRun): Promise<PartitionCommitsResult> {
    const l = await this.load(o, run);
    const log = [...l.loaded.partitions.values()].find((p) => p.dir === o.dir);
    if (!log) throw new KlxError('invalid-argument', `not a partition folder of ${l.root}: ${o.dir}`, { file: join(o.dir) });
    const d = await describeGroups(l.loaded, { ...this.describeOpts(o, run), only: { topic: log.topic, partition: log.partition } });
    const commits = d.offsets
      .filter((r) => r.committedOffset !== null)
      .map((r) => ({ group: r.group, committedOffset: r.committedOffset!.toString(), diagnosis: r.diagnosis, expired: r.expired }));
    return { commits };
  }
}
