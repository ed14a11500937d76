/**
 * The run history of each partition folder, kept with the trash: one line per cleaner run that
 * changed the folder (run id, wall-clock time, operation, rules, the `now` it used, what went per
 * reason, and — when the run collected its decisions — the evidence of each removed record), and
 * one line per undo. The holes a run made keep their reason and run after the fact: "removed by the
 * compaction of 2026-12-01 10:02 (superseded by offset 4 (key k1))".
 *
 * Layout: `<trashDir>/history-<folder name>-<hash>.ndjson`, a file beside the trash entries
 * (`listTrash` lists folders only), `<hash>` the first 12 hex digits of the SHA-1 of the partition
 * folder's absolute path. Emptying the trash keeps the history (what happened stays true; only the
 * undo goes). Lines are appended; an unreadable line is skipped with a note, never fatal. Removed
 * ranges and evidence are capped per run ({@link MAX_HISTORY_RANGES}, {@link MAX_HISTORY_EVIDENCE}).
 *
 * Kafka keeps no such history (a broker's cleaner logs a summary line per clean to log-cleaner.log,
 * `LogCleaner.recordStats`); this is the tool's own record of what it did.
 */
import { createHash } from 'node:crypto';
import { appendFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import type { CleanerReport, RemovalReason } from './cleaner-plan.ts';

/** Most removed ranges kept per run. */
export const MAX_HISTORY_RANGES = 10_000;
/** Most per-record evidence lines kept per run. */
export const MAX_HISTORY_EVIDENCE = 10_000;

/** One run as the history keeps it (offsets as decimal strings: exact int64). */
export interface RunRecord {
  type: 'run';
  runId: string;
  /** Wall-clock time the run finished, ms since the epoch. */
  at: number;
  operation: 'retention' | 'compaction';
  rules?: 'kafka' | 'classic';
  /** The `now` the decisions used, ms. */
  now: number;
  partitionDir: string;
  topic: string;
  partition: number;
  /** One line: segments and records before → after. */
  summary: string;
  logStartOffsetBefore: string;
  logStartOffsetAfter: string;
  /** Removed offsets per reason, inclusive ranges. */
  removed: { reason: RemovalReason; first: string; last: string }[];
  /** Evidence of removed records (when the run collected decisions): offset → sentence. */
  evidence: { offset: string; lastOffset?: string; evidence: string }[];
  trashEntries: string[];
  /** Set by {@link readRunHistory} when a later undo reversed the run. */
  undone?: boolean;
}

interface UndoLine {
  type: 'undo';
  runId: string;
  at: number;
}

/** The history file of a partition folder. */
export function historyFile(trashDir: string, partitionDir: string): string {
  const abs = resolve(partitionDir);
  const hash = createHash('sha1').update(abs).digest('hex').slice(0, 12);
  return join(trashDir, `history-${basename(abs)}-${hash}.ndjson`);
}

/**
 * Appends a run's line to its folder's history (nothing for a plan or a run that changed nothing).
 * @throws Error from the file system (the caller reports it; the run itself stands).
 */
export function recordRun(trashDir: string, runId: string, r: CleanerReport, at = Date.now()): void {
  if (r.dryRun || r.nothingToDo) return;
  const removed: RunRecord['removed'] = [];
  for (const [reason, v] of Object.entries(r.removed) as [RemovalReason, NonNullable<CleanerReport['removed'][RemovalReason]>][]) {
    for (const x of v.ranges) {
      if (removed.length >= MAX_HISTORY_RANGES) break;
      removed.push({ reason, first: x.first.toString(), last: x.last.toString() });
    }
  }
  const evidence: RunRecord['evidence'] = [];
  for (const d of r.decisions?.rows ?? []) {
    if (d.decision !== 'remove' || evidence.length >= MAX_HISTORY_EVIDENCE) continue;
    if (d.subject === 'batch') continue;
    evidence.push({ offset: d.offset.toString(), ...(d.lastOffset !== undefined && d.lastOffset !== d.offset ? { lastOffset: d.lastOffset.toString() } : {}), evidence: d.evidence });
  }
  const line: RunRecord = {
    type: 'run',
    runId,
    at,
    operation: r.operation,
    ...(r.rules ? { rules: r.rules } : {}),
    now: r.now,
    partitionDir: resolve(r.partitionDir),
    topic: r.topic,
    partition: r.partition,
    summary: `${r.before.segments} segment(s), ${r.before.records} record(s) → ${r.after.segments} segment(s), ${r.after.records} record(s); log start offset ${r.log.logStartOffsetBefore} → ${r.log.logStartOffsetAfter}`,
    logStartOffsetBefore: r.log.logStartOffsetBefore.toString(),
    logStartOffsetAfter: r.log.logStartOffsetAfter.toString(),
    removed,
    evidence,
    trashEntries: r.trashEntries ?? [],
  };
  mkdirSync(trashDir, { recursive: true });
  appendFileSync(historyFile(trashDir, r.partitionDir), JSON.stringify(line) + '\n');
}

/** Marks a run undone in a folder's history. */
export function recordUndo(trashDir: string, partitionDir: string, runId: string, at = Date.now()): void {
  mkdirSync(trashDir, { recursive: true });
  const line: UndoLine = { type: 'undo', runId, at };
  appendFileSync(historyFile(trashDir, partitionDir), JSON.stringify(line) + '\n');
}

/**
 * The runs of a partition folder, oldest first (undone ones flagged), and notes for lines that
 * could not be read.
 */
export function readRunHistory(trashDir: string, partitionDir: string): { runs: RunRecord[]; notes: string[] } {
  const path = historyFile(trashDir, partitionDir);
  if (!existsSync(path)) return { runs: [], notes: [] };
  const runs: RunRecord[] = [];
  const notes: string[] = [];
  const lines = readFileSync(path, 'utf8').split('\n');
  lines.forEach((text, i) => {
    if (!text.trim()) return;
    try {
      const o = JSON.parse(text) as RunRecord | UndoLine;
      if (o.type === 'run') runs.push(o);
      else if (o.type === 'undo') {
        for (let j = runs.length - 1; j >= 0; j--) {
          if (runs[j]!.runId === o.runId && !runs[j]!.undone) {
            runs[j]!.undone = true;
            break;
          }
        }
      }
    } catch {
      notes.push(`${path}: line ${i + 1} is not valid JSON and was skipped`);
    }
  });
  return { runs, notes };
}

/** Why an offset holds no record any more, according to the history. */
export interface HoleCause {
  runId: string;
  at: number;
  operation: 'retention' | 'compaction';
  rules?: 'kafka' | 'classic';
  reason: RemovalReason;
  /** The record's evidence when the run collected it. */
  evidence?: string;
  /** "removed by the compaction of 2026-12-01 10:02 UTC (superseded by offset 4 (key k1))" */
  text: string;
}

function minuteText(ms: number): string {
  return new Date(ms).toISOString().slice(0, 16).replace('T', ' ') + ' UTC';
}

/**
 * The run that removed `offset`: the latest run not undone whose removed ranges hold it.
 * @returns null when no run of the history removed it.
 */
export function holeCause(runs: readonly RunRecord[], offset: bigint): HoleCause | null {
  for (let i = runs.length - 1; i >= 0; i--) {
    const run = runs[i]!;
    if (run.undone) continue;
    const hit = run.removed.find((x) => BigInt(x.first) <= offset && offset <= BigInt(x.last));
    if (!hit) continue;
    const ev = run.evidence.find((e) => BigInt(e.offset) <= offset && offset <= BigInt(e.lastOffset ?? e.offset));
    const what = run.operation === 'compaction' ? `the compaction${run.rules === 'classic' ? ' (classic rules)' : ''}` : 'the retention';
    const because = ev ? ev.evidence : hit.reason;
    return {
      runId: run.runId,
      at: run.at,
      operation: run.operation,
      ...(run.rules ? { rules: run.rules } : {}),
      reason: hit.reason,
      ...(ev ? { evidence: ev.evidence } : {}),
      text: `removed by ${what} of ${minuteText(run.at)} (${because})`,
    };
  }
  return null;
}
