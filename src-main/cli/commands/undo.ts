/**
 * `klx undo DIR [--trash-dir DIR] [--json]`: undoes the latest `klx retention` / `klx compact` run
 * that touched DIR (a partition folder or a log directory), putting back the previous bytes of every
 * file it replaced, from the trash. Refused, touching nothing, when the partition changed since.
 */
import type { Command } from 'commander';
import { undo } from '../../engine/cleaner/cleaner.ts';

/** Registers `klx undo`. */
export function registerUndo(program: Command): void {
  program
    .command('undo')
    .description('undo the latest retention or compaction run on DIR, restoring the replaced files from the trash')
    .argument('<dir>', 'partition folder or log directory the run was given')
    .option('--trash-dir <dir>', 'the trash folder the run used (default: $KLX_TRASH_DIR or the user data folder)')
    .option('--json', 'print the result as JSON')
    .action((dir: string, flags: { trashDir?: string; json?: boolean }) => {
      const result = undo(dir, flags.trashDir ? { trashDir: flags.trashDir } : {});
      if (flags.json) {
        process.stdout.write(JSON.stringify(result, null, 2) + '\n');
        return;
      }
      for (const e of result.entries) {
        process.stdout.write(`${e.partitionDir}: undid ${e.operation} (${e.id}): restored ${e.restored.length} file(s), removed ${e.removed.length}\n`);
        for (const c of e.checkpoints) process.stdout.write(`  ${c}\n`);
        for (const n of e.notes) process.stdout.write(`  note: ${n}\n`);
      }
    });
}
