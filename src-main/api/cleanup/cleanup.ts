/**
 * `cleanup.*` handlers: retention and compaction from the app, previewed first, run crash-safely in
 * a worker thread with progress and cancel, measured, and undoable until the trash is emptied
 * (what `klx retention|compact [--dry-run]`, `klx undo` and `klx trash` do; see their commands in
 * `src-main/cli/commands/`).
 *
 * - `cleanup.plan` (job): validates the config overrides with the engine's parser (`invalid-config`
 *   naming the key), resolves `now` (default: the wall clock at preview time), and runs the engine's
 *   plan in the cleaner worker. The answer carries the per-partition reports and a `planId`; the
 *   plan (settings, `now`, fingerprint of the files it looked at) is remembered per context.
 * - `cleanup.run` (job, write): the same request plus `planId`. Refused (`invalid-argument`,
 *   `details.reason: 'plan-stale'`, nothing touched) when the preview is unknown, the settings differ
 *   from the preview's, or the files changed since (checked in the worker right before the run).
 *   Runs with the preview's `now`, so what runs is what was previewed. Progress and cancel; emits
 *   `log.changed` for the partitions touched (also after a failure or a cancel that left some changed).
 * - `cleanup.repairPlan` (job) / `cleanup.repair` (job, write): the startup recovery of `klx repair`
 *   on one partition folder (`repair-task.ts`), previewed, then run with the replaced files in the
 *   trash; refused when the plan differs from the preview (`plan-stale`).
 * - `cleanup.undo` (write): the engine's undo of the latest run under the folder, in the worker;
 *   emits `log.changed`.
 * - `cleanup.trash` / `cleanup.emptyTrash` (write): the trash entries of partitions inside the
 *   opened folders only (another folder's entries are neither listed nor deleted); emptying is
 *   refused while a run or undo is under way, and skips unfinished (`prepared`) entries unless named.
 *
 * The trash folder is the engine's `defaultTrashDir()` (`$KLX_TRASH_DIR`, else the user data folder).
 * Every path goes through the session (`resolve`, or `resolveForWriting` for methods that change
 * files); engine errors keep their code, file and byte position across the worker.
 */
import { defaultTrashDir, emptyTheTrash, trashEntries } from '../../engine/cleaner/cleaner.ts';
import { lastRunEntries } from '../../engine/cleaner/undo.ts';
import { holeCause, readRunHistory } from '../../engine/cleaner/run-history.ts';
import { deleteHorizons } from '../../engine/cleaner/delete-horizons.ts';
import { KlxError } from '../../engine/errors.ts';
import { parseConfigValue, type TopicConfig, type TopicConfigKey } from '../../engine/log/topic-config.ts';
import { CLEANUP_DECISION_LIMIT, type CleanupOperation } from '../../../src-shared/cleanup-types.ts';
import type { ParsedReq } from '../../../src-shared/contract.ts';
import { planIdOf, type Fingerprint } from './cleanup-fingerprint.ts';
import { staleError, type EngineCleanupOptions, type PlanTaskResult, type RunTaskResult, type UndoTaskResult } from './cleanup-task.ts';
import { runRecordWire, trashEntryWire } from '../core/cleanup-wire.ts';
import { runInWorker } from './cleaner-worker-runner.ts';
import type { RepairPlanTaskResult, RepairRunTaskResult } from './repair-task.ts';
import { dirname } from 'node:path';
import { logCacheOf } from '../core/log-cache.ts';
import { isInsideDir } from '../core/paths.ts';
import type { ApiContext, CallContext, DomainHandlers } from '../core/types.ts';

/** How many previews one context remembers (oldest forgotten first). */
export const MAX_REMEMBERED_PLANS = 50;

/** A preview remembered for `cleanup.run`. */
interface StoredPlan {
  planId: string;
  dir: string;
  operation: CleanupOperation;
  /** The normalized settings (everything but `now`), as JSON. */
  settings: string;
  now: number;
  fingerprint: Fingerprint;
  partitionDirs: string[];
}

type PlanRequest = ParsedReq<'cleanup.plan'>;

/**
 * Parses the config overrides with the engine's parser.
 * @throws KlxError `invalid-config` naming the key (`details.key`), for an unknown key or a bad value.
 */
export function parseOverrides(config: Record<string, string>): Partial<TopicConfig> {
  const out: Partial<TopicConfig> = {};
  for (const key of Object.keys(config).sort()) {
    try {
      (out as Record<string, unknown>)[key] = parseConfigValue(key as TopicConfigKey, config[key]!);
    } catch (err) {
      const reason = err instanceof KlxError ? err.reason : String(err);
      throw new KlxError('invalid-config', reason, { details: { key, value: config[key]! } });
    }
  }
  return out;
}

