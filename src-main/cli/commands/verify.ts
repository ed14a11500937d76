/**
 * `klx verify DIR [--json] [--quick] [--shallow]`: checks the partitions under DIR (a log
 * directory, a partition folder, or a folder of log directories) and prints every finding with its
 * file (relative to DIR), byte position and reason, then a summary line with counts.
 *
 * Exit code: 0 when nothing of severity error or warning was found, 1 otherwise (2: usage error).
 * Read-only: nothing under DIR is written.
 */
import { basename, relative } from 'node:path';
import { allPartitions, openPath } from '../../engine/log/log-dir.ts';
import { countFindings, type Finding } from '../../engine/log/findings.ts';
import { logDirFindings, quickCheckPartition, recoveryNeededFinding } from '../../engine/log/quick-check.ts';
import { verifyPartitionInParallel } from '../../engine/log/verify-parallel.ts';
import { closeScanPool, scanRunner, scanSplitMinBytes } from '../../api/log/scan-pool.ts';
import { OutputWriter } from '../output.ts';

export interface VerifyCliOptions {
  json?: boolean;
  quick?: boolean;
  shallow?: boolean;
}

/** Runs `klx verify` (its options and help are declared in `../registry.ts`). */
export async function runVerify(dir: string, opts: VerifyCliOptions): Promise<void> {
  const out = new OutputWriter(process.stdout);
  const opened = openPath(dir);
  // A partition folder given itself is named by its folder name (`orders-0`), not '.'.
  const rel = (p: string) => relative(opened.root, p) || basename(p);
  const all: Finding[] = [];
  const stats = { partitions: 0, segments: 0, batches: 0, records: 0, damagedBatches: 0, damagedRecords: 0, bytes: 0 };
  // Text: at most SHOWN_PER_KIND findings of one code in one file, then one line saying how many more
  // (a foreign or shifted segment gives one finding per batch). JSON lists every finding.
  const emitAll = async (fs: Finding[]) => {
    all.push(...fs);
    if (opts.json) {
      for (const f of fs) await out.line(JSON.stringify({ type: 'finding', ...f, file: rel(f.file) }));
      return;
    }
    for (const line of groupedFindingLines(fs, rel)) await out.line(line);
  };
  for (const d of opened.logDirs) await emitAll(logDirFindings(d));
  for (const { log } of allPartitions(opened)) {
    stats.partitions++;
    if (opts.quick) {
      stats.segments += log.segments.length;
      await emitAll(quickCheckPartition(log));
      continue;
    }
    // Big partitions are read segment by segment on one thread per core (the same report: verify-parallel.ts).
    const report = await verifyPartitionInParallel(log, { deep: !opts.shallow, logDirFindings: false, runner: scanRunner(), minBytes: scanSplitMinBytes() });
    stats.segments += report.stats.segments;
    stats.batches += report.stats.batches;
    stats.records += report.stats.records;
    stats.damagedBatches += report.stats.damagedBatches;
    stats.damagedRecords += report.stats.damagedRecords;
    stats.bytes += report.stats.bytes;
    // Whether a broker would recover this partition at startup (LogLoader.recoverLog), as the quick check and the app's Verify say.
    const recovery = recoveryNeededFinding(log);
    await emitAll(recovery ? [...report.findings, recovery] : report.findings);
  }
  const counts = countFindings(all);
  if (opts.json) {
    await out.line(JSON.stringify({ type: 'summary', ...stats, ...counts, clean: counts.error + counts.warning === 0 }));
  } else {
    const plural = (n: number, w: string) => `${n} ${w}${n === 1 ? '' : w.endsWith('h') ? 'es' : 's'}`;
    const what = opts.quick
      ? `${plural(stats.partitions, 'partition')}, ${plural(stats.segments, 'segment')} (quick check)`
      : `${plural(stats.partitions, 'partition')}, ${plural(stats.segments, 'segment')}, ${plural(stats.batches, 'batch')}${stats.damagedBatches ? ` (${stats.damagedBatches} failing their CRC)` : ''}, ${plural(stats.records, 'record')}, ${stats.bytes} bytes`;
    await out.line(`verified ${what}: ${plural(counts.error, 'error')}, ${plural(counts.warning, 'warning')}, ${counts.info} info`);
  }
  await out.end();
  await closeScanPool();
  process.exitCode = counts.error + counts.warning > 0 ? 1 : 0;
}

/** Findings of one code in one file shown in full before the rest are summed up in one line. */
export const SHOWN_PER_KIND = 3;

/**
 * The text lines of a partition's findings: each as {@link findingText}, except that after
 * {@link SHOWN_PER_KIND} findings of the same code in the same file the others are summed up in one
 * line right after the last one shown: `SEVERITY code file: N more like this (positions A..B)`.
 */
export function groupedFindingLines(fs: readonly Finding[], rel: (p: string) => string): string[] {
  const byKind = new Map<string, Finding[]>();
  for (const f of fs) {
    const k = `${f.file}\0${f.code}`;
    const list = byKind.get(k) ?? [];
    list.push(f);
    byKind.set(k, list);
  }
  const seen = new Map<string, number>();
  const lines: string[] = [];
  for (const f of fs) {
    const k = `${f.file}\0${f.code}`;
    const n = (seen.get(k) ?? 0) + 1;
    seen.set(k, n);
    if (n > SHOWN_PER_KIND) continue;
    lines.push(findingText(f, rel));
    const list = byKind.get(k)!;
    if (n === SHOWN_PER_KIND && list.length > SHOWN_PER_KIND) {
      const rest = list.slice(SHOWN_PER_KIND);
      const pos = rest.map((x) => x.position).filter((p): p is number => p !== undefined);
      const where = pos.length ? ` (positions ${Math.min(...pos)}..${Math.max(...pos)})` : '';
      lines.push(`${f.severity.toUpperCase().padEnd(7)} ${f.code} ${rel(f.file)}: ${rest.length} more like this${where}`);
    }
  }
  return lines;
}

/** `SEVERITY code file@position: reason` */
function findingText(f: Finding, rel: (p: string) => string): string {
  const where = f.position !== undefined ? `${rel(f.file)}@${f.position}` : rel(f.file);
  return `${f.severity.toUpperCase().padEnd(7)} ${f.code} ${where}: ${f.reason}`;
}
