/**
 * The checks that need no `.log` read (the cheap startup sanity check a broker runs): the files of a
 * partition folder (`LogLoader` passes 1–3: leftovers, orphan indexes, missing indexes), Kafka's
 * index sanity checks (`OffsetIndex/TimeIndex/TransactionIndex.sanityCheck`; at startup a broker
 * runs only the `.txnindex` one since 2.3, KAFKA-7283: `LogSegment.sanityCheck`), checkpoints against
 * the log's offsets, and the log directory's own files. Read-only; findings are described in
 * `findings.ts`; the full verification reading every batch is `verify.ts`.
 */
import { basename, dirname, join } from 'node:path';
import { segmentFileName } from '../files/file-names.ts';
import { crcFailureConsequence, startupRecoveryOf } from './corruption-consequences.ts';
import { unrecoveredTailText } from './unrecovered-tail.ts';
import { crcAlgorithm, crcMismatchText } from '../format/crc.ts';
import { scanLogFile } from '../format/log-reader.ts';
import type { IndexProblem } from '../files/index-file.ts';
import { readOffsetIndex, type OffsetIndexFile } from '../files/offset-index.ts';
import { readTimeIndex, type TimeIndexFile } from '../files/time-index.ts';
import { readTxnIndex, type TxnIndexFile } from '../files/txn-index.ts';
import type { LogDirectory } from './log-dir.ts';
import { WRITER_LOCK_FILE } from './log-lock.ts';
import { leftoverFileMeaning, tpKey, type PartitionLog } from './partition-log.ts';
import { finding, j, type Finding, type Severity } from './findings.ts';

// ---------------------------------------------------------------------------------------------
// Segment file references

/** Where the files of one segment are. `index`/`timeindex`/`txnindex` are null when absent. */
export interface SegmentFilesRef {
  baseOffset: bigint;
  /** Path of the data file (normally `N.log`; `N.log.swap` while a swap is being completed). */
  log: string;
  index: string | null;
  timeindex: string | null;
  txnindex: string | null;
  /** Canonical paths (`N.index`...), used to name missing files. */
  indexPath: string;
  timeindexPath: string;
  txnindexPath: string;
  /** True for the newest segment (the one a broker appends to: LogSegments.activeSegment). */
  isActive: boolean;
}

/** The {@link SegmentFilesRef}s of an opened partition, in base-offset order. */
export function segmentRefs(log: PartitionLog): SegmentFilesRef[] {
  const segs = log.listing.segments;
  return segs.map((s, i) => {
    const p = (suffix: string) => join(log.dir, segmentFileName(s.baseOffset, suffix));
    return {
      baseOffset: s.baseOffset,
      log: join(log.dir, s.log.name),
      index: s.index ? join(log.dir, s.index.name) : null,
      timeindex: s.timeindex ? join(log.dir, s.timeindex.name) : null,
      txnindex: s.txnindex ? join(log.dir, s.txnindex.name) : null,
      indexPath: p('.index'),
      timeindexPath: p('.timeindex'),
      txnindexPath: p('.txnindex'),
      isActive: i === segs.length - 1,
    };
  });
}

// ---------------------------------------------------------------------------------------------
// Index files: Kafka's sanity checks and the shape of the file

/** The index files of a segment, parsed (null when absent). */
export interface ParsedIndexes {
  index: OffsetIndexFile | null;
  timeindex: TimeIndexFile | null;
  txnindex: TxnIndexFile | null;
}

/**
 * Reads a segment's index files (each bounded by `segment.index.bytes`). Entries are not limited
 * by the `.log` size here, so that entries past its end are seen and reported.
 * @throws KlxError `io-error` when a file exists but cannot be read.
 */
export function readSegmentIndexes(ref: SegmentFilesRef): ParsedIndexes {
  return {
    index: ref.index ? readOffsetIndex(ref.index, { baseOffset: ref.baseOffset }) : null,
    timeindex: ref.timeindex ? readTimeIndex(ref.timeindex, { baseOffset: ref.baseOffset }) : null,
    txnindex: ref.txnindex ? readTxnIndex(ref.txnindex, { baseOffset: ref.baseOffset }) : null,
  };
}

/**
 * What the explorer needs of one segment's index files: their findings ({@link indexFileFindings})
 * and the entry counts and last time-index timestamp of its segment row.
 */
export interface SegmentIndexFacts {
  findings: Finding[];
  indexEntries: number;
  timeEntries: number;
  txnEntries: number;
  /** The time index's last entry's timestamp, or null without entries. */
  lastTimeIndexTs: bigint | null;
  /** The time index exists, passes Kafka's TimeIndex.sanityCheck and has no stale or out-of-order slots. */
  timeIndexSound: boolean;
}

