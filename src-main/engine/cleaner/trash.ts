/**
 * The trash of the cleaner: where the files a run replaces go, so that `undo` can put the previous
 * bytes back exactly, until the trash is emptied.
 *
 * Layout (outside every partition folder and log directory, so a broker never loads it: LogManager.loadLogs
 * reads only the folders directly under each log directory):
 *
 *     <trashDir>/<entryId>/manifest.json   what the run did (JSON, see {@link TrashManifest})
 *     <trashDir>/<entryId>/files/<name>    the replaced files, under their names in the partition
 *
 * `trashDir` is given by the caller (the desktop app passes a folder of its user-data directory);
 * by default it is `$KLX_TRASH_DIR`, else `$KLX_DATA_DIR/trash`, else `$XDG_DATA_HOME/kafka-log-explorer/trash`, else
 * `~/.local/share/kafka-log-explorer/trash` (`%LOCALAPPDATA%` on Windows, `~/Library/Application
 * Support` on macOS). Files enter the trash as hard links made *before* the partition changes (no
 * copy, no extra space, and a crash at any later step still leaves them there); when the trash is
 * on another file system they are copied and fsynced instead.
 *
 * One entry per partition and operation; the entries of one run (one `klx` command, one API call)
 * share a `runId`, and `undo` reverses every entry of the latest run, newest first. An entry is in
 * state `prepared` while its run is under way and `committed` once the run has changed the
 * partition; a `prepared` entry left by a crash describes a run whose outcome recovery decides.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { homedir, platform } from 'node:os';
import { basename, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { KlxError } from '../errors.ts';
import type { FileSteps } from './file-steps.ts';

/** Name of the manifest file of a trash entry. */
export const TRASH_MANIFEST = 'manifest.json';
/** Sub-folder of a trash entry holding the replaced files. */
export const TRASH_FILES = 'files';

/** A file recorded in a manifest. */
export interface TrashFile {
  /** Name in the partition folder. */
  name: string;
  /** Bytes. */
  size: number;
  /** mtime, ms since the epoch. */
  mtimeMs: number;
  /** CRC-32C of the content (files the run created, checked before undo). */
  crc32c?: number;
}

/** A `.log` cut in place by a repair (manifest field `truncated`). */
export interface TruncatedFile {
  /** Name in the partition folder. */
  name: string;
  /** Size before and after the cut, bytes. */
  fromBytes: number;
  toBytes: number;
  /** Name in the entry's `files/` of the cut-off bytes `[toBytes, fromBytes)`. */
  tail: string;
  tailCrc32c: number;
  /** CRC-32C of the bytes `[max(0, toBytes − CHECK_BYTES (repair-trash.ts)), toBytes)` of the cut file. */
  checkCrc32c: number;
}

/** A change of one partition's entry in a log-directory offset checkpoint. */
export interface CheckpointChange {
  /** File name in the log directory (`log-start-offset-checkpoint`, `cleaner-offset-checkpoint`). */
  file: string;
  topic: string;
  partition: number;
  /** The entry's offset before / after (decimal), or null when absent. */
  before: string | null;
  after: string | null;
  /** The whole file's text before (null when it did not exist) and after the run. */
  textBefore: string | null;
  textAfter: string;
  /**
   * Undo puts back only this partition's line, never the whole file (set when recovery finished
   * the entry: the file's text before the run's write is not known then).
   */
  lineOnly?: boolean;
}

/**
 * What a run is about to commit, written into the manifest while it is still `prepared`, so that
 * recovery can tell after a crash whether the run passed its commit point and finish the entry
 * (`interrupted-runs.ts`).
 */
export interface PendingCommit {
  /** The checkpoint entry the run sets: the commit point of retention, the last step of compaction. */
  checkpoint: { file: string; topic: string; partition: number; before: string | null; after: string };
  /** Retention: the `leader-epoch-checkpoint` text it writes after the commit (null when unchanged). */
  leaderEpochText?: string | null;
}

/** A partition-folder metadata file the run replaced (`leader-epoch-checkpoint`). */
export interface ReplacedMetadataFile {
  name: string;
  /** CRC-32C and size of what the run wrote (undo restores only if still unchanged). */
  afterCrc32c: number;
  afterSize: number;
  /** False when the file did not exist before (undo then removes it). */
  existedBefore: boolean;
}

