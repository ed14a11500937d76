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
 * Everything but opening a folder and the tree's summaries (`log.open`, `log.summaries`) runs on the log worker pool
 * (`log-tasks.ts`, `core/worker-pool.ts`): this thread only resolves and checks the path, sends the
 * task and forwards progress, so a slow or hostile input never blocks other calls or `job.cancel`.
 */
import { rm, stat } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { basename, dirname, isAbsolute, join } from 'node:path';
import { KlxError, toErrorInfo } from '../../engine/errors.ts';
import { toWireError } from '../../../src-shared/wire.ts';
import { segmentFileName } from '../../engine/files/file-names.ts';
import { crcMismatchText } from '../../engine/format/crc.ts';
import { openPath } from '../../engine/log/log-dir.ts';
import { PartitionLog, readLogDirCheckpoints, type LogDirCheckpoints } from '../../engine/log/partition-log.ts';
import { isInsideDir, realpathLenient } from '../core/paths.ts';
import { removeStaging } from '../../engine/sql/export-staging.ts';
import type { JobResult, MethodName, ParsedReq, Res } from '../../../src-shared/contract.ts';
import { folderDecodersOf } from '../core/folder-decoders.ts';
import { logCacheOf } from '../core/log-cache.ts';
import { logPool, type ExportTaskReq, type PartitionTaskReq, type CountTaskResult, type LogTaskArgs, type LogTaskKind, type VerifyTaskResult } from './log-tasks.ts';
import { logDirSummaryOf, partitionSummaryOf } from './log-summary.ts';
import type { ApiContext, CallContext, DomainHandlers, JobContext } from '../core/types.ts';