/** The {@link SegmentIndexFacts} of parsed index files. */
export function segmentIndexFacts(ref: SegmentFilesRef, parsed: ParsedIndexes, cleanShutdown: boolean): SegmentIndexFacts {
  const te = parsed.timeindex?.entries;
  return {
    findings: indexFileFindings(ref, parsed, cleanShutdown),
    indexEntries: parsed.index?.entries.length ?? 0,
    timeEntries: te?.length ?? 0,
    txnEntries: parsed.txnindex?.entries.length ?? 0,
    lastTimeIndexTs: te && te.length > 0 ? te[te.length - 1]!.timestamp : null,
    timeIndexSound: parsed.timeindex !== null && parsed.timeindex.problems.every((p) => !p.kafkaCorrupt && p.kind !== 'stale-entries' && p.kind !== 'out-of-order-slot'),
  };
}

/** One segment's index facts as read once for a call, or what reading its index files threw. */
export type SegmentIndexesRead = { facts: SegmentIndexFacts; error?: undefined } | { facts?: undefined; error: unknown };

/**
 * Reads every segment's index files once (in {@link segmentRefs} order) for one call (the explorer's
 * partition summary and segment rows), so that the quick check and the segment rows share one parse
 * instead of each parsing every file. Only the facts are kept, a segment at a time: the parsed
 * entries of a whole partition (hundreds of thousands of objects) held across the call cost more in
 * garbage collection than parsing twice. A file that cannot be read is kept as its error, thrown
 * where it is used as a fresh read would throw it. (The tail check and `lastBatch` use the segment's
 * own `offsetIndex()`, bounded by the `.log` size and cached on the `LogSegment`: read once per opened
 * partition, not per call.)
 */
export function readPartitionIndexes(log: PartitionLog): SegmentIndexesRead[] {
  const cleanShutdown = log.startupCleanShutdown;
  return segmentRefs(log).map((ref) => {
    try {
      return { facts: segmentIndexFacts(ref, readSegmentIndexes(ref), cleanShutdown) };
    } catch (error) {
      return { error };
    }
  });
}

/** The facts of one read, or what reading the index files threw, thrown again. */
export function indexFactsOrThrow(read: SegmentIndexesRead): SegmentIndexFacts {
  if (read.facts) return read.facts;
  throw read.error;
}

/**
 * Severity of a preallocated, untrimmed index: normal (info) for the active segment after an unclean
 * stop, which recovery trims; a warning anywhere else (closed segments and clean shutdowns trim them).
 */
function untrimmedSeverity(ref: SegmentFilesRef, cleanShutdown: boolean): Severity {
  return ref.isActive && !cleanShutdown ? 'info' : 'warning';
}

/**
 * Findings about the index files of one segment that need no `.log` read: missing files, Kafka's
 * sanity checks (`OffsetIndex/TimeIndex/TransactionIndex.sanityCheck`), preallocated untrimmed
 * files, stale slots after a crash.
 */
