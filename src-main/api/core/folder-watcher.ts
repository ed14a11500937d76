/**
 * Folders that follow the disk (issue 14): the main process watches each opened folder and, when
 * files change outside the app (`klx create`, `klx append`, a repair or a broker in a terminal),
 * drops what it cached about the partitions concerned and tells the renderer what changed.
 *
 * One {@link FolderWatcher} per opened folder. It never writes anything. It watches the folders of
 * a Kafka layout only, each with one non-recursive `fs.watch` (inotify on Linux): the opened folder,
 * the folders below it down to the log directories (at most {@link MAX_DEPTH} levels, as
 * `openPath` looks) and each partition folder, never the inside of a partition folder's
 * sub-folders. So it holds one watcher per folder, not per file (Node 20's `recursive: true` on
 * Linux adds one watcher and a `statSync` per file), at most {@link MAX_WATCHED_DIRS}. A folder
 * whose `fs.watch` fails (no inotify watches left, a file system without notifications) is listed
 * again every {@link POLL_MS} instead.
 *
 * File events only mark folders dirty; {@link DEBOUNCE_MS} after the last one (at most
 * {@link MAX_WAIT_MS} after the first, so a broker writing without pause is still followed) the
 * dirty folders are listed again (names, sizes, mtimes; no file is read) and compared with their
 * previous listing (`folder-changes.ts`). Changes produce, in this order, a `log.changed` event
 * with `external: true` (main's caches of those partitions drop them: opened segments, decoders,
 * SQL tables, consumer groups) and one `folder.changed` event naming each partition and its change.
 *
 * The app's own writes (cleanup, undo, append, roll) announce themselves with `log.changed`; the
 * watcher then takes the new listing of those folders without reporting it, and waits while a
 * write job runs. Paths of the app's own trash and caches are never watched.
 */
import { readdirSync, statSync, watch, type FSWatcher } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { FolderChange, FolderChangedEvent } from '../../../src-shared/folder-types.ts';
import { MAX_FOLDER_CHANGES } from '../../../src-shared/folder-types.ts';
import { contract, isMethodName } from '../../../src-shared/contract.ts';
import { defaultTrashDir } from '../../engine/cleaner/trash.ts';
import { parsePartitionDirName } from '../../engine/files/file-names.ts';
import { defaultCacheDir } from '../../engine/sql/sql-defaults.ts';
import { createdPartition, deletedPartition, diffFiles, isCheckpoint, type ListedEntry, type Listing } from './folder-changes.ts';
import { logCacheOf } from './log-cache.ts';
import { isInsideDir } from './paths.ts';
import type { ApiContext } from './types.ts';

/** Quiet time after the last file event before the folders are compared, in ms. */
export const DEBOUNCE_MS = 300;
/** Longest wait after the first file event of a burst, in ms. */
export const MAX_WAIT_MS = 2_000;
/** How often a folder whose `fs.watch` failed is listed again, in ms. */
export const POLL_MS = 2_000;
/** Most folders one opened folder's watcher follows. */
export const MAX_WATCHED_DIRS = 20_000;
/** How many folder levels below the opened folder hold log directories (as `openPath` looks). */
export const MAX_DEPTH = 3;

/** Options of a {@link FolderWatcher}. */
export interface FolderWatcherOptions {
  /** Quiet time in ms (default {@link DEBOUNCE_MS}). */
  debounceMs?: number;
  /** Longest wait in ms (default {@link MAX_WAIT_MS}). */
  maxWaitMs?: number;
  /** Folders never watched (the app's trash and caches); real paths. */
  ignore?: readonly string[];
  /** While this answers true (an app write is running) the comparison waits. */
  busy?: () => boolean;
}

interface Watched {
  /** `partition`: a `<topic>-<partition>` folder; `folder`: the opened folder or a folder above partitions; `parent`: a partition folder's log directory when the partition itself was opened. */
  role: 'partition' | 'folder' | 'parent';
  depth: number;
  listing: Map<string, ListedEntry>;
  watcher?: FSWatcher;
}