/** The manifest of a trash entry. */
export interface TrashManifest {
  version: 1;
  id: string;
  runId: string;
  createdAt: string;
  createdAtMs: number;
  /** `repair`: a `klx repair` run (`repair-trash.ts`); its `partitionDir` is the log directory for a rewritten log-directory checkpoint. */
  operation: 'retention' | 'compaction' | 'repair';
  state: 'prepared' | 'committed';
  partitionDir: string;
  logDir: string;
  topic: string;
  partition: number;
  /** The `now` the run used, ms. */
  now: number;
  /** Files taken out of the partition folder; their bytes are in `files/`. */
  removed: TrashFile[];
  /** Files the run created in the partition folder (undo removes them). */
  created: TrashFile[];
  metadataFiles: ReplacedMetadataFile[];
  checkpoints: CheckpointChange[];
  /** Human summary ("deleted 2 segments, 1,234 records"). */
  summary: string;
  /** Repair: `.log` files cut in place, their cut-off bytes kept in `files/`. */
  truncated?: TruncatedFile[];
  /** Set before the commit point (see {@link PendingCommit}); absent in entries of older versions. */
  pending?: PendingCommit;
  /** Set when recovery finished the entry after a crash past the commit point: what it did. */
  finishedByRecovery?: string;
}

/** A trash entry as listed. */
export interface TrashEntryInfo {
  id: string;
  path: string;
  manifest: TrashManifest | null;
  /** Bytes of the files held. */
  bytes: number;
  /** Why the manifest could not be read, if so. */
  problem?: string;
}

/** The default trash folder (see the module comment). */
export function defaultTrashDir(): string {
  if (process.env.KLX_TRASH_DIR) return process.env.KLX_TRASH_DIR;
  // The app's data folder when one is set, as the app, the bridge and every klx command use it (api/core appDataDir).
  if (process.env.KLX_DATA_DIR) return join(process.env.KLX_DATA_DIR, 'trash');
  const p = platform();
  if (p === 'win32') return join(process.env.LOCALAPPDATA ?? join(homedir(), 'AppData', 'Local'), 'kafka-log-explorer', 'trash');
  if (p === 'darwin') return join(homedir(), 'Library', 'Application Support', 'kafka-log-explorer', 'trash');
  return join(process.env.XDG_DATA_HOME ?? join(homedir(), '.local', 'share'), 'kafka-log-explorer', 'trash');
}

/** A new run id: ms timestamp + random suffix (sorts by time). */
export function newRunId(): string {
  return `${Date.now().toString().padStart(13, '0')}-${randomBytes(3).toString('hex')}`;
}

let seq = 0;

/** What is needed to open a trash entry. */
export interface TrashEntryInit {
  runId: string;
  operation: TrashManifest['operation'];
  partitionDir: string;
  logDir: string;
  topic: string;
  partition: number;
  now: number;
}

/** A trash entry being filled by a run. */
export class TrashEntry {
  readonly dir: string;
  readonly manifest: TrashManifest;

  private constructor(dir: string, manifest: TrashManifest, private readonly steps: FileSteps) {
    this.dir = dir;
    this.manifest = manifest;
  }

  /**
   * Creates `<trashDir>/<id>/files/` and writes the manifest in state `prepared`.
   * @throws KlxError `io-error` when the trash folder cannot be created or written.
   */
  static create(trashDir: string, init: TrashEntryInit, steps: FileSteps): TrashEntry {
    const createdAtMs = Date.now();
    const id = `${createdAtMs.toString().padStart(13, '0')}-${String(++seq).padStart(4, '0')}-${init.topic}-${init.partition}-${init.operation}`;
    const dir = join(trashDir, id);
    try {
      mkdirSync(join(dir, TRASH_FILES), { recursive: true });
    } catch (err) {
      throw new KlxError('io-error', `cannot create the trash folder (give another one with --trash-dir / trashDir): ${(err as Error).message}`, { file: dir, cause: err });
    }
    const manifest: TrashManifest = {
      version: 1,
      id,
      runId: init.runId,
      createdAt: new Date(createdAtMs).toISOString(),
      createdAtMs,
      operation: init.operation,
      state: 'prepared',
      partitionDir: init.partitionDir,
      logDir: init.logDir,
      topic: init.topic,
      partition: init.partition,
      now: init.now,
      removed: [],
      created: [],
      metadataFiles: [],
      checkpoints: [],
      summary: '',
    };
    const entry = new TrashEntry(dir, manifest, steps);
    entry.save();
    return entry;
  }