export function indexFileFindings(ref: SegmentFilesRef, parsed: ParsedIndexes, cleanShutdown: boolean): Finding[] {
  const out: Finding[] = [];
  const base = { segment: j(ref.baseOffset) };
  if (!parsed.index) {
    out.push(finding('warning', 'missing-index', ref.indexPath, `the offset index is missing: a broker recovers the segment and rebuilds it from the .log at startup (LogSegment.sanityCheck, LogLoader.loadSegmentFiles)${ref.isActive ? ' (an active segment\'s index is preallocated to 10 MiB and often not copied along)' : ''}`, base));
  }
  if (!parsed.timeindex) {
    out.push(finding('info', 'missing-time-index', ref.timeindexPath, 'the time index is missing: a broker creates it empty at startup (LogSegment.sanityCheck) and refills it only when it recovers the segment (LogLoader.recoverLog)', base));
  }
  const sev = untrimmedSeverity(ref, cleanShutdown);
  const shape = (file: string, f: OffsetIndexFile | TimeIndexFile, entrySize: number, kind: string) => {
    const zeroTail = f.trailingZeroEntries > 0;
    for (const p of f.problems) {
      if (p.kind === 'stale-entries') {
        // Stale slots live in preallocated files (a truncation only moves the write position); in a
        // trimmed file of a cleanly closed segment, entries out of order are corruption.
        const crashLeftover = zeroTail || (ref.isActive && !cleanShutdown);
        out.push(
          finding(
            crashLeftover ? 'warning' : 'error',
            'stale-index-entries',
            file,
            crashLeftover ? p.reason : `${p.reason.replace(/ \(stale data after a crash\?\)$/, '')}: lookups by binary search are unreliable`,
            { ...base, staleEntries: f.staleEntries, validEntries: f.entries.length },
            p.position,
          ),
        );
      } else if (p.kind === 'out-of-order-slot') {
        out.push(finding(ref.isActive && !cleanShutdown ? 'warning' : 'error', 'index-slot-out-of-order', file, `${p.reason}. ${outOfOrderSlotConsequence(kind, p.details?.['where'] === 'last')}`, { ...base, ...p.details }, p.position));
      } else if (p.kafkaCorrupt) {
        // A preallocated time index reads as "last timestamp 0 below the first": that is the
        // untrimmed file, reported once below.
        if (zeroTail && p.kind === 'last-timestamp-below-first') continue;
        out.push(finding('error', 'corrupt-index', file, `${p.reason} (Kafka's ${kind}.sanityCheck fails; a broker does not run it at startup (LogSegment.sanityCheck skips it) and rebuilds this index only when it recovers the segment: no clean shutdown, at or after the recovery point (LogLoader.recoverLog))`, { ...base, kind: p.kind }, p.position));
      }
    }
    if (zeroTail) {
      const at = (f.entries.length + f.staleEntries) * entrySize;
      out.push(
        finding(
          sev,
          'untrimmed-index',
          file,
          `${f.fileSize} bytes with ${f.trailingZeroEntries} zero slots after ${f.entries.length} entr${f.entries.length === 1 ? 'y' : 'ies'}: ` +
            (sev === 'info'
              ? 'the preallocated index of the active segment after an unclean stop; recovery trims it'
              : 'a closed segment\'s index is trimmed to its entries on roll and clean shutdown; rebuild it'),
          { ...base, fileSize: f.fileSize, entries: f.entries.length, zeroSlots: f.trailingZeroEntries },
          at,
        ),
      );
    }
  };
  if (parsed.index && ref.index) shape(ref.index, parsed.index, 8, 'OffsetIndex');
  if (parsed.timeindex && ref.timeindex) shape(ref.timeindex, parsed.timeindex, 12, 'TimeIndex');
  if (parsed.txnindex && ref.txnindex) {
    for (const p of parsed.txnindex.problems) out.push(txnProblemFinding(ref.txnindex, p, base));
  }
  return out;
}

/**
 * What a broker does with an offset or time index holding one slot out of order (OffsetIndex,
 * TimeIndex, AbstractIndex, LogSegment, LogLoader), and what `klx repair` does.
 * @param kind `OffsetIndex` or `TimeIndex`; @param last whether the slot is the file's last.
 */
function outOfOrderSlotConsequence(kind: string, last: boolean): string {
  const checks =
    kind === 'OffsetIndex'
      ? "OffsetIndex.sanityCheck looks only at the last slot's offset (not below the base offset) and the file length"
      : "TimeIndex.sanityCheck looks only at the last slot (timestamp not below the first slot's, offset not below the base offset) and the file length";
  const lookups =
    kind === 'OffsetIndex'
      ? 'offset lookups binary-search all slots (AbstractIndex.largestLowerBoundSlotFor, OffsetIndex.lookup), so a lookup that lands on this slot starts reading the .log at its position instead of the right one'
      : 'timestamp lookups binary-search all slots (AbstractIndex.largestLowerBoundSlotFor, TimeIndex.lookup), so a lookup that lands on this slot starts from its offset instead of the right one' +
        (last ? ", and the segment's largest timestamp, which time retention uses, is read from this last slot (TimeIndex.lastEntry, LogSegment.readMaxTimestampAndOffsetSoFar)" : '');
  return `A broker loads the index as it is: ${checks}, and LogSegment.sanityCheck skips even that at startup; ${lookups}. It rebuilds the index from the .log only when it recovers the segment (LogSegment.recover, for segments at or after the recovery point after an unclean shutdown: LogLoader.recoverLog). klx repair rebuilds it from the .log (every entry, trimmed)`;
}

