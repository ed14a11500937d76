/**
 * `groups.*` handlers: the consumer groups of an opened folder, loaded from its `__consumer_offsets`
 * partitions by the engine (`engine/groups/`: as Kafka's group coordinator replays them:
 * GroupMetadataManager.replay, OffsetMetadataManager.replay), with lag,
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
 * The work runs in the groups worker thread (`groups-worker.ts`, tasks in `groups-tasks.ts`), which
 * keeps the loaded folders between calls; this thread only confines the paths to the opened folders,
 * passes progress and cancellation, and tells the worker about `log.changed` events.
 */
import type { ApiContext, DomainHandlers, JobContext } from '../core/types.ts';
import type { GroupsTaskOptions } from './groups-tasks.ts';
import { GroupsWorkerClient } from './groups-worker-client.ts';

/** Builds the `groups.*` handlers; the worker drops loaded folders touched by `log.changed`. */
export function groupsHandlers(ctx: ApiContext): DomainHandlers<'groups'> {
  const worker = new GroupsWorkerClient();
  ctx.events.subscribe((e) => {
    if (e.type === 'log.changed') worker.invalidate([...e.dirs]);
  });

  const options = async (req: { path: string; now?: string; isolation: 'read_uncommitted' | 'read_committed'; offsetsPartitions?: number; retentionMinutes?: number }, job: JobContext): Promise<GroupsTaskOptions> => ({
    root: await ctx.session.resolve(req.path, job),
    isolation: req.isolation,
    ...(req.now !== undefined ? { now: req.now } : {}),
    ...(req.offsetsPartitions !== undefined ? { offsetsPartitions: req.offsetsPartitions } : {}),
    ...(req.retentionMinutes !== undefined ? { retentionMinutes: req.retentionMinutes } : {}),
  });
  const on = (job: JobContext) => ({ signal: job.signal, onProgress: (p: Parameters<JobContext['progress']>[0]) => job.progress(p) });

  return {
    /** Errors: `invalid-argument` (outside the opened folders), `not-found` (no __consumer_offsets), `not-a-log-dir`, `cancelled`, `io-error`. */
    'groups.list': async (req, job) => worker.run('list', await options(req, job), on(job)),

    /** Errors: as groups.list; `not-found` for a group that is not there (naming its __consumer_offsets partition). */
    'groups.describe': async (req, job) => worker.run('describe', { ...(await options(req, job)), group: req.group }, on(job)),

    /** Errors: as groups.list; `not-found` when the group's __consumer_offsets partition is not opened. */
    'groups.history': async (req, job) => worker.run('history', { ...(await options(req, job)), group: req.group, topic: req.topic, partition: req.partition, maxPoints: req.maxPoints }, on(job)),

    /** Errors: as groups.list; `invalid-argument` when `dir` is not a partition folder of the folder. */
    'groups.partitionCommits': async (req, job) => worker.run('partitionCommits', { ...(await options(req, job)), dir: await ctx.session.resolve(req.dir, job) }, on(job)),
  };
}