/** Lists a folder (null when it is gone or not a folder). Files get size and mtime; sub-folders `dir: true`. */
function listFolder(dir: string): Map<string, ListedEntry> | null {
  let names: import('node:fs').Dirent[];
  try {
    names = readdirSync(dir, { withFileTypes: true });
  } catch {
    return null;
  }
  const out = new Map<string, ListedEntry>();
  for (const e of names) {
    try {
      const st = statSync(join(dir, e.name));
      out.set(e.name, { dir: st.isDirectory(), size: st.isDirectory() ? 0 : st.size, mtimeMs: st.mtimeMs });
    } catch {
      // gone between readdir and stat: it is not there
    }
  }
  return out;
}

const isPartitionName = (name: string): boolean => parsePartitionDirName(name) !== null;

/** Files only a log directory holds (Kafka `LogManager`'s checkpoints and `meta.properties`). */
const LOG_DIR_FILES = new Set(['meta.properties', 'recovery-point-offset-checkpoint', 'replication-offset-checkpoint', 'log-start-offset-checkpoint', 'cleaner-offset-checkpoint', '.kafka_cleanshutdown']);

/**
 * Whether a folder is a partition folder: named `<topic>-<partition>` (as `kafka-logs-1` also is),
 * holding no log directory's files and no sub-folder (a broker's partition folder has none).
 */
function isPartitionFolder(name: string, listing: Listing): boolean {
  if (!isPartitionName(name)) return false;
  for (const [entry, e] of listing) {
    if (LOG_DIR_FILES.has(entry) || e.dir) return false;
  }
  return true;
}

/** Watches one opened folder; see the module comment. */
export class FolderWatcher {
  private readonly dirs = new Map<string, Watched>();
  private readonly dirty = new Set<string>();
  private readonly polled = new Set<string>();
  private timer: ReturnType<typeof setTimeout> | undefined;
  private firstDirtyAt = 0;
  private lastEventAt = 0;
  private poller: ReturnType<typeof setInterval> | undefined;
  private closed = false;
  private readonly debounceMs: number;
  private readonly maxWaitMs: number;

  /**
   * Starts watching `root` (a real path). `emit` receives the `folder.changed` event (and is
   * preceded by `invalidate(dirs)` for the partition folders concerned).
   */
  constructor(
    readonly root: string,
    private readonly emit: (event: FolderChangedEvent) => void,
    private readonly invalidate: (dirs: string[]) => void,
    private readonly options: FolderWatcherOptions = {},
  ) {
    this.debounceMs = options.debounceMs ?? DEBOUNCE_MS;
    this.maxWaitMs = options.maxWaitMs ?? MAX_WAIT_MS;
    if (isPartitionFolder(basename(root), listFolder(root) ?? new Map())) {
      this.add(root, 'partition', 0);
      this.add(dirname(root), 'parent', 0);
    } else {
      this.add(root, 'folder', 0);
    }
  }

  /** How many folders are watched (by `fs.watch` or by polling). */
  get size(): number {
    return this.dirs.size;
  }

  /** The partition folders being followed (real paths). */
  partitions(): string[] {
    return [...this.dirs].filter(([, w]) => w.role === 'partition').map(([d]) => d);
  }

  /**
   * Takes the current listing of these folders (and their parents) without reporting a change:
   * the app itself changed them (its `log.changed` event).
   */
  absorb(dirs: readonly string[]): void {
    for (const d of dirs) {
      for (const x of [d, dirname(d)]) {
        const w = this.dirs.get(x);
        if (!w) continue;
        const listing = listFolder(x);
        if (listing) w.listing = this.filtered(x, w, listing);
      }
    }
  }

  /** Lists every followed folder again and forgets nothing (after `session.reload`). */
  relist(): void {
    for (const [d, w] of this.dirs) {
      const listing = listFolder(d);
      if (listing) w.listing = this.filtered(d, w, listing);
    }
  }