function txnProblemFinding(file: string, p: IndexProblem, base: Record<string, unknown>): Finding {
  if (p.kind === 'partial-entry') return finding('warning', 'txn-index-partial-entry', file, p.reason, base, p.position);
  if (p.kind === 'out-of-order') return finding('error', 'corrupt-index', file, `${p.reason} (entries must be appended in increasing last offset)`, { ...base, kind: p.kind }, p.position);
  if (p.kind === 'unsupported-version') return finding('error', 'corrupt-index', file, `${p.reason} (a broker reading this index throws "Unexpected aborted transaction version": TransactionIndex's iterator, a KafkaException that LogLoader does not catch)`, { ...base, kind: p.kind }, p.position);
  return finding('error', 'corrupt-index', file, `${p.reason} (Kafka's TransactionIndex.sanityCheck fails at startup: a broker recovers the segment and rebuilds its indexes, LogLoader.loadSegmentFiles)`, { ...base, kind: p.kind }, p.position);
}

// ---------------------------------------------------------------------------------------------
// Folder-level facts

/**
 * Findings about the files of a partition folder (spec §10.3, §10.4 passes 1–3): leftovers of
 * interrupted operations, orphan indexes, temp and unknown files, a missing segment.
 */
export function folderFindings(log: PartitionLog): Finding[] {
  const out: Finding[] = [];
  const l = log.listing;
  for (const t of l.transient) {
    const file = join(log.dir, t.name);
    if (t.suffix === 'tmp') {
      out.push(finding('info', 'temp-file', file, 'a partially written replacement (.tmp) left by an interrupted write; the real file is intact; repair deletes it', { size: t.size }));
    } else {
      const meaning = leftoverFileMeaning(l, t);
      out.push(finding('warning', 'leftover-file', file, `leftover .${t.suffix} file: ${meaning}`, { suffix: t.suffix, size: t.size, ...(t.baseOffset !== undefined ? { baseOffset: j(t.baseOffset) } : {}) }));
    }
  }
  for (const o of l.orphanIndexes) {
    out.push(finding('warning', 'orphan-index', join(log.dir, o.name), `${o.kind} file without ${segmentFileName(o.baseOffset, '.log')}: a broker deletes it at startup (LogLoader.loadSegmentFiles)`, { baseOffset: j(o.baseOffset), size: o.size }));
  }
  for (const u of l.unknown) {
    if (u.name === WRITER_LOCK_FILE || u.name === `${WRITER_LOCK_FILE}.takeover`) {
      out.push(finding('info', 'klx-lock', join(log.dir, u.name), 'a klx writer (repair, append...) holds this partition, or died holding it (the file names its process)', {}));
    } else if (u.name !== 'klx-topic.properties') {
      out.push(finding('info', 'unknown-file', join(log.dir, u.name), 'a file a broker does not know (LogLoader.loadSegmentFiles ignores it)', { size: u.size }));
    }
  }
  // LogLoader lists only files (File.isFile) in a partition folder.
  for (const d of l.directories) out.push(finding('info', 'unknown-file', join(log.dir, d), 'a sub-directory inside a partition folder (ignored by Kafka)', {}));
  if (l.segments.length === 0) {
    out.push(finding('warning', 'no-segment', log.dir, `no segment: a broker creates an empty one at the log start offset ${log.logStartOffset} (LogLoader.recoverLog)`, { logStartOffset: j(log.logStartOffset) }));
  }
  return out;
}

/**
 * Findings about checkpoints and partition metadata against the log's real offsets (spec §11):
 * checkpoints beyond the log end or below the log start, leader-epoch entries beyond the log end or
 * out of order, producer snapshots beyond the log end, unreadable files.
 * @param logEndOffset the log end offset found by reading the log.
 * @param includeLogDir also report unreadable log-dir checkpoint files (off when a caller reports
 *   them once per log directory).
 */
