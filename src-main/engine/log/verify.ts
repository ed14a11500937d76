/**
 * Integrity checks of a partition log (spec §3–§4, §7, §9, §10.4, §11): the cheap startup sanity
 * check a broker runs, and a full verification of every batch and every index entry.
 *
 * Follows Kafka's `OffsetIndex.sanityCheck`, `TimeIndex.sanityCheck`, `TransactionIndex.sanityCheck`,
 * `LogLoader` (passes 1–3: leftovers, orphan indexes, missing indexes), `LogSegment.recover` (what a
 * valid batch is: size, CRC, offsets inside the segment's relative range) and
 * `kafka-dump-log.sh --verify-index-only`. Everything here is read-only.
 *
 * A {@link Finding} names a file, a byte position in it (when there is one), a reason and a
 * severity:
 * - `error`: data or an index a reader would trust is wrong (CRC mismatch, bytes that are not a
 *   batch, offsets going backwards, an index entry that does not point at the batch it names, an
 *   aborted transaction missing from the `.txnindex`...);
 * - `warning`: something a broker repairs or tolerates at startup but that is not how a cleanly
 *   closed log looks (missing or untrimmed index, stale index entries, zero-filled tail, leftover
 *   `.deleted/.cleaned/.swap` files, checkpoints beyond the log end...);
 * - `info`: facts worth knowing that are normal for real brokers (index entries in the style of older
 *   brokers, the active segment's preallocated index after an unclean stop, a missing `.timeindex`).
 *
 * Facts about real broker data that the checks honour (checked against `shared/kafka-real-data`):
 * - offset-index entries name the **last** offset of the batch that starts at their position;
 * - time-index entries carry the max timestamp of a batch and an offset **inside** that batch. Kafka
 *   trunk writes the batch's last offset (spec §9.2), but brokers up to the 3.x line wrote the offset
 *   of the record holding the max timestamp (e.g. `multisegment-rolled`), so any offset within
 *   `[baseOffset, lastOffset]` of the batch is accepted;
 * - a leader epoch whose start offset equals the log end offset is normal (a leader elected after
 *   the last append).
 *
 * Memory is bounded: `.log` files are streamed; only index files (≤ `segment.index.bytes`) are read
 * whole.
 */
import { dirname, join } from 'node:path';
import { KlxError } from '../errors.ts';
import { int64Json } from '../format/batch-json.ts';
import { CONTROL_ABORT, CONTROL_COMMIT } from '../format/control.ts';
import { scanLogFile } from '../format/log-reader.ts';
import { decodeV2Records } from '../format/record-batch.ts';
import type { BatchHeader, KafkaRecord } from '../format/types.ts';
import { segmentFileName } from '../files/file-names.ts';
import type { IndexProblem } from '../files/index-file.ts';
import { MAX_RELATIVE_OFFSET, readOffsetIndex, type OffsetIndexFile } from '../files/offset-index.ts';
import { readTimeIndex, type TimeIndexFile } from '../files/time-index.ts';
import { readTxnIndex, type AbortedTxn, type TxnIndexFile } from '../files/txn-index.ts';
import type { LogDirectory } from './log-dir.ts';
import { WRITER_LOCK_FILE } from './log-lock.ts';
import { tpKey, type PartitionLog } from './partition-log.ts';

// ---------------------------------------------------------------------------------------------
// Findings

/** How bad a finding is; see the module comment. */
export type Severity = 'error' | 'warning' | 'info';

/** Every kind of finding, with its meaning. */
export const FINDING_CODES = {
  'crc-mismatch': 'a batch whose stored CRC does not match its bytes',
  'corrupt-region': 'bytes in the middle of a .log that are not a batch (valid batches follow)',
  'invalid-tail': 'bytes at the end of a .log that are not a batch (a partial or overwritten last batch)',
  'zero-tail': 'zero bytes at the end of a .log (a preallocated file or a crash)',
  'corrupt-batch': 'a batch whose framing and CRC are fine but whose records cannot be decoded',
  'offset-not-increasing': 'a batch whose base offset is not above the previous batch\'s last offset',
  'segments-overlap': 'a segment whose first batch is not above the previous segment\'s last offset',
  'offset-below-segment-base': 'a batch whose base offset is below the segment base offset (file name)',
  'offset-overflow': 'a batch whose last offset does not fit the segment\'s int32 relative offsets',
  'invalid-last-offset-delta': 'a v2 batch with a negative lastOffsetDelta',
  'empty-segment': 'a closed segment without batches',
  'no-segment': 'a partition folder without any segment',
  'missing-index': 'a segment without its .index (a broker rebuilds it at startup)',
  'missing-time-index': 'a segment without its .timeindex (a broker creates it empty)',
  'corrupt-index': 'an index file that fails Kafka\'s own sanity check (the broker rebuilds it)',
  'untrimmed-index': 'an index file still at its preallocated length (zero slots after the entries)',
  'stale-index-entries': 'index slots after the real entries that break the ordering (left over after a crash)',
  'index-entry-not-batch-start': 'an offset-index entry whose position is not where a batch starts',
  'index-entry-past-end': 'an offset-index entry whose position is at or after the end of the .log',
  'index-entry-below-batch': 'an offset-index entry naming an offset below the batch at its position (lookups would skip records)',
  'index-entry-above-batch': 'an offset-index entry naming an offset above the last offset of the batch at its position',
  'index-entry-older-broker': 'an offset-index entry naming an offset inside its batch rather than the last one (older brokers)',
  'time-index-entry-past-end': 'a time-index entry naming an offset after the last batch of the segment',
  'time-index-timestamp-mismatch': 'a time-index entry whose timestamp is not the max timestamp of the batch holding its offset',
  'time-index-entry-in-hole': 'a time-index entry naming an offset no batch holds',
  'time-index-missing-final-entry': 'a closed segment whose last time-index entry is below its largest timestamp',
  'time-index-empty': 'a closed segment with timestamps but an empty time index',
  'txn-index-missing-entry': 'an ABORT marker of a non-empty transaction without its .txnindex entry',
  'txn-index-unexpected-entry': 'a .txnindex entry without an ABORT marker of that producer at its last offset',
  'txn-index-entry-mismatch': 'a .txnindex entry whose producer, first offset or last stable offset differs from the log',
  'txn-index-partial-entry': 'trailing bytes of a .txnindex that do not make a whole entry',
  'leftover-file': 'a .deleted, .cleaned or .swap file left by an interrupted operation',
  'orphan-index': 'an index file without its .log (a broker deletes it at startup)',
  'temp-file': 'a .tmp file left by an interrupted checkpoint or index write',
  'unknown-file': 'a file a broker does not know',
  'klx-lock': 'the writer lock file of a running (or crashed) klx writer',
  'corrupt-checkpoint': 'a checkpoint or metadata file that cannot be parsed',
  'checkpoint-beyond-log-end': 'a checkpointed offset above the log end offset',
  'checkpoint-below-log-start': 'a checkpointed offset below the log start offset',
  'leader-epoch-beyond-log-end': 'a leader-epoch entry starting after the log end offset',
  'leader-epoch-order': 'leader-epoch entries whose epochs or start offsets do not increase',
  'snapshot-beyond-log-end': 'a producer snapshot taken at an offset above the log end offset',
  'recovery-needed': 'no clean shutdown: a broker re-validates the segments from the recovery point on',
} as const;