  /** Stops every watcher and timer. */
  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
    clearInterval(this.poller);
    for (const w of this.dirs.values()) w.watcher?.close();
    this.dirs.clear();
    this.dirty.clear();
  }

  private ignored(dir: string): boolean {
    return (this.options.ignore ?? []).some((i) => isInsideDir(dir, i));
  }

  /** A parent log directory is followed for its checkpoints and the opened partition's own entry only. */
  private filtered(dir: string, w: Watched, listing: Map<string, ListedEntry>): Map<string, ListedEntry> {
    if (w.role !== 'parent') return listing;
    const own = basename(this.root);
    return new Map([...listing].filter(([name]) => name === own || isCheckpoint(name)));
  }

  /** Starts following `dir`, and (for a folder) the folders below it. Returns its listing. */
  private add(dir: string, role: Watched['role'], depth: number): Map<string, ListedEntry> {
    const existing = this.dirs.get(dir);
    if (existing) return existing.listing;
    const w: Watched = { role, depth, listing: new Map() };
    if (this.dirs.size >= MAX_WATCHED_DIRS || this.ignored(dir)) return w.listing;
    this.dirs.set(dir, w);
    // Watch first, then list: a file made in between is in the listing or gives an event.
    try {
      const watcher = watch(dir, { persistent: false }, () => this.touch(dir));
      watcher.on('error', () => {
        watcher.close();
        if (this.dirs.get(dir) === w) {
          w.watcher = undefined;
          this.touch(dir);
        }
      });
      w.watcher = watcher;
    } catch {
      this.poll(dir);
    }
    w.listing = this.filtered(dir, w, listFolder(dir) ?? new Map());
    if (role === 'folder') {
      for (const [name, e] of w.listing) {
        if (!e.dir) continue;
        const child = join(dir, name);
        if (isPartitionFolder(name, listFolder(child) ?? new Map())) this.add(child, 'partition', depth + 1);
        else if (depth < MAX_DEPTH) this.add(child, 'folder', depth + 1);
      }
    }
    return w.listing;
  }

  /** Stops following `dir` and everything below it; returns the partition folders that went. */
  private remove(dir: string): string[] {
    const gone: string[] = [];
    for (const [d, w] of [...this.dirs]) {
      if (!isInsideDir(d, dir)) continue;
      w.watcher?.close();
      this.dirs.delete(d);
      this.polled.delete(d);
      this.dirty.delete(d);
      if (w.role === 'partition') gone.push(d);
    }
    return gone;
  }

  private poll(dir: string): void {
    this.polled.add(dir);
    if (this.poller) return;
    this.poller = setInterval(() => {
      for (const d of this.polled) this.touch(d);
    }, POLL_MS);
    this.poller.unref();
  }

  private touch(dir: string): void {
    if (this.closed) return;
    const now = Date.now();
    if (this.dirty.size === 0) this.firstDirtyAt = now;
    this.lastEventAt = now;
    this.dirty.add(dir);
    this.schedule();
  }

  private schedule(): void {
    clearTimeout(this.timer);
    const wait = Math.max(0, Math.min(this.debounceMs, this.firstDirtyAt + this.maxWaitMs - Date.now()));
    this.timer = setTimeout(() => this.flush(), wait);
    this.timer.unref();
  }

  /** Compares the dirty folders with their previous listing and reports what changed. */
  private flush(): void {
    if (this.closed || this.dirty.size === 0) return;
    if (this.options.busy?.()) {
      // An app write is running: its `log.changed` will absorb its own changes; look again later.
      this.timer = setTimeout(() => this.flush(), this.debounceMs);
      this.timer.unref();
      return;
    }
    const at = new Date(this.lastEventAt).toISOString();
    const dirtyDirs = [...this.dirty].sort();
    this.dirty.clear();
    const changes: FolderChange[] = [];
    const partitionDirs = new Set<string>();
    for (const dir of dirtyDirs) {
      const w = this.dirs.get(dir);
      if (!w) continue;
      const after = listFolder(dir);
      if (after === null) {
        // The folder itself went; its parent's listing reports it (or, for the opened folder, here).
        if (dir === this.root || w.role === 'parent') {
          for (const p of this.remove(dir)) {
            changes.push(deletedPartition(p, basename(p)));
            partitionDirs.add(p);
          }
        }
        continue;
      }
      const next = this.filtered(dir, w, after);
      const before = w.listing;
      w.listing = next;
      if (w.role === 'partition') {
        const c = diffFiles('partition-changed', dir, basename(dir), before, next);
        if (c) {
          changes.push(c);
          partitionDirs.add(dir);
        }
        continue;
      }
      // Sub-folders that appeared or went.
      for (const [name, e] of next) {
        if (!e.dir || before.get(name)?.dir) continue;
        const child = join(dir, name);
        if (w.role === 'parent') continue;
        if (isPartitionFolder(name, listFolder(child) ?? new Map())) {
          const listing = this.add(child, 'partition', w.depth + 1);
          if (this.dirs.has(child)) {
            changes.push(createdPartition(child, name, listing));
            partitionDirs.add(child);
          }
        } else if (w.depth < MAX_DEPTH) {
          this.add(child, 'folder', w.depth + 1);
          for (const p of this.partitions().filter((x) => isInsideDir(x, child))) {
            changes.push(createdPartition(p, basename(p), this.dirs.get(p)!.listing));
            partitionDirs.add(p);
          }
        }
      }
      for (const [name, e] of before) {
        if (!e.dir || next.get(name)?.dir) continue;
        for (const p of this.remove(join(dir, name))) {
          changes.push(deletedPartition(p, basename(p)));
          partitionDirs.add(p);
        }
      }
      const files = diffFiles('log-dir-changed', dir, basename(dir), before, next);
      if (files) {
        changes.push(files);
        // A log directory's checkpoints are read by each of its partitions' summaries.
        for (const p of this.partitions()) if (dirname(p) === dir) partitionDirs.add(p);
      }
    }
    if (changes.length === 0) return;
    const dirs = [...partitionDirs].sort();
    this.invalidate(dirs);
    this.emit({ type: 'folder.changed', root: this.root, at, dirs, changes: changes.slice(0, MAX_FOLDER_CHANGES), more: Math.max(0, changes.length - MAX_FOLDER_CHANGES) });
  }
}