/** The settings of a request that must match between preview and run (everything but `now`), normalized. */
function settingsOf(req: PlanRequest, dir: string): Record<string, unknown> {
  const config = Object.fromEntries(Object.keys(req.config).sort().map((k) => [k, req.config[k]!.trim()]));
  return req.operation === 'retention'
    ? { dir, operation: req.operation, config, deleteBeforeOffset: req.deleteBeforeOffset ?? null }
    : { dir, operation: req.operation, config, rules: req.rules ?? 'kafka', likeBroker: req.likeBroker ?? false, dedupeBufferSize: req.dedupeBufferSize ?? null, ...(req.keyHash === 'md5' ? { keyHash: 'md5' } : {}) };
}

function nowOf(text: string): number {
  const n = Number(text);
  if (!Number.isSafeInteger(n) || n < 0) throw new KlxError('invalid-argument', `now must be milliseconds since the epoch between 0 and ${Number.MAX_SAFE_INTEGER}, got ${text}`);
  return n;
}

function engineOptions(req: PlanRequest, now: number): EngineCleanupOptions {
  const o: EngineCleanupOptions = { now, config: parseOverrides(req.config) };
  if (req.explain) o.explainLimit = CLEANUP_DECISION_LIMIT;
  if (req.operation === 'retention') {
    if (req.deleteBeforeOffset !== undefined) {
      const n = BigInt(req.deleteBeforeOffset);
      if (n < 0n) throw new KlxError('invalid-argument', `deleteBeforeOffset must be an offset (0 or more), got ${req.deleteBeforeOffset}`);
      o.deleteBeforeOffset = n;
    }
  } else {
    o.rules = req.rules ?? 'kafka';
    o.likeBroker = req.likeBroker ?? false;
    if (req.dedupeBufferSize !== undefined) o.dedupeBufferSize = req.dedupeBufferSize;
    if (req.keyHash !== undefined) o.keyHash = req.keyHash;
  }
  return o;
}

function stale(dir: string, why: string): KlxError {
  return new KlxError('invalid-argument', `${why}: preview again, so that what runs is what you saw`, { file: dir, details: { reason: 'plan-stale', changes: [why] } });
}

