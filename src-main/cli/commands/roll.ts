/**
 * `klx roll DIR [--dry-run] [--json]`: rolls the active segment of a partition folder now, as
 * Kafka's `UnifiedLog.roll` does (engine: `PartitionWriter.roll` in
 * `engine/log/partition-writer.ts`): the old segment gets its final time-index entry and trimmed
 * indexes, a new empty segment named after the log end offset becomes active, and the producer
 * snapshot `<log end offset>.snapshot` is written as a broker writes it at each roll
 * (`ProducerStateManager.takeSnapshot`). An empty active segment is left as it is.
 */
import { PartitionWriter, type RollResult } from '../../engine/log/partition-writer.ts';
import { segmentFileName } from '../../engine/files/file-names.ts';
import { printResult, staleLockNote } from './append.ts';

export interface RollOptions {
  dryRun?: boolean;
  json?: boolean;
}

/** Runs `klx roll` (its options and help are declared in `../registry.ts`). */
export async function runRoll(dir: string, opts: RollOptions): Promise<void> {
  const writer = PartitionWriter.open(dir, { readOnly: Boolean(opts.dryRun), purpose: 'klx roll' });
  let result: RollResult;
  try {
    result = opts.dryRun ? writer.planRoll() : writer.roll();
  } finally {
    writer.close();
  }
  await printResult({ ...result, dryRun: Boolean(opts.dryRun), tookOverStaleLockFrom: writer.tookOverFrom ?? null }, Boolean(opts.json), () => [
    ...staleLockNote(writer),
    ...rollText(result, `${writer.topic}-${writer.partition}`, Boolean(opts.dryRun)),
  ]);
}

function rollText(r: RollResult, tp: string, dryRun: boolean): string[] {
  if (!r.rolled) return [`nothing to roll in ${tp}: ${r.note}`];
  const prev = r.previousSegmentBaseOffset !== null ? segmentFileName(r.previousSegmentBaseOffset, '.log') : null;
  return [
    `${dryRun ? 'would roll' : 'rolled'} ${tp}: new active segment ${segmentFileName(r.segmentBaseOffset, '.log')} (log end offset ${r.logEndOffset})`,
    ...(prev ? [`  closed ${prev}${r.finalTimeIndexEntry ? `: final time-index entry ${r.finalTimeIndexEntry.timestamp} -> offset ${r.finalTimeIndexEntry.offset}` : ' (no timestamps)'}, indexes trimmed`] : []),
    ...(r.producerSnapshot ? [`  ${dryRun ? 'would write' : 'wrote'} producer snapshot ${segmentFileName(r.producerSnapshot.offset, '.snapshot')} (${r.producerSnapshot.producers} producer${r.producerSnapshot.producers === 1 ? '' : 's'})`] : []),
  ];
}
