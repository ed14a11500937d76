/**
 * Integrity checks of a partition log (spec §3–§4, §7, §9, §10.4, §11): the cheap startup sanity
 * check a broker runs, and a full verification of every batch and every index entry.
 *
 * Follows Kafka's `OffsetIndex.sanityCheck`, `TimeIndex.sanityCheck`, `TransactionIndex.sanityCheck`,
 * `LogLoader` (passes 1–3: leftovers, orphan indexes, missing indexes), `LogSegment.recover` (what a
 * valid batch is: size, CRC, offsets inside the segment's relative range) and
 * `kafka-dump-log.sh --verify-index-only`. Everything here is read-only.
 *
 * Findings and their severities are described in `findings.ts`; the checks that need no `.log`
 * read (folder, index sanity, checkpoints, the quick check) are in `quick-check.ts`. This module
 * reads every batch: {@link scanSegment} (shared with recovery planning) and {@link verifyPartition}.
 *
 * Facts about real broker data that the checks honour (checked against `shared/kafka-real-data`):
 * - offset-index entries name the **last** offset of the batch that starts at their position;
 * - time-index entries carry the max timestamp of a batch and an offset **inside** that batch. Kafka
 *   trunk writes (LogSegment.append, KAFKA-16310) the batch's last offset (spec §9.2), but brokers up to the 3.x line wrote the offset
 *   of the record holding the max timestamp (e.g. `multisegment-rolled`), so any offset within
 *   `[baseOffset, lastOffset]` of the batch is accepted;
 * - a leader epoch whose start offset equals the log end offset is normal (a leader elected after
 *   the last append: Partition.makeLeader, LeaderEpochFileCache.assign).
 *
 * Memory is bounded: `.log` files are streamed; only index files (≤ `segment.index.bytes`) are read
 * whole.
 */
import { KlxError } from '../errors.ts';
import { crcFailureConsequence, KRAFT_METADATA_TOPIC, startupRecoveryOf, type StartupRecovery } from './corruption-consequences.ts';
import { unrecoveredTailText } from './unrecovered-tail.ts';
import { crcAlgorithm, crcMismatchText } from '../format/crc.ts';
import { CONTROL_ABORT, CONTROL_COMMIT } from '../format/control.ts';
import { scanLogFile } from '../format/log-reader.ts';
import { checkV2Records, readableRecordCount, streamV2Records } from '../format/record-batch.ts';
import type { BatchHeader, KafkaRecord } from '../format/types.ts';
import { MAX_RELATIVE_OFFSET, type OffsetIndexFile } from '../files/offset-index.ts';
import type { TimeIndexFile } from '../files/time-index.ts';
import type { AbortedTxn } from '../files/txn-index.ts';
import type { PartitionLog } from './partition-log.ts';
import { countFindings, finding, j, type Finding, type Severity } from './findings.ts';
import { checkpointFindings, folderFindings, indexFileFindings, readSegmentIndexes, segmentRefs, type ParsedIndexes, type SegmentFilesRef } from './quick-check.ts';

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
  /**
   * When set, the transaction closes of the scan are traced here so that a scan started without
   * the transactions open before the segment can be corrected afterwards (`verify-parallel.ts`).
   */
  txnTrace?: TxnTrace;
}

/** The transaction markers of one segment's scan, as `verify-parallel.ts` needs them to correct a scan started without the transactions open before it. */
export interface TxnTrace {
  /** COMMIT and ABORT markers met so far. */
  closes: number;
  /** Per producer: the number of its first COMMIT/ABORT marker in the scan (1-based, counting every marker). */
  firstClose: Map<bigint, number>;
  /** Per entry of `SegmentScan.abortMarkers`: its marker number, and the last stable offset computed from the transactions the scan saw open (offset + 1 at most), even when `firstOffset` is null. */
  aborts: { close: number; lsoCandidate: bigint }[];
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
  /** Complete batches whose CRC fails (framing intact), and their records as stored. */
  damagedBatches: number;
  damagedRecords: number;
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
  /** Offsets of the first CRC-valid batch of the segment (the one checked against the previous segment's last offset); null when none. */
  firstValid: { baseOffset: bigint; lastOffset: bigint } | null;
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
  /** Whether a broker recovers this segment at startup: `crc-mismatch` findings then say what it does with the batch. */
  startup?: StartupRecovery;
  /** Leave out the `.txnindex` findings (the last findings of a scan), which the caller makes once its ABORT markers are final (`verify-parallel.ts`). */
  deferTxnFindings?: boolean;
}

