/**
 * A Kafka log directory (one entry of `log.dirs`, spec §1.1; Kafka's `LogManager.loadLogs`):
 * `meta.properties`, the offset checkpoints and one folder per partition, plus the
 * `-delete`/`-future`/`-stray` folders a broker leaves behind.
 *
 * {@link openPath} accepts what a user points the tool at: a log directory, a single partition
 * folder, or a folder holding several log directories (a support bundle with `broker1/`,
 * `broker2/`...), and says clearly why anything else is not a Kafka log.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { basename, join, relative, resolve } from 'node:path';
import { KlxError } from '../errors.ts';
import { kafkaTopicPartitionOf, parsePartitionDirName } from '../files/file-names.ts';
import { policyOr, refusedLinkReason, refusedLinkTarget } from '../files/symlinks.ts';
import { readMetaProperties, type MetaProperties } from '../files/checkpoint.ts';
import { PartitionLog, readLogDirCheckpoints, type LogDirCheckpoints, type OpenPartitionOptions } from './partition-log.ts';

/** What a broker ignores at the root of a log directory (spec §1.1; LogManager.loadLogs skips it). */
const IGNORED_ROOT_ENTRIES = new Set(['remote-log-index-cache']);

/** One log directory and its partitions. */
export interface LogDirectory {
  path: string;
  meta: MetaProperties | null;
  checkpoints: LogDirCheckpoints;
  partitions: PartitionLog[];
  /**
   * Root entries klx does not open as partitions, and why: `stopsBroker` where a broker does not start on
   * it (LocalLog.parseTopicPartitionName throws), `loadedByBroker` where a broker loads it though klx does
   * not (see `kafkaTopicPartitionOf`), neither for what a broker skips (LogManager.loadLogs).
   */
  ignored: { name: string; reason: string; stopsBroker?: boolean; loadedByBroker?: boolean }[];
  /**
   * Partition folders (absolute paths, in name order) listed but not opened: only when opened with
   * `lazy` (see {@link LazyOpenOptions}); open each with `PartitionLog.open(dir, { checkpoints })`.
   * Empty otherwise.
   */
  unopened: string[];
}

/**
 * `lazy`: list the partition folders of a log directory without opening them (no read inside a
 * partition folder: its files, checkpoints and indexes are read when `PartitionLog.open` is called
 * on an entry of {@link LogDirectory.unopened}), so that a folder of hundreds of partitions lists
 * in a few milliseconds. A folder that is itself a partition is always opened.
 */
export interface LazyOpenOptions {
  lazy?: boolean;
}

/** The result of opening a path: one or more log directories (a single partition is wrapped in its parent). */
export interface OpenedLogs {
  /** The path as given, resolved. */
  root: string;
  logDirs: LogDirectory[];
}

