/**
 * `klx verify DIR [--json] [--quick] [--shallow]`: checks the partitions under DIR (a log
 * directory, a partition folder, or a folder of log directories) and prints every finding with its
 * file (relative to DIR), byte position and reason, then a summary line with counts.
 *
 * Exit code: 0 when nothing of severity error or warning was found, 1 otherwise (2: usage error).
 * Read-only: nothing under DIR is written.
 */
import { relative } from 'node:path';
import { allPartitions, openPath } from '../../engine/log/log-dir.ts';
import { countFindings, type Finding } from '../../engine/log/findings.ts';
import { logDirFindings, quickCheckPartition } from '../../engine/log/quick-check.ts';
import { verifyPartition } from '../../engine/log/verify.ts';
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
  const rel = (p: string) => relative(opened.root, p) || '.';
  const all: Finding[] = [];
  const stats = { partitions: 0, segments: 0, batches: 0, records: 0, damagedBatches: 0, damagedRecords: 0, bytes: 0 };
  const emit = async (f: Finding) => {
    all.push(f);
    await out.line(opts.json ? JSON.stringify({ type: 'finding', ...f, file: rel(f.file) }) : findingText(f, rel));
  };
  for (const d of opened.logDirs) for (const f of logDirFindings(d)) await emit(f);
  for (const { log } of allPartitions(opened)) {
    stats.partitions++;
    if (opts.quick) {
      stats.segments += log.segments.length;
      for (const f of quickCheckPartition(log)) await emit(f);
      continue;
    }
    const report = await verifyPartition(log, { deep: !opts.shallow, logDirFindings: false });
    stats.segments += report.stats.segments;
    stats.batches += report.stats.batches;
    stats.records += report.stats.records;
    stats.damagedBatches += report.stats.damagedBatches;
    stats.damagedRecords += report.stats.damagedRecords;
    stats.bytes += report.stats.bytes;
    for (const f of report.findings) await emit(f);
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
  process.exitCode = counts.error + counts.warning > 0 ? 1 : 0;
}

/** `SEVERITY code file@position: reason` */
function findingText(f: Finding, rel: (p: string) => string): string {
  const where = f.position !== undefined ? `${rel(f.file)}@${f.position}` : rel(f.file);
  return `${f.severity.toUpperCase().padEnd(7)} ${f.code} ${where}: ${f.reason}`;
}
