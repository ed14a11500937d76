/**
 * Types of "folders that follow the disk" (issue 14): what the main process' folder watcher saw
 * change under an opened folder (`folder.changed` event), and the recent folders with whether each
 * can still be opened (`session.folders`).
 *
 * No Node or DOM imports.
 */
import { z } from 'zod';

/** At most this many changes are listed in one `folder.changed` event (the rest are counted). */
export const MAX_FOLDER_CHANGES = 100;

/**
 * What changed in one folder of an opened folder, found by comparing the folder's listing (names,
 * sizes, modification times) before and after, never by reading the files:
 * - `partition-created` / `partition-deleted`: a `<topic>-<partition>` folder appeared or went
 *   (`klx create`, a broker creating a partition, `rm -r`); Kafka's `LogManager` names them so;
 * - `partition-changed`: files of an existing partition folder changed;
 * - `log-dir-changed`: files of a log directory changed (its checkpoints, `meta.properties`).
 */
export const folderChange = z.object({
  kind: z.enum(['partition-created', 'partition-deleted', 'partition-changed', 'log-dir-changed']),
  /** The real path of the partition folder or log directory. */
  dir: z.string(),
  /** Its folder name (`prices-0`, `kafka-logs`). */
  name: z.string(),
  /** `.log` files that appeared (segments added by a roll or a copy), by name. */
  segmentsAdded: z.array(z.string()),
  /** `.log` files that went (retention, compaction, a repair, a delete). */
  segmentsRemoved: z.array(z.string()),
  /** `.log` files that grew, with how many bytes. */
  segmentsGrown: z.array(z.object({ file: z.string(), bytes: z.number().int().nonnegative() })),
  /** `.log` files that shrank (a truncation), with how many bytes. */
  segmentsTruncated: z.array(z.object({ file: z.string(), bytes: z.number().int().nonnegative() })),
  /** Checkpoint files created, rewritten or deleted (`replication-offset-checkpoint`, `leader-epoch-checkpoint`...). */
  checkpoints: z.array(z.string()),
  /** How many other files were created, changed or deleted (indexes, snapshots, temporary files). */
  otherFiles: z.number().int().nonnegative(),
  /** The change in words: "prices-0: 1 segment added (00000000000000000120.log), 2 files changed". */
  text: z.string(),
});
export type FolderChange = z.infer<typeof folderChange>;

/**
 * Files under an opened folder changed outside the app (the folder watcher, debounced): the views
 * showing them reload and Verify results of changed partitions are stale.
 */
export const folderChangedEvent = z.object({
  type: z.literal('folder.changed'),
  /** The opened folder (real path). */
  root: z.string(),
  /** When the watcher noticed (ISO time, the last file event of the burst). */
  at: z.string(),
  /** Partition folders that changed, were created or deleted (real paths). */
  dirs: z.array(z.string()),
  /** The changes, at most {@link MAX_FOLDER_CHANGES}. */
  changes: z.array(folderChange),
  /** Changes left off the list. */
  more: z.number().int().nonnegative(),
});
export type FolderChangedEvent = z.infer<typeof folderChangedEvent>;

/** An opened folder was closed (`session.close`): the tree drops it. */
export const sessionClosedEvent = z.object({ type: z.literal('session.closed'), path: z.string() });
export type SessionClosedEvent = z.infer<typeof sessionClosedEvent>;

/** A recent folder and whether it can be opened now. */
export const recentFolder = z.object({
  path: z.string(),
  /** False when it no longer exists, is not a folder, cannot be read, or lies outside the served folders. */
  available: z.boolean(),
  /** Why it cannot be opened ("no longer exists"), when not available. */
  reason: z.string().optional(),
});
export type RecentFolder = z.infer<typeof recentFolder>;
