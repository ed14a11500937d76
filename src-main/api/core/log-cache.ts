/**
 * The opened partition logs of one API context (an app window or a bridge), kept between calls so
 * that paging through records reuses each segment's already-read indexes and last-batch facts, plus
 * what the session learned about each partition (a verify's CRC result, record counts).
 *
 * A cached {@link PartitionLog} is a read-only snapshot; before reuse it is checked against a cheap
 * stamp (modification times of the partition folder and of its log directory, size and
 * modification time of the active segment's `.log`): a roll, an append, a checkpoint rewrite or a
 * deleted segment changes the stamp, and the partition is opened again (facts learned about the old
 * files are dropped). At most {@link MAX_CACHED_PARTITIONS} partitions are kept (least recently used
 * dropped first); each holds only index files (bounded by `segment.index.bytes`), never `.log` data.
 *
 * Also: {@link rangeView}, a view of a partition restricted to an offset range, used to run the
 * engine's whole-partition scanners (`scanHoles`, `countRecords`) over one page or one segment.
 */
import { statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { LogDirCheckpoints, PartitionLog } from '../../engine/log/partition-log.ts';
import { PartitionLog as PartitionLogClass } from '../../engine/log/partition-log.ts';
import type { LogSegment } from '../../engine/segment/log-segment.ts';
import { isInsideDir } from './paths.ts';
import type { ApiContext } from './types.ts';

/** How many opened partitions one context keeps. */
export const MAX_CACHED_PARTITIONS = 64;

/** What a verify of this session found, for the health badge. */
export interface VerifyFacts {
  endedAt: string;
  crcErrors: number;
  errors: number;
  warnings: number;
  infos: number;
  /** The verify's findings (already on the wire), worst first, at most 200. */
  findings: import('../../../src-shared/log-types.ts').Finding[];
}

/** Record counts learned by a `log.countRecords` job. */
export interface CountFacts {
  records: number;
  controlRecords: number;
  batches: number;
  emptyBatches: number;
}

interface Entry {
  log: PartitionLog;
  stamp: string;
  verify?: VerifyFacts;
  counts?: CountFacts;
  /** CRC failures met by the pages read (`log.records`), by `file@position`. */
  crcSeen?: Map<string, import('../../../src-shared/log-types.ts').Finding>;
}

/** At most this many CRC failures met while reading pages are remembered per partition. */
export const MAX_CRC_SEEN = 200;

function mtime(p: string): number {
  try {
    return statSync(p).mtimeMs;
  } catch {
    return -1;
  }
}

/** The stamp of a partition folder's current state (see the module comment). */
function stampOf(dir: string, log: PartitionLog | null): string {
  const active = log?.activeSegment?.files.log;
  let activePart = 'none';
  if (active) {
    try {
      const st = statSync(active);
      activePart = `${st.size}:${st.mtimeMs}`;
    } catch {
      activePart = 'gone';
    }
  }
  return `${mtime(dir)}|${mtime(dirname(dir))}|${mtime(join(dirname(dir), 'replication-offset-checkpoint'))}|${activePart}`;
}

/** Opened partitions of one context. */
export class LogCache {
  private readonly entries = new Map<string, Entry>();

  /**
   * The partition folder `dir` (a real path already checked by the session), opened read-only or
   * reused while unchanged. `checkpointsOf` gives the checkpoints of its log directory when it is
   * opened (default: read them), so that a caller opening many partitions of one directory reads
   * them once.
   * @throws KlxError `not-found` / `not-a-log-dir` from {@link PartitionLogClass.open}.
   */
  partition(dir: string, checkpointsOf?: (logDir: string) => LogDirCheckpoints): PartitionLog {
    return this.entry(dir, checkpointsOf).log;
  }

  /** Keeps a partition opened elsewhere (e.g. by `openPath`), replacing a stale one. */
  remember(log: PartitionLog): void {
    const old = this.entries.get(log.dir);
    const stamp = stampOf(log.dir, log);
    if (old && old.stamp === stamp) {
      this.touch(log.dir, old);
      return;
    }
    this.touch(log.dir, { log, stamp });
  }

  /**
   * Drops the cached partition `dir` and what was learned about it. Called after this process
   * rewrote its files (cleanup run or undo): on a file system with a coarse clock (1 s, 2 s) a
   * rewrite within the same tick as the cached stamp would otherwise go unnoticed.
   */
  forget(dir: string): void {
    this.entries.delete(dir);
    this.generation++;
  }

  /** The cached partition folders inside `root` (real paths). */
  dirsInside(root: string): string[] {
    return [...this.entries.keys()].filter((d) => isInsideDir(d, root));
  }

  /**
   * Bumped by every {@link forget}: caches of the same files elsewhere (the log worker threads'
   * own, see `log/log-tasks.ts`) drop what they opened when it moved.
   */
  generation = 0;

  /** Facts learned in this session about `dir` (only while its files are unchanged). */
  facts(dir: string): { verify?: VerifyFacts; counts?: CountFacts; crcSeen?: import('../../../src-shared/log-types.ts').Finding[] } {
    const e = this.entries.get(dir);
    if (!e || e.stamp !== stampOf(dir, e.log)) return {};
    return { verify: e.verify, counts: e.counts, ...(e.crcSeen ? { crcSeen: [...e.crcSeen.values()] } : {}) };
  }

  /**
   * Remembers CRC failures a page of records met (`crc-mismatch` findings naming the `.log` and the
   * batch's byte position), so that the health badge says what the records table flags before a
   * verify ran. Kept while the files are unchanged, at most {@link MAX_CRC_SEEN}.
   * @returns true when one of them was new.
   */
  noteCrcFailures(dir: string, findings: readonly import('../../../src-shared/log-types.ts').Finding[]): boolean {
    const e = this.entries.get(dir);
    if (!e || findings.length === 0 || e.stamp !== stampOf(dir, e.log)) return false;
    const seen = (e.crcSeen ??= new Map());
    let fresh = false;
    for (const f of findings) {
      const key = `${f.file}@${f.position ?? ''}`;
      if (seen.has(key) || seen.size >= MAX_CRC_SEEN) continue;
      seen.set(key, f);
      fresh = true;
    }
    return fresh;
  }

  /** Records a verify's result for `dir` (the log it ran on must still be current). */
  setVerify(log: PartitionLog, facts: VerifyFacts): void {
    const e = this.entries.get(log.dir);
    if (e && e.log === log) e.verify = facts;
  }

  /** Records counts for `dir` (the log they were taken on must still be current). */
  setCounts(log: PartitionLog, counts: CountFacts): void {
    const e = this.entries.get(log.dir);
    if (e && e.log === log) e.counts = counts;
  }

  private entry(dir: string, checkpointsOf?: (logDir: string) => LogDirCheckpoints): Entry {
    const cached = this.entries.get(dir);
    if (cached && cached.stamp === stampOf(dir, cached.log)) {
      this.touch(dir, cached);
      return cached;
    }
    const log = PartitionLogClass.open(dir, checkpointsOf ? { checkpoints: checkpointsOf(dirname(dir)) } : {});
    const fresh: Entry = { log, stamp: stampOf(dir, log) };
    this.touch(dir, fresh);
    return fresh;
  }

  private touch(dir: string, e: Entry): void {
    this.entries.delete(dir);
    this.entries.set(dir, e);
    while (this.entries.size > MAX_CACHED_PARTITIONS) {
      const oldest = this.entries.keys().next().value as string;
      this.entries.delete(oldest);
    }
  }
}

const caches = new WeakMap<ApiContext, LogCache>();

/** The {@link LogCache} of a context (made on first use). */
export function logCacheOf(ctx: ApiContext): LogCache {
  let c = caches.get(ctx);
  if (!c) {
    c = new LogCache();
    caches.set(ctx, c);
  }
  return c;
}

/**
 * A view of `log` whose logStartOffset and logEndOffset are the given bounds (and, optionally, whose
 * segments are the given ones); everything else is the log itself. The engine's scanners walk
 * `[logStartOffset, logEndOffset)` of the segments they are given, seeking to the start through the
 * offset index, so a view makes them cover one page or one segment instead of the whole partition.
 *
 * This works around scanners that have no range option (`scanHoles`, `countRecords` per segment);
 * a view is never cached by the engine's per-log caches beyond its own lifetime.
 */
export function rangeView(log: PartitionLog, logStartOffset: bigint, logEndOffset: bigint, segments?: LogSegment[]): PartitionLog {
  const props: PropertyDescriptorMap = {
    logStartOffset: { value: logStartOffset },
    logEndOffset: { value: logEndOffset },
  };
  if (segments) props.segments = { value: segments };
  return Object.create(log, props) as PartitionLog;
}
