/**
 * Checking a partition folder before writing to it: refuses (pointing at `klx repair`) a folder a
 * broker would have to recover first (LogLoader.recoverLog, LogSegment.recover), and loads the active segment's state the writer keeps in
 * memory. Reads only.
 */
import { basename, join } from 'node:path';
import { KlxError } from '../errors.ts';
import { crcAlgorithm, crcMismatchText } from '../format/crc.ts';
import { scanLogFile } from '../format/log-reader.ts';
import type { BatchHeader } from '../format/types.ts';
import { LEADER_EPOCH_CHECKPOINT_FILE, RECOVERY_POINT_CHECKPOINT_FILE, REPLICATION_OFFSET_CHECKPOINT_FILE, segmentFileName } from '../files/file-names.ts';
import { MAX_RELATIVE_OFFSET, OFFSET_INDEX_ENTRY_SIZE } from '../files/offset-index.ts';
import { TIME_INDEX_ENTRY_SIZE } from '../files/time-index.ts';
import type { PartitionLog } from './partition-log.ts';
import { segmentJitter } from './roll-rule.ts';
import { brokerTailAtLoad } from './unrecovered-tail.ts';

/** In-memory state of the active segment, kept equal to what is on disk after each write. */
export interface ActiveSegmentState {
  baseOffset: bigint;
  logPath: string;
  indexPath: string;
  timeIndexPath: string;
  /** Bytes of the `.log`. */
  size: number;
  /** Whether `.index` / `.timeindex` exist (an empty segment may lack them). */
  indexFilesExist: boolean;
  firstBatchMaxTimestamp: bigint | null;
  createdMs: bigint;
  jitterMs: bigint;
  offsetIndexEntries: number;
  /** Kafka's `LogSegment.bytesSinceLastIndexEntry`: bytes appended since the last offset-index entry (from its position). */
  bytesSinceLastIndexEntry: number;
  /** Time-index entries other than a trailing final entry. */
  timeRegularEntries: number;
  /** Timestamp of the last of those (−1 when none). */
  lastRegularTimestamp: bigint;
  /** The trailing final entry on disk, if any. */
  timeFinal: { timestamp: bigint; offset: bigint } | null;
  /** Largest batch maxTimestamp in the segment and the last offset of the batch holding it (−1 when none). */
  maxTimestamp: bigint;
  offsetOfMaxTimestamp: bigint;
}

/** A KlxError whose message points at `klx repair` (`details.needsRepair: true`). */
export function needsRepair(code: KlxError['code'], dir: string, reason: string, where: { file?: string; position?: number; details?: Record<string, unknown> } = {}, flag = ''): KlxError {
  return new KlxError(code, `${reason}; this partition must be repaired before anything is appended: run \`klx repair${flag} ${dir}\``, {
    ...where,
    details: { ...(where.details ?? {}), needsRepair: true },
  });
}

// ---------------------------------------------------------------------------------------------
// Checking a folder before writing

export interface Inspection {
  active: ActiveSegmentState | null;
  logEndOffset: bigint;
  currentEpoch: number;
}

/** The log-dir and partition checkpoints this module rewrites. */
const REWRITTEN_FILES = new Set([LEADER_EPOCH_CHECKPOINT_FILE, RECOVERY_POINT_CHECKPOINT_FILE, REPLICATION_OFFSET_CHECKPOINT_FILE]);

/**
 * Checks that a broker's recovery (LogLoader.recoverLog) would change nothing that matters before we append (see the
 * module comment), and loads the active segment's state. Reads only.
 */
