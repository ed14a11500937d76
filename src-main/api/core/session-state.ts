/**
 * The folders opened in one session (one Electron window's app, or one bridge), the recent-folder
 * list, and the check that confines every path argument to the opened folders.
 */
import { stat } from 'node:fs/promises';
import { isAbsolute } from 'node:path';
import { KlxError } from '../../engine/errors.ts';
import type { EventHub } from './events.ts';
import { isInsideDir, outsideServedFolders, realpathLenient, realRoots, resolveInside } from './paths.ts';
import type { CallContext } from './call-context.ts';

/** Where recent folders are kept (a JSON file in Electron's user-data folder, memory in the bridge). */
export interface RecentStore {
  /** Most recent first. */
  list(): string[];
  /** Moves `path` to the front (adding it if new). */
  add(path: string): void;
}

/** A {@link RecentStore} in memory, keeping at most `limit` folders. */
export function memoryRecentStore(limit = 10): RecentStore {
  let items: string[] = [];
  return {
    list: () => [...items],
    add: (path) => {
      items = [path, ...items.filter((p) => p !== path)].slice(0, limit);
    },
  };
}

/** Opened folders of a session. */
export class SessionState {
  private readonly openedFolders: string[] = [];
  private writeModeOn = false;

  constructor(
    private readonly events: EventHub,
    readonly recent: RecentStore = memoryRecentStore(),
  ) {}

  /** The real paths of the opened folders, in opening order. */
  opened(): string[] {
    return [...this.openedFolders];
  }

  /**
   * Opens a folder: it must be an existing directory, and inside the fixed roots when the call has
   * some. Returns its real path, records it as recent and emits `session.opened`.
   * Errors: `invalid-argument` (relative path, not a directory; outside the fixed roots with
   * `details.reason = 'outside-served-folders'`, see {@link outsideServedFolders}), `not-found`.
   */
  async open(path: string, call: CallContext): Promise<string> {
    if (!isAbsolute(path)) throw new KlxError('invalid-argument', `not an absolute path: ${path}`);
    const fixed = call.allowedRoots ?? [];
    let real: string;
    if (fixed.length > 0) {
      real = await realpathLenient(path);
      const roots = await realRoots(fixed);
      if (!roots.some((r) => isInsideDir(real, r))) throw outsideServedFolders(path, roots);
    } else {
      real = await realpathLenient(path);
    }
    const info = await stat(real).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') throw new KlxError('not-found', `no such folder: ${path}`, { file: path });
      throw err;
    });
    if (!info.isDirectory()) throw new KlxError('invalid-argument', `not a folder: ${path}`, { file: path });
    if (!this.openedFolders.includes(real)) this.openedFolders.push(real);
    this.recent.add(real);
    this.events.emit({ type: 'session.opened', path: real });
    return real;
  }

  /**
   * Closes an opened folder (given by any path that resolves to it): later path arguments inside it
   * are refused unless another opened folder or a fixed root holds them. Emits `session.closed`.
   * Nothing on disk changes; the recent list keeps it. Returns its real path.
   * Errors: `not-found` when it is not opened.
   */
  async close(path: string): Promise<string> {
    if (!isAbsolute(path)) throw new KlxError('invalid-argument', `not an absolute path: ${path}`);
    const real = this.openedFolders.includes(path) ? path : await realpathLenient(path);
    const i = this.openedFolders.indexOf(real);
    if (i < 0) throw new KlxError('not-found', `${path} is not an opened folder`, { file: path });
    this.openedFolders.splice(i, 1);
    this.events.emit({ type: 'session.closed', path: real });
    return real;
  }

  /** Whether "Open for writing" is on for this session (off when the session starts). */
  get writeMode(): boolean {
    return this.writeModeOn;
  }

  /**
   * Switches "Open for writing". Turning it on in a read-only app or bridge throws `read-only`;
   * turning it off always succeeds. Emits `session.writeMode`.
   */
  setWriteMode(enabled: boolean, call: CallContext): boolean {
    if (enabled && call.readOnly) throw new KlxError('read-only', 'this window is read-only: it cannot be switched to "Open for writing"');
    if (this.writeModeOn !== enabled) {
      this.writeModeOn = enabled;
      this.events.emit({ type: 'session.writeMode', enabled });
    }
    return this.writeModeOn;
  }

  /**
   * Like {@link resolve}, for a method that changes files: also requires "Open for writing" to be on
   * (and the call not read-only). Errors: `read-only` naming the path, `invalid-argument` as resolve.
   */
  async resolveForWriting(path: string, call: CallContext): Promise<string> {
    const real = await this.resolve(path, call);
    if (call.readOnly) throw new KlxError('read-only', `this window is read-only: ${real} cannot be changed`, { file: real });
    if (!this.writeModeOn) throw new KlxError('read-only', `${real} is opened read-only: switch on "Open for writing" to change it`, { file: real });
    return real;
  }

  /**
   * Returns the real path of `path` if it lies inside an opened folder (or a fixed root of the
   * call); throws `invalid-argument` otherwise. Every handler taking a path calls this first and
   * then uses the returned path only.
   */
  async resolve(path: string, call: CallContext): Promise<string> {
    const fixed = await realRoots(call.allowedRoots ?? []);
    // With fixed roots, an opened folder counts only while it is inside them.
    const opened = fixed.length === 0 ? this.openedFolders : this.openedFolders.filter((f) => fixed.some((r) => isInsideDir(f, r)));
    if (fixed.length > 0 && isAbsolute(path) && !path.includes('\0')) {
      const real = await realpathLenient(path);
      if (!fixed.some((r) => isInsideDir(real, r))) throw outsideServedFolders(path, fixed);
    }
    return resolveInside(path, [...opened, ...fixed]);
  }
}
