/**
 * `log.verifyFolder`: every partition of an opened folder verified (the engine's `verifyPartition`:
 * CRCs, framing, offsets, indexes; records decoded with `deep`) and its default repair planned (the
 * engine's `planRecovery`, what `klx repair` would do without `--truncate-at-corruption`), one row per
 * partition, on the log worker. Progress counts the bytes of every `.log` of the folder twice (the
 * verify reads them, then the plan); the job's signal cancels between and inside partitions. A
 * partition that cannot be read becomes a row with its error; the others go on.
 */
import { relative } from 'node:path';
import { allPartitions, openPath } from '../../engine/log/log-dir.ts';
import { countFindings } from '../../engine/log/findings.ts';
import { logDirFindings, recoveryNeededFinding } from '../../engine/log/quick-check.ts';
import { planRecovery } from '../../engine/log/recovery-plan.ts';
import type { ParallelScanOptions } from '../../engine/log/segment-tasks.ts';
import { verifyPartitionInParallel } from '../../engine/log/verify-parallel.ts';
import { KlxError } from '../../engine/errors.ts';
import type { FolderVerifyRow } from '../../../src-shared/repair-types.ts';
import type { JobResult } from '../../../src-shared/contract.ts';
import type { JobContext } from '../core/types.ts';
import { actionOrigin } from '../core/repair-wire.ts';
import { findingOf } from './log-wire.ts';
import { worstFirst } from './log-summary.ts';

/**
 * Verifies every partition under `root` (see the module comment); with `split.runner` a partition
 * of `split.minBytes` or more is verified segment by segment on its threads (the same report:
 * `verify-parallel.ts`).
 * @throws KlxError `cancelled` when the job is cancelled; `not-found` / `not-a-log-dir` for `root`.
 */
export async function verifyFolderJob(root: string, deep: boolean, job: Pick<JobContext, 'signal' | 'progress'>, split: ParallelScanOptions = {}): Promise<JobResult<'log.verifyFolder'>> {
  const opened = openPath(root);
  const parts = allPartitions(opened);
  const total = 2 * parts.reduce((s, p) => s + p.log.logSize, 0);
  let before = 0;
  const rows: FolderVerifyRow[] = [];
  const totals = { partitions: parts.length, errors: 0, warnings: 0, infos: 0, bytes: total / 2 };
  const cancelled = () => new KlxError('cancelled', `verify of ${root} cancelled after ${rows.length} of ${parts.length} partitions`);
  for (const [i, { log }] of parts.entries()) {
    if (job.signal.aborted) throw cancelled();
    const name = relative(root, log.dir) || log.dir.split(/[\\/]/).pop()!;
    const phase = `${name} (${i + 1} of ${parts.length})`;
    const size = log.logSize;
    try {
      const report = await verifyPartitionInParallel(log, { ...split, deep, signal: job.signal, onProgress: (p) => job.progress({ phase: `verifying ${phase}`, done: before + Math.min(size, p.bytesDone), total, bytes: before + p.bytesDone }) });
      const recovery = recoveryNeededFinding(log);
      const findings = recovery ? [...report.findings, recovery] : report.findings;
      const counts = countFindings(findings);
      const worst = worstFirst(findings.map(findingOf)).find((f) => f.severity !== 'info') ?? null;
      const plan = log.kind === 'delete' ? null : await planRecovery(log.dir, { signal: job.signal, onProgress: (p) => job.progress({ phase: `planning the repair of ${phase}`, done: before + size + Math.min(size, p.bytesDone), total, bytes: before + size + p.bytesDone }) });
      const origins = plan ? plan.actions.map((a) => actionOrigin(plan, a)) : [];
      rows.push({
        dir: log.dir,
        name,
        errors: counts.error,
        warnings: counts.warning,
        infos: counts.info,
        worst: worst ? { code: worst.code, file: worst.file, position: worst.position ?? null, reason: worst.reason } : null,
        brokerActions: origins.filter((o) => o === 'broker').length,
        choiceActions: origins.filter((o) => o === 'choice').length,
        unresolved: plan?.unresolved.length ?? 0,
        error: null,
      });
      totals.errors += counts.error;
      totals.warnings += counts.warning;
      totals.infos += counts.info;
    } catch (err) {
      if (job.signal.aborted || (err instanceof KlxError && err.code === 'cancelled')) throw cancelled();
      rows.push({ dir: log.dir, name, errors: 0, warnings: 0, infos: 0, worst: null, brokerActions: 0, choiceActions: 0, unresolved: 0, error: err instanceof Error ? err.message : String(err) });
    }
    before += 2 * size;
    job.progress({ phase: `verified ${i + 1} of ${parts.length} partitions`, done: before, total, bytes: before });
  }
  const dirFindings = worstFirst(opened.logDirs.flatMap((d) => logDirFindings(d)).map(findingOf));
  for (const f of dirFindings) totals[f.severity === 'error' ? 'errors' : f.severity === 'warning' ? 'warnings' : 'infos']++;
  return { root: opened.root, partitions: rows, logDirFindings: dirFindings, totals };
}
