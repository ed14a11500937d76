/**
 * `session.*` handlers: opening, closing and reloading folders, and the recent folders. Every later
 * path argument must lie inside an opened folder (see `SessionState.resolve`).
 */
import { stat } from 'node:fs/promises';
import type { RecentFolder } from '../../../src-shared/folder-types.ts';
import { KlxError } from '../../engine/errors.ts';
import type { CallContext } from '../core/call-context.ts';
import { folderWatchersOf } from '../core/folder-watcher.ts';
import { logCacheOf } from '../core/log-cache.ts';
import { isInsideDir, realpathLenient, realRoots } from '../core/paths.ts';
import type { ApiContext, DomainHandlers } from '../core/types.ts';

/**
 * Whether each recent folder can be opened now, and why not: it no longer exists, is not a folder,
 * cannot be read, or lies outside the folders a `klx serve DIR` was started for.
 */
export async function recentFolders(paths: readonly string[], call: CallContext): Promise<RecentFolder[]> {
  const fixed = await realRoots(call.allowedRoots ?? []);
  return Promise.all(
    paths.map(async (path): Promise<RecentFolder> => {
      try {
        const info = await stat(path);
        if (!info.isDirectory()) return { path, available: false, reason: 'is not a folder any more' };
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code === 'ENOENT' || code === 'ENOTDIR') return { path, available: false, reason: 'no longer exists' };
        if (code === 'EACCES' || code === 'EPERM') return { path, available: false, reason: 'cannot be read (permission denied)' };
        return { path, available: false, reason: `cannot be read (${code ?? String(err)})` };
      }
      if (fixed.length > 0 && !fixed.some((r) => isInsideDir(path, r))) {
        return { path, available: false, reason: `outside the folders this server was started for (${fixed.join(', ')})` };
      }
      return { path, available: true };
    }),
  );
}

/** The opened folder `path` names (its real path). Errors: `not-found` when it is not opened. */
async function openedFolder(ctx: ApiContext, path: string): Promise<string> {
  const opened = ctx.session.opened();
  const real = opened.includes(path) ? path : await realpathLenient(path);
  if (!opened.includes(real)) throw new KlxError('not-found', `${path} is not an opened folder`, { file: path });
  return real;
}

/** Builds the `session.*` handlers. */
export function sessionHandlers(ctx: ApiContext): DomainHandlers<'session'> {
  return {
    /** Opens an existing folder (inside the fixed roots, if any). Errors: `not-found`, `invalid-argument`. */
    'session.open': async (req, call) => {
      const path = await ctx.session.open(req.path, call);
      return { path, opened: ctx.session.opened() };
    },
    /** Opened and recent folders. */
    'session.folders': async (_req, call) => {
      const recent = ctx.session.recent.list();
      return { opened: ctx.session.opened(), recent, recentFolders: await recentFolders(recent, call), writeMode: ctx.session.writeMode };
    },
    /** Closes an opened folder; its watcher stops (on `session.closed`) and its cached partitions are dropped. */
    'session.close': async (req) => {
      const real = await ctx.session.close(req.path);
      const cache = logCacheOf(ctx);
      for (const dir of cache.dirsInside(real)) cache.forget(dir);
      return { opened: ctx.session.opened() };
    },
    /**
     * Drops every cache of the folder's partitions (`log.changed` with `external: true` reaches the
     * SQL tables, decoders and consumer groups) and takes a fresh listing for its watcher.
     */
    'session.reload': async (req) => {
      const real = await openedFolder(ctx, req.path);
      const watcher = folderWatchersOf(ctx)?.of(real);
      const cache = logCacheOf(ctx);
      const dirs = [...new Set([...(watcher?.partitions() ?? []), ...cache.dirsInside(real)])].sort();
      for (const dir of dirs) cache.forget(dir);
      watcher?.relist();
      ctx.events.emit({ type: 'log.changed', dirs, reason: 'folder reloaded', external: true });
      return { path: real, dirs };
    },
    /** Switches "Open for writing". Errors: `read-only` when enabling in a read-only app or bridge. */
    'session.setWriteMode': async (req, call) => ({ enabled: ctx.session.setWriteMode(req.enabled, call) }),
  };
}