const YIELD_EVERY_BYTES = 8 * 1024 * 1024;
const INT32_MAX = BigInt(MAX_RELATIVE_OFFSET);

function throwIfAborted(signal?: AbortSignal): void {
  if (signal?.aborted) throw new KlxError('cancelled', 'cancelled by the user');
}

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

function controlType(h: BatchHeader, bytes: Buffer, records: KafkaRecord[] | undefined): number | null {
  try {
    let first = records?.[0];
    if (!records) for (const r of streamV2Records(h, bytes)) {
      first = r;
      break;
    }
    const c = first?.control;
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
    damagedBatches: 0,
    damagedRecords: 0,
    records: 0,
    firstInvalid: null,
    validBatchesAfterInvalid: 0,
    recordsAfterInvalid: 0,
    nextOffsetBeforeInvalid: null,
    nextOffset: null,
    maxTimestamp: -1n,
    abortMarkers: [],
    firstValid: null,
  };
  const idxFacts: Record<string, number | string | boolean>[] | null = opts.indexFacts && indexes.index ? new Array(idxEntries.length) : null;
  const tixFacts: Record<string, number | string | boolean>[] | null = opts.indexFacts && indexes.timeindex ? new Array(tixEntries.length) : null;
  const markInvalid = (p: InvalidPoint) => {
    if (!scan.firstInvalid) scan.firstInvalid = p;
  };
  let firstValidInSegment = true;
  let lastValidLast: bigint | null = null;
  /** Offset-index entries naming an offset above the batch at their position (see after the scan). */
  const aboveBatch: { at: number; i: number; offset: bigint; baseOffset: bigint; lastOffset: bigint; position: number }[] = [];
  let sinceYield = 0;
  const indexFile = ref.index ?? ref.indexPath;
  const timeFile = ref.timeindex ?? ref.timeindexPath;
  const notBatchStart = (i: number, why: string) => {
    const e = idxEntries[i]!;
    findings.push(finding('error', 'index-entry-not-batch-start', indexFile, `entry ${i} (offset ${e.offset}, position ${e.position}) ${why}`, { ...seg, entry: i, offset: j(e.offset), logPosition: e.position }, i * 8));
  };

  // Deep: each batch's records are checked one at a time (checkV2Records), never held as one
  // object per record (a batch may hold millions).
  const deep = opts.deep ?? false;
  for (const entry of scanLogFile(ref.log, { verifyCrc: true, reuseWindows: true })) {
    if (deep && entry.type === 'batch' && entry.header.magic === 2 && !entry.error) {
      try {
        checkV2Records(entry.header, entry.bytes);
      } catch (err) {
        const e = err instanceof KlxError ? err : new KlxError('corrupt-batch', String(err), { position: entry.header.position });
        entry.error = new KlxError(e.code, e.reason, { file: ref.log, position: e.position ?? entry.header.position, details: e.details, cause: e });
      }
    }
    if (entry.type !== 'batch') {
      const end = entry.position + entry.size;
      logSize = Math.max(logSize, end);
      while (idxPtr < idxEntries.length && idxEntries[idxPtr]!.position < end) {
        if (idxEntries[idxPtr]!.position < entry.position) notBatchStart(idxPtr, 'points inside the previous batch');
        else notBatchStart(idxPtr, `points into ${entry.size} bytes that are not a batch`);
        idxPtr++;
      }
      const details = { ...seg, bytes: entry.size, readerCode: entry.code };
      if (entry.code === 'offset-overflow') {
        findings.push(finding('error', 'offset-overflow', ref.log, entry.reason, details, entry.position));
      } else if (entry.type === 'corrupt-region') {
        findings.push(finding('error', 'corrupt-region', ref.log, entry.reason, details, entry.position));
      } else {
        // The last segment after a clean shutdown: what a broker that does not recover it makes of these bytes (unrecovered-tail.ts).
        const unrecovered = ref.isActive && opts.startup?.kind === 'clean-shutdown' ? `; ${unrecoveredTailText(ref.log, entry.position, entry.position + entry.size, scan.nextOffset ?? base, opts.startup.kraftMetadataLog ? KRAFT_METADATA_TOPIC : undefined)}` : '';
        if (entry.zeros) findings.push(finding('warning', 'zero-tail', ref.log, entry.reason + unrecovered, details, entry.position));
        else findings.push(finding('error', 'invalid-tail', ref.log, entry.reason + unrecovered, details, entry.position));
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
      findings.push(
        finding('error', 'crc-mismatch', ref.log, `${h.magic === 2 ? 'batch' : `magic ${h.magic} message`} at offsets ${h.baseOffset}..${h.lastOffset} fails its CRC: ${crcMismatchText(h)}; its bytes were altered: ${crcFailureConsequence(h, opts.startup)}`, { ...bd, crc: h.crc >>> 0, computedCrc: h.computedCrc ?? null, crcAlgorithm: crcAlgorithm(h.magic) }, h.position),
      );
      scan.damagedBatches++;
      // Not the unverified header's recordsCount: the record frames its bytes hold (readableRecordCount).
      scan.damagedRecords += readableRecordCount(h, entry.bytes);
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
    if (entry.error?.code === 'decompression-limit') {
      // A limit of this tool, not damage: a broker and a consumer decompress record by record (DefaultRecordBatch, CompletedFetch).
      findings.push(finding('info', 'batch-not-checked', ref.log, entry.error.reason, { ...bd, code: entry.error.code, ...entry.error.details }, h.position));
    } else if (entry.error) {
      findings.push(finding('error', 'corrupt-batch', ref.log, entry.error.reason, { ...bd, code: entry.error.code }, h.position));
    }
    if (firstValidInSegment) scan.firstValid = { baseOffset: h.baseOffset, lastOffset: h.lastOffset };
    firstValidInSegment = false;
    const count = h.recordCount;
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
        // Decided after the scan: inside this segment it is what brokers before KAFKA-806 wrote for a multi-batch append.
        aboveBatch.push({ at: findings.length, i, offset: e.offset, baseOffset: h.baseOffset, lastOffset: h.lastOffset, position: e.position });
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
  // Kafka before KAFKA-806 (4.0) wrote one index entry per append (LogSegment.append: its largest offset at the
  // position of its first batch), so an append of several batches (a follower's fetch) gives an entry naming an
  // offset of a later batch of the segment: lookups stay correct (they start at or before the target's batch).
  for (const a of aboveBatch) {
    if (lastValidLast === null || a.offset > lastValidLast) continue;
    const f = findings[a.at]!;
    findings[a.at] = finding('info', 'index-entry-older-broker', f.file, `entry ${a.i} names offset ${a.offset}, above the batch ${a.baseOffset}..${a.lastOffset} at position ${a.position} but inside this segment: brokers before KAFKA-806 (Kafka 4.0) indexed an append of several batches (a follower's fetch) with its last offset at the position of its first batch (LogSegment.append); harmless for lookups`, f.details, f.position);
  }
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
      findings.push(finding('warning', 'time-index-missing-final-entry', timeFile, `the last entry holds timestamp ${last.timestamp} but the segment's largest timestamp is ${scan.maxTimestamp} (a broker appends it on roll: LogSegment.onBecomeInactiveSegment): time retention and lookups see the segment as older`, { ...seg, lastEntryTimestamp: j(last.timestamp), maxTimestamp: j(scan.maxTimestamp) }, (tixEntries.length - 1) * 12));
    }
  }
  if (scan.validBatches === 0 && !scan.firstInvalid && !ref.isActive) {
    findings.push(finding('info', 'empty-segment', ref.log, 'a closed segment without batches', seg));
  }
  if (!opts.deferTxnFindings) findings.push(...txnIndexFindings(ref, scan.abortMarkers, indexes.txnindex?.entries ?? []));
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
    const trace = ctx.txnTrace;
    if (trace) {
      trace.closes++;
      if (!trace.firstClose.has(h.producerId)) trace.firstClose.set(h.producerId, trace.closes);
    }
    if (type === CONTROL_ABORT) {
      let lso: bigint | null = null;
      if (first !== null || trace) {
        lso = h.baseOffset + 1n;
        for (const f of ctx.openTxns.values()) if (f < lso) lso = f;
      }
      trace?.aborts.push({ close: trace.closes, lsoCandidate: lso! });
      scan.abortMarkers.push({ producerId: h.producerId, offset: h.baseOffset, firstOffset: first, lastStableOffset: first !== null ? lso : null });
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

/** The `.txnindex` findings of a scanned segment: its entries against its ABORT markers (see {@link SegmentScanOptions.deferTxnFindings}). */
export function txnIndexFindings(ref: SegmentFilesRef, abortMarkers: readonly AbortMarker[], entries: readonly AbortedTxn[]): Finding[] {
  const out: Finding[] = [];
  const file = ref.txnindex ?? ref.txnindexPath;
  const byLast = new Map<bigint, { e: AbortedTxn; i: number }>();
  entries.forEach((e, i) => byLast.set(e.lastOffset, { e, i }));
  const markers = new Map<bigint, AbortMarker>();
  for (const m of abortMarkers) markers.set(m.offset, m);
  for (const m of abortMarkers) {
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
    /** Batches (v2) and top-level legacy messages on disk, CRC-damaged ones included. */
    batches: number;
    /** Their records (as stored for damaged ones). */
    records: number;
    /** Of those, the batches whose CRC fails and their records. */
    damagedBatches: number;
    damagedRecords: number;
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
  const ctx = newScanContext(log.startupCleanShutdown);
  const bytesTotal = log.segments.reduce((s, x) => s + Math.max(0, x.size), 0);
  let bytesBefore = 0;
  let batches = 0;
  let records = 0;
  let damagedBatches = 0;
  let damagedRecords = 0;
  let logEnd: bigint | null = null;
  let indexFacts: IndexFileFacts[] | undefined;
  const bases = refs.map((r) => r.baseOffset);
  for (const [i, ref] of refs.entries()) {
    throwIfAborted(opts.signal);
    const scan = await scanSegment(ref, ctx, {
      startup: startupRecoveryOf(bases, i, log.startupCleanShutdown, log.startupRecoveryPoint, ref.index === null, log.topic),
      deep: opts.deep ?? true,
      indexFacts: opts.indexFacts,
      signal: opts.signal,
      onBytes: (b) => opts.onProgress?.({ bytesDone: bytesBefore + b, bytesTotal, file: ref.log }),
    });
    bytesBefore += scan.logSize;
    batches += scan.validBatches + scan.damagedBatches;
    records += scan.records + scan.damagedRecords;
    damagedBatches += scan.damagedBatches;
    damagedRecords += scan.damagedRecords;
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
    stats: { segments: refs.length, batches, records, damagedBatches, damagedRecords, bytes: bytesBefore },
    logStartOffset: log.logStartOffset,
    logEndOffset,
    ...(indexFacts ? { indexFacts } : {}),
  };
}
