/**
 * Replacing and deleting segments on disk the way a broker does it, so that a crash at any step
 * leaves a folder that a broker's startup recovery (spec §10.4, Kafka's `LogLoader`) turns into
 * either the whole old or the whole new set of segments (spec §10.3; Kafka's
 * `LocalLog.replaceSegments`, `LocalLog.deleteSegmentFiles`, `LogSegment.changeFileSuffixes`):
 *
 * 1. the new segments are complete and flushed under `.cleaned` names (`N.log.cleaned`,
 *    `N.index.cleaned`, `N.timeindex.cleaned`, `N.txnindex.cleaned`);
 * 2. their files are renamed `.cleaned → .swap`, segments in **descending** base-offset order
 *    (recovery deletes every `.swap` at or above the lowest remaining `.cleaned`, then every
 *    `.cleaned`: until the last rename the old segments win). The last of these renames is the
 *    commit point: from then on recovery completes the replacement;
 * 3. the old segments' files are renamed to `.deleted` (ascending) and removed (recovery would
 *    delete any old file left in the range the `.swap` files cover, and every `.deleted` file);
 * 4. the new files are renamed `.swap → ''` (ascending) and the folder is fsynced.
 *
 * Files of one segment are renamed in Kafka's order: `.log`, `.index`, `.timeindex`, `.txnindex`.
 */
import { existsSync, readdirSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { KlxError } from '../errors.ts';
import { parseSegmentFileName, segmentFileName } from '../files/file-names.ts';
import type { FileSteps } from './file-steps.ts';

/** The suffixes of a segment's files, in the order Kafka renames them (LogSegment.changeFileSuffixes). */
export const SEGMENT_FILE_SUFFIXES = ['.log', '.index', '.timeindex', '.txnindex'] as const;

/** Paths of the files of segment `base` that exist under `suffix` (`''`, `.cleaned`, `.swap`). */
export function segmentFiles(dir: string, base: bigint, suffix = ''): string[] {
  return SEGMENT_FILE_SUFFIXES.map((s) => join(dir, segmentFileName(base, s + suffix))).filter((p) => existsSync(p));
}

/**
 * Refuses to work on a folder that still holds the leftovers of an interrupted clean or split
 * (`.cleaned` / `.swap` files): only startup recovery may decide what they mean.
 * @throws KlxError `invalid-argument` naming the leftover file.
 */
export function assertNoInterruptedSwap(dir: string): void {
  for (const name of readdirSync(dir).sort()) {
    const p = parseSegmentFileName(name);
    if (p?.transient === 'swap' || p?.transient === 'cleaned') {
      throw new KlxError(
        'invalid-argument',
        `the folder holds ${name}, left by an interrupted clean: recover it first (a broker's startup recovery, or the engine's recovery) before cleaning it again`,
        { file: join(dir, name) },
      );
    }
  }
}

/**
 * Deletes a segment's files the way Kafka does: each renamed to `.deleted`, then removed (plus any
 * `extra` files, e.g. the producer snapshot at the same offset).
 */
export function deleteSegmentFiles(dir: string, base: bigint, steps: FileSteps, extra: readonly string[] = []): void {
  const files = [...segmentFiles(dir, base), ...extra.filter((p) => existsSync(p))];
  for (const f of files) steps.rename('rename-to-deleted', f, f + '.deleted');
  for (const f of files) steps.unlink('delete-file', f + '.deleted');
}

/** Removes the `.cleaned` files of the given segments (a rollback before the commit point). Never throws. */
export function removeCleaned(dir: string, bases: readonly bigint[]): void {
  for (const b of bases) {
    for (const p of segmentFiles(dir, b, '.cleaned')) {
      try {
        unlinkSync(p);
      } catch {
        /* best effort */
      }
    }
  }
}

/**
 * Replaces `oldBases` by the `.cleaned` segments `newBases` (steps 2–4 of the module comment).
 * @param onCommitted called right after the commit point (the last `.cleaned → .swap` rename).
 * @throws whatever a step throws. Before the commit point the caller rolls back with
 *   {@link rollbackSwap}; after it, {@link completeSwap} finishes the job (or recovery will).
 */
export function replaceSegments(dir: string, newBases: readonly bigint[], oldBases: readonly bigint[], steps: FileSteps, onCommitted?: () => void): void {
  const desc = [...newBases].sort((a, b) => (a > b ? -1 : a < b ? 1 : 0));
  for (const b of desc) {
    for (const p of segmentFiles(dir, b, '.cleaned')) steps.rename('rename-cleaned-to-swap', p, p.slice(0, -'.cleaned'.length) + '.swap');
  }
  onCommitted?.();
  completeSwap(dir, newBases, oldBases, steps);
}

/**
 * Steps 3–4 (after the commit point): deletes the old segments that are still there and strips
 * `.swap` from the new files; safe to call again after a partial attempt.
 */
export function completeSwap(dir: string, newBases: readonly bigint[], oldBases: readonly bigint[], steps: FileSteps): void {
  const asc = (xs: readonly bigint[]) => [...xs].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  for (const b of asc(oldBases)) deleteSegmentFiles(dir, b, steps);
  for (const b of asc(newBases)) {
    for (const p of segmentFiles(dir, b, '.swap')) steps.rename('rename-swap-to-final', p, p.slice(0, -'.swap'.length));
  }
  steps.fsyncDir(dir);
}

/**
 * Undoes step 2 before the commit point: removes every `.swap` and `.cleaned` file of the new
 * segments (the old segments were not touched yet). Never throws.
 */
export function rollbackSwap(dir: string, newBases: readonly bigint[]): void {
  for (const b of newBases) {
    for (const p of [...segmentFiles(dir, b, '.cleaned'), ...segmentFiles(dir, b, '.swap')]) {
      try {
        unlinkSync(p);
      } catch {
        /* best effort */
      }
    }
  }
}