function isDir(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

function looksLikeLogDir(path: string, names: string[]): boolean {
  return names.includes('meta.properties') || names.some((n) => parsePartitionDirName(n) !== null && isDir(join(path, n)) && hasSegments(join(path, n)));
}

function hasSegments(dir: string): boolean {
  try {
    return readdirSync(dir).some((n) => /^\d{20}\.(log|index|timeindex)$/.test(n));
  } catch {
    return false;
  }
}

/**
 * Opens one log directory read-only: every partition folder in it, in name order. A symlink in it
 * (a partition folder, a checkpoint, `meta.properties`) is followed only when `opts.symlinks`
 * allows it (default: only into `opts.root`, else the directory itself; see `files/symlinks.ts`);
 * a refused one is listed in `ignored` / the checkpoints' problems with where it points.
 * @throws KlxError `not-found` / `not-a-log-dir` for the directory itself; problems inside a
 *   partition are reported on that partition, never thrown.
 */
export function openLogDirectory(path: string, opts: Omit<OpenPartitionOptions, 'checkpoints'> & LazyOpenOptions & { root?: string } = {}): LogDirectory {
  const abs = resolve(path);
  if (!existsSync(abs)) throw new KlxError('not-found', 'no such directory', { file: path });
  const names = readdirSync(abs).sort();
  const policy = policyOr(opts.symlinks, opts.root ?? abs);
  const checkpoints = readLogDirCheckpoints(abs, policy);
  let meta: MetaProperties | null = null;
  const ignored: LogDirectory['ignored'] = [];
  const metaLink = names.includes('meta.properties') ? refusedLinkTarget(join(abs, 'meta.properties'), policy) : null;
  if (metaLink !== null) checkpoints.problems.push({ code: 'symlink-outside', file: join(abs, 'meta.properties'), reason: refusedLinkReason(metaLink) });
  else if (names.includes('meta.properties')) {
    try {
      meta = readMetaProperties(join(abs, 'meta.properties'));
    } catch (err) {
      const e = err as KlxError;
      checkpoints.problems.push({ code: e.code ?? 'corrupt-checkpoint', file: join(abs, 'meta.properties'), position: e.position, reason: e.reason ?? String(err) });
    }
  }
  const partitions: PartitionLog[] = [];
  const unopened: string[] = [];
  for (const n of names) {
    const full = join(abs, n);
    const link = refusedLinkTarget(full, policy);
    if (link !== null) {
      ignored.push({ name: n, reason: refusedLinkReason(link) });
      continue;
    }
    if (!isDir(full)) continue;
    if (IGNORED_ROOT_ENTRIES.has(n)) {
      ignored.push({ name: n, reason: 'the tiered-storage index cache, not a partition (a broker skips it: LogManager.loadLogs)' });
      continue;
    }
    const loaded = parsePartitionDirName(n) === null ? kafkaTopicPartitionOf(n) : null;
    if (loaded !== null) {
      const reason = `a broker loads this folder as partition ${loaded.partition} of topic "${loaded.topic}" (LocalLog.parseTopicPartitionName reads the partition with Integer.parseInt and does not check the topic name), but it is not a folder name Kafka writes: klx does not open it`;
      ignored.push({ name: n, loadedByBroker: true, reason });
      continue;
    }
    if (parsePartitionDirName(n) === null) {
      // Kafka 4.1 LogManager.loadLogs filters the folders with LocalLog.parseTopicPartitionName (2.x/3.x: LogManager.loadLog
      // parses it in a loading job): its KafkaException is not an IOException, so loadLogs rethrows it and startup fails.
      const reason = 'folder name is not <topic>-<partition>: a broker does not start (LogManager.loadLogs parses the name of every folder of the log directory with LocalLog.parseTopicPartitionName, whose KafkaException it does not catch)';
      ignored.push({ name: n, stopsBroker: true, reason: n === 'lost+found' ? `${reason}; move lost+found out, or give Kafka a sub-folder of the mount as its log directory` : reason });
      continue;
    }
    if (opts.lazy) {
      unopened.push(full);
      continue;
    }
    const { root: _root, lazy: _lazy, ...partOpts } = opts;
    partitions.push(PartitionLog.open(full, { ...partOpts, checkpoints }));
  }
  return { path: abs, meta, checkpoints, partitions, ignored, unopened };
}

/**
 * Opens whatever the user points at.
 * - a partition folder → its parent log directory restricted to that partition;
 * - a log directory → all its partitions;
 * - a folder of log directories (at most two levels down) → each of them.
 * With `opts.lazy`, the partitions of a log directory are listed in `unopened` instead of opened.
 * @throws KlxError `not-a-log-dir` with the reason ("holds no partition folders or segments"...),
 *   `not-found` when the path does not exist.
 */
export function openPath(path: string, opts: Omit<OpenPartitionOptions, 'checkpoints'> & LazyOpenOptions = {}): OpenedLogs {
  const abs = resolve(path);
  if (!existsSync(abs)) throw new KlxError('not-found', 'no such file or directory', { file: path });
  if (!isDir(abs)) throw new KlxError('not-a-log-dir', 'this is a file; open the partition folder or log directory that holds it', { file: path });
  const names = readdirSync(abs);
  if (parsePartitionDirName(basename(abs)) !== null && (hasSegments(abs) || names.length === 0 || names.includes('leader-epoch-checkpoint') || names.includes('partition.metadata'))) {
    const parent = resolve(abs, '..');
    const checkpoints = readLogDirCheckpoints(parent, opts.symlinks);
    const { lazy: _lazy, ...partOpts } = opts;
    const log = PartitionLog.open(abs, { ...partOpts, checkpoints });
    let meta: MetaProperties | null = null;
    try {
      if (existsSync(join(parent, 'meta.properties'))) meta = readMetaProperties(join(parent, 'meta.properties'));
    } catch {
      meta = null;
    }
    return { root: abs, logDirs: [{ path: parent, meta, checkpoints, partitions: [log], ignored: [], unopened: [] }] };
  }
  if (hasSegments(abs)) {
    throw new KlxError('not-a-log-dir', `folder name "${basename(abs)}" is not <topic>-<partition>, so the topic and partition of its segments are unknown; rename it as a broker names it`, { file: path });
  }
  if (looksLikeLogDir(abs, names)) return { root: abs, logDirs: [openLogDirectory(abs, { ...opts, root: abs })] };
  const nested: LogDirectory[] = [];
  const visit = (dir: string, depth: number) => {
    for (const n of readdirSync(dir).sort()) {
      const full = join(dir, n);
      if (!isDir(full) || refusedLinkTarget(full, policyOr(opts.symlinks, abs)) !== null) continue;
      const sub = readdirSync(full);
      if (looksLikeLogDir(full, sub)) nested.push(openLogDirectory(full, { ...opts, root: abs }));
      else if (depth < 2) visit(full, depth + 1);
    }
  };
  visit(abs, 1);
  if (nested.length === 0) {
    throw new KlxError('not-a-log-dir', 'not a Kafka log directory: it holds no meta.properties, no <topic>-<partition> folders with segment files, and no log directories below it', { file: path });
  }
  return { root: abs, logDirs: nested };
}

/** Every partition of an opened path, with its path relative to the root. */
export function allPartitions(opened: OpenedLogs): { rel: string; log: PartitionLog }[] {
  return opened.logDirs.flatMap((d) => d.partitions.map((log) => ({ rel: relative(opened.root, log.dir) || '.', log })));
}
