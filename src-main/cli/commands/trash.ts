/**
 * `klx trash [--empty] [--trash-dir DIR] [--json]`: lists the trash of the cleaner (the files
 * retention and compaction runs replaced, kept so `klx undo` can restore them), or with `--empty`
 * deletes them for good.
 */
import { defaultTrashDir, emptyTheTrash, trashEntries } from '../../engine/cleaner/cleaner.ts';

/** Runs `klx trash` (its options and help are declared in `../registry.ts`). */
export function runTrash(flags: { empty?: boolean; trashDir?: string; json?: boolean }): void {
  const dir = flags.trashDir ?? defaultTrashDir();
  if (flags.empty) {
    const r = emptyTheTrash(dir);
    if (flags.json) process.stdout.write(JSON.stringify({ trashDir: dir, ...r }) + '\n');
    else process.stdout.write(`emptied ${dir}: ${r.removed.length} entr${r.removed.length === 1 ? 'y' : 'ies'}, ${r.bytes.toLocaleString('en-US')} bytes freed\n`);
    return;
  }
  const entries = trashEntries(dir);
  if (flags.json) {
    process.stdout.write(
      JSON.stringify(
        {
          trashDir: dir,
          entries: entries.map((e) => ({
            id: e.id,
            bytes: e.bytes,
            ...(e.manifest
              ? { runId: e.manifest.runId, createdAt: e.manifest.createdAt, operation: e.manifest.operation, state: e.manifest.state, partitionDir: e.manifest.partitionDir, summary: e.manifest.summary, files: e.manifest.removed.map((f) => f.name) }
              : {}),
            ...(e.problem ? { problem: e.problem } : {}),
          })),
        },
      ) + '\n',
    );
    return;
  }
  if (entries.length === 0) {
    process.stdout.write(`the trash (${dir}) is empty\n`);
    return;
  }
  process.stdout.write(`trash: ${dir}\n`);
  for (const e of entries) {
    const m = e.manifest;
    process.stdout.write(
      m
        ? `${e.id}  ${m.createdAt}  ${m.operation}  ${m.partitionDir}  ${m.removed.length} file(s), ${e.bytes.toLocaleString('en-US')} bytes  ${m.state === 'committed' ? m.summary : '(unfinished run)'}\n`
        : `${e.id}  unreadable: ${e.problem}\n`,
    );
  }
}