/** One kind of finding (a key of {@link FINDING_CODES}). */
export type FindingCode = keyof typeof FINDING_CODES;

/**
 * One problem or fact found in a partition.
 * `file` is an absolute path; `position` a byte position inside it; `details` holds JSON-safe
 * values (int64 as numbers when exact, else decimal strings).
 */
export interface Finding {
  severity: Severity;
  code: FindingCode;
  file: string;
  position?: number;
  reason: string;
  details: Record<string, unknown>;
}

function finding(severity: Severity, code: FindingCode, file: string, reason: string, details: Record<string, unknown> = {}, position?: number): Finding {
  const f: Finding = { severity, code, file, reason, details };
  if (position !== undefined) f.position = position;
  return f;
}

/** Counts of findings by severity. */
export function countFindings(findings: readonly Finding[]): Record<Severity, number> {
  const c: Record<Severity, number> = { error: 0, warning: 0, info: 0 };
  for (const f of findings) c[f.severity]++;
  return c;
}

const j = int64Json;

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
  /** True for the newest segment (the one a broker appends to). */
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
    out.push(finding('warning', 'missing-index', ref.indexPath, `the offset index is missing: a broker rebuilds it from the .log at startup${ref.isActive ? ' (an active segment\'s index is preallocated to 10 MiB and often not copied along)' : ''}`, base));
  }
  if (!parsed.timeindex) {
    out.push(finding('info', 'missing-time-index', ref.timeindexPath, 'the time index is missing: a broker creates it empty at startup (and refills it only when it recovers the segment)', base));
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
      } else if (p.kafkaCorrupt) {
        // A preallocated time index reads as "last timestamp 0 below the first": that is the
        // untrimmed file, reported once below.
        if (zeroTail && p.kind === 'last-timestamp-below-first') continue;
        out.push(finding('error', 'corrupt-index', file, `${p.reason} (Kafka's ${kind} sanity check fails; a broker rebuilds the segment's indexes)`, { ...base, kind: p.kind }, p.position));
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

function txnProblemFinding(file: string, p: IndexProblem, base: Record<string, unknown>): Finding {
  if (p.kind === 'partial-entry') return finding('warning', 'txn-index-partial-entry', file, p.reason, base, p.position);
  if (p.kind === 'out-of-order') return finding('error', 'corrupt-index', file, `${p.reason} (entries must be appended in increasing last offset)`, { ...base, kind: p.kind }, p.position);
  return finding('error', 'corrupt-index', file, `${p.reason} (Kafka's TransactionIndex sanity check fails; a broker rebuilds the segment's indexes)`, { ...base, kind: p.kind }, p.position);
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
      const meaning =
        t.suffix === 'deleted'
          ? 'a file already removed from the log, awaiting physical deletion; a broker deletes it at startup'
          : t.suffix === 'cleaned'
            ? 'incomplete cleaner or split output; a broker deletes it at startup'
            : 'cleaner or split output ready to replace old segments; a broker completes the swap at startup';
      out.push(finding('warning', 'leftover-file', file, `leftover .${t.suffix} file: ${meaning}`, { suffix: t.suffix, size: t.size, ...(t.baseOffset !== undefined ? { baseOffset: j(t.baseOffset) } : {}) }));
    }
  }
  for (const o of l.orphanIndexes) {
    out.push(finding('warning', 'orphan-index', join(log.dir, o.name), `${o.kind} file without ${segmentFileName(o.baseOffset, '.log')}: a broker deletes it at startup`, { baseOffset: j(o.baseOffset), size: o.size }));
  }
  for (const u of l.unknown) {
    if (u.name === WRITER_LOCK_FILE || u.name === `${WRITER_LOCK_FILE}.takeover`) {
      out.push(finding('info', 'klx-lock', join(log.dir, u.name), 'a klx writer (repair, append...) holds this partition, or died holding it (the file names its process)', {}));
    } else if (u.name !== 'klx-topic.properties') {
      out.push(finding('info', 'unknown-file', join(log.dir, u.name), 'a file a broker does not know (ignored by Kafka)', { size: u.size }));
    }
  }
  for (const d of l.directories) out.push(finding('info', 'unknown-file', join(log.dir, d), 'a sub-directory inside a partition folder (ignored by Kafka)', {}));
  if (l.segments.length === 0) {
    out.push(finding('warning', 'no-segment', log.dir, `no segment: a broker creates an empty one at the log start offset ${log.logStartOffset}`, { logStartOffset: j(log.logStartOffset) }));
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
    const inPartition = dirname(p.file) === log.dir;
    if (!inPartition && !includeLogDir) continue;
    const recoveryPointFile = p.file.endsWith('recovery-point-offset-checkpoint');
    out.push(
      finding(
        recoveryPointFile ? 'warning' : 'error',
        'corrupt-checkpoint',
        p.file,
        recoveryPointFile ? `${p.reason} (a broker then uses recovery point 0: full recovery)` : p.reason,
        { code: p.code },
        p.position,
      ),
    );
  }
  const ls = log.logStartOffset;
  const cp = log.checkpoints;
  const lsCp = cp.logStartOffset.get(key);
  const file = (n: string) => join(logDir, n);
  if (lsCp !== undefined && lsCp > logEndOffset) {
    out.push(finding('error', 'checkpoint-beyond-log-end', file('log-start-offset-checkpoint'), `log start offset ${lsCp} is above the log end offset ${logEndOffset}: a broker deletes every segment at startup (segment files were lost?)`, { partition: key, checkpoint: j(lsCp), logEndOffset: j(logEndOffset) }));
  }
  const rp = cp.recoveryPoint.get(key);
  if (rp !== undefined && rp > logEndOffset) {
    out.push(finding('warning', 'checkpoint-beyond-log-end', file('recovery-point-offset-checkpoint'), `recovery point ${rp} is above the log end offset ${logEndOffset}: data the broker had flushed is missing (a broker uses min(recovery point, log end))`, { partition: key, checkpoint: j(rp), logEndOffset: j(logEndOffset) }));
  }
  const hw = cp.highWatermark.get(key);
  if (hw !== undefined && hw > logEndOffset) {
    out.push(finding('warning', 'checkpoint-beyond-log-end', file('replication-offset-checkpoint'), `high watermark ${hw} is above the log end offset ${logEndOffset}: committed records are missing here (a replica refetches them from the leader)`, { partition: key, checkpoint: j(hw), logEndOffset: j(logEndOffset) }));
  } else if (hw !== undefined && hw < ls) {
    out.push(finding('warning', 'checkpoint-below-log-start', file('replication-offset-checkpoint'), `high watermark ${hw} is below the log start offset ${ls} (a broker raises it to the log start)`, { partition: key, checkpoint: j(hw), logStartOffset: j(ls) }));
  }
  const cl = cp.cleanerOffset.get(key);
  if (cl !== undefined && cl > logEndOffset) {
    out.push(finding('info', 'checkpoint-beyond-log-end', file('cleaner-offset-checkpoint'), `cleaner checkpoint ${cl} is above the log end offset ${logEndOffset}: the cleaner resets it to the log start offset`, { partition: key, checkpoint: j(cl), logEndOffset: j(logEndOffset) }));
  } else if (cl !== undefined && cl < ls) {
    out.push(finding('info', 'checkpoint-below-log-start', file('cleaner-offset-checkpoint'), `cleaner checkpoint ${cl} is below the log start offset ${ls}: the cleaner starts from the log start offset`, { partition: key, checkpoint: j(cl), logStartOffset: j(ls) }));
  }
  const epochFile = join(log.dir, 'leader-epoch-checkpoint');
  let prev: { epoch: number; startOffset: bigint } | null = null;
  for (const e of log.leaderEpochs) {
    if (e.startOffset > logEndOffset) {
      out.push(finding('warning', 'leader-epoch-beyond-log-end', epochFile, `epoch ${e.epoch} starts at offset ${e.startOffset}, after the log end offset ${logEndOffset} (a broker drops it at startup; repair removes it)`, { epoch: e.epoch, startOffset: j(e.startOffset), logEndOffset: j(logEndOffset) }));
    }
    if (prev && (e.epoch <= prev.epoch || e.startOffset < prev.startOffset)) {
      out.push(finding('warning', 'leader-epoch-order', epochFile, `entry (epoch ${e.epoch}, start ${e.startOffset}) does not follow (epoch ${prev.epoch}, start ${prev.startOffset}): epochs and start offsets must increase`, { epoch: e.epoch, startOffset: j(e.startOffset) }));
    }
    prev = e;
  }
  for (const s of log.listing.snapshots) {
    if (s.baseOffset > logEndOffset) {
      out.push(finding('warning', 'snapshot-beyond-log-end', join(log.dir, s.name), `producer snapshot at offset ${s.baseOffset} is after the log end offset ${logEndOffset} (stale after a truncation; a broker deletes it)`, { offset: j(s.baseOffset), logEndOffset: j(logEndOffset) }));
    }
  }
  return out;
}