export function checkpointFindings(log: PartitionLog, logEndOffset: bigint, includeLogDir = true): Finding[] {
  const out: Finding[] = [];
  const logDir = dirname(log.dir);
  const key = tpKey(log.topic, log.partition);
  for (const p of log.problems) {
    if (p.code === 'orphan-index' || p.code === 'leftover-file') continue;
    if (p.code === 'symlink-outside') {
      if (dirname(p.file) === log.dir || includeLogDir) out.push(finding('warning', 'symlink-outside', p.file, p.reason));
      continue;
    }
    const inPartition = dirname(p.file) === log.dir;
    if (!inPartition && !includeLogDir) continue;
    out.push(finding('error', 'corrupt-checkpoint', p.file, `${p.reason}${unreadableCheckpointConsequence(p.file, p.details?.kind)}`, { code: p.code }, p.position));
  }
  const ls = log.logStartOffset;
  const cp = log.checkpoints;
  const lsCp = cp.logStartOffset.get(key);
  const file = (n: string) => join(logDir, n);
  if (lsCp !== undefined && lsCp > logEndOffset) {
    out.push(finding('error', 'checkpoint-beyond-log-end', file('log-start-offset-checkpoint'), `log start offset ${lsCp} is above the log end offset ${logEndOffset}: a broker deletes every segment at startup (LogLoader.deleteSegmentsIfLogStartGreaterThanLogEnd; segment files were lost?)`, { partition: key, checkpoint: j(lsCp), logEndOffset: j(logEndOffset) }));
  }
  const rp = cp.recoveryPoint.get(key);
  if (rp !== undefined && rp > logEndOffset) {
    out.push(finding('warning', 'checkpoint-beyond-log-end', file('recovery-point-offset-checkpoint'), `recovery point ${rp} is above the log end offset ${logEndOffset}: data the broker had flushed is missing (a broker uses min(recovery point, log end): LogLoader.recoverLog)`, { partition: key, checkpoint: j(rp), logEndOffset: j(logEndOffset) }));
  }
  const hw = cp.highWatermark.get(key);
  if (hw !== undefined && hw > logEndOffset) {
    out.push(finding('warning', 'checkpoint-beyond-log-end', file('replication-offset-checkpoint'), `high watermark ${hw} is above the log end offset ${logEndOffset}: committed records are missing here (a broker lowers it to the log end when it loads it, UnifiedLog.updateHighWatermark; as a follower it fetches the missing records from the leader)`, { partition: key, checkpoint: j(hw), logEndOffset: j(logEndOffset) }));
  } else if (hw !== undefined && hw < ls) {
    out.push(finding('warning', 'checkpoint-below-log-start', file('replication-offset-checkpoint'), `high watermark ${hw} is below the log start offset ${ls} (a broker raises it to the log start: UnifiedLog.updateHighWatermark)`, { partition: key, checkpoint: j(hw), logStartOffset: j(ls) }));
  }
  const cl = cp.cleanerOffset.get(key);
  // LogCleanerManager.cleanableOffsets resets an out-of-range checkpoint to the log start offset and
  // logs a warning (silently only below the log start on a compact,delete topic).
  const name = `${log.topic}-${log.partition}`;
  const policy = log.config.config['cleanup.policy'];
  if (cl !== undefined && cl > logEndOffset) {
    out.push(
      finding('warning', 'checkpoint-beyond-log-end', file('cleaner-offset-checkpoint'), `cleaner checkpoint ${cl} is above the log end offset ${logEndOffset}: the cleaner resets it to the log start offset ${ls} and logs "The last checkpoint dirty offset for partition ${name} is ${cl}, which is larger than the log end offset ${logEndOffset}. Resetting to the log start offset ${ls}." (LogCleanerManager); the whole log is dirty again`, {
        partition: key,
        checkpoint: j(cl),
        logEndOffset: j(logEndOffset),
      }),
    );
  } else if (cl !== undefined && cl < ls) {
    const silent = policy.includes('compact') && policy.includes('delete');
    out.push(
      finding(silent ? 'info' : 'warning', 'checkpoint-below-log-start', file('cleaner-offset-checkpoint'), silent ? `cleaner checkpoint ${cl} is below the log start offset ${ls}: the cleaner starts from the log start offset (silently for cleanup.policy=compact,delete; LogCleanerManager)` : `cleaner checkpoint ${cl} is below the log start offset ${ls}: the cleaner resets it and logs "Resetting first dirty offset of ${name} to log start offset ${ls} since the checkpointed offset ${cl} is invalid." (LogCleanerManager)`, {
        partition: key,
        checkpoint: j(cl),
        logStartOffset: j(ls),
      }),
    );
  }
  const epochFile = join(log.dir, 'leader-epoch-checkpoint');
  let prev: { epoch: number; startOffset: bigint } | null = null;
  for (const e of log.leaderEpochs) {
    if (e.startOffset > logEndOffset) {
      out.push(finding('warning', 'leader-epoch-beyond-log-end', epochFile, `epoch ${e.epoch} starts at offset ${e.startOffset}, after the log end offset ${logEndOffset} (a broker drops it when it loads the log: LeaderEpochFileCache.truncateFromEnd via LogLoader.load; repair removes it)`, { epoch: e.epoch, startOffset: j(e.startOffset), logEndOffset: j(logEndOffset) }));
    }
    if (prev && (e.epoch <= prev.epoch || e.startOffset < prev.startOffset)) {
      out.push(finding('warning', 'leader-epoch-order', epochFile, `entry (epoch ${e.epoch}, start ${e.startOffset}) does not follow (epoch ${prev.epoch}, start ${prev.startOffset}): epochs and start offsets must increase`, { epoch: e.epoch, startOffset: j(e.startOffset) }));
    }
    prev = e;
  }
  for (const s of log.listing.snapshots) {
    if (s.baseOffset > logEndOffset) {
      out.push(finding('warning', 'snapshot-beyond-log-end', join(log.dir, s.name), `producer snapshot at offset ${s.baseOffset} is after the log end offset ${logEndOffset} (stale after a truncation; a broker deletes it: ProducerStateManager.truncateAndReload)`, { offset: j(s.baseOffset), logEndOffset: j(logEndOffset) }));
    }
  }
  return out;
}

