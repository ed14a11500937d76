/**
 * The cleaner's public API: plan, run and undo retention and compaction on a partition folder, a
 * log directory or a folder of log directories (spec §12–§13; what Kafka's `LogCleaner` thread and
 * `UnifiedLog.deleteOldSegments` do on a broker, run on demand).
 *
 * - **plan** (`dryRun: true`) touches nothing and reports exactly what the run will do;
 * - **run** executes it under each partition's writer lock, crash-safely, with replaced files kept in
 *   the trash, and reports the same figures measured afterwards;
 * - **undo** puts back the previous bytes of the latest run (see `undo.ts`).
 *
 * Every operation takes `now` (ms; default the wall clock) so results are reproducible. Partitions
 * are handled one by one; a partition that fails (a corrupt segment, a klx writer lock held by another
 * process; a running broker's OS lock on `.lock` cannot be seen, see log-lock.ts...) is
 * reported with its error and the others go on (B21).
 */
import { toErrorInfo } from '../errors.ts';
import type { ErrorInfo } from '../../../src-shared/errors.ts';
import { allPartitions, openPath } from '../log/log-dir.ts';
import type { PartitionLog } from '../log/partition-log.ts';
import { cleanableRange } from './cleanable-range.ts';
import type { CleanerFaultHook } from './file-steps.ts';
import type { CleanerProgress, CleanerReport, RunContext } from './cleaner-plan.ts';
import { planRetention, runRetention, type RetentionOptions } from './retention.ts';
import { defaultTrashDir, emptyTrash, listTrash, newRunId, type TrashEntryInfo } from './trash.ts';
import { undoLastRun, type UndoResult } from './undo.ts';
import { planCompaction, runCompaction, type CompactionOptions } from './compaction.ts';
import { recordRun, recordUndo } from './run-history.ts';

export type { CleanerReport, CleanerProgress } from './cleaner-plan.ts';
export { reportJson } from './cleaner-plan.ts';

/** Options shared by every cleaner operation. */
export interface CleanerCallOptions {
  /** Plan only: touch nothing. */
  dryRun?: boolean;
  /** Trash folder (default: see `trash.ts`). */
  trashDir?: string;
  /** Groups the trash entries of this call (default: a new id). */
  runId?: string;
  signal?: AbortSignal;
  onProgress?: (p: CleanerProgress & { partition: string }) => void;
  /** Fault injection for tests (see `file-steps.ts`). */
  fault?: CleanerFaultHook;
}

/** The outcome for one partition. */
export interface PartitionOutcome {
  partitionDir: string;
  /** Path relative to the folder the operation was given. */
  rel: string;
  topic: string;
  partition: number;
  report?: CleanerReport;
  /** Why this partition could not be handled (it was left as it was unless the message says otherwise). */
  error?: ErrorInfo;
  /**
   * Compaction that failed on damaged data: the bytes Kafka's `uncleanable-bytes` metric counts for
   * this partition once `LogCleanerManager.markPartitionUncleanable` marks it, i.e. the cleanable
   * section's size (`calculateCleanableBytes(firstDirtyOffset, firstUncleanableOffset)`: the whole
   * dirty segments, not only the damaged bytes). Null when it cannot be computed.
   */
  uncleanableBytes?: number | null;
}

/** The outcome of an operation over one or more partitions. */
export interface CleanerOutcome {
  runId: string;
  dryRun: boolean;
  partitions: PartitionOutcome[];
}

/**
 * Error codes of damaged log data: a compaction failing with one marks the partition uncleanable
 * (LogCleaner's LogCleaningException path). Not `decompression-limit`: a batch past this tool's
 * decompression bound is a limit of the tool (its error names --max-inflated-bytes), which a
 * broker's cleaner does not have (it reads records as a stream: DefaultRecordBatch).
 */
const DATA_DAMAGE = new Set(['truncated-batch', 'invalid-tail', 'corrupt-region', 'unknown-magic', 'unknown-codec', 'batch-length-out-of-range', 'corrupt-batch', 'crc-mismatch', 'corrupt-record', 'offset-overflow']);

/** Kafka's uncleanable-bytes of a partition (see {@link PartitionOutcome.uncleanableBytes}), bounded by the high watermark (or LEO) instead of the last stable offset. */
function uncleanableBytesOf(log: PartitionLog, now: number): number | null {
  try {
    const hw = log.highWatermark;
    const bound = hw !== null && hw < log.logEndOffset ? hw : log.logEndOffset;
    return cleanableRange(log, now, bound).cleanableBytes;
  } catch {
    return null;
  }
}

