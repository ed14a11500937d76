/**
 * `log.*` handlers: the explorer's read side over the engine (`openPath`, `PartitionLog`, fetch,
 * holes, time lookup, verify). Everything here is read-only.
 *
 * Every path argument goes through `ctx.session.resolve` (it must lie inside an opened folder) and
 * only the real path it returns is used; `log.open` opens its folder in the session first, as
 * `session.open` does. Opened partitions are kept per context (`log-cache.ts`) so that paging reuses
 * their indexes. Engine errors travel unchanged (a `KlxError` keeps its code, file and byte position
 * through `dispatch` to the renderer).
 *
 * The work itself lives in `log-summary.ts` (partition and segment rows), `log-records.ts` (record
 * pages with hole rows, record bytes, batch pages) and `log-jobs.ts` (count, holes, verify, search).
 */
import { allPartitions, openPath } from '../../engine/log/log-dir.ts';
import type { PartitionLog } from '../../engine/log/partition-log.ts';
import { isInsideDir } from '../core/paths.ts';
import { folderDecodersOf } from '../core/folder-decoders.ts';
import { offsetForTimestamp } from '../../engine/log/time-lookup.ts';
import { countJob, holesJob, searchJob, verifyJob } from './log-jobs.ts';
import { logCacheOf } from '../core/log-cache.ts';
import { batchesPage, offsetOf, recordsPage, recordValue } from './log-records.ts';
import { logDirSummaryOf, partitionSummaryOf, segmentRowsOf } from './log-summary.ts';
import { s, sn } from './log-wire.ts';
import type { ApiContext, CallContext, DomainHandlers } from '../core/types.ts';

/** Builds the `log.*` handlers. */
export function logHandlers(ctx: ApiContext): DomainHandlers<'log'> {
  const cache = logCacheOf(ctx);
  /** The opened partition at `dir` (checked against the session's opened folders). */
  const partitionAt = async (dir: string, call: CallContext) => cache.partition(await ctx.session.resolve(dir, call));
  /** One decoder per opened folder with its format choices (`api/core/folder-decoders.ts`). */
  const decoders = folderDecodersOf(ctx);

  return {
    /** Opens the folder in the session, then every log directory under it. Errors: `not-found`, `not-a-log-dir`, `invalid-argument`. */
    'log.open': async (req, call) => {
      const root = await ctx.session.open(req.path, call);
      const opened = openPath(root);
      const logDirs = opened.logDirs.map((d) => {
        for (const p of d.partitions) cache.remember(p);
        return logDirSummaryOf(d, (dir) => cache.facts(dir));
      });
      return { root, opened: ctx.session.opened(), logDirs };
    },

    /** Summary and segment rows of one partition. */
    'log.partition': async (req, call) => {
      const log = await partitionAt(req.dir, call);
      return { partition: partitionSummaryOf(log, cache.facts(log.dir)), segments: segmentRowsOf(log) };
    },

    'log.batches': async (req, call) => batchesPage(await partitionAt(req.dir, call), req),

    'log.records': async (req, call) => {
      const log = await partitionAt(req.dir, call);
      return recordsPage(log, req, decoders.decoderFor(log.dir));
    },

    'log.recordValue': async (req, call) => recordValue(await partitionAt(req.dir, call), req),

    /** ListOffsets by timestamp. Errors: `invalid-argument` (negative other than −1/−2), `corrupt-batch` with file and position. */
    'log.seekTimestamp': async (req, call) => {
      const log = await partitionAt(req.dir, call);
      const hit = await offsetForTimestamp(log, offsetOf(req.timestamp));
      if (!hit) return { found: false, offset: null, timestamp: null, segmentBaseOffset: null, leaderEpoch: null };
      return { found: true, offset: s(hit.offset), timestamp: s(hit.timestamp), segmentBaseOffset: sn(hit.segmentBaseOffset), leaderEpoch: hit.leaderEpoch };
    },

    'log.countRecords': async (req, job) => countJob(await partitionAt(req.dir, job), job, cache),

    'log.holes': async (req, job) => holesJob(await partitionAt(req.dir, job), req, job),

    'log.verify': async (req, job) => verifyJob(await partitionAt(req.dir, job), req, job, cache),

    /** Search: the partitions of the scope in a stable order (topic, partition, folder). Errors: `invalid-argument` (no text nor condition, a bad condition, topic scope on a folder that is not a partition). */
    'log.search': async (req, job) => {
      const dir = await ctx.session.resolve(req.dir, job);
      const fromDir = req.fromDir !== undefined ? await ctx.session.resolve(req.fromDir, job) : undefined;
      let logs: PartitionLog[];
      if (req.scope === 'partition') logs = [cache.partition(dir)];
      else {
        const root = ctx.session.opened().find((r) => isInsideDir(dir, r)) ?? dir;
        const all = allPartitions(openPath(root)).map((p) => p.log);
        if (req.scope === 'topic') {
          const here = all.find((l) => l.dir === dir) ?? cache.partition(dir);
          logs = all.filter((l) => l.topic === here.topic);
        } else logs = all;
        logs.sort((a, b) => (a.topic < b.topic ? -1 : a.topic > b.topic ? 1 : a.partition - b.partition || (a.dir < b.dir ? -1 : a.dir > b.dir ? 1 : 0)));
      }
      return searchJob(
        logs.map((log) => ({ log, decoder: decoders.decoderFor(log.dir) })),
        { ...req, ...(fromDir !== undefined ? { fromDir } : {}) },
        job,
      );
    },
  };
}
