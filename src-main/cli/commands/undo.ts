/**
 * `klx undo DIR [--trash-dir DIR] [--json]`: undoes the latest `klx retention` / `klx compact` run
 * that touched DIR (a partition folder or a log directory), putting back the previous bytes of every
 * file it replaced, from the trash. Refused, touching nothing, when the partition changed since.
 */
import { undo } from '../../engine/cleaner/cleaner.ts';

/** Runs `klx undo` (its options and help are declared in `../registry.ts`). */
export function runUndo(dir: string, flags: { trashDir?: string; json?: boolean }): void {
  const result = undo(dir, flags.trashDir ? { trashDir: flags.trashDir } : {});
  if (flags.json) {
    process.stdout.write(JSON.stringify(result) + '\n');
    return;
  }
  for (const e of result.entries) {
    process.stdout.write(`${e.partitionDir}: undid ${e.operation} (${e.id}): restored ${e.restored.length} file(s), removed ${e.removed.length}\n`);
    for (const c of e.checkpoints) process.stdout.write(`  ${c}\n`);
    for (const n of e.notes) process.stdout.write(`  note: ${n}\n`);
  }
}