/** Builds the `cleanup.*` handlers. */
export function cleanupHandlers(ctx: ApiContext): DomainHandlers<'cleanup'> {
  const cache = logCacheOf(ctx);
  const plans = new Map<string, StoredPlan>();
  /** The latest repair preview per partition folder: `<truncateAtCorruption>\n<signature>`. */
  const repairPreviews = new Map<string, string>();
  /** Runs and undos under way in this context (the trash cannot be emptied meanwhile). */
  let busy = 0;

  const remember = (p: StoredPlan): void => {
    plans.delete(p.planId);
    plans.set(p.planId, p);
    while (plans.size > MAX_REMEMBERED_PLANS) plans.delete(plans.keys().next().value as string);
  };

  const changed = (dirs: readonly string[], reason: string): void => {
    const unique = [...new Set(dirs)];
    if (unique.length === 0) return;
    for (const d of unique) cache.forget(d);
    ctx.events.emit({ type: 'log.changed', dirs: unique, reason });
  };

  /** Whether a partition folder lies inside the session's opened folders (or the call's fixed roots). */
  const reachable = async (partitionDir: string, call: CallContext): Promise<boolean> => {
    try {
      await ctx.session.resolve(partitionDir, call);
      return true;
    } catch {
      return false;
    }
  };

  /** The readable trash entries of reachable partitions (under `scope` when given), and how many others there are. */
  const visibleEntries = async (call: CallContext, scope: string | null) => {
    const all = trashEntries(defaultTrashDir());
    const listed = [];
    let others = 0;
    for (const e of all) {
      const pd = e.manifest?.partitionDir;
      if (pd && (!scope || isInsideDir(pd, scope)) && (await reachable(pd, call))) listed.push(e);
      else others++;
    }
    return { listed, others };
  };

  const requireWriteMode = (call: CallContext, what: string): void => {
    if (call.readOnly) throw new KlxError('read-only', `this window is read-only: ${what} is refused`);
    if (!ctx.session.writeMode) throw new KlxError('read-only', `switch on "Open for writing" to ${what}`);
  };

  return {
    /** Plan in the worker. Errors: `invalid-config` (details.key), `invalid-argument`, engine errors of a single partition, `cancelled`. */
    'cleanup.plan': async (req, job) => {
      const dir = await ctx.session.resolve(req.dir, job);
      const now = req.now !== undefined ? nowOf(req.now) : Date.now();
      const options = engineOptions(req, now);
      const settings = JSON.stringify(settingsOf(req, dir));
      job.progress({ phase: `planning ${req.operation}`, done: 0, total: null, bytes: 0 });
      const res = await runInWorker<PlanTaskResult>({ kind: 'plan', path: dir, operation: req.operation, options }, { signal: job.signal, onProgress: (p) => job.progress(p), terminateOnAbort: true });
      const planId = planIdOf(res.fingerprint, { settings, now });
      remember({ planId, dir, operation: req.operation, settings, now, fingerprint: res.fingerprint, partitionDirs: res.partitions.map((p) => p.partitionDir) });
      return { planId, dir, operation: req.operation, now: String(now), trashDir: defaultTrashDir(), partitions: res.partitions, fingerprintFiles: Object.keys(res.fingerprint).length };
    },

    /** Run of a remembered preview in the worker. Errors: `read-only`, `invalid-argument` (plan-stale), `locked`, engine errors, `cancelled`. */
    'cleanup.run': async (req, job) => {
      const dir = await ctx.session.resolveForWriting(req.dir, job);
      const stored = plans.get(req.planId);
      if (!stored) throw stale(dir, 'this preview is not known here (the app was restarted, or it is one of many older previews)');
      if (stored.dir !== dir || stored.settings !== JSON.stringify(settingsOf(req, dir))) throw stale(dir, 'the settings differ from the ones the preview used');
      const now = req.now !== undefined ? nowOf(req.now) : stored.now;
      if (now !== stored.now) throw stale(dir, `now (${now}) differs from the preview's (${stored.now})`);
      const options = engineOptions(req, now);
      const trashDir = defaultTrashDir();
      busy++;
      try {
        job.progress({ phase: `checking the files against the preview`, done: 0, total: null, bytes: 0 });
        const res = await runInWorker<RunTaskResult>({ kind: 'run', path: dir, operation: req.operation, options, trashDir, expected: stored.fingerprint }, { signal: job.signal, onProgress: (p) => job.progress(p) });
        plans.delete(stored.planId);
        changed(res.changedDirs, `cleanup.run: ${req.operation}`);
        return { runId: res.runId, planId: stored.planId, dir, operation: req.operation, now: String(now), trashDir, partitions: res.partitions, changedDirs: res.changedDirs, trashEntries: res.trashEntries };
      } catch (err) {
        const details = err instanceof KlxError ? err.details : undefined;
        if (details?.reason !== 'plan-stale') {
          // Reload what may have changed: the partitions the worker says it touched, else (a worker
          // that died) every partition of the preview.
          const dirs = Array.isArray(details?.changedDirs) ? (details.changedDirs as string[]) : err instanceof KlxError && err.code !== 'internal' ? [] : stored.partitionDirs;
          changed(dirs, `cleanup.run: ${req.operation} (${err instanceof KlxError ? err.code : 'failed'})`);
          if (dirs.length > 0) plans.delete(stored.planId);
        }
        throw err;
      } finally {
        busy--;
      }
    },

    /**
     * Repair preview in the worker (`repair-task.ts`): the startup recovery plan of the partition,
     * plus the rewrite of its log directory's unparsable checkpoints when that directory is inside an
     * opened folder. Errors: engine errors (`not-found`, `io-error`), `cancelled`.
     */
    'cleanup.repairPlan': async (req, job) => {
      const dir = await ctx.session.resolve(req.dir, job);
      const withCheckpoints = ctx.session.opened().some((root) => isInsideDir(dirname(dir), root));
      job.progress({ phase: 'planning the repair', done: 0, total: null, bytes: 0 });
      const res = await runInWorker<RepairPlanTaskResult>({ kind: 'repairPlan', path: dir, truncateAtCorruption: req.truncateAtCorruption, withCheckpoints }, { signal: job.signal, onProgress: (p) => job.progress(p), terminateOnAbort: true });
      repairPreviews.delete(dir);
      repairPreviews.set(dir, `${req.truncateAtCorruption}\n${res.signature}`);
      while (repairPreviews.size > MAX_REMEMBERED_PLANS) repairPreviews.delete(repairPreviews.keys().next().value!);
      return { plan: res.plan, signature: res.signature, trashDir: defaultTrashDir() };
    },

    /** Repair run of the previewed plan in the worker. Errors: `read-only`, `invalid-argument` (plan-stale), `locked`, engine errors, `cancelled`. */
    'cleanup.repair': async (req, job) => {
      const dir = await ctx.session.resolveForWriting(req.dir, job);
      if (repairPreviews.get(dir) !== `${req.truncateAtCorruption}\n${req.signature}`) throw stale(dir, 'this repair preview is not known here, or its options differ');
      const withCheckpoints = ctx.session.opened().some((root) => isInsideDir(dirname(dir), root));
      busy++;
      try {
        const res = await runInWorker<RepairRunTaskResult>({ kind: 'repairRun', path: dir, truncateAtCorruption: req.truncateAtCorruption, withCheckpoints, trashDir: defaultTrashDir(), expected: req.signature }, { signal: job.signal, onProgress: (p) => job.progress(p) });
        repairPreviews.delete(dir);
        changed([dir], 'cleanup.repair');
        return { runId: res.runId, plan: res.plan, done: res.done, trashEntries: res.trashEntries };
      } catch (err) {
        if (!(err instanceof KlxError) || (err.details?.reason !== 'plan-stale' && err.code !== 'locked')) changed([dir], 'cleanup.repair (failed)');
        throw err;
      } finally {
        busy--;
      }
    },

    /** Undo in the worker. Errors: `read-only`, `not-found` (no run to undo), `invalid-argument` (the partition changed since), `locked`, `io-error`. */
    'cleanup.undo': async (req, call) => {
      const dir = await ctx.session.resolveForWriting(req.dir, call);
      const trashDir = defaultTrashDir();
      const touched = lastRunEntries(dir, trashDir).map((e) => e.manifest!.partitionDir);
      busy++;
      try {
        const res = await runInWorker<UndoTaskResult>({ kind: 'undo', path: dir, trashDir });
        changed(res.entries.map((e) => e.partitionDir), 'cleanup.undo');
        return { runId: res.runId, entries: res.entries };
      } catch (err) {
        // A refusal touches nothing; an I/O failure midway may have changed files.
        if (!(err instanceof KlxError) || err.code === 'io-error' || err.code === 'internal') changed(touched, 'cleanup.undo (failed)');
        throw err;
      } finally {
        busy--;
      }
    },

    /** Errors: `not-found` / `outside-opened` for a folder not opened. The history is read from the trash folder. */
    'cleanup.history': async (req, call) => {
      const dir = await ctx.session.resolve(req.dir, call);
      const { runs, notes } = readRunHistory(defaultTrashDir(), dir);
      const causes = [];
      for (const o of req.offsets ?? []) {
        const c = holeCause(runs, BigInt(o));
        if (c) causes.push({ offset: o, runId: c.runId, at: new Date(c.at).toISOString(), operation: c.operation, reason: c.reason, evidence: c.evidence ?? null, text: c.text });
      }
      return { runs: runs.map(runRecordWire), causes, notes };
    },

    /** Errors: `not-found` / `outside-opened`, `io-error` reading a `.log`. */
    'cleanup.horizons': async (req, call) => {
      const dir = await ctx.session.resolve(req.dir, call);
      const { earliest, total } = deleteHorizons(cache.partition(dir), 0);
      return { earliest: earliest === null ? null : String(earliest), justAfter: earliest === null ? null : String(earliest + 1n), stamped: total };
    },

    'cleanup.trash': async (req, call) => {
      const scope = req.dir !== undefined ? await ctx.session.resolve(req.dir, call) : null;
      const trashDir = defaultTrashDir();
      const { listed, others } = await visibleEntries(call, scope);
      const entries = listed.map(trashEntryWire).filter((e) => e !== null);
      let lastRun = null;
      if (scope) {
        const last = lastRunEntries(scope, trashDir);
        if (last.length > 0) {
          const m = last[0]!.manifest!;
          lastRun = {
            runId: m.runId,
            operation: m.operation,
            createdAt: new Date(Math.max(...last.map((e) => e.manifest!.createdAtMs))).toISOString(),
            partitionDirs: [...new Set(last.map((e) => e.manifest!.partitionDir))],
            bytes: last.reduce((a, e) => a + e.bytes, 0),
          };
        }
      }
      return { trashDir, entries, bytes: entries.reduce((a, e) => a + e.bytes, 0), lastRun, otherEntries: others };
    },

    /** Errors: `read-only`, `invalid-argument` (an id that is not an entry of the opened folders; a run under way). */
    'cleanup.emptyTrash': async (req, call) => {
      requireWriteMode(call, 'empty the trash (runs can no longer be undone afterwards)');
      const scope = req.dir !== undefined ? await ctx.session.resolveForWriting(req.dir, call) : null;
      if (busy > 0) throw new KlxError('invalid-argument', 'a cleanup run or undo is under way: empty the trash once it has ended');
      const { listed } = await visibleEntries(call, scope);
      let ids: string[];
      if (req.ids) {
        const known = new Set(listed.map((e) => e.id));
        const unknown = req.ids.filter((id) => !known.has(id));
        if (unknown.length > 0) throw new KlxError('invalid-argument', `not a trash entry of the opened folders: ${unknown.slice(0, 5).join(', ')}${unknown.length > 5 ? ` and ${unknown.length - 5} more` : ''}`);
        ids = [...req.ids];
      } else {
        ids = listed.filter((e) => e.manifest!.state === 'committed').map((e) => e.id);
      }
      if (ids.length === 0) return { removed: [], bytes: 0 };
      return emptyTheTrash(defaultTrashDir(), ids);
    },
  };
}