/**
 * What a broker does with a checkpoint it cannot parse, as a sentence to add to the finding's reason
 * ('' for other files). Two cases, as Kafka's code splits them:
 * - a malformed framing or entry line (wrong field count, bad version or count line, count
 *   mismatch): an IOException inside `CheckpointFileWithFailureHandler.read`, which hands the log
 *   directory to `LogDirFailureChannel`: the broker takes that directory offline
 *   (`ReplicaManager.handleLogDirFailure` stops serving every partition in it) and shuts down when no
 *   log directory is left online. This holds for the four log-directory offset checkpoints
 *   (`OffsetCheckpointFile`) and for a partition's `leader-epoch-checkpoint` (`LeaderEpochCheckpointFile`
 *   goes through the same handler; read when `UnifiedLog` builds its `LeaderEpochFileCache` at load,
 *   and `LogManager.loadLogs` then skips the `KafkaStorageException` as already handled).
 *   `LogManager.loadLogs` catches the error for the recovery-point and log-start checkpoints and
 *   would go on (recovery point 0; log start at each log's first segment), and
 *   `LogCleanerManager.allCleanerCheckpoints` treats an unreadable cleaner checkpoint as empty, but
 *   the directory is offline by then;
 * - an entry line with the right field count whose number `Integer.parseInt`/`Long.parseLong`
 *   refuses (`details.kind` `number-format`): a NumberFormatException from the formatter's
 *   `fromString`, which the handler does not catch, so the directory stays online: `LogManager.loadLogs`
 *   falls back as above for the recovery-point and log-start checkpoints; the cleaner thread dies on
 *   it (`allCleanerCheckpoints` catches only `KafkaStorageException`; `ShutdownableThread.run` logs
 *   "Error due to" and stops); for `leader-epoch-checkpoint` it escapes the log-loading thread and
 *   `LogManager.loadLogs` rethrows it: the broker fails to start.
 * This is why such a file is an error, the recovery point one included.
 * @param file absolute path of the checkpoint file.
 * @param kind the parse error's `details.kind` (`malformed` when absent).
 */
export function unreadableCheckpointConsequence(file: string, kind?: unknown): string {
  const name = basename(file);
  const repairNote = name === 'leader-epoch-checkpoint' ? '' : '; `klx repair` on the log directory rewrites it from the partitions, your choice, keeping the old file in the trash';
  if (kind === 'number-format') {
    const nf: Record<string, string> = {
      'recovery-point-offset-checkpoint': 'LogManager.loadLogs catches it and recovers from recovery point 0',
      'log-start-offset-checkpoint': "LogManager.loadLogs catches it and starts each log at its first segment's base offset",
      'cleaner-offset-checkpoint': 'the log cleaner thread stops on it (LogCleanerManager.allCleanerCheckpoints catches only KafkaStorageException; ShutdownableThread.run logs "Error due to")',
      'replication-offset-checkpoint': 'it reaches ReplicaManager when it reads the high watermarks',
      'leader-epoch-checkpoint': 'it escapes the log-loading thread and LogManager.loadLogs rethrows it: the broker fails to start',
    };
    const what = nf[name];
    if (what === undefined) return '';
    return ` (a broker reading it throws a NumberFormatException, not an IOException, so CheckpointFileWithFailureHandler does not take the log directory offline: ${what}${repairNote})`;
  }
  const fallback: Record<string, string> = {
    'recovery-point-offset-checkpoint': '; LogManager.loadLogs alone would recover from recovery point 0',
    'log-start-offset-checkpoint': "; LogManager.loadLogs alone would start each log at its first segment's base offset",
    'cleaner-offset-checkpoint': '; the cleaner alone (LogCleanerManager.allCleanerCheckpoints) would treat it as empty',
    'replication-offset-checkpoint': '',
    'leader-epoch-checkpoint': '; LeaderEpochCheckpointFile reads it through the same handler when UnifiedLog loads the partition',
  };
  const more = fallback[name];
  if (more === undefined) return '';
  return ` (a broker that reads it takes this log directory offline: CheckpointFileWithFailureHandler.read reports it to LogDirFailureChannel, every partition in the directory stops being served, and the broker shuts down when no log directory is left online${more}${repairNote})`;
}

