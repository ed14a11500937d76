/**
 * What changed in a folder between two listings (names, sizes, modification times; no file is
 * read), said in Kafka's words: partition created or deleted, segment added, removed, grown or
 * truncated, checkpoint changed, other files changed. Pure: the folder watcher
 * (`folder-watcher.ts`) takes the listings, this module compares them.
 *
 * A segment is a `<baseOffset>.log` file (Kafka `LogFileUtils` names, see
 * `engine/files/file-names.ts`); a `.log.deleted`/`.cleaned`/`.swap` is one of the "other files".
 * A checkpoint is a file whose name ends in `-checkpoint` (`replication-offset-checkpoint`,
 * `recovery-point-offset-checkpoint`, `log-start-offset-checkpoint`, `cleaner-offset-checkpoint`,
 * `leader-epoch-checkpoint`, as Kafka's `LogManager`, `LogCleanerManager` and `LeaderEpochFileCache`
 * name them).
 */
import type { FolderChange } from '../../../src-shared/folder-types.ts';
import { parseSegmentFileName } from '../../engine/files/file-names.ts';

/** One entry of a folder listing: a sub-folder, or a file with its size (bytes) and modification time (ms). */
export interface ListedEntry {
  dir: boolean;
  size: number;
  mtimeMs: number;
}

/** A folder's listing: entry name → what `stat` said. */
export type Listing = ReadonlyMap<string, ListedEntry>;

/** Whether `name` is a segment's `.log` file (`00000000000000000120.log`, no transient suffix). */
export function isSegmentLog(name: string): boolean {
  const parsed = parseSegmentFileName(name);
  return parsed !== null && parsed.kind === 'log' && parsed.transient === undefined;
}

/** Whether `name` is a checkpoint file (its name ends in `-checkpoint`). */
export function isCheckpoint(name: string): boolean {
  return name.endsWith('-checkpoint');
}

const n = (x: number): string => x.toLocaleString('en-US');
const plural = (count: number, word: string, words = `${word}s`): string => `${n(count)} ${count === 1 ? word : words}`;
const some = (names: readonly string[]): string => (names.length <= 3 ? names.join(', ') : `${names.slice(0, 3).join(', ')} and ${n(names.length - 3)} more`);

/** An empty change of `kind` for `dir`. */
function blank(kind: FolderChange['kind'], dir: string, name: string): FolderChange {
  return { kind, dir, name, segmentsAdded: [], segmentsRemoved: [], segmentsGrown: [], segmentsTruncated: [], checkpoints: [], otherFiles: 0, text: '' };
}

/** The words of a change: "prices-0: 1 segment added (00000000000000000120.log), 2 files changed". */
export function describeChange(c: FolderChange, segmentCount?: number): string {
  const parts: string[] = [];
  if (c.kind === 'partition-created') parts.push(segmentCount === undefined ? 'partition created' : `partition created (${plural(segmentCount, 'segment')})`);
  if (c.kind === 'partition-deleted') parts.push('partition deleted');
  if (c.kind !== 'partition-created' && c.kind !== 'partition-deleted') {
    if (c.segmentsAdded.length) parts.push(`${plural(c.segmentsAdded.length, 'segment')} added (${some(c.segmentsAdded)})`);
    if (c.segmentsRemoved.length) parts.push(`${plural(c.segmentsRemoved.length, 'segment')} removed (${some(c.segmentsRemoved)})`);
    if (c.segmentsGrown.length === 1) parts.push(`${c.segmentsGrown[0]!.file} grew by ${plural(c.segmentsGrown[0]!.bytes, 'byte')}`);
    else if (c.segmentsGrown.length > 1) parts.push(`${n(c.segmentsGrown.length)} segments grew (${some(c.segmentsGrown.map((g) => g.file))})`);
    for (const t of c.segmentsTruncated) parts.push(`${t.file} truncated by ${plural(t.bytes, 'byte')}`);
    if (c.checkpoints.length) parts.push(`${some(c.checkpoints)} changed`);
    if (c.otherFiles) parts.push(`${plural(c.otherFiles, 'file')} changed`);
  }
  return `${c.name}: ${parts.join(', ')}`;
}

/**
 * The changes of one folder's files between `before` and `after` (sub-folders are not compared
 * here). `kind` is `partition-changed` for a partition folder, `log-dir-changed` for a log
 * directory. Returns null when nothing differs.
 */
export function diffFiles(kind: 'partition-changed' | 'log-dir-changed', dir: string, name: string, before: Listing, after: Listing): FolderChange | null {
  const c = blank(kind, dir, name);
  let any = false;
  const names = new Set([...before.keys(), ...after.keys()]);
  for (const file of [...names].sort()) {
    const a = before.get(file);
    const b = after.get(file);
    if ((a && a.dir) || (b && b.dir)) continue;
    if (a && b && a.size === b.size && a.mtimeMs === b.mtimeMs) continue;
    any = true;
    if (isSegmentLog(file)) {
      if (!a) c.segmentsAdded.push(file);
      else if (!b) c.segmentsRemoved.push(file);
      else if (b.size > a.size) c.segmentsGrown.push({ file, bytes: b.size - a.size });
      else if (b.size < a.size) c.segmentsTruncated.push({ file, bytes: a.size - b.size });
      else c.otherFiles++; // rewritten in place, same size
    } else if (isCheckpoint(file)) c.checkpoints.push(file);
    else c.otherFiles++;
  }
  if (!any) return null;
  c.text = describeChange(c);
  return c;
}

/** A partition folder that appeared, with its listing (for the segment count). */
export function createdPartition(dir: string, name: string, listing: Listing): FolderChange {
  const c = blank('partition-created', dir, name);
  const segments = [...listing.keys()].filter(isSegmentLog).sort();
  c.segmentsAdded.push(...segments);
  c.text = describeChange(c, segments.length);
  return c;
}

/** A partition folder that went. */
export function deletedPartition(dir: string, name: string): FolderChange {
  const c = blank('partition-deleted', dir, name);
  c.text = describeChange(c);
  return c;
}