export function inspectForWriting(log: PartitionLog, nowMs: bigint, random: () => number): Inspection {
  const dir = log.dir;
  for (const t of log.listing.transient) {
    if (t.suffix === 'tmp') continue; // a checkpoint replacement cut short: harmless, overwritten by the next write
    throw needsRepair('invalid-argument', dir, `leftover .${t.suffix} file ${t.name} from an interrupted ${t.suffix === 'deleted' ? 'deletion' : 'compaction'}`, { file: join(dir, t.name) });
  }
  for (const o of log.listing.orphanIndexes) {
    throw needsRepair('invalid-argument', dir, `index file ${o.name} has no .log (left by an interrupted operation)`, { file: join(dir, o.name) });
  }
  for (const p of log.problems) {
    // A symlink leading out of the folder is never written through (files/symlinks.ts).
    if (p.code === 'symlink-outside') throw needsRepair('invalid-argument', dir, `${basename(p.file)}: ${p.reason}`, { file: p.file });
    if (REWRITTEN_FILES.has(basename(p.file)) && p.code !== 'leftover-file' && p.code !== 'orphan-index') {
      throw needsRepair(p.code, dir, `cannot read ${basename(p.file)}: ${p.reason}`, { file: p.file, ...(p.position !== undefined ? { position: p.position } : {}) });
    }
  }
  const segments = log.segments;
  const epochs = log.leaderEpochs;
  const latestEpoch = epochs.length ? Math.max(...epochs.map((e) => e.epoch)) : -1;
  if (segments.length === 0) {
    return { active: null, logEndOffset: log.logStartOffset, currentEpoch: Math.max(latestEpoch, 0) };
  }

  const active = segments[segments.length - 1]!;
  const activeIdx = segments.length - 1;
  const name = segmentFileName(active.baseOffset, '');
  const logSize = active.files.logSize;

  // Active segment indexes: present (unless the segment is empty) and trimmed.
  const indexMissing = active.files.indexSize < 0;
  const timeMissing = active.files.timeindexSize < 0;
  if ((indexMissing || timeMissing) && logSize > 0) {
    // Kafka LogLoader.loadSegmentFiles: LogSegment.sanityCheck throws NoSuchFileException for a missing
    // .index and the segment is recovered (indexes rebuilt from the .log); a missing .timeindex is created
    // empty (timeIndexFileNewlyCreated -> resize(0)) and refilled only if the segment is recovered.
    throw needsRepair('missing-index', dir, `the active segment has no ${indexMissing ? '.index' : '.timeindex'} file (${indexMissing ? 'a broker recovers the segment and rebuilds it at startup: LogLoader.loadSegmentFiles' : 'a broker creates it empty at startup, LogSegment.sanityCheck, and refills it only when it recovers the segment'})`, { file: indexMissing ? active.files.index : active.files.timeindex });
  }
  const oi = active.offsetIndex();
  const ti = active.timeIndex();
  for (const [file, idx, kind, entrySize] of [[active.files.index, oi, 'offset index', OFFSET_INDEX_ENTRY_SIZE], [active.files.timeindex, ti, 'time index', TIME_INDEX_ENTRY_SIZE]] as const) {
    const p = idx.problems[0];
    if (p) throw needsRepair('corrupt-index', dir, `${name} ${kind}: ${p.reason}`, { file, position: p.position, details: { kind: p.kind } });
    if (idx.trailingZeroEntries > 0) {
      throw needsRepair('corrupt-index', dir, `${name} ${kind} is preallocated (${idx.trailingZeroEntries} empty slots after ${idx.entries.length} entries): the broker was running or did not shut down cleanly (a clean close trims it: AbstractIndex.close)`, { file, position: idx.entries.length * entrySize });
    }
  }
  if (logSize === 0 && (oi.entries.length > 0 || ti.entries.length > 0)) {
    throw needsRepair('corrupt-index', dir, `the active segment's .log is empty but its indexes have entries`, { file: oi.entries.length ? active.files.index : active.files.timeindex });
  }

  // Kafka's recovery re-validates every segment from the one holding the recovery point (all of
  // them without one): make sure it would not truncate anything appended after it. Data below the
  // recovery point was flushed and checked by whoever set it, as a broker trusts it (LogLoader.recoverLog).
  const rp = log.recoveryPoint;
  let firstIdx = 0;
  let firstPos = 0;
  if (rp !== null && rp >= segments[0]!.baseOffset) {
    const seg = log.segmentFor(rp)!;
    firstIdx = segments.indexOf(seg);
    firstPos = seg.positionFor(rp);
  }
  type Scan = { ok: true; last: BatchHeader | null; maxTs: bigint; offsetOfMax: bigint } | { ok: false; dataDamage: boolean; err: KlxError };
  let lastHeader: BatchHeader | null = null;
  let maxTs = -1n;
  let offsetOfMax = -1n;
  let scannedActiveFrom = 0;
  for (let i = firstIdx; i < segments.length; i++) {
    const seg = segments[i]!;
    const segName = segmentFileName(seg.baseOffset, '.log');
    const nextBase = i + 1 < segments.length ? segments[i + 1]!.baseOffset : null;
    const isActive = i === activeIdx;
    const run = (start: number): Scan => {
      let prevLast: bigint | null = null;
      let last: BatchHeader | null = null;
      let mts = -1n;
      let mOff = -1n;
      // Active segment: offset-index entries at/after `start` must name batch starts and their last offsets.
      const toCheck = isActive ? oi.entries.filter((e) => e.position >= start) : [];
      let j = 0;
      const badIndex = (reason: string): Scan => ({
        ok: false,
        dataDamage: false,
        err: needsRepair('corrupt-index', dir, `${name}.index entry (offset ${toCheck[j]!.offset}, position ${toCheck[j]!.position}) ${reason}`, { file: active.files.index, position: oi.entries.indexOf(toCheck[j]!) * OFFSET_INDEX_ENTRY_SIZE }),
      });
      for (const e of scanLogFile(seg.files.log, { start, verifyCrc: true, resync: false })) {
        if (e.type !== 'batch') {
          // The last segment's tail after a clean shutdown: a broker would append after it (unrecovered-tail.ts) and klx repair
          // leaves it, so only the cut it asks for makes the folder writable.
          const kept = isActive && e.type === 'invalid-tail' && log.startupCleanShutdown && brokerTailAtLoad(seg.files.log, e.position, e.position + e.size).kind === 'ignored';
          const why = kept ? `; after a clean shutdown a broker does not recover this segment (LogLoader.recoverLog) and would write the batch after these bytes, where reads from before them frame them with it (FileRecords.append, FileRecords.searchForOffsetWithSize): cut them first` : '';
          return { ok: false, dataDamage: true, err: needsRepair(e.code, dir, `${segName}: ${e.reason}${why}`, { file: seg.files.log, position: e.position, details: { damage: e.type, size: e.size } }, kept ? ' --truncate-at-corruption' : '') };
        }
        const h = e.header;
        if (h.crcValid === false) return { ok: false, dataDamage: true, err: needsRepair('crc-mismatch', dir, `${segName}: the batch at baseOffset ${h.baseOffset} fails its CRC: ${crcMismatchText(h)}`, { file: seg.files.log, position: h.position, details: { crc: h.crc >>> 0, computedCrc: h.computedCrc ?? null, crcAlgorithm: crcAlgorithm(h.magic) } }) };
        if (h.baseOffset < seg.baseOffset || h.lastOffset - seg.baseOffset > BigInt(MAX_RELATIVE_OFFSET) || (prevLast !== null && h.baseOffset <= prevLast) || (nextBase !== null && h.lastOffset >= nextBase)) {
          return {
            ok: false,
            dataDamage: true,
            err: needsRepair('corrupt-batch', dir, `${segName}: the batch at baseOffset ${h.baseOffset} (offsets ${h.baseOffset}..${h.lastOffset}) is out of order or outside the segment`, { file: seg.files.log, position: h.position }),
          };
        }
        if (j < toCheck.length) {
          if (toCheck[j]!.position < h.position) return badIndex('points inside a batch');
          if (toCheck[j]!.position === h.position) {
            // The key is the largest offset of the append that started there: this batch's last
            // offset, or a later one when the append carried several batches (replica fetch, cleaner).
            if (toCheck[j]!.offset < h.lastOffset) return badIndex(`names an offset below ${h.lastOffset}, the last offset of the batch there`);
            j++;
          }
        }
        prevLast = h.lastOffset;
        last = h;
        if (h.maxTimestamp > mts) {
          mts = h.maxTimestamp;
          mOff = h.lastOffset;
        }
      }
      if (j < toCheck.length) return badIndex('does not point at a batch');
      const lastEntry = toCheck[toCheck.length - 1];
      if (lastEntry && last && lastEntry.offset > last.lastOffset) {
        j = toCheck.length - 1;
        return badIndex(`names an offset beyond the last batch (${last.lastOffset})`);
      }
      return { ok: true, last, maxTs: mts, offsetOfMax: mOff };
    };
    const from = i === firstIdx ? firstPos : 0;
    let r = run(from);
    let usedFrom = from;
    if (!r.ok && r.dataDamage && from > 0) {
      // The position came from an index lookup; check the whole segment before blaming the data.
      r = run(0);
      usedFrom = 0;
    }
    if (!r.ok) throw r.err;
    if (isActive) {
      lastHeader = r.last;
      maxTs = r.maxTs;
      offsetOfMax = r.offsetOfMax;
      scannedActiveFrom = usedFrom;
    }
  }
  const logEndOffset = lastHeader ? lastHeader.lastOffset + 1n : active.baseOffset;
  const lastTime = ti.entries[ti.entries.length - 1];
  if (lastTime && lastTime.offset >= logEndOffset) {
    throw needsRepair('corrupt-index', dir, `${name}.timeindex names offset ${lastTime.offset}, at or beyond the log end offset ${logEndOffset}`, { file: active.files.timeindex, position: (ti.entries.length - 1) * TIME_INDEX_ENTRY_SIZE });
  }

  // Largest timestamp so far: exact when the whole segment was read, else Kafka's way (the last
  // time-index entry, raised only by a strictly larger batch read after it: LogSegment.readMaxTimestampAndOffsetSoFar, LogSegment.append).
  if (scannedActiveFrom > 0 && lastTime && lastTime.timestamp >= maxTs) {
    maxTs = lastTime.timestamp;
    offsetOfMax = lastTime.offset;
  }
  const lastOffsetEntry = oi.entries[oi.entries.length - 1];
  // A trailing time entry after the last offset-index entry can only be a final (close/roll) entry.
  const finalOnDisk = lastTime !== undefined && (lastOffsetEntry === undefined || lastTime.offset > lastOffsetEntry.offset);
  const regular = ti.entries.length - (finalOnDisk ? 1 : 0);
  const first = logSize > 0 ? active.firstBatch() : null;
  const state: ActiveSegmentState = {
    baseOffset: active.baseOffset,
    logPath: active.files.log,
    indexPath: active.files.index,
    timeIndexPath: active.files.timeindex,
    size: logSize,
    indexFilesExist: !indexMissing && !timeMissing,
    firstBatchMaxTimestamp: first ? first.maxTimestamp : null,
    createdMs: nowMs,
    jitterMs: segmentJitter(log.config.config, random),
    offsetIndexEntries: oi.entries.length,
    bytesSinceLastIndexEntry: logSize - (lastOffsetEntry?.position ?? 0),
    timeRegularEntries: regular,
    lastRegularTimestamp: regular > 0 ? ti.entries[regular - 1]!.timestamp : -1n,
    timeFinal: finalOnDisk ? { timestamp: lastTime!.timestamp, offset: lastTime!.offset } : null,
    maxTimestamp: maxTs,
    offsetOfMaxTimestamp: offsetOfMax,
  };
  const lastEpoch = lastHeader && lastHeader.magic === 2 ? lastHeader.partitionLeaderEpoch : -1;
  return { active: state, logEndOffset, currentEpoch: Math.max(latestEpoch, lastEpoch, 0) };
}