/**
 * Findings about a log directory itself, reported once for all its partitions: checkpoint and
 * `meta.properties` files that cannot be read, and root entries a broker would not load.
 */
export function logDirFindings(d: LogDirectory): Finding[] {
  const out: Finding[] = [];
  for (const p of d.checkpoints.problems) {
    out.push(finding('error', 'corrupt-checkpoint', p.file, `${p.reason}${unreadableCheckpointConsequence(p.file, p.details?.kind)}`, { code: p.code }, p.position));
  }
  for (const i of d.ignored) out.push(finding(i.stopsBroker ? 'error' : i.loadedByBroker ? 'warning' : 'info', 'unknown-file', join(d.path, i.name), i.reason, {}));
  return out;
}

// ---------------------------------------------------------------------------------------------
// Quick check

/**
 * The cheap check a broker does at startup, from file names and index files only (no `.log` is
 * read): leftovers and orphans (LogLoader passes 1–3), missing indexes, Kafka's index sanity checks
 * (of which a broker runs only the `.txnindex` one at startup since 2.3), untrimmed or stale index
 * files, and whether recovery would run.
 * @returns findings; `details.kafkaRebuild` is true where a broker would recover the segment and
 *   rebuild its indexes at startup whatever the recovery point (`LogLoader.loadSegmentFiles`: a
 *   missing `.index`, or a `.txnindex` failing `TransactionIndex.sanityCheck`).
 * @param indexes the segments' index files as read once for the call ({@link readPartitionIndexes});
 *   read here when absent.
 * @throws KlxError `io-error` when an index file exists but cannot be read.
 */
export function quickCheckPartition(log: PartitionLog, indexes?: readonly SegmentIndexesRead[]): Finding[] {
  const out = folderFindings(log);
  const cleanShutdown = log.startupCleanShutdown;
  for (const [i, ref] of segmentRefs(log).entries()) {
    const read = indexes?.[i];
    // Copies: the shared findings stay as indexFileFindings made them (the segment rows show them too).
    const found = read ? indexFactsOrThrow(read).findings.map((f) => ({ ...f, details: { ...f.details } })) : indexFileFindings(ref, readSegmentIndexes(ref), cleanShutdown);
    for (const f of found) {
      f.details.kafkaRebuild = f.code === 'missing-index' || (f.code === 'corrupt-index' && f.details.kind === 'txn-last-offset-below-base');
      out.push(f);
    }
  }
  const recovery = recoveryNeededFinding(log);
  if (recovery) out.push(recovery);
  return out;
}

/**
 * The `recovery-needed` note: no clean-shutdown marker in the log dir, so a broker re-validates the
 * segments from the one holding the recovery point on and rebuilds their indexes (Kafka
 * `LogLoader.recoverLog`). Null after a clean shutdown or for a partition without segments. Shared by
 * the quick check and the API's verify, so both list it.
 */
export function recoveryNeededFinding(log: PartitionLog): Finding | null {
  if (log.startupCleanShutdown || log.segments.length === 0) return null;
  const rp = log.startupRecoveryPoint ?? 0n;
  const from = log.segmentFor(rp) ?? log.segments[0]!;
  const n = log.segments.filter((s) => s.baseOffset >= from.baseOffset).length;
  if (log.topic === '__cluster_metadata') {
    return finding('info', 'recovery-needed', log.dir, `the KRaft metadata log: a KRaft node re-validates all ${n} segment${n === 1 ? '' : 's'} of ${basename(log.dir)} from offset 0 at every start, whatever .kafka_cleanshutdown and the recovery-point checkpoint say, and rebuilds their indexes (KafkaRaftLog.createLog loads it with recovery point 0 and lastShutdownClean false; LogLoader.recoverLog)`, {
      recoveryPoint: j(rp),
      segments: n,
    });
  }
  return finding('info', 'recovery-needed', join(dirname(log.dir), '.kafka_cleanshutdown'), `no clean-shutdown marker: for ${basename(log.dir)} a broker re-validates ${n} segment${n === 1 ? '' : 's'} from the recovery point ${rp} on (segment ${from.baseOffset}) and rebuilds their indexes (LogLoader.recoverLog)`, {
    recoveryPoint: j(rp),
    segments: n,
  });
}


