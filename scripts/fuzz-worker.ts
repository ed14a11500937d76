/**
 * The fuzzer's target thread (`scripts/fuzz.ts` runs it through the API's worker pool): one task,
 * `target`, runs every read path of the engine and the API over one mutated partition folder and
 * reports each operation's outcome: `ok`, or the error's code, whether it named a file and a byte
 * position, and whether it was a typed `KlxError` at all (anything else is a crash).
 */
import { serveTasks } from '../src-main/api/core/worker-tasks.ts';
import { KlxError } from '../src-main/engine/errors.ts';
import { scanLogFile } from '../src-main/engine/format/log-reader.ts';
import { readBackward, readForward, countRecords } from '../src-main/engine/log/fetch.ts';
import { findHoles } from '../src-main/engine/log/holes.ts';
import { openPath } from '../src-main/engine/log/log-dir.ts';
import { PartitionLog } from '../src-main/engine/log/partition-log.ts';
import { planRecovery } from '../src-main/engine/log/recovery-plan.ts';
import { offsetForTimestamp } from '../src-main/engine/log/time-lookup.ts';
import { verifyPartition } from '../src-main/engine/log/verify.ts';
import { compact, retention, type CleanerOutcome } from '../src-main/engine/cleaner/cleaner.ts';

/** One operation's outcome. */
export interface OpOutcome {
  op: string;
  outcome: 'ok' | 'typed' | 'crash';
  code?: string;
  message?: string;
  /** A typed error that names neither a file nor a byte position. */
  unplaced?: boolean;
}

/** Codes that concern no file position by nature. */
const PLACELESS = new Set(['not-found', 'not-a-log-dir', 'cancelled', 'offset-out-of-range', 'invalid-argument', 'invalid-config', 'locked', 'read-only']);

async function attempt(op: string, fn: () => unknown): Promise<OpOutcome> {
  try {
    await fn();
    return { op, outcome: 'ok' };
  } catch (err) {
    if (err instanceof KlxError) {
      const unplaced = !PLACELESS.has(err.code) && (err.file === undefined || err.position === undefined);
      return { op, outcome: 'typed', code: err.code, message: err.message.slice(0, 300), ...(unplaced ? { unplaced } : {}) };
    }
    const e = err as Error;
    return { op, outcome: 'crash', code: e?.name ?? typeof err, message: String(e?.message ?? err).slice(0, 300) };
  }
}

/** A cleaner outcome's per-partition failure, thrown again as it was reported (`internal` as an untyped error). */
function failureOf(o: CleanerOutcome): void {
  for (const p of o.partitions) {
    if (!p.error) continue;
    if (p.error.code === 'internal') throw new Error(p.error.message);
    throw new KlxError(p.error.code, p.error.message, { file: p.error.file, position: p.error.position });
  }
}

async function target(args: { dir: string; logFile: string; trashDir: string }): Promise<OpOutcome[]> {
  const out: OpOutcome[] = [];
  out.push(await attempt('dump', () => {
    for (const e of scanLogFile(args.logFile, { verifyCrc: true })) if (e.type === 'batch') e.records?.length;
  }));
  out.push(await attempt('open-dir', () => openPath(args.dir)));
  let log: PartitionLog | null = null;
  out.push(await attempt('open', () => (log = PartitionLog.open(args.dir))));
  if (log) {
    const l: PartitionLog = log;
    out.push(await attempt('deep-scan', () => countRecords(l)));
    out.push(await attempt('verify', () => verifyPartition(l, { deep: true })));
    out.push(await attempt('holes', () => findHoles(l)));
    out.push(await attempt('fetch', () => readForward(l, l.logStartOffset, 500, { includeControl: true })));
    out.push(await attempt('fetch-back', () => readBackward(l, l.logEndOffset, 200, { includeControl: true })));
    out.push(await attempt('time-lookup', () => offsetForTimestamp(l, 1700000000500n)));
    out.push(await attempt('repair-plan', () => planRecovery(l)));
  }
  out.push(await attempt('retention-preview', () => failureOf(retention(args.dir, { dryRun: true, trashDir: args.trashDir, now: 1700000100000 }))));
  out.push(await attempt('compaction-preview', () => failureOf(compact(args.dir, { dryRun: true, trashDir: args.trashDir, now: 1700000100000 }))));
  return out;
}

serveTasks({ target, ping: () => 'pong' });
