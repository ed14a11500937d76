/**
 * `fs.*` handlers: server-side help for the "open folder" field.
 *
 * `fs.complete` lists folder NAMES only (never file contents, never files), so it is exempt from
 * the opened-folder check — except when the call has fixed roots (`klx serve DIR`), where it only
 * lists inside them (refusing with `invalid-argument` otherwise) and hides symlinks that lead out.
 */
import type { Dirent } from 'node:fs';
import { readdir, realpath, stat } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, resolve, sep } from 'node:path';
import type { Res } from '../../../src-shared/contract.ts';
import { KlxError } from '../../engine/errors.ts';
import { isInsideDir, outsideServedFolders, realRoots } from '../core/paths.ts';
import type { ApiContext, DomainHandlers } from '../core/types.ts';

const caseInsensitive = process.platform === 'win32' || process.platform === 'darwin';

function endsWithSeparator(p: string): boolean {
  return p.endsWith('/') || (sep === '\\' && p.endsWith('\\'));
}

/** `~` and `~/x` → home; relative → inside home; absolute unchanged. */
function expand(partial: string, home: string): string {
  if (partial === '~') return home + sep;
  if (partial.startsWith('~/') || (sep === '\\' && partial.startsWith('~\\'))) return join(home, partial.slice(2)) + (endsWithSeparator(partial) ? sep : '');
  if (!isAbsolute(partial)) return join(home, partial) + (endsWithSeparator(partial) || partial === '' ? sep : '');
  return partial;
}

async function isDirectory(dir: string, entry: Dirent): Promise<boolean> {
  if (entry.isDirectory()) return true;
  if (!entry.isSymbolicLink()) return false;
  return stat(join(dir, entry.name)).then((s) => s.isDirectory(), () => false);
}

/** Builds the `fs.*` handlers. */
export function fsHandlers(ctx: ApiContext): DomainHandlers<'fs'> {
  return {
    /**
     * Lists the sub-folders of the typed path's folder whose names start with its last part
     * (case-insensitively on Windows and macOS), sorted by name. Hidden names only when asked or
     * when the typed part starts with a dot. Empty input with fixed roots lists the roots.
     */
    'fs.complete': async (req, call) => {
      const roots = await realRoots(call.allowedRoots ?? []);
      const confined = (call.allowedRoots ?? []).length > 0;
      if (confined && req.partial === '') {
        const entries = roots.map((r) => ({ name: basename(r) || r, path: r }));
        return { dir: null, entries: entries.slice(0, req.limit), truncated: entries.length > req.limit };
      }
      const typed = expand(req.partial, ctx.homeDir);
      const listAll = endsWithSeparator(typed);
      const dir = resolve(listAll ? typed : dirname(typed));
      const prefix = listAll ? '' : basename(typed);

      if (confined) {
        const real = await realpath(dir).catch(() => null);
        if (real === null) return { dir: null, entries: [], truncated: false };
        if (!roots.some((r) => isInsideDir(real, r))) {
          throw outsideServedFolders(dir, roots);
        }
      }

      let dirents: Dirent[];
      try {
        dirents = await readdir(dir, { withFileTypes: true });
      } catch {
        return { dir: null, entries: [], truncated: false }; // missing, not a folder or unreadable: nothing to suggest
      }
      const fold = (s: string): string => (caseInsensitive ? s.toLowerCase() : s);
      const wanted = fold(prefix);
      const showHidden = req.hidden || prefix.startsWith('.');
      const candidates = dirents
        .filter((d) => fold(d.name).startsWith(wanted) && (showHidden || !d.name.startsWith('.')))
        .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));

      const entries: Res<'fs.complete'>['entries'] = [];
      let truncated = false;
      for (const d of candidates) {
        if (!(await isDirectory(dir, d))) continue;
        const path = join(dir, d.name);
        if (confined && d.isSymbolicLink()) {
          const real = await realpath(path).catch(() => null);
          if (real === null || !roots.some((r) => isInsideDir(real, r))) continue; // a link out of the root is not offered
        }
        if (entries.length === req.limit) {
          truncated = true;
          break;
        }
        entries.push({ name: d.name, path });
      }
      return { dir, entries, truncated };
    },
  };
}
