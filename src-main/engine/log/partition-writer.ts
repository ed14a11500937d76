/**
 * Writing a partition: append batches and roll segments (spec §4.4, §9.1, §9.2, §10.2, §11;
 * Kafka's `UnifiedLog.append` / `maybeRoll` / `roll`, `LocalLog.roll`, `LogSegment.append` /
 * `onBecomeInactiveSegment`, `LogValidator`, `LeaderEpochFileCache.assign`). Beside it: `partition-create.ts` (a new partition folder), `roll-rule.ts`
 * (when to roll), `write-check.ts` (what must be true of a folder before writing) and
 * `write-steps.ts` (the steps the fault hook sees, file helpers).
 *
 * What a folder looks like after every acknowledged write (the invariants this module keeps):
 * - the `.log` holds whole v2 batches only, fsynced before the write returns;
 * - offsets run on from the log end offset (LEO); one append = one batch, stamped with the current
 *   leader epoch (the latest of `leader-epoch-checkpoint`, 0 for a fresh log, as a broker that became
 *   leader with epoch 0 writes it: UnifiedLog.appendAsLeader, LeaderEpochFileCache.assign);
 * - indexes are **trimmed, never preallocated**, in the state a broker leaves after a clean close or
 *   after recovery (LogSegment.onBecomeInactiveSegment, LogSegment.recover): the offset index holds exactly the entries of the §9.1 rule, the time index the
 *   §9.2 entries **plus the final entry** `(maxTimestampSoFar, offsetOfIt)` when it is greater than
 *   the last one. For a segment written only by this module (one batch per append) both files are
 *   byte-identical to what `buildOffsetIndexEntries` / `buildTimeIndexEntries({final: true})`
 *   compute, i.e. to what Kafka's recovery rebuilds, so a broker opens the folder cleanly with or
 *   without recovery. (Kafka preallocates the active segment's indexes to 10 MiB while it runs; a
 *   desktop tool cannot promise a clean close, so it never leaves preallocated files behind.)
 *   Before the next append the trailing final time-index entry is replaced by the new one;
 * - `recovery-point-offset-checkpoint` = LEO for this partition (merged with the other partitions'
 *   entries under the log dir's checkpoint lock); `replication-offset-checkpoint` (high watermark)
 *   moves to LEO when it already lists the partition, as for a single-replica leader;
 * - no `.kafka_cleanshutdown` in the log dir once a write started: a broker deletes it when it
 *   starts (LogManager.loadLogs), and a crash of ours must lead to recovery, not to trusting a half-written tail;
 * - at each roll the producer snapshot `<new base offset>.snapshot` is written as `UnifiedLog.roll`
 *   writes it (`ProducerStateManager.takeSnapshot`: every producer, only when no snapshot is at or
 *   above that offset); an ABORT marker of a non-empty transaction adds its `.txnindex` entry.
 *
 * Crash safety: each file-system step calls the fault hook first (`WriterFaultHook`), so tests can
 * simulate a crash before any step. Order of an append: remove clean-shutdown marker → leader-epoch
 * checkpoint (only when a new epoch starts) → [roll: finish old segment, create new segment files,
 * fsync dir] → write `.log` → fsync `.log` → write `.index` → write `.timeindex` → fsync indexes →
 * recovery point → high watermark. A crash at any point leaves a folder that opens read-only with
 * every acknowledged record, nothing duplicated, and at worst the in-flight batch complete but not
 * acknowledged, or cut short (then reported as an invalid tail, which `klx repair` truncates).
 *
 * Opening for writing ({@link PartitionWriter.open}) takes the partition's writer lock
 * (`log-lock.ts`) and refuses, pointing at `klx repair`, a folder a broker would have to recover
 * first: leftover `.deleted`/`.cleaned`/`.swap` files, orphan indexes, damage in the data a broker's
 * recovery would re-validate (every segment from the one holding the recovery point), active-segment
 * indexes that are preallocated, stale, missing or that disagree with the `.log`, or an unreadable
 * checkpoint this module must rewrite. Every write has a plan that touches nothing
 * (`planCreatePartition`, {@link PartitionWriter.planAppend}, {@link PartitionWriter.planRoll},
 * and `readOnly` mode).
 */