// ---------------------------------------------------------------------------------------------
// Tail check (the health badge before a full verify)

/** A segment without a usable offset-index entry is walked from its start only up to this size (bytes). */
export const TAIL_CHECK_UNINDEXED_LIMIT = 8 * 1024 * 1024;

/**
 * The cheap check of each segment's end behind the health badge: the batches from the last
 * offset-index entry (Kafka writes one every `index.interval.bytes`, so a few KiB before the end) to
 * the end of the `.log`, CRCs checked; a segment without a usable entry is read from its start when
 * it is at most {@link TAIL_CHECK_UNINDEXED_LIMIT} bytes, else not at all. What it finds is reported
 * with verify's codes, severities, files and positions (a cut or garbage tail `invalid-tail` error,
 * a zeroed tail `zero-tail` warning, `corrupt-region` and `crc-mismatch` errors), so that the badge
 * never says less than verify will about the same bytes. These are the bytes `LogSegment.recover`
 * would stop at (`FileLogInputStream.nextBatch`, `RecordBatch.ensureValid`).
 * @returns findings in segment order (empty for sound tails).
 * @throws KlxError `io-error` when a `.log` cannot be read.
 */
export function tailCheckPartition(log: PartitionLog): Finding[] {
  const out: Finding[] = [];
  const bases = log.segments.map((x) => x.baseOffset);
  for (const [segIndex, seg] of log.segments.entries()) {
    const size = seg.size;
    if (size === 0) continue;
    const startup = startupRecoveryOf(bases, segIndex, log.startupCleanShutdown, log.startupRecoveryPoint, seg.files.indexSize < 0, log.topic);
    let start = 0;
    let hasEntry = false;
    if (seg.files.indexSize > 0) {
      try {
        const entries = seg.offsetIndex().entries;
        for (let i = entries.length - 1; i >= 0; i--) {
          if (entries[i]!.position < size) {
            start = entries[i]!.position;
            hasEntry = true;
            break;
          }
        }
      } catch {
        start = 0;
      }
    }
    if (!hasEntry && size > TAIL_CHECK_UNINDEXED_LIMIT) continue;
    const base = { segment: j(seg.baseOffset) };
    const walk = (from: number): Finding[] | null => {
      const found: Finding[] = [];
      let first = true;
      /** The offset after the last batch read (the log end offset a broker computes when the tail follows it). */
      let lastNext: bigint | null = null;
      for (const e of scanLogFile(seg.files.log, { start: from, verifyCrc: true })) {
        if (first && from > 0 && e.type !== 'batch') return null; // a stale index entry: not a batch start
        first = false;
        if (e.type === 'batch') {
          const h = e.header;
          lastNext = h.lastOffset + 1n;
          if (h.crcValid === false) found.push(finding('error', 'crc-mismatch', seg.files.log, `${h.magic === 2 ? 'batch' : `magic ${h.magic} message`} at offsets ${h.baseOffset}..${h.lastOffset} fails its CRC: ${crcMismatchText(h)}; its bytes were altered: ${crcFailureConsequence(h, startup)}`, { ...base, baseOffset: j(h.baseOffset), lastOffset: j(h.lastOffset), crc: h.crc >>> 0, computedCrc: h.computedCrc ?? null, crcAlgorithm: crcAlgorithm(h.magic) }, h.position));
          continue;
        }
        const details = { ...base, bytes: e.size, readerCode: e.code };
        if (e.type === 'corrupt-region') found.push(finding('error', 'corrupt-region', seg.files.log, e.reason, details, e.position));
        else {
          // The last segment after a clean shutdown: what a broker that does not recover it makes of these bytes (unrecovered-tail.ts).
          const unrecovered = segIndex === log.segments.length - 1 && startup.kind === 'clean-shutdown' ? `; ${unrecoveredTailText(seg.files.log, e.position, e.position + e.size, lastNext ?? seg.baseOffset, log.topic)}` : '';
          if (e.zeros) found.push(finding('warning', 'zero-tail', seg.files.log, e.reason + unrecovered, details, e.position));
          else found.push(finding('error', 'invalid-tail', seg.files.log, e.reason + unrecovered, details, e.position));
        }
      }
      return found;
    };
    let found = walk(start);
    if (found === null) found = size <= TAIL_CHECK_UNINDEXED_LIMIT ? walk(0) : [];
    for (const f of found ?? []) out.push(f);
  }
  return out;
}