/** Builds the `log.*` handlers. */
export function logHandlers(ctx: ApiContext): DomainHandlers<'log'> {
  const cache = logCacheOf(ctx);
  /** The opened partition at `dir` (checked against the session's opened folders). */
  const partitionAt = async (dir: string, call: CallContext) => cache.partition(await ctx.session.resolve(dir, call));
  /** One decoder per opened folder with its format choices (`api/core/folder-decoders.ts`); the worker threads keep their own copies. */
  const decoders = folderDecodersOf(ctx);
  /** Bumped when a folder's files change (a `_schemas` append may add schemas): the threads' decoders are made again. */
  let decodeEpoch = 0;
  ctx.events.subscribe((e) => {
    if (e.type === 'log.changed') decodeEpoch++;
  });
  /**
   * Runs a log task on the log worker pool (`log-tasks.ts`) for the partition `req.dir` (resolved
   * and checked here, on the main thread); a job's signal cancels it and its progress is the job's.
   */
  const inWorker = async <R>(kind: LogTaskKind, req: ParsedReq<MethodName> & { dir: string }, call: CallContext | JobContext): Promise<R> => {
    const dir = await ctx.session.resolve(req.dir, call);
    const root = decoders.rootOf(dir);
    const job = 'signal' in call ? call : undefined;
    const args: LogTaskArgs<unknown> = { dir, root, choices: decoders.choices(root), generation: cache.generation, decodeEpoch, req };
    return logPool().run<R>(kind, args, { signal: job?.signal, onProgress: job ? (p) => job.progress(p) : undefined, affinity: dir, label: `${kind} of ${dir}` });
  };

  /**
   * Where an export may write: `out` (`~` expanded, else absolute) as a real path whose folder
   * exists, that is no existing file and lies inside no opened folder (opening is read-only: an
   * export never adds files to a log folder).
   * @throws KlxError `invalid-argument` naming the path and the reason.
   */
  const exportTarget = async (out: string): Promise<string> => {
    const typed = out === '~' ? ctx.homeDir : out.startsWith('~/') ? join(ctx.homeDir, out.slice(2)) : out;
    if (!isAbsolute(typed)) throw new KlxError('invalid-argument', `export to ${JSON.stringify(out)}: give a full path (or one starting with ~/)`);
    const real = await realpathLenient(typed);
    const folder = await stat(dirname(real)).catch(() => null);
    if (!folder?.isDirectory()) throw new KlxError('invalid-argument', `the folder ${dirname(real)} does not exist: an export goes into an existing folder`, { file: real });
    if (await stat(real).then(() => true, () => false)) throw new KlxError('invalid-argument', `a file of that name exists; an export never overwrites: choose a new name`, { file: real });
    const inside = ctx.session.opened().find((root) => isInsideDir(real, root));
    if (inside) throw new KlxError('invalid-argument', `that is inside the opened folder ${inside}, which the app only reads; choose a folder outside it`, { file: real });
    return real;
  };

  return {
    /**
     * Opens the folder in the session, then every log directory under it. With `lazyAbove`, a folder
     * of more partitions than that is only listed (`openPath` lazy: no partition folder is read) and
     * its partitions come back in `pending`, for `log.summaries`. Errors: `not-found`, `not-a-log-dir`, `invalid-argument`.
     */
    'log.open': async (req, call) => {
      const root = await ctx.session.open(req.path, call);
      // A partition is selected next and its first records page asked for: have a log thread ready for it.
      logPool().prestart();
      const opened = openPath(root, { lazy: req.lazyAbove !== undefined });
      if (req.lazyAbove !== undefined && opened.logDirs.reduce((n, d) => n + d.unopened.length, 0) <= req.lazyAbove) {
        // Few enough: read them now, as openLogDirectory does without `lazy`.
        for (const d of opened.logDirs) {
          d.partitions.push(...d.unopened.map((dir) => PartitionLog.open(dir, { checkpoints: d.checkpoints })));
          d.unopened = [];
        }
      }
      const logDirs = opened.logDirs.map((d) => {
        for (const p of d.partitions) cache.remember(p);
        return logDirSummaryOf(d, (dir) => cache.facts(dir));
      });
      return { root, opened: ctx.session.opened(), logDirs };
    },

    /**
     * Summaries of partitions listed by a lazy `log.open`, each opened (or reused from the cache) and
     * summarized as `log.open` does; one that cannot be read is in `failed`. Errors: `invalid-argument`
     * for a folder outside the opened ones.
     */
    'log.summaries': async (req, call) => {
      const partitions: Res<'log.summaries'>['partitions'] = [];
      const failed: Res<'log.summaries'>['failed'] = [];
      // Each log directory's checkpoints are read once for the call (they hold a line per partition).
      const checkpoints = new Map<string, LogDirCheckpoints>();
      const checkpointsOf = (logDir: string) => checkpoints.get(logDir) ?? checkpoints.set(logDir, readLogDirCheckpoints(logDir)).get(logDir)!;
      for (const [i, dir] of req.dirs.entries()) {
        // Let other calls in between (a records page of the selected partition): up to 100 summaries are ~0.2 s of this thread.
        if (i > 0 && i % 10 === 0) await new Promise((resolve) => setImmediate(resolve));
        const real = await ctx.session.resolve(dir, call);
        try {
          const log = cache.partition(real, checkpointsOf);
          partitions.push(partitionSummaryOf(log, cache.facts(log.dir)));
        } catch (err) {
          if (!(err instanceof KlxError)) throw err;
          failed.push({ dir: real, error: toWireError(toErrorInfo(err)) });
        }
      }
      return { partitions, failed };
    },

    /**
     * Summary and segment rows of one partition, on a log thread: it reads every segment's index
     * files (hundreds of ms for a 10 GB partition), which on this thread would hold back every other
     * call meanwhile (the records pages of the table, the inspector's bytes). What this session
     * learned about the partition (verify, counts, CRC failures met) goes with the task.
     */
    'log.partition': async (req, call) => {
      const log = await partitionAt(req.dir, call);
      const task: PartitionTaskReq = { ...req, facts: cache.facts(log.dir) };
      return inWorker<Res<'log.partition'>>('partition', task, call);
    },

    'log.batches': async (req, call) => inWorker('batches', req, call),

    /**
     * A page of the records table. The CRC failures it meets (a batch whose stored CRC differs from
     * the one computed: Kafka's `DefaultRecordBatch.ensureValid`) are remembered for the health
     * badge of the partition (`healthOf`), so it never reads "CRC not checked" beside a flagged row.
     */
    'log.records': async (req, call) => {
      const page = await inWorker<Res<'log.records'>>('records', req, call);
      const bad = page.rows.flatMap((r) => (r.kind === 'record' && r.crcValid === false ? [r] : []));
      if (bad.length > 0) {
        const dir = (await partitionAt(req.dir, call)).dir;
        cache.noteCrcFailures(
          dir,
          bad.map((r) => ({
            severity: 'error' as const,
            code: 'crc-mismatch',
            file: join(dir, segmentFileName(BigInt(r.segmentBaseOffset), '.log')),
            position: r.position,
            reason: `${crcMismatchText({ magic: r.magic, crc: r.crc, ...(r.computedCrc !== null ? { computedCrc: r.computedCrc } : {}) })}; met while reading offsets ${r.batchBaseOffset}..${r.batchLastOffset}`,
            details: {},
          })),
        );
      }
      return page;
    },

    'log.recordValue': async (req, call) => inWorker('recordValue', req, call),

    /** ListOffsets by timestamp. Errors: `invalid-argument` (negative other than −1/−2), `corrupt-batch` with file and position. */
    'log.seekTimestamp': async (req, call) => inWorker('seekTimestamp', req, call),

    'log.countRecords': async (req, job) => {
      const log = await partitionAt(req.dir, job);
      const { result, facts } = await inWorker<CountTaskResult>('count', req, job);
      if (facts) cache.setCounts(log, facts);
      return result;
    },

    'log.holes': async (req, job) => inWorker<JobResult<'log.holes'>>('holes', req, job),

    'log.verify': async (req, job) => {
      const log = await partitionAt(req.dir, job);
      const { result, facts } = await inWorker<VerifyTaskResult>('verify', req, job);
      if (facts) cache.setVerify(log, facts);
      return result;
    },

    /** Every partition of the opened folder holding `dir`, verified and its repair planned, on the log worker (`log-folder-verify.ts`). */
    'log.verifyFolder': async (req, job) => inWorker('verifyFolder', req, job),

    /** Clipboard text of an offset range (`log-tasks.ts` copy, `engine/sql/record-export.ts`). */
    'log.copyRecords': async (req, call) => inWorker('copy', req, call),

    /**
     * Export to a file on the log worker (Parquet through DuckDB there too). Errors: `invalid-argument`
     * (the output: see exportTarget; a record's partition outside the opened folders), `cancelled`, `io-error`.
     */
    'log.export': async (req, job) => {
      const out = await exportTarget(req.out);
      const records = req.records ? await Promise.all(req.records.map(async (r) => ({ dir: await ctx.session.resolve(r.dir, job), offset: r.offset }))) : undefined;
      const task: ExportTaskReq = { ...req, out, ...(records ? { records } : {}) };
      try {
        return await inWorker<JobResult<'log.export'>>('export', task, job);
      } catch (err) {
        // The task removes its partial output when it stops, but the pool terminates a cancelled
        // task that does not stop within its grace time: remove what it may have left (out did not
        // exist before: exportTarget), now and once more after the thread is surely gone.
        for (const wait of [0, 300]) {
          if (wait) await sleep(wait);
          await rm(out, { force: true, recursive: true }).catch(() => undefined);
          await removeStaging(out).catch(() => undefined); // the staging database (export-staging.ts; the worker thread shares this pid)
        }
        throw err;
      }
    },

    /** Search: the partitions of the scope in a stable order (topic, partition, folder), listed and searched on the worker. Errors: `invalid-argument` (no text nor condition, a bad condition, topic scope on a folder that is not a partition). */
    'log.search': async (req, job) => {
      const fromDir = req.fromDir !== undefined ? await ctx.session.resolve(req.fromDir, job) : undefined;
      return inWorker<JobResult<'log.search'>>('search', { ...req, ...(fromDir !== undefined ? { fromDir } : {}) }, job);
    },
  };
}