function forEachPartition(path: string, opts: CleanerCallOptions, fn: (dir: string, ctx: RunContext) => CleanerReport, uncleanableAt?: number): CleanerOutcome {
  const runId = opts.runId ?? newRunId();
  const trashDir = opts.trashDir ?? defaultTrashDir();
  const out: PartitionOutcome[] = [];
  for (const { rel, log } of allPartitions(openPath(path))) {
    const name = `${log.topic}-${log.partition}`;
    const ctx: RunContext = {
      runId,
      trashDir,
      ...(opts.signal ? { signal: opts.signal } : {}),
      ...(opts.fault ? { fault: opts.fault } : {}),
      ...(opts.onProgress ? { onProgress: (p: CleanerProgress) => opts.onProgress!({ ...p, partition: name }) } : {}),
    };
    try {
      const report = fn(log.dir, ctx);
      if (!opts.dryRun) keepHistory(trashDir, runId, report);
      out.push({ partitionDir: log.dir, rel, topic: log.topic, partition: log.partition, report });
    } catch (err) {
      if (err instanceof Error && err.name === 'SimulatedCrash') throw err;
      const error = toErrorInfo(err);
      const o: PartitionOutcome = { partitionDir: log.dir, rel, topic: log.topic, partition: log.partition, error };
      if (uncleanableAt !== undefined && DATA_DAMAGE.has(error.code)) o.uncleanableBytes = uncleanableBytesOf(log, uncleanableAt);
      out.push(o);
      if ((err as { code?: string }).code === 'cancelled') break;
    }
  }
  return { runId, dryRun: opts.dryRun ?? false, partitions: out };
}

/** Adds a run to its folder's history (`run-history.ts`); a failure to write it is a note on the report, not an error. */
export function keepHistory(trashDir: string, runId: string, report: CleanerReport): void {
  try {
    recordRun(trashDir, runId, report);
  } catch (err) {
    report.notes.push(`the run history could not be written: ${(err as Error).message}`);
  }
}

/**
 * Retention over every partition under `path` (spec §12).
 * @throws KlxError `not-found` / `not-a-log-dir` for the path itself; per-partition failures are in the outcome.
 */
export function retention(path: string, opts: RetentionOptions & CleanerCallOptions = {}): CleanerOutcome {
  const now = opts.now ?? Date.now();
  return forEachPartition(path, opts, (dir, ctx) => (opts.dryRun ? planRetention(dir, { ...opts, now }) : runRetention(dir, { ...opts, now }, ctx)));
}

/**
 * Compaction over every partition under `path` (spec §13), then retention when the policy is
 * `compact,delete`. Every partition is compacted whatever its cleanup.policy says (the caller asked
 * for it); a damaged partition is reported uncleanable and the others go on (B21).
 * @throws KlxError `not-found` / `not-a-log-dir` for the path itself; per-partition failures are in the outcome.
 */
export function compact(path: string, opts: CompactionOptions & CleanerCallOptions = {}): CleanerOutcome {
  const now = opts.now ?? Date.now();
  return forEachPartition(path, opts, (dir, ctx) => (opts.dryRun ? planCompaction(dir, { ...opts, now }) : runCompaction(dir, { ...opts, now }, ctx)), now);
}

/** Undoes the latest run under `path` (see `undo.ts`). */
export function undo(path: string, opts: { trashDir?: string; fault?: CleanerFaultHook } = {}): UndoResult {
  const trashDir = opts.trashDir ?? defaultTrashDir();
  const r = undoLastRun(path, { trashDir, ...(opts.fault ? { fault: opts.fault } : {}) });
  for (const dir of new Set(r.entries.map((e) => e.partitionDir))) {
    try {
      recordUndo(trashDir, dir, r.runId);
    } catch (err) {
      for (const e of r.entries) if (e.partitionDir === dir) e.notes.push(`the run history could not be updated: ${(err as Error).message}`);
    }
  }
  return r;
}

/** Lists the trash. */
export function trashEntries(trashDir: string = defaultTrashDir()): TrashEntryInfo[] {
  return listTrash(trashDir);
}

/** Empties the trash (runs can no longer be undone). */
export function emptyTheTrash(trashDir: string = defaultTrashDir(), ids?: readonly string[]): { removed: string[]; bytes: number } {
  return emptyTrash(trashDir, ids);
}

export { planRetention, runRetention, planCompaction, runCompaction, undoLastRun, defaultTrashDir, newRunId };
export type { RetentionOptions, CompactionOptions, UndoResult };
