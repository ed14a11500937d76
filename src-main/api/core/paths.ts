/**
 * Path access control. A path the renderer sends is reachable only when its real path (symlinks
 * resolved, `..` removed) lies inside one of the allowed folders, themselves compared by real path.
 * So `root/../etc`, `root/link-to-etc/x` and `/root-evil` (a sibling sharing a prefix) are all
 * refused.
 *
 * Handlers must use the path these functions RETURN (the real path), never the one they were given:
 * the check holds for that path only.
 */
import { lstat, readlink, realpath } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { KlxError } from '../../engine/errors.ts';

/** Whether `child` is `dir` itself or inside it. Both must be absolute and normalized (e.g. real paths). */
export function isInsideDir(child: string, dir: string): boolean {
  const rel = relative(dir, child);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}

/**
 * The real path of `path`, which need not exist: the real path of its deepest existing ancestor
 * joined with the rest. A dangling symlink is followed to where it points (so a link to a missing
 * file outside the root still counts as outside). `path` must be absolute; it is normalized
 * lexically first.
 */
export async function realpathLenient(path: string, depth = 0): Promise<string> {
  const normalized = resolve(path);
  if (depth > 40) throw new KlxError('invalid-argument', `too many levels of symbolic links: ${path}`);
  try {
    return await realpath(normalized);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const parent = dirname(normalized);
    if ((code !== 'ENOENT' && code !== 'ENOTDIR') || parent === normalized) throw err;
    const realParent = await realpathLenient(parent, depth + 1);
    const link = await lstat(normalized).then((s) => s.isSymbolicLink(), () => false);
    if (link) return realpathLenient(resolve(realParent, await readlink(normalized)), depth + 1);
    return join(realParent, basename(normalized));
  }
}

/** The real paths of `roots` (roots that do not exist are dropped: nothing can be inside them). */
export async function realRoots(roots: readonly string[]): Promise<string[]> {
  const out: string[] = [];
  for (const root of roots) {
    try {
      out.push(await realpath(resolve(root)));
    } catch {
      // a root that vanished allows nothing
    }
  }
  return out;
}

/**
 * The refusal of a folder outside the folders a server was started for (`klx serve DIR`): says which
 * folders it serves and how to open another (`klx serve` with no folder, or every folder named),
 * instead of reading like a typing mistake. `details.reason` is `outside-served-folders`.
 */
export function outsideServedFolders(requested: string, roots: readonly string[]): KlxError {
  const served = roots.join(', ');
  const q = (p: string): string => (/^[\w@%+=:,./-]+$/.test(p) ? p : `'${p.replaceAll("'", `'\\''`)}'`);
  return new KlxError(
    'invalid-argument',
    `${requested} is outside ${served}: this server was started for ${roots.length === 1 ? 'that folder' : 'those folders'} ` +
      `and opens only folders inside ${roots.length === 1 ? 'it' : 'them'}. To open another folder, restart it with no folder ` +
      `(\`klx serve\` opens any folder) or name every folder: \`klx serve ${[...roots, requested].map(q).join(' ')}\`.`,
    { details: { reason: 'outside-served-folders', path: requested, served: [...roots] } },
  );
}

/**
 * Returns the real path of `requested` if it lies inside one of `roots`; otherwise throws
 * `invalid-argument` with `details.reason = 'outside-allowed-folders'`. `requested` must be
 * absolute (relative paths are refused: there is no meaningful base on the main side).
 */
export async function resolveInside(requested: string, roots: readonly string[]): Promise<string> {
  if (requested.includes('\0')) throw new KlxError('invalid-argument', 'a path cannot contain a NUL character');
  if (!isAbsolute(requested)) throw new KlxError('invalid-argument', `not an absolute path: ${requested}`);
  const real = await realpathLenient(requested);
  for (const root of await realRoots(roots)) {
    if (isInsideDir(real, root)) return real;
  }
  throw new KlxError('invalid-argument', `refused: ${requested} is outside the opened folders`, {
    details: { reason: 'outside-allowed-folders', path: requested },
  });
}