/**
 * Findings about a log directory itself, reported once for all its partitions: checkpoint and
 * `meta.properties` files that cannot be read, and root entries a broker would not load.
 */
export function logDirFindings(d: LogDirectory): Finding[] {
  const out: Finding[] = [];
  for (const p of d.checkpoints.problems) {
    const rp = p.file.endsWith('recovery-point-offset-checkpoint');
    out.push(finding(rp ? 'warning' : 'error', 'corrupt-checkpoint', p.file, rp ? `${p.reason} (a broker then uses recovery point 0: full recovery)` : p.reason, { code: p.code }, p.position));
  }
  for (const i of d.ignored) out.push(finding('info', 'unknown-file', join(d.path, i.name), i.reason, {}));
  return out;
}

// ---------------------------------------------------------------------------------------------
// Quick check

/**
 * The cheap check a broker does at startup, from file names and index files only (no `.log` is
 * read): leftovers and orphans (LogLoader passes 1–3), missing indexes, Kafka's index sanity checks,
 * untrimmed or stale index files, and whether recovery would run.
 * @returns findings; `details.kafkaRebuild` is true where a broker would rebuild the segment's indexes.
 * @throws KlxError `io-error` when an index file exists but cannot be read.
 */
export function quickCheckPartition(log: PartitionLog): Finding[] {
  const out = folderFindings(log);
  const cleanShutdown = log.checkpoints.cleanShutdown;
  for (const ref of segmentRefs(log)) {
    for (const f of indexFileFindings(ref, readSegmentIndexes(ref), cleanShutdown)) {
      f.details.kafkaRebuild = f.code === 'missing-index' || f.code === 'corrupt-index';
      out.push(f);
    }
  }
  if (!cleanShutdown && log.segments.length > 0) {
    const rp = log.recoveryPoint ?? 0n;
    const from = log.segmentFor(rp) ?? log.segments[0]!;
    const n = log.segments.filter((s) => s.baseOffset >= from.baseOffset).length;
    out.push(
      finding('info', 'recovery-needed', join(dirname(log.dir), '.kafka_cleanshutdown'), `no clean-shutdown marker: a broker re-validates ${n} segment${n === 1 ? '' : 's'} from the recovery point ${rp} on (segment ${from.baseOffset}) and rebuilds their indexes`, {
        recoveryPoint: j(rp),
        segments: n,
      }),
    );
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Segment scan (shared with recovery planning)

/** The state carried from one segment's scan to the next (segments are scanned in order). */
export interface ScanContext {
  /** Largest last offset of the valid batches seen so far (previous segments included), or null. */
  prevLastOffset: bigint | null;
  /** The `.log` that held it. */
  prevFile: string | null;
  /** Transactions in progress: producerId → first offset of its ongoing transaction. */
  openTxns: Map<bigint, bigint>;
  /** The log directory had a clean-shutdown marker. */
  cleanShutdown: boolean;
}

/** A fresh {@link ScanContext}. */
export function newScanContext(cleanShutdown: boolean): ScanContext {
  return { prevLastOffset: null, prevFile: null, openTxns: new Map(), cleanShutdown };
}

/** Where a segment stops being a clean run of valid batches. */
export interface InvalidPoint {
  /** Byte position in the `.log`. */
  position: number;
  /** `damage`: bytes that are not a batch; `crc`: a batch failing its CRC; `offset`: a valid batch with impossible offsets. */
  kind: 'damage' | 'crc' | 'offset';
  reason: string;
}

/** An ABORT marker seen in a segment, with what the log says about its transaction. */
export interface AbortMarker {
  producerId: bigint;
  /** Offset of the marker. */
  offset: bigint;
  /** First offset of the aborted transaction; null when the log does not show its start (empty transaction, or started before the log start). */
  firstOffset: bigint | null;
  /** Last stable offset right after the abort (first offset of the earliest other open transaction, else offset + 1); null when `firstOffset` is. */
  lastStableOffset: bigint | null;
}

/** What one pass over a segment found. */
export interface SegmentScan {
  ref: SegmentFilesRef;
  /** Size of the `.log` in bytes. */
  logSize: number;
  indexes: ParsedIndexes;
  findings: Finding[];
  /** Batches (v2) or top-level legacy messages that pass their CRC. */
  validBatches: number;
  /** Their records (recordsCount as stored; with `deep`, decoded records). */
  records: number;
  /** The first point where the segment stops being a clean run of valid, ordered batches; null when none. */
  firstInvalid: InvalidPoint | null;
  /** CRC-valid batches at or after {@link firstInvalid} (0: everything from there on is not a batch: a tail). */
  validBatchesAfterInvalid: number;
  recordsAfterInvalid: number;
  /** Offset after the last valid batch before {@link firstInvalid} (or of the whole segment); null when there is none. */
  nextOffsetBeforeInvalid: bigint | null;
  /** Offset after the last CRC-valid batch anywhere in the segment; null when none. */
  nextOffset: bigint | null;
  /** Largest batch max timestamp (−1 when none). */
  maxTimestamp: bigint;
  /** ABORT markers in offset order. */
  abortMarkers: AbortMarker[];
  /** With `indexFacts`: every offset/time index entry and the batch it resolves to. */
  indexFacts?: IndexFileFacts[];
}

/**
 * The decoded content of one `.index` / `.timeindex` file and, per entry, the batch of the `.log`
 * it resolves to (the shape of `EXPECTED-index.json` in the real-data sets). Offsets and timestamps
 * are JSON-safe numbers (decimal strings beyond 2^53).
 */
export interface IndexFileFacts {
  file: string;
  kind: 'index' | 'timeindex';
  baseOffset: number | string;
  /** File size in bytes. */
  size: number;
  entrySize: 8 | 12;
  /** Real entries (the longest valid prefix of the slots). */
  entryCount: number;
  trailingZeroEntries: number;
  trailingBytes: number;
  entries: Record<string, number | string>[];
  /**
   * Per entry. Offset index: `{positionIsBatchStart, batchBaseOffset?, batchLastOffset?}` (the batch
   * starting at the entry's position). Time index: `{batchFound, batchBaseOffset?, batchLastOffset?,
   * batchMaxTimestamp?}` (the batch holding the entry's offset).
   */
  checkAgainstLog: Record<string, number | string | boolean>[];
}

/** Options of {@link scanSegment}. */
export interface SegmentScanOptions {
  /** Decode every batch's records (decompressing) to find undecodable batches (default false). */
  deep?: boolean;
  signal?: AbortSignal;
  /** Called with the bytes of `.log` read so far in this segment. */
  onBytes?: (bytes: number) => void;
  /** Collect {@link IndexFileFacts} (default false). */
  indexFacts?: boolean;
}

const YIELD_EVERY_BYTES = 8 * 1024 * 1024;
const INT32_MAX = BigInt(MAX_RELATIVE_OFFSET);

function throwIfAborted(signal?: AbortSignal): void {
  if (signal?.aborted) throw new KlxError('cancelled', 'cancelled by the user');
}

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

function controlType(h: BatchHeader, bytes: Buffer, records: KafkaRecord[] | undefined): number | null {
  try {
    const recs = records ?? decodeV2Records(h, bytes);
    const c = recs[0]?.control;
    return c ? c.typeId : null;
  } catch {
    return null;
  }
}

/**
 * Reads one segment's `.log` once (streaming) and checks it against its index files:
 * every batch's CRC and framing; offsets strictly increasing (across segments too), not below the
 * segment base, within the int32 relative range; every offset-index entry at a batch start naming
 * that batch's last offset; every time-index entry holding the max timestamp of the batch that holds
 * its offset; the `.txnindex` against the ABORT markers. Updates `ctx` for the next segment.
 * @throws KlxError `cancelled` when `opts.signal` aborts; `not-found` / `io-error` when a file cannot be read.
 */
export async function scanSegment(ref: SegmentFilesRef, ctx: ScanContext, opts: SegmentScanOptions = {}): Promise<SegmentScan> {
  const indexes = readSegmentIndexes(ref);
  const findings = indexFileFindings(ref, indexes, ctx.cleanShutdown);
  const base = ref.baseOffset;
  const seg = { segment: j(base) };
  const idxEntries = indexes.index?.entries ?? [];
  const tixEntries = indexes.timeindex?.entries ?? [];
  let idxPtr = 0;
  let tixPtr = 0;
  let logSize = 0;
  const scan: SegmentScan = {
    ref,
    logSize: 0,
    indexes,
    findings,
    validBatches: 0,
    records: 0,
    firstInvalid: null,
    validBatchesAfterInvalid: 0,
    recordsAfterInvalid: 0,
    nextOffsetBeforeInvalid: null,
    nextOffset: null,
    maxTimestamp: -1n,
    abortMarkers: [],
  };
  const idxFacts: Record<string, number | string | boolean>[] | null = opts.indexFacts && indexes.index ? new Array(idxEntries.length) : null;
  const tixFacts: Record<string, number | string | boolean>[] | null = opts.indexFacts && indexes.timeindex ? new Array(tixEntries.length) : null;
  const markInvalid = (p: InvalidPoint) => {
    if (!scan.firstInvalid) scan.firstInvalid = p;
  };
  let firstValidInSegment = true;
  let lastValidLast: bigint | null = null;
  let sinceYield = 0;
  const indexFile = ref.index ?? ref.indexPath;
  const timeFile = ref.timeindex ?? ref.timeindexPath;
  const notBatchStart = (i: number, why: string) => {
    const e = idxEntries[i]!;
    findings.push(finding('error', 'index-entry-not-batch-start', indexFile, `entry ${i} (offset ${e.offset}, position ${e.position}) ${why}`, { ...seg, entry: i, offset: j(e.offset), logPosition: e.position }, i * 8));
  };

  for (const entry of scanLogFile(ref.log, { verifyCrc: true, deep: opts.deep ?? false })) {
    if (entry.type !== 'batch') {
      const end = entry.position + entry.size;
      logSize = Math.max(logSize, end);
      while (idxPtr < idxEntries.length && idxEntries[idxPtr]!.position < end) {
        if (idxEntries[idxPtr]!.position < entry.position) notBatchStart(idxPtr, 'points inside the previous batch');
        else notBatchStart(idxPtr, `points into ${entry.size} bytes that are not a batch`);
        idxPtr++;
      }
      const details = { ...seg, bytes: entry.size, readerCode: entry.code };
      if (entry.type === 'corrupt-region') {
        findings.push(finding('error', 'corrupt-region', ref.log, entry.reason, details, entry.position));
      } else if (entry.zeros) {
        findings.push(finding('warning', 'zero-tail', ref.log, entry.reason, details, entry.position));
      } else {
        findings.push(finding('error', 'invalid-tail', ref.log, entry.reason, details, entry.position));
      }
      markInvalid({ position: entry.position, kind: 'damage', reason: entry.reason });
      continue;
    }
    const h = entry.header;
    const end = h.position + h.size;
    logSize = Math.max(logSize, end);
    sinceYield += h.size;
    if (sinceYield >= YIELD_EVERY_BYTES) {
      sinceYield = 0;
      opts.onBytes?.(end);
      throwIfAborted(opts.signal);
      await tick();
    }
    while (idxPtr < idxEntries.length && idxEntries[idxPtr]!.position < h.position) {
      notBatchStart(idxPtr, 'points inside a batch, not at its start');
      idxPtr++;
    }
    const bd = { ...seg, baseOffset: j(h.baseOffset), lastOffset: j(h.lastOffset) };
    if (h.crcValid === false) {
      findings.push(finding('error', 'crc-mismatch', ref.log, `${h.magic === 2 ? 'batch' : `magic ${h.magic} message`} at offsets ${h.baseOffset}..${h.lastOffset} fails its CRC (stored ${h.crc >>> 0}): its bytes were altered`, { ...bd, crc: h.crc >>> 0 }, h.position));
      markInvalid({ position: h.position, kind: 'crc', reason: `CRC mismatch in the batch at offsets ${h.baseOffset}..${h.lastOffset}` });
      if (idxPtr < idxEntries.length && idxEntries[idxPtr]!.position === h.position) {
        if (idxFacts) idxFacts[idxPtr] = { batchBaseOffset: j(h.baseOffset), batchLastOffset: j(h.lastOffset), positionIsBatchStart: true };
        idxPtr++;
      }
      continue;
    }
    // Offsets (LogSegment.recover: ensureOffsetInRange; offsets strictly increase).
    let offsetProblem: string | null = null;
    if (h.magic === 2 && h.lastOffsetDelta < 0) {
      offsetProblem = `batch at offset ${h.baseOffset} has a negative lastOffsetDelta ${h.lastOffsetDelta}`;
      findings.push(finding('error', 'invalid-last-offset-delta', ref.log, offsetProblem, bd, h.position));
    }
    if (h.baseOffset < base) {
      offsetProblem = `batch at offsets ${h.baseOffset}..${h.lastOffset} starts below the segment base offset ${base}`;
      findings.push(finding('error', 'offset-below-segment-base', ref.log, offsetProblem, bd, h.position));
    } else if (h.lastOffset - base > INT32_MAX) {
      offsetProblem = `batch last offset ${h.lastOffset} is more than 2^31-1 above the segment base offset ${base} (index offset overflow)`;
      findings.push(finding('error', 'offset-overflow', ref.log, offsetProblem, bd, h.position));
    }
    if (ctx.prevLastOffset !== null && h.baseOffset <= ctx.prevLastOffset) {
      if (firstValidInSegment && ctx.prevFile !== ref.log) {
        offsetProblem = `the first batch (offsets ${h.baseOffset}..${h.lastOffset}) is not above the previous segment's last offset ${ctx.prevLastOffset}: the segments overlap`;
        findings.push(finding('error', 'segments-overlap', ref.log, offsetProblem, { ...bd, previousLastOffset: j(ctx.prevLastOffset), previousFile: ctx.prevFile }, h.position));
      } else {
        offsetProblem = `batch at offsets ${h.baseOffset}..${h.lastOffset} is not above the previous batch's last offset ${ctx.prevLastOffset}`;
        findings.push(finding('error', 'offset-not-increasing', ref.log, offsetProblem, { ...bd, previousLastOffset: j(ctx.prevLastOffset) }, h.position));
      }
    }
    if (offsetProblem) markInvalid({ position: h.position, kind: 'offset', reason: offsetProblem });
    if (entry.error) {
      findings.push(finding('error', 'corrupt-batch', ref.log, entry.error.reason, { ...bd, code: entry.error.code }, h.position));
    }
    firstValidInSegment = false;
    const count = entry.records && opts.deep ? entry.records.length : h.recordCount;
    scan.validBatches++;
    scan.records += count;
    if (scan.firstInvalid) {
      scan.validBatchesAfterInvalid++;
      scan.recordsAfterInvalid += count;
    } else {
      scan.nextOffsetBeforeInvalid = h.lastOffset + 1n;
    }
    scan.nextOffset = h.lastOffset + 1n;
    if (h.maxTimestamp > scan.maxTimestamp) scan.maxTimestamp = h.maxTimestamp;

    // Offset index entry at this batch's start.
    if (idxPtr < idxEntries.length && idxEntries[idxPtr]!.position === h.position) {
      const i = idxPtr++;
      const e = idxEntries[i]!;
      const ed = { ...bd, entry: i, entryOffset: j(e.offset), logPosition: e.position };
      if (idxFacts) idxFacts[i] = { batchBaseOffset: j(h.baseOffset), batchLastOffset: j(h.lastOffset), positionIsBatchStart: true };
      if (e.offset === h.lastOffset) {
        // what current brokers write
      } else if (e.offset > h.lastOffset) {
        findings.push(finding('warning', 'index-entry-above-batch', indexFile, `entry ${i} names offset ${e.offset} but the batch at position ${e.position} ends at ${h.lastOffset}`, ed, i * 8));
      } else if (e.offset >= h.baseOffset) {
        findings.push(finding('info', 'index-entry-older-broker', indexFile, `entry ${i} names offset ${e.offset}, inside the batch ${h.baseOffset}..${h.lastOffset} at position ${e.position} (older brokers indexed the first offset of an append; current ones the last)`, ed, i * 8));
      } else if (lastValidLast !== null && e.offset <= lastValidLast) {
        findings.push(finding('error', 'index-entry-below-batch', indexFile, `entry ${i} names offset ${e.offset} but the batch at position ${e.position} starts at ${h.baseOffset}: a lookup of offsets ${e.offset}..${lastValidLast} would start past them`, ed, i * 8));
      } else {
        findings.push(finding('info', 'index-entry-older-broker', indexFile, `entry ${i} names offset ${e.offset}, in the offset hole before the batch ${h.baseOffset}..${h.lastOffset} at position ${e.position} (harmless for lookups)`, ed, i * 8));
      }
    }
    // Time index entries whose offset falls up to this batch.
    while (tixPtr < tixEntries.length && tixEntries[tixPtr]!.offset <= h.lastOffset) {
      const i = tixPtr++;
      const e = tixEntries[i]!;
      const ed = { ...bd, entry: i, entryOffset: j(e.offset), timestamp: j(e.timestamp), batchMaxTimestamp: j(h.maxTimestamp) };
      if (tixFacts) tixFacts[i] = e.offset >= h.baseOffset ? { batchBaseOffset: j(h.baseOffset), batchFound: true, batchLastOffset: j(h.lastOffset), batchMaxTimestamp: j(h.maxTimestamp) } : { batchFound: false };
      if (e.offset >= h.baseOffset) {
        if (e.timestamp !== h.maxTimestamp) {
          findings.push(finding('error', 'time-index-timestamp-mismatch', timeFile, `entry ${i} (timestamp ${e.timestamp}, offset ${e.offset}) but the batch ${h.baseOffset}..${h.lastOffset} holding that offset has max timestamp ${h.maxTimestamp}`, ed, i * 12));
        }
      } else {
        findings.push(finding('warning', 'time-index-entry-in-hole', timeFile, `entry ${i} (timestamp ${e.timestamp}) names offset ${e.offset}, which no batch holds (the next batch starts at ${h.baseOffset})`, ed, i * 12));
      }
    }
    // Transactions (spec §7, §9.3).
    if (h.magic === 2) trackTransactions(h, entry.bytes, entry.records, ctx, scan);
    lastValidLast = h.lastOffset;
    if (ctx.prevLastOffset === null || h.lastOffset > ctx.prevLastOffset) ctx.prevLastOffset = h.lastOffset;
    ctx.prevFile = ref.log;
  }
  scan.logSize = logSize;
  opts.onBytes?.(logSize);
  // Entries left: past the last batch.
  for (; idxPtr < idxEntries.length; idxPtr++) {
    const e = idxEntries[idxPtr]!;
    if (e.position >= logSize) {
      findings.push(finding('error', 'index-entry-past-end', indexFile, `entry ${idxPtr} (offset ${e.offset}) points at position ${e.position}, at or after the end of the ${logSize}-byte .log (stale after a truncation or crash)`, { ...seg, entry: idxPtr, offset: j(e.offset), logPosition: e.position, logSize }, idxPtr * 8));
    } else notBatchStart(idxPtr, 'points inside the last batch');
  }
  for (; tixPtr < tixEntries.length; tixPtr++) {
    const e = tixEntries[tixPtr]!;
    findings.push(finding('error', 'time-index-entry-past-end', timeFile, `entry ${tixPtr} (timestamp ${e.timestamp}) names offset ${e.offset}, after the segment's last batch${lastValidLast !== null ? ` (ends at ${lastValidLast})` : ' (the segment holds none)'}`, { ...seg, entry: tixPtr, entryOffset: j(e.offset), timestamp: j(e.timestamp) }, tixPtr * 12));
  }
  if (!ref.isActive && indexes.timeindex && scan.maxTimestamp >= 0n) {
    const last = tixEntries[tixEntries.length - 1];
    if (!last) {
      findings.push(finding('info', 'time-index-empty', timeFile, `the time index is empty although the segment's largest timestamp is ${scan.maxTimestamp} (Kafka creates a missing time index empty; retention then cannot see the segment's age)`, { ...seg, maxTimestamp: j(scan.maxTimestamp) }));
    } else if (last.timestamp < scan.maxTimestamp) {
      findings.push(finding('warning', 'time-index-missing-final-entry', timeFile, `the last entry holds timestamp ${last.timestamp} but the segment's largest timestamp is ${scan.maxTimestamp} (a broker appends it on roll): time retention and lookups see the segment as older`, { ...seg, lastEntryTimestamp: j(last.timestamp), maxTimestamp: j(scan.maxTimestamp) }, (tixEntries.length - 1) * 12));
    }
  }
  if (scan.validBatches === 0 && !scan.firstInvalid && !ref.isActive) {
    findings.push(finding('info', 'empty-segment', ref.log, 'a closed segment without batches', seg));
  }
  findings.push(...txnIndexFindings(ref, scan));
  if (opts.indexFacts) {
    scan.indexFacts = [];
    const common = (f: OffsetIndexFile | TimeIndexFile) => ({ baseOffset: j(base), size: f.fileSize, entryCount: f.entries.length, trailingZeroEntries: f.trailingZeroEntries, trailingBytes: f.trailingBytes });
    if (indexes.index && ref.index && idxFacts) {
      scan.indexFacts.push({
        file: ref.index,
        kind: 'index',
        entrySize: 8,
        ...common(indexes.index),
        entries: idxEntries.map((e) => ({ offset: j(e.offset), position: e.position, relativeOffset: e.relativeOffset })),
        checkAgainstLog: Array.from(idxFacts, (x) => x ?? { positionIsBatchStart: false }),
      });
    }
    if (indexes.timeindex && ref.timeindex && tixFacts) {
      scan.indexFacts.push({
        file: ref.timeindex,
        kind: 'timeindex',
        entrySize: 12,
        ...common(indexes.timeindex),
        entries: tixEntries.map((e) => ({ offset: j(e.offset), relativeOffset: e.relativeOffset, timestamp: j(e.timestamp) })),
        checkAgainstLog: Array.from(tixFacts, (x) => x ?? { batchFound: false }),
      });
    }
  }
  return scan;
}

function trackTransactions(h: BatchHeader, bytes: Buffer, records: KafkaRecord[] | undefined, ctx: ScanContext, scan: SegmentScan): void {
  if (h.producerId < 0n) return;
  if (h.isControl) {
    const type = controlType(h, bytes, records);
    if (type !== CONTROL_ABORT && type !== CONTROL_COMMIT) return;
    const first = ctx.openTxns.get(h.producerId) ?? null;
    ctx.openTxns.delete(h.producerId);
    if (type === CONTROL_ABORT) {
      let lso: bigint | null = null;
      if (first !== null) {
        lso = h.baseOffset + 1n;
        for (const f of ctx.openTxns.values()) if (f < lso) lso = f;
      }
      scan.abortMarkers.push({ producerId: h.producerId, offset: h.baseOffset, firstOffset: first, lastStableOffset: lso });
    }
  } else if (h.isTransactional && !ctx.openTxns.has(h.producerId)) {
    ctx.openTxns.set(h.producerId, h.baseOffset);
  }
}

/**
 * The `.txnindex` entries a broker would hold for a scanned segment: one per ABORT marker of a
 * non-empty transaction (Kafka's `ProducerAppendInfo`: empty transactions are not indexed). Where
 * the log does not show a transaction's start (it began before the log start, or its batches were
 * cleaned away), the existing entry for that marker is kept.
 */
export function expectedTxnEntries(scan: SegmentScan): AbortedTxn[] {
  const existing = new Map<bigint, AbortedTxn>();
  for (const e of scan.indexes.txnindex?.entries ?? []) existing.set(e.lastOffset, e);
  const out: AbortedTxn[] = [];
  for (const m of scan.abortMarkers) {
    if (m.firstOffset !== null) {
      out.push({ version: 0, producerId: m.producerId, firstOffset: m.firstOffset, lastOffset: m.offset, lastStableOffset: m.lastStableOffset! });
    } else {
      const e = existing.get(m.offset);
      if (e && e.producerId === m.producerId) out.push(e);
    }
  }
  return out;
}

function txnIndexFindings(ref: SegmentFilesRef, scan: SegmentScan): Finding[] {
  const out: Finding[] = [];
  const file = ref.txnindex ?? ref.txnindexPath;
  const entries = scan.indexes.txnindex?.entries ?? [];
  const byLast = new Map<bigint, { e: AbortedTxn; i: number }>();
  entries.forEach((e, i) => byLast.set(e.lastOffset, { e, i }));
  const markers = new Map<bigint, AbortMarker>();
  for (const m of scan.abortMarkers) markers.set(m.offset, m);
  for (const m of scan.abortMarkers) {
    const hit = byLast.get(m.offset);
    const md = { segment: j(ref.baseOffset), producerId: j(m.producerId), markerOffset: j(m.offset), ...(m.firstOffset !== null ? { firstOffset: j(m.firstOffset) } : {}) };
    if (!hit) {
      if (m.firstOffset !== null) {
        out.push(finding('error', 'txn-index-missing-entry', file, `the ABORT marker of producer ${m.producerId} at offset ${m.offset} ends a transaction that started at ${m.firstOffset}, but ${ref.txnindex ? 'the .txnindex has no entry for it' : 'the segment has no .txnindex'}: read_committed readers would return the aborted records`, md));
      }
      continue;
    }
    const pos = hit.i * 34;
    if (hit.e.producerId !== m.producerId) {
      out.push(finding('error', 'txn-index-entry-mismatch', file, `entry ${hit.i} names producer ${hit.e.producerId} but the ABORT marker at offset ${m.offset} is producer ${m.producerId}'s`, { ...md, entryProducerId: j(hit.e.producerId) }, pos));
    } else if (m.firstOffset !== null && hit.e.firstOffset !== m.firstOffset) {
      out.push(finding('warning', 'txn-index-entry-mismatch', file, `entry ${hit.i} says producer ${m.producerId}'s aborted transaction starts at ${hit.e.firstOffset}; the log shows ${m.firstOffset}`, { ...md, entryFirstOffset: j(hit.e.firstOffset) }, pos));
    } else if (m.lastStableOffset !== null && hit.e.lastStableOffset !== m.lastStableOffset) {
      out.push(finding('warning', 'txn-index-entry-mismatch', file, `entry ${hit.i} has last stable offset ${hit.e.lastStableOffset}; the log gives ${m.lastStableOffset}`, { ...md, entryLastStableOffset: j(hit.e.lastStableOffset), lastStableOffset: j(m.lastStableOffset) }, pos));
    }
  }
  entries.forEach((e, i) => {
    const m = markers.get(e.lastOffset);
    if (!m) {
      out.push(finding('error', 'txn-index-unexpected-entry', file, `entry ${i} (producer ${e.producerId}, offsets ${e.firstOffset}..${e.lastOffset}) has no ABORT marker at offset ${e.lastOffset}: read_committed readers would drop that producer's records`, { segment: j(ref.baseOffset), entry: i, producerId: j(e.producerId), lastOffset: j(e.lastOffset) }, i * 34));
    }
  });
  return out;
}

// ---------------------------------------------------------------------------------------------
// Full verification

/** Progress of a verification: bytes of `.log` read so far. */
export interface VerifyProgress {
  bytesDone: number;
  bytesTotal: number;
  /** The `.log` being read. */
  file: string;
}

/** Options of {@link verifyPartition}. */
export interface VerifyOptions {
  signal?: AbortSignal;
  onProgress?: (p: VerifyProgress) => void;
  /** Decode every record (decompressing batches) to find undecodable batches; default true. */
  deep?: boolean;
  /** Report unreadable log-dir checkpoint files (default true; off when reported once per log dir). */
  logDirFindings?: boolean;
  /** Also return {@link IndexFileFacts} for every index file (default false). */
  indexFacts?: boolean;
}

/** The result of {@link verifyPartition}. */
export interface VerifyReport {
  dir: string;
  topic: string;
  partition: number;
  findings: Finding[];
  counts: Record<Severity, number>;
  stats: {
    segments: number;
    /** Valid batches (v2) and top-level legacy messages. */
    batches: number;
    records: number;
    /** Bytes of `.log` read. */
    bytes: number;
  };
  logStartOffset: bigint;
  /** Offset after the last valid batch, as read (the active segment's base when it holds none). */
  logEndOffset: bigint;
  /** With `indexFacts`: the decoded index files and what each entry resolves to. */
  indexFacts?: IndexFileFacts[];
}

/**
 * Verifies a whole partition: folder leftovers, every segment (see {@link scanSegment}), and the
 * checkpoints against the offsets actually found. Read-only.
 * @returns the findings (in folder, segment, checkpoint order) with counts and totals.
 * @throws KlxError `cancelled` when `opts.signal` aborts; `io-error` / `not-found` when a file
 *   disappears or cannot be read while verifying.
 */
export async function verifyPartition(log: PartitionLog, opts: VerifyOptions = {}): Promise<VerifyReport> {
  const findings = folderFindings(log);
  const refs = segmentRefs(log);
  const ctx = newScanContext(log.checkpoints.cleanShutdown);
  const bytesTotal = log.segments.reduce((s, x) => s + Math.max(0, x.size), 0);
  let bytesBefore = 0;
  let batches = 0;
  let records = 0;
  let logEnd: bigint | null = null;
  let indexFacts: IndexFileFacts[] | undefined;
  for (const ref of refs) {
    throwIfAborted(opts.signal);
    const scan = await scanSegment(ref, ctx, {
      deep: opts.deep ?? true,
      indexFacts: opts.indexFacts,
      signal: opts.signal,
      onBytes: (b) => opts.onProgress?.({ bytesDone: bytesBefore + b, bytesTotal, file: ref.log }),
    });
    bytesBefore += scan.logSize;
    batches += scan.validBatches;
    records += scan.records;
    findings.push(...scan.findings);
    if (scan.indexFacts) (indexFacts ??= []).push(...scan.indexFacts);
    if (ref.isActive) logEnd = scan.nextOffset ?? ref.baseOffset;
  }
  const logEndOffset = logEnd ?? log.logStartOffset;
  findings.push(...checkpointFindings(log, logEndOffset, opts.logDirFindings ?? true));
  return {
    dir: log.dir,
    topic: log.topic,
    partition: log.partition,
    findings,
    counts: countFindings(findings),
    stats: { segments: refs.length, batches, records, bytes: bytesBefore },
    logStartOffset: log.logStartOffset,
    logEndOffset,
    ...(indexFacts ? { indexFacts } : {}),
  };
}
