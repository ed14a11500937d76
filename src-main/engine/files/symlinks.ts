/**
 * Symbolic links inside an opened folder (issue 17, defect 7). A segment, index or checkpoint that is
 * a symlink to a file outside the folder the user opened would otherwise be read (and served by the
 * bridge, also read-only). The engine resolves every link it meets while listing a log directory or a
 * partition folder (`realpath`) and reads it only when the policy allows:
 *
 * - `{ within: [...] }` (the default, rooted at the folder opened): only links whose real path lies
 *   inside one of these folders are followed; any other is left unread and reported as a
 *   `symlink-outside` problem naming the link and where it points;
 * - `'follow'`: every link is followed (`klx ... --follow-symlinks`).
 *
 * A broker follows links like any file (`java.io.File` in LogManager.loadLogs); this is the tool's own confinement, not a
 * Kafka rule.
 */
import { lstatSync, readlinkSync, realpathSync } from 'node:fs';
import { isAbsolute, relative, resolve, sep, dirname } from 'node:path';

/** Which symlinks the engine follows; see the module comment. */
export type SymlinkPolicy = 'follow' | { readonly within: readonly string[] };

/** A link the policy refused: its path and where it points (real path, or the raw target when dangling). */
export interface RefusedLink {
  link: string;
  target: string;
}

function inside(child: string, dir: string): boolean {
  const rel = relative(dir, child);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}

function realOrSelf(p: string): string {
  try {
    return realpathSync(resolve(p));
  } catch {
    return resolve(p);
  }
}

let followByDefault = false;
const listeners = new Set<(link: RefusedLink) => void>();

/**
 * Makes `'follow'` the policy of every open that names none (`klx --follow-symlinks`; the bridge and
 * the app never call it).
 */
export function followSymlinksByDefault(on: boolean): void {
  followByDefault = on;
}

/** Calls `cb` for every link refused from now on (the CLI prints a warning); returns the unsubscribe. */
export function onRefusedLink(cb: (link: RefusedLink) => void): () => void {
  listeners.add(cb);
  return () => listeners.delete(cb);
}

/** `given`, else the default: follow all after {@link followSymlinksByDefault}, else only into `root`. */
export function policyOr(given: SymlinkPolicy | undefined, root: string): SymlinkPolicy {
  return given ?? (followByDefault ? 'follow' : withinRoots([root]));
}

/** The policy that follows links only into `roots` (compared by real path). */
export function withinRoots(roots: readonly string[]): SymlinkPolicy {
  return { within: roots.map(realOrSelf) };
}

/**
 * When `path` is a symlink the policy does not allow, where it points; null otherwise (not a link,
 * allowed, or absent). Never throws.
 */
export function refusedLinkTarget(path: string, policy: SymlinkPolicy): string | null {
  if (policy === 'follow') return null;
  let isLink = false;
  try {
    isLink = lstatSync(path).isSymbolicLink();
  } catch {
    return null;
  }
  // A regular file inside a folder reached through allowed links is fine; only links are checked.
  if (!isLink) return null;
  let target: string;
  try {
    target = realpathSync(path);
  } catch {
    // Dangling: resolve the raw target against the link's folder (a missing file outside is still outside).
    try {
      target = resolve(dirname(path), readlinkSync(path));
    } catch {
      return null;
    }
  }
  if (policy.within.some((r) => inside(target, r))) return null;
  for (const cb of listeners) cb({ link: path, target });
  return target;
}

/** The sentence a refused link's problem says. */
export function refusedLinkReason(target: string): string {
  // Kafka opens segment, index and checkpoint files by path (FileRecords.openChannel: FileChannel.open without
  // NOFOLLOW_LINKS; LogLoader lists the folder with File.listFiles), so a broker reads and writes the target.
  return `symbolic link to ${target}, outside the opened folder: not read here, but a broker would follow it and open whatever it resolves to, for reading and writing (FileRecords.openChannel) (the CLI reads it with --follow-symlinks)`;
}