/** The watchers of one API context, one per opened folder. */
export class FolderWatchers {
  private readonly byRoot = new Map<string, FolderWatcher>();

  constructor(
    private readonly ctx: ApiContext,
    private readonly options: FolderWatcherOptions,
  ) {}

  /** Starts watching `root` (a real path) unless it is watched already. */
  watch(root: string): FolderWatcher {
    let w = this.byRoot.get(root);
    if (w) return w;
    w = new FolderWatcher(
      root,
      (event) => this.ctx.events.emit(event),
      (dirs) => {
        const cache = logCacheOf(this.ctx);
        for (const d of dirs) cache.forget(d);
        this.ctx.events.emit({ type: 'log.changed', dirs, reason: 'files changed on disk', external: true });
      },
      this.options,
    );
    this.byRoot.set(root, w);
    return w;
  }

  /** The watcher of `root`, if watched. */
  of(root: string): FolderWatcher | undefined {
    return this.byRoot.get(root);
  }

  /** Stops watching `root`. */
  unwatch(root: string): void {
    this.byRoot.get(root)?.close();
    this.byRoot.delete(root);
  }

  /** The app changed these partition folders itself: take their listings without reporting. */
  absorb(dirs: readonly string[]): void {
    for (const w of this.byRoot.values()) w.absorb(dirs);
  }

  /** Stops every watcher. */
  close(): void {
    for (const w of this.byRoot.values()) w.close();
    this.byRoot.clear();
  }
}

const registry = new WeakMap<ApiContext, FolderWatchers>();

/** The folder watchers of a context, if {@link startFolderWatchers} ran for it. */
export function folderWatchersOf(ctx: ApiContext): FolderWatchers | undefined {
  return registry.get(ctx);
}

/** Whether a running job changes files (a write method of the contract: cleanup.run, cleanup.undo...). */
function isWriteJob(method: string): boolean {
  return isMethodName(method) && contract[method].write;
}

/**
 * Makes the context follow its opened folders: `session.opened` starts a watcher, `session.closed`
 * stops it, the app's own `log.changed` events are absorbed, and comparisons wait while a write
 * job runs. The app's trash and SQL cache folders are ignored besides `options.ignore`.
 */
export function startFolderWatchers(ctx: ApiContext, options: FolderWatcherOptions = {}): FolderWatchers {
  const existing = registry.get(ctx);
  if (existing) return existing;
  const busy = (): boolean => ctx.jobs.list().some((j) => j.state === 'running' && isWriteJob(j.method));
  const watchers = new FolderWatchers(ctx, { ...options, ignore: [defaultTrashDir(), defaultCacheDir(), ...(options.ignore ?? [])], busy: options.busy ?? busy });
  registry.set(ctx, watchers);
  for (const root of ctx.session.opened()) watchers.watch(root);
  ctx.events.subscribe((e) => {
    if (e.type === 'session.opened') watchers.watch(e.path);
    else if (e.type === 'session.closed') watchers.unwatch(e.path);
    else if (e.type === 'log.changed' && !e.external) watchers.absorb(e.dirs);
  });
  return watchers;
}