  /** Path in the entry of a kept file. */
  fileInTrash(name: string): string {
    return join(this.dir, TRASH_FILES, name);
  }

  /** Links (or copies) a partition file into the entry before it is removed, and records it. */
  keep(path: string): void {
    const st = statSync(path);
    const name = basename(path);
    this.steps.linkOrCopy('link-trash', path, this.fileInTrash(name));
    this.manifest.removed.push({ name, size: st.size, mtimeMs: st.mtimeMs });
  }

  /** Links (or copies) a metadata file that is about to be replaced (its bytes for undo). */
  keepMetadata(path: string): boolean {
    if (!existsSync(path)) return false;
    this.steps.linkOrCopy('link-trash', path, this.fileInTrash(basename(path)));
    return true;
  }

  /** Writes the manifest (atomically). */
  save(): void {
    this.steps.writeCheckpoint(join(this.dir, TRASH_MANIFEST), JSON.stringify(this.manifest, null, 2) + '\n', 'write-manifest');
  }

  /** Marks the entry committed (the partition now holds the run's result). */
  commit(summary: string): void {
    this.manifest.state = 'committed';
    this.manifest.summary = summary;
    this.save();
  }

  /** Removes the entry (after a rollback: the partition was left as it was). Never throws. */
  discard(): void {
    try {
      rmSync(this.dir, { recursive: true, force: true });
    } catch {
      /* best effort */
    }
  }
}

/**
 * Reads a trash entry's manifest.
 * @throws KlxError `not-found` when it is missing, `corrupt-checkpoint` when it is not a manifest.
 */
export function readManifest(entryDir: string): TrashManifest {
  const path = join(entryDir, TRASH_MANIFEST);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new KlxError('not-found', 'trash entry without a manifest', { file: path, cause: err });
  }
  try {
    const m = JSON.parse(text) as TrashManifest;
    if (m.version !== 1 || typeof m.id !== 'string' || !Array.isArray(m.removed)) throw new Error('not a version 1 manifest');
    return m;
  } catch (err) {
    throw new KlxError('corrupt-checkpoint', `trash manifest cannot be read: ${(err as Error).message}`, { file: path, cause: err });
  }
}

function folderBytes(dir: string): number {
  let total = 0;
  try {
    for (const n of readdirSync(dir)) {
      const p = join(dir, n);
      const st = statSync(p);
      total += st.isDirectory() ? folderBytes(p) : st.size;
    }
  } catch {
    /* unreadable: count what we could */
  }
  return total;
}

/** Lists the entries of a trash folder, oldest first (an absent folder has none). */
export function listTrash(trashDir: string = defaultTrashDir()): TrashEntryInfo[] {
  if (!existsSync(trashDir)) return [];
  const out: TrashEntryInfo[] = [];
  for (const id of readdirSync(trashDir).sort()) {
    const path = join(trashDir, id);
    if (!statSync(path).isDirectory()) continue;
    let manifest: TrashManifest | null = null;
    let problem: string | undefined;
    try {
      manifest = readManifest(path);
    } catch (err) {
      problem = (err as KlxError).reason ?? String(err);
    }
    out.push({ id, path, manifest, bytes: folderBytes(join(path, TRASH_FILES)), ...(problem ? { problem } : {}) });
  }
  return out;
}

/**
 * Deletes trash entries for good (after this, their runs can no longer be undone).
 * @param ids only these entries (default: all).
 * @returns the entries removed and the bytes freed.
 */
export function emptyTrash(trashDir: string = defaultTrashDir(), ids?: readonly string[]): { removed: string[]; bytes: number } {
  const removed: string[] = [];
  let bytes = 0;
  for (const e of listTrash(trashDir)) {
    if (ids && !ids.includes(e.id)) continue;
    rmSync(e.path, { recursive: true, force: true });
    removed.push(e.id);
    bytes += e.bytes;
  }
  return { removed, bytes };
}
