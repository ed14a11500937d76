/**
 * A partition's log as found on disk, opened read-only (spec §1.2, §10, §11; Kafka's `UnifiedLog`,
 * `LocalLog`, `LogSegments`, `LogLoader` without the writes).
 *
 * Opening reads names, sizes, checkpoints and the tail of the last segment's index; it never walks
 * whole `.log` files, so a folder of 1,000 segments opens in well under a second. Counts of records
 * and batches, holes and verification are computed on demand by the scanners built on top of it.
 *
 * Invariants: segments are sorted by base offset and do not overlap; the last one is the active
 * segment; logStartOffset = max(log-start-offset-checkpoint, first segment base offset);
 * logEndOffset = next offset after the last batch of the active segment (its base offset if empty).
 */
import { statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import type { ErrorCode } from '../../../src-shared/errors.ts';
import { KlxError } from '../errors.ts';
import { listPartitionDir, parsePartitionDirName, type PartitionListing, type TransientFile } from '../files/file-names.ts';
import { readLeaderEpochCheckpoint, readOffsetCheckpoint, readPartitionMetadata, type EpochEntry as LeaderEpochEntry } from '../files/checkpoint.ts';
import { LogSegment } from '../segment/log-segment.ts';
import { policyOr, refusedLinkReason, refusedLinkTarget, type SymlinkPolicy } from '../files/symlinks.ts';
import { pendingSwapsOf, type PendingSwaps } from './pending-swaps.ts';
import { resolveTopicConfig, type ResolvedTopicConfig, type TopicConfig } from './topic-config.ts';

/** A problem noticed while opening (never thrown: the log still opens). */
export interface OpenProblem {
  code: ErrorCode | 'leftover-file' | 'orphan-index' | 'symlink-outside';
  file: string;
  position?: number;
  reason: string;
  /** The error's details (a checkpoint's `kind`: `malformed` or `number-format`, files/checkpoint.ts). */
  details?: Record<string, unknown>;
}

/** The four offset checkpoints of a log directory, read once per directory. */
export interface LogDirCheckpoints {
  recoveryPoint: Map<string, bigint>;
  highWatermark: Map<string, bigint>;
  logStartOffset: Map<string, bigint>;
  cleanerOffset: Map<string, bigint>;
  /** Present only after a clean shutdown (spec §11.3). */
  cleanShutdown: boolean;
  problems: OpenProblem[];
}

/** Key of a partition in checkpoint maps. */
export function tpKey(topic: string, partition: number): string {
  return `${topic}-${partition}`;
}

const CHECKPOINT_FILES = {
  recoveryPoint: 'recovery-point-offset-checkpoint',
  highWatermark: 'replication-offset-checkpoint',
  logStartOffset: 'log-start-offset-checkpoint',
  cleanerOffset: 'cleaner-offset-checkpoint',
} as const;

/**
 * Reads the checkpoint files at the root of a log directory. Missing files mean "no entries";
 * corrupt ones are reported in `problems` (with file and byte position) and treated as empty, as
 * `LogManager.loadLogs` treats them; a broker also takes the log directory offline when it cannot read
 * one (`CheckpointFileWithFailureHandler.read`, see `unreadableCheckpointConsequence`). A checkpoint that is a symlink the policy refuses (default: one
 * leading out of `logDir`) is not read: a `symlink-outside` problem names it.
 */
export function readLogDirCheckpoints(logDir: string, symlinks?: SymlinkPolicy): LogDirCheckpoints {
  const out: LogDirCheckpoints = { recoveryPoint: new Map(), highWatermark: new Map(), logStartOffset: new Map(), cleanerOffset: new Map(), cleanShutdown: false, problems: [] };
  const policy = policyOr(symlinks, logDir);
  for (const [field, name] of Object.entries(CHECKPOINT_FILES) as [keyof typeof CHECKPOINT_FILES, string][]) {
    const file = join(logDir, name);
    const target = refusedLinkTarget(file, policy);
    if (target !== null) {
      out.problems.push({ code: 'symlink-outside', file, reason: refusedLinkReason(target) });
      continue;
    }
    try {
      for (const e of readOffsetCheckpoint(file)) out[field].set(tpKey(e.topic, e.partition), e.offset);
    } catch (err) {
      if (err instanceof KlxError && err.code !== 'not-found') out.problems.push({ code: err.code, file, position: err.position, reason: err.reason, ...(err.details ? { details: err.details } : {}) });
      else if (!(err instanceof KlxError)) throw err;
    }
  }
  try {
    out.cleanShutdown = statSync(join(logDir, '.kafka_cleanshutdown')).isFile();
  } catch {
    out.cleanShutdown = false;
  }
  return out;
}

export interface OpenPartitionOptions {
  /** Config values that override the sidecar file and inference. */
  config?: Partial<TopicConfig>;
  /** Checkpoints of the parent log directory, when the caller already read them. */
  checkpoints?: LogDirCheckpoints;
  /**
   * Which symlinks in the partition folder are read (`files/symlinks.ts`); default: only links whose
   * real path stays inside the partition folder (`'follow'` after `followSymlinksByDefault`).
   */
  symlinks?: SymlinkPolicy;
}

/** A partition log opened read-only. See the module comment. */
export class PartitionLog {
  readonly dir: string;
  readonly topic: string;
  readonly partition: number;
  /** `normal`, or the suffixed kinds of spec §1.2. */
  readonly kind: 'normal' | 'delete' | 'future' | 'stray';
  readonly segments: LogSegment[];
  readonly listing: PartitionListing;
  readonly checkpoints: LogDirCheckpoints;
  readonly leaderEpochs: LeaderEpochEntry[];
  readonly topicId: string | null;
  readonly config: ResolvedTopicConfig;
  readonly problems: OpenProblem[];
  private cachedPendingSwaps?: PendingSwaps | null;

  private constructor(dir: string, topic: string, partition: number, kind: PartitionLog['kind'], listing: PartitionListing, checkpoints: LogDirCheckpoints, opts: OpenPartitionOptions) {
    this.dir = dir;
    this.topic = topic;
    this.partition = partition;
    this.kind = kind;
    this.listing = listing;
    this.checkpoints = checkpoints;
    this.problems = [...checkpoints.problems];
    const refused = new Set(listing.refusedLinks.map((l) => basename(l.link)));
    this.segments = listing.segments.map((s) => new LogSegment(dir, s.baseOffset, refused));
    for (const l of listing.refusedLinks) this.problems.push({ code: 'symlink-outside', file: l.link, reason: refusedLinkReason(l.target) });
    for (const o of listing.orphanIndexes) {
      this.problems.push({ code: 'orphan-index', file: join(dir, o.name), reason: 'index file without a .log: a broker deletes it at startup (LogLoader.loadSegmentFiles)' });
    }
    for (const l of listing.transient) {
      this.problems.push({ code: 'leftover-file', file: join(dir, l.name), reason: `leftover .${l.suffix} file: ${leftoverFileMeaning(listing, l)}` });
    }
    let epochs: LeaderEpochEntry[] = [];
    try {
      if (refused.has('leader-epoch-checkpoint')) throw new KlxError('not-found', 'refused symlink');
      epochs = readLeaderEpochCheckpoint(join(dir, 'leader-epoch-checkpoint'));
    } catch (err) {
      if (!(err instanceof KlxError) || err.code !== 'not-found') this.problems.push(problemOf(err, join(dir, 'leader-epoch-checkpoint')));
    }
    this.leaderEpochs = epochs;
    let topicId: string | null = null;
    try {
      if (refused.has('partition.metadata')) throw new KlxError('not-found', 'refused symlink');
      topicId = readPartitionMetadata(join(dir, 'partition.metadata')).topicId;
    } catch (err) {
      if (!(err instanceof KlxError) || err.code !== 'not-found') this.problems.push(problemOf(err, join(dir, 'partition.metadata')));
    }
    this.topicId = topicId;
    this.config = resolveTopicConfig(topic, dir, opts.config, checkpoints.cleanerOffset.has(tpKey(topic, partition)));
  }

  /**
   * Opens a partition folder read-only.
   * @throws KlxError `not-found` when the folder does not exist, `not-a-log-dir` when it is neither
   *   named `topic-partition` nor holds segment files (the message says which).
   */
  static open(dir: string, opts: OpenPartitionOptions = {}): PartitionLog {
    const abs = resolve(dir);
    try {
      if (!statSync(abs).isDirectory()) throw new KlxError('not-a-log-dir', 'not a directory (give a partition folder, or a log directory holding them)', { file: dir });
    } catch (err) {
      if (err instanceof KlxError) throw err;
      throw new KlxError('not-found', 'no such directory', { file: dir, cause: err });
    }
    const listing = listPartitionDir(abs, opts.symlinks);
    const parsed = parsePartitionDirName(basename(abs));
    if (!parsed) {
      throw new KlxError('not-a-log-dir', listing.segments.length > 0
        ? `folder name "${basename(abs)}" is not <topic>-<partition>, so the topic and partition are unknown; rename it as a broker names it`
        : `not a Kafka partition folder: the name is not <topic>-<partition> and it holds no NNNNNNNNNNNNNNNNNNNN.log segments`, { file: dir });
    }
    const checkpoints = opts.checkpoints ?? readLogDirCheckpoints(dirname(abs), opts.symlinks);
    return new PartitionLog(abs, parsed.topic, parsed.partition, parsed.kind, listing, checkpoints, opts);
  }

  /**
   * The leftovers of an interrupted cleaner, split or retention (`.swap`, `.cleaned`, `.deleted`)
   * and what a broker does with them at startup (`LogLoader.load`, see pending-swaps.ts), or null
   * when there are none. Read on first use (the end of each `.log.swap`), then kept.
   * @throws KlxError `io-error` when a `.log.swap` cannot be read.
   */
  get pendingSwaps(): PendingSwaps | null {
    if (this.cachedPendingSwaps === undefined) this.cachedPendingSwaps = pendingSwapsOf(this.dir, this.listing);
    return this.cachedPendingSwaps;
  }

  /** The newest segment (the only one appended to), or null when the folder has no segment. */
  get activeSegment(): LogSegment | null {
    return this.segments[this.segments.length - 1] ?? null;
  }

  /** logStartOffset: max(checkpoint, first segment base offset); 0 for a folder without segments. */
  get logStartOffset(): bigint {
    const first = this.segments[0]?.baseOffset ?? 0n;
    const cp = this.checkpoints.logStartOffset.get(tpKey(this.topic, this.partition));
    return cp !== undefined && cp > first ? cp : first;
  }

  /** logEndOffset: the offset the next appended record gets. */
  get logEndOffset(): bigint {
    const active = this.activeSegment;
    return active ? active.nextOffset() : this.logStartOffset;
  }

  /** High watermark from replication-offset-checkpoint, or null when the log dir has none for this partition. */
  get highWatermark(): bigint | null {
    return this.checkpoints.highWatermark.get(tpKey(this.topic, this.partition)) ?? null;
  }

  /** Recovery point from recovery-point-offset-checkpoint, or null. */
  get recoveryPoint(): bigint | null {
    return this.checkpoints.recoveryPoint.get(tpKey(this.topic, this.partition)) ?? null;
  }

  /**
   * Whether a broker's startup recovery takes this partition's last shutdown as clean: the log dir's
   * `.kafka_cleanshutdown`, except for the KRaft metadata log `__cluster_metadata`, which a KRaft node
   * loads itself as never cleanly shut down (KafkaRaftLog.createLog, 3.x KafkaMetadataLog.apply:
   * `UnifiedLog.create(…, lastShutdownClean = false, …)`).
   */
  get startupCleanShutdown(): boolean {
    return this.topic === '__cluster_metadata' ? false : this.checkpoints.cleanShutdown;
  }

  /**
   * The recovery point a broker's startup recovery starts from (offsets): this partition's
   * `recovery-point-offset-checkpoint` entry (null: none, i.e. 0), except for `__cluster_metadata`,
   * which a KRaft node loads with recovery point 0 whatever the checkpoint says, so it re-validates
   * every segment at every start (KafkaRaftLog.createLog, 3.x KafkaMetadataLog.apply).
   */
  get startupRecoveryPoint(): bigint | null {
    return this.topic === '__cluster_metadata' ? 0n : this.recoveryPoint;
  }

  /** First dirty offset from cleaner-offset-checkpoint, or null (never cleaned). */
  get cleanerCheckpoint(): bigint | null {
    return this.checkpoints.cleanerOffset.get(tpKey(this.topic, this.partition)) ?? null;
  }

  /** Sum of `.log` sizes (what retention.bytes measures), in bytes. */
  get logSize(): number {
    return this.segments.reduce((s, seg) => s + seg.size, 0);
  }

  /** Bytes of every file in the folder (logs, indexes, checkpoints, leftovers). */
  get sizeOnDisk(): number {
    const l = this.listing;
    const files = [...l.segments.flatMap((s) => [s.log, s.index, s.timeindex, s.txnindex]), ...l.orphanIndexes, ...l.snapshots, ...l.transient, ...l.kraftSnapshots, ...l.metadata, ...l.unknown];
    return files.reduce((sum, f) => sum + (f?.size ?? 0), 0);
  }

  /** The segment that holds `offset` (the last one whose base ≤ offset), or null below the first. */
  segmentFor(offset: bigint): LogSegment | null {
    let lo = 0;
    let hi = this.segments.length - 1;
    let found: LogSegment | null = null;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (this.segments[mid]!.baseOffset <= offset) {
        found = this.segments[mid]!;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return found;
  }
}

/**
 * What a broker does at startup with a leftover file (`LogLoader.removeTempFilesAndCollectSwapFiles`
 * and the swap completion after it), in words; `klx repair` does the same. A `.swap` at or above the
 * smallest `.cleaned` base offset is part of an incomplete split and is deleted (KAFKA-6264).
 */
export function leftoverFileMeaning(listing: PartitionListing, t: TransientFile): string {
  if (t.suffix === 'tmp') return 'a partially written replacement (.tmp) left by an interrupted write; the real file is intact; repair deletes it';
  if (t.suffix === 'deleted') return 'a file already removed from the log, awaiting physical deletion; a broker deletes it at startup (LogLoader), and so does repair';
  if (t.suffix === 'cleaned') return 'incomplete cleaner or split output; a broker deletes it at startup (LogLoader), and so does repair';
  const minCleaned = listing.transient.reduce<bigint | null>((m, x) => (x.suffix === 'cleaned' && x.baseOffset !== undefined && (m === null || x.baseOffset < m) ? x.baseOffset : m), null);
  if (minCleaned !== null && t.baseOffset !== undefined && t.baseOffset >= minCleaned) {
    return `part of an incomplete split (base offset ≥ ${minCleaned}, the smallest .cleaned base offset): a broker deletes it at startup (LogLoader.removeTempFilesAndCollectSwapFiles, KAFKA-6264), and so does repair; the original segment stays`;
  }
  if (t.kind !== undefined && t.kind !== 'log') return 'the index of a swapped-in segment: a broker renames it to its final name at startup (LogLoader.load, Kafka 3.0+; older brokers deleted it); repair deletes it and writes the index again from the .log';
  if (t.size === 0) return 'swap output holding no batch: a broker renames it over the segment of its name at startup (LogLoader.load), leaving that segment empty; repair deletes it and keeps the segment';
  return 'complete cleaner or split output: a broker completes the swap at startup (deletes the segments it replaces and renames it to .log; LogLoader), and so does repair. Until then the data shown is the pre-swap segments';
}

function problemOf(err: unknown, file: string): OpenProblem {
  if (err instanceof KlxError) return { code: err.code, file: err.file ?? file, position: err.position, reason: err.reason, ...(err.details ? { details: err.details } : {}) };
  return { code: 'io-error', file, reason: (err as Error).message };
}