import { closeSync, existsSync, fstatSync, fsyncSync, ftruncateSync, openSync, unlinkSync, writeSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { KlxError } from '../errors.ts';
import { encodeBatch, type RecordSpec } from '../format/record-batch.ts';
import { COMPRESSIONS, type Compression } from '../format/types.ts';
import {
  CLEAN_SHUTDOWN_FILE,
  LEADER_EPOCH_CHECKPOINT_FILE,
  RECOVERY_POINT_CHECKPOINT_FILE,
  REPLICATION_OFFSET_CHECKPOINT_FILE,
  parsePartitionDirName,
  segmentFileName,
} from '../files/file-names.ts';
import { writeLeaderEpochCheckpoint, type LeaderEpochEntry } from '../files/checkpoint.ts';
import { fsyncDirectory } from '../files/fsync-write.ts';
import { writeProducerSnapshot } from '../files/producer-snapshot.ts';
import { encodeTxnIndex } from '../files/txn-index.ts';
import { OFFSET_INDEX_ENTRY_SIZE } from '../files/offset-index.ts';
import { TIME_INDEX_ENTRY_SIZE } from '../files/time-index.ts';
import { PartitionLog } from './partition-log.ts';
import { SOURCE_WORDS, type ResolvedTopicConfig, type TopicConfig } from './topic-config.ts';
import { updateCheckpointEntry } from './checkpoint-entry.ts';
import { Stepper, createEmptyFile, ioError, writeAt, type WriterFaultHook, type WriterStep } from './write-steps.ts';
import { decideRoll, segmentJitter, type RollReason, type RollSegmentState } from './roll-rule.ts';
import { inspectForWriting, type ActiveSegmentState } from './write-check.ts';
import { ProducerStateTracker, type ProducerEntry } from './producer-append.ts';
import { CONTROL_ABORT, CONTROL_COMMIT, encodeControlKey, encodeEndTxnMarkerValue } from '../format/control.ts';
import { WRITER_LOCK_FILE, acquireLock, type LockHandle, type LockHolder } from './log-lock.ts';

const INT32_MAX = 2147483647;
const INT64_MAX = 9223372036854775807n;
const NOW = (): bigint => BigInt(Date.now());

// ---------------------------------------------------------------------------------------------
// Append input and results

/** One record to append. Strings are encoded as UTF-8. */
export interface AppendRecord {
  /** null: a record without key (refused on a compacted topic). */
  key: Uint8Array | string | null;
  /** null: a tombstone. */
  value: Uint8Array | string | null;
  headers?: { key: string; value: Uint8Array | string | null }[];
  /** CreateTime timestamp in ms (−1 = none); default: the append's `timestamp` option, else now. */
  timestamp?: bigint | number;
}

/** Options of one append (one batch). */
export interface AppendOptions {
  /** Timestamp (ms) of records that carry none; default: the writer's clock (now). */
  timestamp?: bigint | number;
  /** Codec of the batch (default none). The topic keeps the producer's codec (`compression.type=producer`). */
  compression?: Compression;
  /**
   * Idempotent producer fields; without `producerId` all are −1 (no producer). With it, the batch is
   * checked against the partition's producer state as a leader checks a client's batch
   * (`ProducerAppendInfo`: epoch fencing, sequence order, duplicates); `producerEpoch` defaults to the
   * producer's current epoch (0 for a new producer), `baseSequence` to the next expected sequence.
   */
  producerId?: bigint;
  producerEpoch?: number;
  baseSequence?: number;
  /** A transactional batch (attribute bit 4; needs `producerId`): opens the producer's transaction when none is open. */
  isTransactional?: boolean;
  /**
   * The leader epoch to stamp (default: the current one). A higher epoch starts a new
   * `leader-epoch-checkpoint` entry at the log end offset, as a broker does when it becomes leader with that epoch
   * (Partition.makeLeader → UnifiedLog.maybeAssignEpochStartOffset at its log end offset; UnifiedLog.append assigns
   * a batch's epoch too); a lower one is refused.
   */
  leaderEpoch?: number;
  /**
   * Write a CreateTime outside [now − message.timestamp.before.max.ms, now + message.timestamp.after.max.ms], which a
   * broker refuses (LogValidator.validateTimestamp); the plan's `brokerRefusal` then says which brokers refuse it.
   * Default false: such a batch is refused as a Kafka 4.0 broker refuses it.
   */
  allowTimestampOutOfRange?: boolean;
}

/** A transaction marker to append (what the transaction coordinator sends with WriteTxnMarkers). */
export interface MarkerOptions {
  type: 'COMMIT' | 'ABORT';
  producerId: bigint;
  producerEpoch: number;
  /** Coordinator epoch in the marker value (default 0). */
  coordinatorEpoch?: number;
  /** Marker record timestamp (ms; default now). */
  timestamp?: bigint | number;
  /** See {@link AppendOptions.leaderEpoch}. */
  leaderEpoch?: number;
}

/** The producer fields of an appended batch and what it did to the producer's transaction. */
export interface AppendProducerInfo {
  producerId: bigint;
  producerEpoch: number;
  /** −1 for a marker. */
  baseSequence: number;
  isTransactional: boolean;
  /** First offset of the producer's transaction after this batch (−1: none open). */
  transactionFirstOffset: bigint;
  /** For a marker: the transaction it ends (null for a producer with no open transaction: an empty transaction). */
  completedTransaction: { firstOffset: bigint; lastOffset: bigint; aborted: boolean } | null;
  /** For an ABORT of a non-empty transaction: the `.txnindex` entry written (`lastStableOffset` per `ProducerStateManager.lastStableOffset`). */
  txnIndexEntry: { producerId: bigint; firstOffset: bigint; lastOffset: bigint; lastStableOffset: bigint } | null;
}

/** What an append does (plan) or did (result). Offsets are absolute, sizes and positions in bytes. */
export interface AppendPlan {
  /** First offset of the batch (= the LEO before the append). */
  baseOffset: bigint;
  /** Last offset of the batch. */
  lastOffset: bigint;
  recordCount: number;
  /** Byte position of the batch in its segment's `.log`. */
  position: number;
  /** Batch size in bytes (12 + batchLength). */
  size: number;
  /** Base offset of the segment that receives the batch. */
  segmentBaseOffset: bigint;
  /** That segment's `.log` file (absolute path). */
  segmentFile: string;
  /** True when the active segment is rolled first. */
  rolled: boolean;
  rollReason: RollReason | null;
  timestampType: 'CreateTime' | 'LogAppendTime';
  /** Batch maxTimestamp (ms): the largest record timestamp (CreateTime) or the append time (LogAppendTime). */
  maxTimestamp: bigint;
  compression: Compression;
  /** partitionLeaderEpoch stamped on the batch. */
  partitionLeaderEpoch: number;
  /** True when an offset-index entry `(lastOffset, position)` is added. */
  indexEntry: boolean;
  /** The `leader-epoch-checkpoint` entry added, if a new epoch starts with this batch. */
  leaderEpochEntry: LeaderEpochEntry | null;
  /** True when the log dir's `.kafka_cleanshutdown` is removed before writing. */
  removesCleanShutdownMarker: boolean;
  /** LEO after the append. */
  logEndOffset: bigint;
  /** Producer fields (null for a batch without producer id). */
  producer: AppendProducerInfo | null;
  /** For a control batch: the marker type and coordinator epoch. */
  marker: { type: 'COMMIT' | 'ABORT'; coordinatorEpoch: number } | null;
  /** When the append rolls: the producer snapshot written at the new segment's base offset (as `UnifiedLog.roll` does). */
  producerSnapshot: ProducerSnapshotInfo | null;
  /**
   * Set only when `allowTimestampOutOfRange` let through a CreateTime a broker refuses: which brokers refuse
   * the batch and why (LogValidator.validateTimestamp); null otherwise.
   */
  brokerRefusal: string | null;
}

/** A producer snapshot written at a roll (`ProducerStateManager.takeSnapshot`). */
export interface ProducerSnapshotInfo {
  file: string;
  offset: bigint;
  producers: number;
}

/** An append ready to write: its plan, its bytes and the producer state after it. */
interface PreparedAppend {
  plan: AppendPlan;
  batch: Buffer;
  producerEntry: ProducerEntry | null;
}

/** The result of an acknowledged append (everything fsynced). */
export type AppendResult = AppendPlan;

/** What a roll does (plan) or did (result). */
export interface RollResult {
  /** False when nothing was rolled (the active segment is empty: a broker would recreate the same segment, LocalLog.roll). */
  rolled: boolean;
  reason: RollReason | null;
  /** Why nothing was rolled, when `rolled` is false. */
  note?: string;
  /** Base offset of the segment that was active before. */
  previousSegmentBaseOffset: bigint | null;
  /** Base offset of the new active segment (= LEO). */
  segmentBaseOffset: bigint;
  segmentFile: string;
  /** The final time-index entry of the previous segment (its largest timestamp and the offset holding it), if it has timestamps. */
  finalTimeIndexEntry: { timestamp: bigint; offset: bigint } | null;
  logEndOffset: bigint;
  removesCleanShutdownMarker: boolean;
  /** The producer snapshot written at the new segment's base offset (null when one already exists there or nothing rolls). */
  producerSnapshot: ProducerSnapshotInfo | null;
}

// ---------------------------------------------------------------------------------------------
// The writer

/** Options of {@link PartitionWriter.open}. */
export interface PartitionWriterOptions {
  /** Config overrides (on top of the sidecar and inference); not persisted. */
  config?: Partial<TopicConfig>;
  /** Fault-injection hook (tests). */
  fault?: WriterFaultHook;
  /** Wall clock in ms (default `Date.now`): LogAppendTime, default record timestamps, the roll fallback. */
  clock?: () => bigint;
  /** Random source in [0, 1) for the segment jitter (default `Math.random`). */
  random?: () => number;
  /** Open without taking the lock; only plans are allowed (`append`/`roll` throw `read-only`). */
  readOnly?: boolean;
  /** Written into the lock file, e.g. `klx append`. */
  purpose?: string;
}

interface OpenFiles {
  log: number;
  index: number;
  timeindex: number;
}

/**
 * A partition opened for writing. One per partition at a time (see `log-lock.ts`); always
 * {@link close} it. Every public method is synchronous. See the module comment for the invariants.
 */
export class PartitionWriter {
  readonly dir: string;
  readonly logDir: string;
  readonly topic: string;
  readonly partition: number;
  /** Effective topic config with sources. */
  readonly config: ResolvedTopicConfig;
  /** The lock this writer holds (null in read-only mode), with `tookOverFrom` when a stale lock was taken over. */
  readonly lock: LockHandle | null;
  /** Recovery point found when opening (null: none for this partition). */
  readonly recoveryPointAtOpen: bigint | null;

  private readonly opts: PartitionWriterOptions;
  private readonly stepper: Stepper;
  private readonly clock: () => bigint;
  private readonly random: () => number;
  private active: ActiveSegmentState | null;
  private files: OpenFiles | null = null;
  private leo: bigint;
  private epochs: LeaderEpochEntry[];
  private currentEpoch: number;
  private cleanShutdownPresent: boolean;
  private failed: unknown = null;
  private tracker: ProducerStateTracker | null = null;
  private closed = false;

  private constructor(init: {
    dir: string;
    topic: string;
    partition: number;
    config: ResolvedTopicConfig;
    lock: LockHandle | null;
    active: ActiveSegmentState | null;
    leo: bigint;
    epochs: LeaderEpochEntry[];
    currentEpoch: number;
    cleanShutdownPresent: boolean;
    recoveryPoint: bigint | null;
    opts: PartitionWriterOptions;
  }) {
    this.dir = init.dir;
    this.logDir = dirname(init.dir);
    this.topic = init.topic;
    this.partition = init.partition;
    this.config = init.config;
    this.lock = init.lock;
    this.active = init.active;
    this.leo = init.leo;
    this.epochs = init.epochs;
    this.currentEpoch = init.currentEpoch;
    this.cleanShutdownPresent = init.cleanShutdownPresent;
    this.recoveryPointAtOpen = init.recoveryPoint;
    this.opts = init.opts;
    this.stepper = new Stepper(init.opts.fault);
    this.clock = init.opts.clock ?? NOW;
    this.random = init.opts.random ?? Math.random;
  }

  /**
   * Opens a partition folder for writing: takes its writer lock (unless `readOnly`), then checks the
   * folder is clean enough to append to (see the module comment) and loads the active segment's state.
   * Reads only: nothing is written until the first append or roll.
   * @throws KlxError `locked` (naming the holder) when another writer has the partition;
   *   `not-found`; `not-a-log-dir` when the folder is not named `<topic>-<partition>`;
   *   `invalid-argument` for a `-delete`/`-future`/`-stray` folder or `__cluster_metadata`;
   *   `invalid-config` for a bad sidecar; and, with `details.needsRepair: true` and a message
   *   pointing at `klx repair`: `invalid-tail` / `corrupt-region` / `crc-mismatch` /
   *   `truncated-batch`... (damaged data, naming the `.log` and byte position), `corrupt-index`
   *   (preallocated, stale, missing or inconsistent active-segment index), `corrupt-checkpoint`,
   *   `invalid-argument` (leftover `.deleted`/`.cleaned`/`.swap` files, orphan indexes).
   */
  static open(dir: string, opts: PartitionWriterOptions = {}): PartitionWriter {
    const abs = resolve(dir);
    const parsed = parsePartitionDirName(basename(abs));
    if (!existsSync(abs)) throw new KlxError('not-found', 'no such partition folder', { file: dir });
    if (!parsed) throw new KlxError('not-a-log-dir', `folder name "${basename(abs)}" is not <topic>-<partition>`, { file: dir });
    if (parsed.kind !== 'normal') throw new KlxError('invalid-argument', `this is a -${parsed.kind} folder, which a broker does not serve; refusing to write to it`, { file: dir });
    if (parsed.topic === '__cluster_metadata') throw new KlxError('invalid-argument', '__cluster_metadata is the KRaft metadata log, which only a controller writes', { file: dir });
    const lock = opts.readOnly ? null : acquireLock(join(abs, WRITER_LOCK_FILE), { purpose: opts.purpose ?? 'klx partition writer', what: `partition ${parsed.topic}-${parsed.partition}` });
    try {
      const log = PartitionLog.open(abs, opts.config ? { config: opts.config } : {});
      const clock = opts.clock ?? NOW;
      const inspected = inspectForWriting(log, clock(), opts.random ?? Math.random);
      return new PartitionWriter({
        dir: abs,
        topic: parsed.topic,
        partition: parsed.partition,
        config: log.config,
        lock,
        active: inspected.active,
        leo: inspected.logEndOffset,
        epochs: [...log.leaderEpochs],
        currentEpoch: inspected.currentEpoch,
        cleanShutdownPresent: log.checkpoints.cleanShutdown,
        recoveryPoint: log.recoveryPoint,
        opts,
      });
    } catch (err) {
      lock?.release();
      throw err;
    }
  }

  /** The offset the next appended record gets. */
  get logEndOffset(): bigint {
    return this.leo;
  }

  /** Base offset of the active segment (null only for a folder without segments; the first append creates one). */
  get activeSegmentBaseOffset(): bigint | null {
    return this.active?.baseOffset ?? null;
  }

  /** Bytes of the active segment's `.log`. */
  get activeSegmentSize(): number {
    return this.active?.size ?? 0;
  }

  /** The leader epoch stamped on appended batches. */
  get leaderEpoch(): number {
    return this.currentEpoch;
  }

  /** Whether {@link close} was called. */
  get isClosed(): boolean {
    return this.closed;
  }

  /** The lock holder a stale lock was taken over from, if any. */
  get tookOverFrom(): LockHolder | undefined {
    return this.lock?.tookOverFrom;
  }

  /**
   * What {@link append} would do with these records, without touching anything. Runs the same
   * validation, so it throws the same errors.
   * @throws KlxError `invalid-record` (keyless record on a compacted topic: "Compacted topic cannot
   *   accept message without key…", case B07; a batch above `max.message.bytes` or `segment.bytes`;
   *   a timestamp below −1; a null header key), `invalid-argument` (no records, bad producer fields,
   *   unknown codec), `read-only` when the writer was closed.
   */
  planAppend(records: readonly AppendRecord[], opts: AppendOptions = {}): AppendPlan {
    this.ensureOpen(false);
    return this.prepareAppend(records, opts).plan;
  }

  /**
   * Appends `records` as one v2 batch, exactly as a broker writes a producer batch: offsets from the
   * LEO, partitionLeaderEpoch = current epoch, CRC-32C, baseTimestamp = first record's timestamp,
   * maxTimestamp = the largest (or the append time and attribute bit 3 for LogAppendTime topics).
   * Rolls first when the roll rule says so. Returns once the `.log` and indexes are fsynced and the
   * checkpoints updated.
   * @returns what was written (see {@link AppendPlan}).
   * @throws see {@link planAppend}; KlxError `read-only` in read-only mode, `io-error` for
   *   file-system failures (the writer is then unusable: close it and reopen), `locked` when the
   *   checkpoint lock stays held; what the fault hook throws.
   */
  append(records: readonly AppendRecord[], opts: AppendOptions = {}): AppendResult {
    this.ensureOpen(true);
    return this.commit(this.prepareAppend(records, opts));
  }

  /**
   * What {@link appendMarker} would do, without touching anything. Runs the same checks.
   * @throws see {@link appendMarker}.
   */
  planMarker(opts: MarkerOptions): AppendPlan {
    this.ensureOpen(false);
    return this.prepareMarker(opts).plan;
  }

  /**
   * Appends a transaction marker: a control batch (attributes transactional + control, producer id
   * and epoch, baseSequence −1, no compression) holding one control record, key `(version 0, type
   * ABORT=0 | COMMIT=1)` and value `(version 0, coordinatorEpoch)`, as the transaction coordinator
   * has a leader write it (`MemoryRecords.withEndTransactionMarker`). The producer's open
   * transaction ends; an ABORT of a non-empty transaction adds its entry to the active segment's
   * `.txnindex` (`UnifiedLog.append` → `LogSegment.updateTxnIndex`), an empty one adds none.
   * @throws KlxError `invalid-record` (older producer epoch: InvalidProducerEpochException; older
   *   coordinator epoch: TransactionCoordinatorFencedException), `invalid-argument` (bad fields, a
   *   lower leader epoch), plus what {@link append} throws.
   */
  appendMarker(opts: MarkerOptions): AppendResult {
    this.ensureOpen(true);
    return this.commit(this.prepareMarker(opts));
  }

  private commit(p: PreparedAppend): AppendResult {
    const { plan, batch } = p;
    this.guarded(() => {
      this.beginWrite();
      if (plan.leaderEpochEntry) this.writeLeaderEpoch(plan.leaderEpochEntry);
      if (plan.rolled || this.active === null) this.rollSegment(plan.producerSnapshot);
      this.appendBatch(batch, plan);
      if (plan.producer?.txnIndexEntry) this.appendTxnIndex(plan.producer.txnIndexEntry);
      this.currentEpoch = plan.partitionLeaderEpoch;
      this.updateCheckpoints();
    });
    if (p.producerEntry) this.producerState().apply(p.producerEntry, plan.logEndOffset);
    else if (this.producerStateLoaded) this.producerState().mapEndOffset = plan.logEndOffset;
    return plan;
  }

  /** What {@link roll} would do, without touching anything. */
  planRoll(): RollResult {
    this.ensureOpen(false);
    const a = this.active;
    const base = this.leo;
    if (a && a.size === 0) {
      return {
        rolled: false,
        reason: null,
        note: `the active segment ${segmentFileName(a.baseOffset, '.log')} is empty; rolling would create the same segment again`,
        previousSegmentBaseOffset: a.baseOffset,
        segmentBaseOffset: a.baseOffset,
        segmentFile: a.logPath,
        finalTimeIndexEntry: null,
        logEndOffset: this.leo,
        removesCleanShutdownMarker: false,
        producerSnapshot: null,
      };
    }
    return {
      rolled: true,
      reason: 'explicit',
      previousSegmentBaseOffset: a?.baseOffset ?? null,
      segmentBaseOffset: base,
      segmentFile: join(this.dir, segmentFileName(base, '.log')),
      finalTimeIndexEntry: a && a.maxTimestamp >= 0n ? { timestamp: a.maxTimestamp, offset: a.offsetOfMaxTimestamp } : null,
      logEndOffset: this.leo,
      removesCleanShutdownMarker: this.cleanShutdownPresent,
      producerSnapshot: a ? this.plannedSnapshot(base) : null,
    };
  }

  /** The snapshot a roll to `base` writes: only when no snapshot is at or above it (`takeSnapshot`: `lastMapOffset > lastSnapOffset`). */
  private plannedSnapshot(base: bigint): ProducerSnapshotInfo | null {
    const st = this.producerState();
    if (base <= st.lastSnapshotOffset) return null;
    return { file: join(this.dir, segmentFileName(base, '.snapshot')), offset: base, producers: st.producers.size };
  }

  /** The partition's producer state, loaded on first use (appends with a producer id, markers, rolls). */
  private producerState(): ProducerStateTracker {
    if (!this.tracker) {
      this.tracker = ProducerStateTracker.load(PartitionLog.open(this.dir, this.opts.config ? { config: this.opts.config } : {}), this.leo, this.clock());
    }
    return this.tracker;
  }

  private get producerStateLoaded(): boolean {
    return this.tracker !== null;
  }

  /**
   * Rolls the active segment now (Kafka `UnifiedLog.roll`): the old segment gets its final
   * time-index entry and trimmed, fsynced indexes and `.log`; a new empty segment named after the LEO
   * becomes active. Does nothing when the active segment is empty (a broker would recreate it: LocalLog.roll).
   * @throws KlxError `read-only`, `io-error`; what the fault hook throws.
   */
  roll(): RollResult {
    this.ensureOpen(true);
    const plan = this.planRoll();
    if (!plan.rolled) return plan;
    this.guarded(() => {
      this.beginWrite();
      this.rollSegment(plan.producerSnapshot);
      this.updateCheckpoints();
    });
    return plan;
  }

  /**
   * Closes the files and releases the lock. Writes nothing: after every acknowledged write the folder
   * is already in its closed state. Safe to call twice, and after a failed write.
   */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.closeFiles();
    this.lock?.release();
  }

  // -------------------------------------------------------------------------------------------

  private ensureOpen(write: boolean): void {
    if (this.closed) throw new KlxError('read-only', 'this partition writer is closed', { file: this.dir });
    if (this.failed) throw new KlxError('io-error', `an earlier write failed (${(this.failed as Error).message}); the files are as a crash would leave them: close this writer and reopen the folder`, { file: this.dir });
    if (write && this.opts.readOnly) throw new KlxError('read-only', 'the partition was opened read-only (plans only)', { file: this.dir });
  }

  private step(s: WriterStep, file: string): void {
    this.stepper.step(s, file);
  }

  private guarded(fn: () => void): void {
    try {
      fn();
    } catch (err) {
      this.failed = err;
      this.closeFiles();
      throw this.stepper.wrap(err, this.dir, 'write failed');
    }
  }

  private closeFiles(): void {
    if (!this.files) return;
    for (const fd of [this.files.log, this.files.index, this.files.timeindex]) {
      try {
        closeSync(fd);
      } catch {
        /* already closed */
      }
    }
    this.files = null;
  }

  private prepareAppend(records: readonly AppendRecord[], opts: AppendOptions): PreparedAppend {
    const cfg = this.config.config;
    const tp = `${this.topic}-${this.partition}`;
    if (!Array.isArray(records) || records.length === 0) throw new KlxError('invalid-argument', 'an append needs at least one record');
    const compression = opts.compression ?? 'none';
    if (!(COMPRESSIONS as readonly string[]).includes(compression)) throw new KlxError('invalid-argument', `unknown compression "${compression}"; use one of ${COMPRESSIONS.join(', ')}`);
    const now = this.clock();
    const defaultTs = opts.timestamp !== undefined ? BigInt(opts.timestamp) : now;
    const compacted = cfg['cleanup.policy'].includes('compact');
    const specs: RecordSpec[] = records.map((r, i) => {
      if (r === null || typeof r !== 'object') throw new KlxError('invalid-argument', `record ${i} is not an object`);
      if (compacted && (r.key === null || r.key === undefined)) {
        throw new KlxError('invalid-record', `Compacted topic cannot accept message without key in topic partition ${tp} (record ${i}; cleanup.policy=${cfg['cleanup.policy'].join(',')})`, {
          details: { recordIndex: i, cleanupPolicy: cfg['cleanup.policy'].join(',') },
        });
      }
      const ts = r.timestamp !== undefined ? BigInt(r.timestamp) : defaultTs;
      if (ts < -1n) throw new KlxError('invalid-record', `record ${i} has timestamp ${ts}; a timestamp is ≥ 0 ms, or −1 for none`);
      for (const h of r.headers ?? []) {
        if (typeof h?.key !== 'string') throw new KlxError('invalid-record', `record ${i} has a header without a key (header keys are non-null strings)`);
      }
      return { key: r.key ?? null, value: r.value === undefined ? null : r.value, timestamp: ts, ...(r.headers ? { headers: r.headers } : {}) };
    });
    let producerId = -1n;
    let producerEpoch = -1;
    let baseSequence = -1;
    const isTransactional = Boolean(opts.isTransactional);
    if (opts.producerId !== undefined) {
      producerId = BigInt(opts.producerId);
      if (producerId < 0n || producerId > INT64_MAX) throw new KlxError('invalid-argument', `producerId ${producerId} must be 0 or more`);
      const st = this.producerState();
      const known = st.epochOf(producerId);
      producerEpoch = opts.producerEpoch ?? (known >= 0 ? known : 0);
      if (!Number.isInteger(producerEpoch) || producerEpoch < 0 || producerEpoch > 32767) throw new KlxError('invalid-argument', `producerEpoch ${producerEpoch} must be 0..32767`);
      baseSequence = opts.baseSequence ?? st.nextSequence(producerId, producerEpoch);
      if (!Number.isInteger(baseSequence) || baseSequence < 0 || baseSequence > INT32_MAX) throw new KlxError('invalid-argument', `baseSequence ${baseSequence} must be 0..2147483647`);
    } else if (opts.producerEpoch !== undefined || opts.baseSequence !== undefined || isTransactional) {
      throw new KlxError('invalid-argument', 'producerEpoch, baseSequence and isTransactional need a producerId');
    }
    const refusal = timestampRefusal(specs, now, this.config, this.leo, tp);
    if (refusal && !opts.allowTimestampOutOfRange) {
      throw new KlxError('invalid-record', `${refusal.text}; pass --allow-timestamp-out-of-range (klx append) to write it anyway`, { details: refusal.details });
    }
    const p = this.prepareBatch({ records: specs, compression, producerId, producerEpoch, baseSequence, isTransactional, isControl: false }, opts.leaderEpoch, now);
    if (refusal) p.plan.brokerRefusal = refusal.text;
    if (producerId >= 0n) {
      const entry = this.producerState().checkData(tp, { producerId, producerEpoch, baseSequence, baseOffset: p.plan.baseOffset, lastOffset: p.plan.lastOffset, maxTimestamp: p.plan.maxTimestamp, isTransactional });
      p.producerEntry = entry;
      p.plan.producer = { producerId, producerEpoch, baseSequence, isTransactional, transactionFirstOffset: entry.currentTxnFirstOffset, completedTransaction: null, txnIndexEntry: null };
    }
    return p;
  }

  private prepareMarker(opts: MarkerOptions): PreparedAppend {
    const tp = `${this.topic}-${this.partition}`;
    if (opts.type !== 'COMMIT' && opts.type !== 'ABORT') throw new KlxError('invalid-argument', `marker type must be COMMIT or ABORT, got ${String(opts.type)}`);
    const producerId = BigInt(opts.producerId);
    if (producerId < 0n || producerId > INT64_MAX) throw new KlxError('invalid-argument', `producerId ${producerId} must be 0 or more`);
    const producerEpoch = opts.producerEpoch;
    if (!Number.isInteger(producerEpoch) || producerEpoch < 0 || producerEpoch > 32767) throw new KlxError('invalid-argument', `producerEpoch ${producerEpoch} must be 0..32767`);
    const coordinatorEpoch = opts.coordinatorEpoch ?? 0;
    if (!Number.isInteger(coordinatorEpoch) || coordinatorEpoch < 0 || coordinatorEpoch > INT32_MAX) throw new KlxError('invalid-argument', `coordinatorEpoch ${coordinatorEpoch} must be 0..2147483647`);
    const now = this.clock();
    const ts = opts.timestamp !== undefined ? BigInt(opts.timestamp) : now;
    if (ts < -1n) throw new KlxError('invalid-record', `marker timestamp ${ts}; a timestamp is ≥ 0 ms, or −1 for none`);
    const typeId = opts.type === 'ABORT' ? CONTROL_ABORT : CONTROL_COMMIT;
    const record: RecordSpec = { key: encodeControlKey(typeId), value: encodeEndTxnMarkerValue(coordinatorEpoch), timestamp: ts };
    const p = this.prepareBatch({ records: [record], compression: 'none', producerId, producerEpoch, baseSequence: -1, isTransactional: true, isControl: true }, opts.leaderEpoch, now);
    const st = this.producerState();
    const markerTs = p.plan.timestampType === 'LogAppendTime' ? p.plan.maxTimestamp : ts;
    const { entry, completed } = st.checkMarker(tp, { producerId, producerEpoch, coordinatorEpoch, type: opts.type, offset: p.plan.baseOffset, timestamp: markerTs });
    p.producerEntry = entry;
    p.plan.marker = { type: opts.type, coordinatorEpoch };
    p.plan.producer = {
      producerId,
      producerEpoch,
      baseSequence: -1,
      isTransactional: true,
      transactionFirstOffset: -1n,
      completedTransaction: completed ? { firstOffset: completed.firstOffset, lastOffset: completed.lastOffset, aborted: completed.isAborted } : null,
      txnIndexEntry: completed && completed.isAborted ? { producerId, firstOffset: completed.firstOffset, lastOffset: completed.lastOffset, lastStableOffset: st.lastStableOffset(completed) } : null,
    };
    return p;
  }

  /** The leader epoch to stamp: the current one, or a higher one given by the caller. */
  private leaderEpochFor(requested: number | undefined): number {
    if (requested === undefined) return this.currentEpoch;
    if (!Number.isInteger(requested) || requested < 0 || requested > INT32_MAX) throw new KlxError('invalid-argument', `leader epoch ${requested} must be 0..2147483647`);
    if (requested < this.currentEpoch) {
      // A leader appends with its own epoch (UnifiedLog.appendAsLeader); a new leader's epoch is higher (LeaderEpochFileCache.assign).
      throw new KlxError('invalid-argument', `leader epoch ${requested} is below the partition's current leader epoch ${this.currentEpoch}: a leader stamps its own epoch, and epochs only grow (leader-epoch-checkpoint)`);
    }
    return requested;
  }

  /** Encodes one batch at the LEO and plans where it goes (size limits, roll rule, index entry, leader epoch). */
  private prepareBatch(
    b: { records: RecordSpec[]; compression: Compression; producerId: bigint; producerEpoch: number; baseSequence: number; isTransactional: boolean; isControl: boolean },
    requestedEpoch: number | undefined,
    now: bigint,
  ): PreparedAppend {
    const cfg = this.config.config;
    const tp = `${this.topic}-${this.partition}`;
    const epoch = this.leaderEpochFor(requestedEpoch);
    const timestampType = cfg['message.timestamp.type'];
    const baseOffset = this.leo;
    const specs = b.records;
    if (baseOffset + BigInt(specs.length) - 1n > INT64_MAX) throw new KlxError('invalid-argument', 'offsets would exceed 2^63−1');
    const compression = b.compression;
    const batch = encodeBatch({
      baseOffset,
      records: specs,
      partitionLeaderEpoch: epoch,
      compression,
      timestampType,
      ...(timestampType === 'LogAppendTime' ? { maxTimestamp: now } : {}),
      producerId: b.producerId,
      producerEpoch: b.producerEpoch,
      baseSequence: b.baseSequence,
      isTransactional: b.isTransactional,
      isControl: b.isControl,
    });
    const size = batch.length;
    if (size > cfg['max.message.bytes']) {
      throw new KlxError('invalid-record', `The record batch size in the append to ${tp} is ${size} bytes which exceeds the maximum configured value of ${cfg['max.message.bytes']} (max.message.bytes)`, {
        details: { batchSize: size, maxMessageBytes: cfg['max.message.bytes'] },
      });
    }
    if (size > cfg['segment.bytes']) {
      throw new KlxError('invalid-record', `Message batch size is ${size} bytes in append to partition ${tp} which exceeds the maximum configured segment size of ${cfg['segment.bytes']} (segment.bytes)`, {
        details: { batchSize: size, segmentBytes: cfg['segment.bytes'] },
      });
    }
    const maxTimestamp = batch.readBigInt64BE(35);
    const lastOffset = baseOffset + BigInt(specs.length - 1);
    const a = this.active;
    let rollReason: RollReason | null = null;
    if (a) {
      rollReason = decideRoll(this.rollState(a), { size, maxTimestamp, lastOffset }, cfg, now);
      // Rolling an empty segment would recreate it under the same name (Kafka KAFKA-6388): append to it instead.
      if (rollReason && a.size === 0 && a.baseOffset === baseOffset) rollReason = null;
    }
    const rolled = rollReason !== null || a === null;
    const segBase = rolled ? baseOffset : a!.baseOffset;
    const position = rolled ? 0 : a!.size;
    // §9.1: entry when the bytes since the last entry exceed index.interval.bytes before this append.
    const bytesSince = rolled ? 0 : a!.bytesSinceLastIndexEntry;
    const indexEntry = bytesSince > cfg['index.interval.bytes'];
    const latest = this.epochs.length ? this.epochs[this.epochs.length - 1]! : null;
    const leaderEpochEntry = latest === null || epoch > latest.epoch ? { epoch, startOffset: baseOffset } : null;
    const plan: AppendPlan = {
      baseOffset,
      lastOffset,
      recordCount: specs.length,
      position,
      size,
      segmentBaseOffset: segBase,
      segmentFile: join(this.dir, segmentFileName(segBase, '.log')),
      rolled,
      rollReason: a === null ? null : rollReason,
      timestampType,
      maxTimestamp,
      compression,
      partitionLeaderEpoch: epoch,
      indexEntry,
      leaderEpochEntry,
      removesCleanShutdownMarker: this.cleanShutdownPresent,
      logEndOffset: lastOffset + 1n,
      producer: null,
      marker: null,
      producerSnapshot: rolled && a !== null && a.baseOffset !== segBase ? this.plannedSnapshot(segBase) : null,
      brokerRefusal: null,
    };
    return { plan, batch, producerEntry: null };
  }

  private rollState(a: ActiveSegmentState): RollSegmentState {
    return {
      baseOffset: a.baseOffset,
      size: a.size,
      firstBatchMaxTimestamp: a.firstBatchMaxTimestamp,
      createdMs: a.createdMs,
      jitterMs: a.jitterMs,
      offsetIndexEntries: a.offsetIndexEntries,
      timeIndexEntries: a.timeRegularEntries,
    };
  }

  /** Steps shared by every write: drop the clean-shutdown marker (a broker does it at startup: LogManager.loadLogs, KAFKA-10471). */
  private beginWrite(): void {
    if (this.cleanShutdownPresent) {
      const marker = join(this.logDir, CLEAN_SHUTDOWN_FILE);
      this.step('remove-clean-shutdown', marker);
      try {
        unlinkSync(marker);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw ioError(err, marker, 'cannot remove the clean-shutdown marker');
      }
      fsyncDirectory(this.logDir);
      this.cleanShutdownPresent = false;
    }
  }

  private writeLeaderEpoch(entry: LeaderEpochEntry): void {
    const path = join(this.dir, LEADER_EPOCH_CHECKPOINT_FILE);
    this.step('leader-epoch', path);
    const next = [...this.epochs, entry];
    writeLeaderEpochCheckpoint(path, next, { fault: this.stepper.sub('leader-epoch') });
    this.epochs = next;
  }

  private openFiles(a: ActiveSegmentState): OpenFiles {
    if (this.files) return this.files;
    if (!a.indexFilesExist) {
      this.step('create-index-files', a.indexPath);
      for (const p of [a.indexPath, a.timeIndexPath]) if (!existsSync(p)) createEmptyFile(p);
      fsyncDirectory(this.dir);
      a.indexFilesExist = true;
    }
    const log = openSync(a.logPath, 'r+');
    let index = -1;
    try {
      index = openSync(a.indexPath, 'r+');
      const timeindex = openSync(a.timeIndexPath, 'r+');
      this.files = { log, index, timeindex };
    } catch (err) {
      closeSync(log);
      if (index >= 0) closeSync(index);
      throw err;
    }
    return this.files;
  }

  /**
   * Finishes the active segment (final time-index entry, trimmed and fsynced indexes and `.log`) and
   * creates a new empty one at the LEO (Kafka `LocalLog.roll` + `LogSegment.onBecomeInactiveSegment`).
   */
  private rollSegment(snapshot: ProducerSnapshotInfo | null): void {
    const old = this.active;
    if (old && old.size > 0) {
      this.step('roll-trim-index', old.timeIndexPath);
      const f = this.openFiles(old);
      this.writeTimeIndexTail(f, old, null, true);
      ftruncateSync(f.index, old.offsetIndexEntries * OFFSET_INDEX_ENTRY_SIZE);
      fsyncSync(f.log);
      fsyncSync(f.index);
      fsyncSync(f.timeindex);
    }
    this.closeFiles();
    const base = this.leo;
    const name = segmentFileName(base, '');
    const next: ActiveSegmentState = {
      baseOffset: base,
      logPath: join(this.dir, `${name}.log`),
      indexPath: join(this.dir, `${name}.index`),
      timeIndexPath: join(this.dir, `${name}.timeindex`),
      size: 0,
      indexFilesExist: true,
      firstBatchMaxTimestamp: null,
      createdMs: this.clock(),
      jitterMs: segmentJitter(this.config.config, this.random),
      offsetIndexEntries: 0,
      bytesSinceLastIndexEntry: 0,
      timeRegularEntries: 0,
      lastRegularTimestamp: -1n,
      timeFinal: null,
      maxTimestamp: -1n,
      offsetOfMaxTimestamp: -1n,
    };
    if (old && old.baseOffset === base) {
      // Only when the active segment is empty; nothing to create.
      return;
    }
    this.step('roll-create-segment', next.logPath);
    // The .log first: a crash after it leaves an empty active segment, which opens fine without indexes.
    createEmptyFile(next.logPath);
    createEmptyFile(next.indexPath);
    createEmptyFile(next.timeIndexPath);
    this.step('roll-fsync-dir', this.dir);
    fsyncDirectory(this.dir);
    this.active = next;
    if (snapshot) {
      // UnifiedLog.roll: updateMapEndOffset(newSegment.baseOffset), then takeSnapshot.
      const st = this.producerState();
      this.step('producer-snapshot', snapshot.file);
      writeProducerSnapshot(snapshot.file, st.snapshotEntries(), { fault: this.stepper.sub('producer-snapshot') });
      st.mapEndOffset = snapshot.offset;
      st.lastSnapshotOffset = snapshot.offset;
    }
  }

  /** Appends an aborted transaction to the active segment's `.txnindex` (`LogSegment.updateTxnIndex`), creating the file on first use. */
  private appendTxnIndex(e: { producerId: bigint; firstOffset: bigint; lastOffset: bigint; lastStableOffset: bigint }): void {
    const a = this.active!;
    const path = join(this.dir, segmentFileName(a.baseOffset, '.txnindex'));
    this.step('write-txnindex', path);
    const created = !existsSync(path);
    const fd = openSync(path, 'a');
    try {
      writeSync(fd, encodeTxnIndex(a.baseOffset, [e]));
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    if (created) fsyncDirectory(this.dir);
  }

  /**
   * Rewrites the tail of the time index after its regular entries: `[newRegular?][final?]`, where the
   * final entry is `(maxTimestamp, offsetOfMax)` when it is above the last regular entry. Writes only
   * when the bytes change.
   */
  private writeTimeIndexTail(f: OpenFiles, a: ActiveSegmentState, newRegular: { timestamp: bigint; offset: bigint } | null, trimOnly = false): boolean {
    const lastRegularTs = newRegular ? newRegular.timestamp : a.lastRegularTimestamp;
    const final = a.maxTimestamp > lastRegularTs ? { timestamp: a.maxTimestamp, offset: a.offsetOfMaxTimestamp } : null;
    const tail = [...(newRegular ? [newRegular] : []), ...(final ? [final] : [])];
    const same = newRegular === null && ((final === null && a.timeFinal === null) || (final !== null && a.timeFinal !== null && final.timestamp === a.timeFinal.timestamp && final.offset === a.timeFinal.offset));
    const start = a.timeRegularEntries * TIME_INDEX_ENTRY_SIZE;
    if (!same) {
      if (!trimOnly) this.step('write-timeindex', a.timeIndexPath);
      const buf = Buffer.alloc(tail.length * TIME_INDEX_ENTRY_SIZE);
      tail.forEach((e, i) => {
        buf.writeBigInt64BE(e.timestamp, i * TIME_INDEX_ENTRY_SIZE);
        buf.writeInt32BE(Number(e.offset - a.baseOffset), i * TIME_INDEX_ENTRY_SIZE + 8);
      });
      writeAt(f.timeindex, buf, start);
    }
    ftruncateSync(f.timeindex, start + tail.length * TIME_INDEX_ENTRY_SIZE);
    if (newRegular) {
      a.timeRegularEntries++;
      a.lastRegularTimestamp = newRegular.timestamp;
    }
    a.timeFinal = final;
    return !same;
  }

  /** Writes one batch into the active segment with its index entries (Kafka `LogSegment.append`). */
  private appendBatch(batch: Buffer, plan: AppendPlan): void {
    const a = this.active!;
    const f = this.openFiles(a);
    this.step('write-log', a.logPath);
    const onDisk = fstatSync(f.log).size;
    if (onDisk !== a.size) throw new KlxError('io-error', `the .log changed outside this writer (expected ${a.size} bytes, found ${onDisk}); close and reopen the folder`, { file: a.logPath });
    writeAt(f.log, batch, a.size);
    this.step('fsync-log', a.logPath);
    fsyncSync(f.log);

    const position = a.size;
    a.size += batch.length;
    if (a.firstBatchMaxTimestamp === null) a.firstBatchMaxTimestamp = plan.maxTimestamp;
    if (plan.maxTimestamp > a.maxTimestamp) {
      a.maxTimestamp = plan.maxTimestamp;
      a.offsetOfMaxTimestamp = plan.lastOffset;
    }
    let newRegular: { timestamp: bigint; offset: bigint } | null = null;
    let wrote = false;
    const indexBytes = this.config.config['segment.index.bytes'];
    if (plan.indexEntry && a.offsetIndexEntries < Math.floor(indexBytes / OFFSET_INDEX_ENTRY_SIZE)) {
      this.step('write-index', a.indexPath);
      const e = Buffer.alloc(OFFSET_INDEX_ENTRY_SIZE);
      e.writeInt32BE(Number(plan.lastOffset - a.baseOffset), 0);
      e.writeInt32BE(position, 4);
      writeAt(f.index, e, a.offsetIndexEntries * OFFSET_INDEX_ENTRY_SIZE);
      a.offsetIndexEntries++;
      a.bytesSinceLastIndexEntry = 0;
      wrote = true;
      if (a.maxTimestamp > a.lastRegularTimestamp && a.timeRegularEntries < Math.floor(indexBytes / TIME_INDEX_ENTRY_SIZE) - 1) {
        newRegular = { timestamp: a.maxTimestamp, offset: a.offsetOfMaxTimestamp };
      }
    }
    a.bytesSinceLastIndexEntry += batch.length;
    if (this.writeTimeIndexTail(f, a, newRegular)) wrote = true;
    if (wrote) {
      this.step('fsync-index', a.indexPath);
      fsyncSync(f.index);
      fsyncSync(f.timeindex);
    }
    this.leo = plan.lastOffset + 1n;
  }

  /** recovery point = LEO (everything is fsynced); high watermark = LEO when the log dir tracks it. */
  private updateCheckpoints(): void {
    const rp = join(this.logDir, RECOVERY_POINT_CHECKPOINT_FILE);
    this.step('checkpoint', rp);
    updateCheckpointEntry(this.logDir, RECOVERY_POINT_CHECKPOINT_FILE, this.topic, this.partition, this.leo, { fault: this.stepper.sub('checkpoint'), onlyIfChanged: true });
    const hw = join(this.logDir, REPLICATION_OFFSET_CHECKPOINT_FILE);
    if (existsSync(hw)) {
      this.step('checkpoint-hw', hw);
      updateCheckpointEntry(this.logDir, REPLICATION_OFFSET_CHECKPOINT_FILE, this.topic, this.partition, this.leo, { fault: this.stepper.sub('checkpoint-hw'), onlyIfPresent: true, onlyIfChanged: true });
    }
  }
}

/**
 * The first record whose CreateTime a broker refuses, as Kafka's `LogValidator.validateTimestamp` checks
 * it (CreateTime topics only, records with a timestamp): `now − ts > message.timestamp.before.max.ms` or
 * `ts − now > message.timestamp.after.max.ms`, refused as a whole batch (`RecordValidationException` with
 * `InvalidTimestampException`, error INVALID_TIMESTAMP). The text says which brokers refuse it: with the
 * topic's own value every Kafka 3.6+ broker (KIP-937 added both configs), with the default after-bound
 * Kafka 4.0+ (3600000 ms since KIP-1030; 3.6–3.9 had Long.MAX_VALUE, earlier brokers
 * message.timestamp.difference.max.ms, Long.MAX_VALUE by default).
 * @param now the broker's clock (ms); `baseOffset` the offset the batch starts at.
 * @returns null when every record passes.
 */
export function timestampRefusal(specs: readonly RecordSpec[], now: bigint, resolved: ResolvedTopicConfig, baseOffset: bigint, tp: string): { text: string; details: Record<string, unknown> } | null {
  const cfg = resolved.config;
  if (cfg['message.timestamp.type'] !== 'CreateTime') return null;
  const before = cfg['message.timestamp.before.max.ms'];
  const after = cfg['message.timestamp.after.max.ms'];
  for (const [i, r] of specs.entries()) {
    const ts = BigInt(r.timestamp ?? -1n);
    if (ts === -1n) continue;
    const tooOld = now - ts > before;
    const tooNew = ts - now > after;
    if (!tooOld && !tooNew) continue;
    const key = tooNew ? 'message.timestamp.after.max.ms' : 'message.timestamp.before.max.ms';
    const value = tooNew ? after : before;
    const fromTopic = resolved.sources[key] !== 'default';
    const who = fromTopic
      ? `a Kafka 3.6+ broker with the topic's ${key}=${value} (${SOURCE_WORDS[resolved.sources[key]]}) refuses it`
      : tooNew
        ? `a Kafka 4.0+ broker refuses it with the default ${key}=${value} (1 h, KIP-1030); Kafka 3.6–3.9 (default Long.MAX_VALUE) and earlier brokers (message.timestamp.difference.max.ms, default Long.MAX_VALUE) accept it`
        : `a Kafka 3.6+ broker refuses it with ${key}=${value}`;
    const text =
      `CreateTime ${ts} of record ${i} (offset ${baseOffset + BigInt(i)}) in the append to ${tp} is ${tooNew ? `${ts - now} ms after` : `${now - ts} ms before`} now (${now}): ` +
      `a broker accepts [${now - before}, ${now + after}] and refuses the whole batch ("Timestamp ${ts} of message with offset ${i} is out of range": LogValidator.validateTimestamp, RecordValidationException with InvalidTimestampException); ${who}`;
    return { text, details: { recordIndex: i, timestamp: String(ts), now: String(now), config: key, value: String(value), source: resolved.sources[key] } };
  }
  return null;
}
