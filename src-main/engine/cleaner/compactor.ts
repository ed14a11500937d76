/**
 * What the compactor does to one batch (spec §13.5–§13.8; Kafka's `Cleaner.cleanInto` record filter
 * — `checkBatchRetention`, `shouldRetainRecord` — and `MemoryRecords.filterTo`,
 * `buildRetainedRecordsInto`, `DefaultRecordBatch.writeEmptyHeader`).
 *
 * Batch decision: RETAIN_EMPTY when the batch is the last data batch of a still-active producer (or,
 * for a producer whose last entry is a marker, a control batch of its current epoch), or when it ends
 * right before the first uncleanable offset; else DELETE when it is discarded whole (aborted data, a
 * discardable marker past its horizon); else DELETE_EMPTY.
 *
 * Record decision (data batches; the rule set decides keyless records and tombstones): a record past
 * the map's latest offset is kept; a keyless record is dropped (kafka) or kept (classic); a record
 * with a later offset for its key in the map is dropped; a tombstone is kept while the rule set says
 * so. Control batches keep their records unless the batch is discarded.
 *
 * Output: a batch whose records all survive and that needs no delete horizon is copied byte for
 * byte; otherwise it is rebuilt with the same magic, codec (recompressed at the default level),
 * timestamp type, producer fields, transactional/control flags and partitionLeaderEpoch, the
 * original baseOffset and lastOffsetDelta (offsets are never renumbered), baseTimestamp = the delete
 * horizon (a new one `now + delete.retention.ms` when tombstones or a discardable marker remain and
 * the batch has none) or the first survivor's timestamp, record timestamp deltas re-encoded against
 * it (for LogAppendTime every record reads as the batch maxTimestamp), maxTimestamp = the survivors'
 * largest (CreateTime) or the original (LogAppendTime), and a new CRC. With no survivor and
 * RETAIN_EMPTY, a 61-byte header keeps the batch's offsets, producer fields and maxTimestamp (codec
 * none, no horizon, baseTimestamp −1).
 *
 * The v2 data path walks records without allocating (`record-walk.ts`) and re-encodes a survivor by
 * writing a new length and timestamp delta in front of its unchanged bytes.
 */
import { KlxError } from '../errors.ts';
import { compress, compressionId } from '../format/compression.ts';
import { crc32c } from '../format/crc.ts';
import { encodeLegacy } from '../format/legacy.ts';
import type { BatchEntry } from '../format/log-reader.ts';
import { decodeV2Records, encodeBatch, inflateRecordsArea } from '../format/record-batch.ts';
import { ATTR_CONTROL, ATTR_DELETE_HORIZON, ATTR_TIMESTAMP_TYPE, ATTR_TRANSACTIONAL, V2_HEADER_SIZE, type BatchHeader, type KafkaRecord } from '../format/types.ts';
import { OffsetRangeList, type CompactionReason } from './cleaner-plan.ts';
import type { CleanerRules } from './cleaner-rules.ts';
import type { SkimpyOffsetMap } from './offset-map.ts';
import type { SupersededOffsets } from './superseded-offsets.ts';
import type { LastRecord } from './producer-state.ts';
import { newRecordPeek, newRecordView, peekRecordAt, readRecordAt, writeReencoded } from './record-walk.ts';
import { explainBatch, explainControlRecord, explainRecord, type BatchFate, type ExplainContext } from './compaction-decisions.ts';
import { bytesText } from './decisions.ts';
import type { CleanedTransactionMetadata } from './txn-metadata.ts';

/** Reasons the compactor removes records. */
export type { CompactionReason };
const REASONS: CompactionReason[] = ['superseded', 'keyless', 'tombstone', 'aborted', 'marker'];

/** What cleaning one source segment did. */
export class SegmentStats {
  /** Batches and records read, and their span. */
  batchesRead = 0;
  recordsRead = 0;
  bytesRead = 0;
  firstOffset: bigint | null = null;
  lastOffset: bigint | null = null;
  /** Output of this segment. */
  batchesWritten = 0;
  recordsWritten = 0;
  bytesWritten = 0;
  batchesCopied = 0;
  batchesRebuilt = 0;
  emptyBatchesKept = 0;
  batchesDropped = 0;
  /** Kafka's "invalid messages": keyless records removed. */
  invalid = 0;
  readonly removed: Record<CompactionReason, OffsetRangeList> = Object.fromEntries(REASONS.map((r) => [r, new OffsetRangeList()])) as Record<CompactionReason, OffsetRangeList>;
  readonly retained = new OffsetRangeList();

  /** True when every batch read was written out unchanged. */
  get unchanged(): boolean {
    return this.batchesCopied === this.batchesRead && this.batchesWritten === this.batchesRead;
  }
}

/** The state a batch decision needs. */
export interface FilterContext {
  map: SkimpyOffsetMap;
  now: bigint;
  deleteRetentionMs: bigint;
  rules: CleanerRules;
  txn: CleanedTransactionMetadata;
  activeProducers: Map<bigint, LastRecord>;
  /** The round's first uncleanable offset (a batch ending right before it is kept, even empty). */
  upperBoundOffsetOfRound: bigint;
  /** Offsets the map pass found superseded (saves hashing dirty keys again), if kept. */
  superseded?: SupersededOffsets;
  /**
   * The map build walked every record of the source segment's v2 data batches and checked their
   * framing (it read the segment whole: `MapBuildResult.verified`), so a record whose offset
   * `superseded` marks is dropped after reading only its offset and key length (`peekRecordAt`).
   */
  recordsWalked?: boolean;
  /** Kafka's legacy (v0/v1) tombstone rule for the source segment. */
  retainLegacyDeletes: boolean;
  stats: SegmentStats;
  /** The topic's `max.message.bytes`, which bounds decompression (default Kafka's 1048588). */
  maxMessageBytes?: number;
  /** Set when the plan collects its decisions (`decisions.ts`). */
  explain?: ExplainContext;
}

/** One output batch and what the index of the cleaned segment needs from it. */
export interface FilteredBatch {
  /**
   * The batch's bytes: a view of the source batch (copied), or of a scratch buffer (rebuilt,
   * uncompressed): valid only until the next {@link filterBatch} call, so copy them before
   * (`CleanedSegment.stage`).
   */
  bytes: Buffer;
  records: number;
  baseOffset: bigint;
  lastOffset: bigint;
  /** The largest offset for the offset index (largest survivor for a rebuilt batch, else lastOffset). */
  maxOffset: bigint;
  maxTimestamp: bigint;
  /** Last offset of this batch when it holds the max timestamp (Kafka's shallow offset), −1 when none. */
  offsetOfMaxTimestamp: bigint;
  copied: boolean;
}

type Retention = 'RETAIN_EMPTY' | 'DELETE' | 'DELETE_EMPTY';

// Scratch arrays for the survivors of a v2 batch (grown as needed).
let cap = 0;
let sStart = new Int32Array(0);
let sRest = new Int32Array(0);
let sEnd = new Int32Array(0);
let sDelta = new Float64Array(0);
let sOffsetDelta = new Int32Array(0);
function ensureScratch(n: number): void {
  if (n <= cap) return;
  cap = Math.max(n, cap * 2, 1024);
  sStart = new Int32Array(cap);
  sRest = new Int32Array(cap);
  sEnd = new Int32Array(cap);
  sDelta = new Float64Array(cap);
  sOffsetDelta = new Int32Array(cap);
}
const view = newRecordView();
const peek = newRecordPeek();
/** Most bytes a re-encoded record adds in front of its bytes from offsetDelta on: length varint (5), attributes (1), timestamp delta varlong (10). */
const MAX_REENCODED_PREFIX = 16;
/** Scratch buffer of rebuilt batches (grown as needed; see FilteredBatch.bytes). */
let rebuilt = Buffer.allocUnsafeSlow(64 << 10);
function rebuildBuffer(n: number): Buffer {
  if (rebuilt.length < n) rebuilt = Buffer.allocUnsafeSlow(Math.max(n, rebuilt.length * 2));
  return rebuilt.subarray(0, n);
}

function safeNumber(v: bigint, what: string): number {
  if (v > 9007199254740991n || v < -9007199254740991n) throw new KlxError('internal', `${what} ${v} is beyond 2^53, which the cleaner does not support`);
  return Number(v);
}

/** The offsets of every record of a batch (decoding it only when it is not dense). */
function addBatchOffsets(entry: BatchEntry, list: OffsetRangeList): void {
  const h = entry.header;
  if (h.recordCount === 0) return;
  if (BigInt(h.recordCount) === h.lastOffset - h.baseOffset + 1n) {
    list.addRange(h.baseOffset, h.lastOffset, h.recordCount);
    return;
  }
  for (const r of recordsOf(entry)) list.add(r.offset);
}

function recordsOf(entry: BatchEntry): KafkaRecord[] {
  if (entry.records) return entry.records;
  return decodeV2Records(entry.header, entry.bytes);
}

function emptyHeader(h: BatchHeader): Buffer {
  return encodeBatch({
    baseOffset: h.baseOffset,
    records: [],
    partitionLeaderEpoch: h.partitionLeaderEpoch,
    compression: 'none',
    timestampType: h.timestampType,
    isTransactional: h.isTransactional,
    isControl: h.isControl,
    producerId: h.producerId,
    producerEpoch: h.producerEpoch,
    baseSequence: h.baseSequence,
    lastOffsetDelta: h.lastOffsetDelta,
    baseTimestamp: -1n,
    maxTimestamp: h.maxTimestamp,
  });
}

function copied(entry: BatchEntry): FilteredBatch {
  const h = entry.header;
  return { bytes: entry.bytes, records: h.recordCount, baseOffset: h.baseOffset, lastOffset: h.lastOffset, maxOffset: h.lastOffset, maxTimestamp: h.maxTimestamp, offsetOfMaxTimestamp: h.lastOffset, copied: true };
}

/**
 * Decides and writes one source batch (see the module comment).
 * @returns the output batch, or null when nothing of it is written.
 * @throws KlxError `corrupt-batch` when its records cannot be decoded (the caller stops cleaning the partition).
 */
export function filterBatch(entry: BatchEntry, ctx: FilterContext): FilteredBatch | null {
  const h = entry.header;
  const st = ctx.stats;
  st.batchesRead++;
  st.recordsRead += h.recordCount;
  st.bytesRead += h.size;
  if (st.firstOffset === null) st.firstOffset = h.baseOffset;
  st.lastOffset = h.lastOffset;

  // checkBatchRetention
  let controlType: number | null = null;
  let controlRecords: KafkaRecord[] | null = null;
  if (h.isControl) {
    controlRecords = recordsOf(entry);
    controlType = controlRecords[0]?.control?.typeId ?? null;
  }
  const txnInfo = { producerId: h.producerId, isTransactional: h.isTransactional, lastOffset: h.lastOffset, controlType };
  const canDiscard = h.isControl ? ctx.txn.onControlBatchRead(txnInfo) : ctx.txn.onBatchRead(txnInfo);
  const horizon = h.magic >= 2 && h.hasDeleteHorizon ? h.baseTimestamp : null;
  const discardBatchRecords = h.isControl ? canDiscard && ctx.rules.removeDiscardableMarker(horizon, h.maxTimestamp, ctx.now, ctx.deleteRetentionMs) : canDiscard;
  let isLastOfProducer = false;
  if (h.producerId >= 0n) {
    const last = ctx.activeProducers.get(h.producerId);
    if (last) isLastOfProducer = last.lastDataOffset !== null ? h.lastOffset === last.lastDataOffset : h.isControl && h.producerEpoch === last.producerEpoch;
  }
  const retention: Retention = isLastOfProducer || h.lastOffset + 1n === ctx.upperBoundOffsetOfRound ? 'RETAIN_EMPTY' : discardBatchRecords ? 'DELETE' : 'DELETE_EMPTY';
  const containsMarkerForEmptyTxn = canDiscard && h.isControl;

  if (retention === 'DELETE') {
    addBatchOffsets(entry, st.removed[h.isControl ? 'marker' : 'aborted']);
    st.batchesDropped++;
    if (ctx.explain) explainDeleted(entry, ctx.explain, controlRecords);
    return null;
  }
  let out: FilteredBatch | null;
  if (h.isControl) out = filterControl(entry, controlRecords!, discardBatchRecords, retention, containsMarkerForEmptyTxn, ctx);
  else if (h.magic === 2) out = filterV2Data(entry, discardBatchRecords, retention, ctx);
  else out = filterLegacy(entry, ctx);
  if (ctx.explain) {
    const fate: BatchFate = !out
      ? { kind: 'dropped-empty' }
      : out.copied
        ? { kind: 'copied' }
        : out.records === 0
          ? { kind: 'kept-empty', lastOfProducer: isLastOfProducer, upperBound: ctx.upperBoundOffsetOfRound }
          : { kind: 'rebuilt', records: out.records, horizonWritten: !h.hasDeleteHorizon && h.magic >= 2 && (out.bytes.readInt16BE(21) & ATTR_DELETE_HORIZON) !== 0 ? out.bytes.readBigInt64BE(27) : null };
    explainBatch(ctx.explain, h, fate);
  }
  if (out) {
    st.batchesWritten++;
    st.recordsWritten += out.records;
    st.bytesWritten += out.bytes.length;
    if (out.copied) st.batchesCopied++;
    else if (out.records === 0) st.emptyBatchesKept++;
    else st.batchesRebuilt++;
  } else st.batchesDropped++;
  return out;
}

function filterControl(entry: BatchEntry, records: KafkaRecord[], discard: boolean, retention: Retention, markerForEmptyTxn: boolean, ctx: FilterContext): FilteredBatch | null {
  const h = entry.header;
  const st = ctx.stats;
  if (discard) {
    for (const r of records) st.removed.marker.add(r.offset);
    if (ctx.explain) for (const r of records) explainControlRecord(ctx.explain, h, r.offset, r.control?.type ?? 'control', true, true);
    return retention === 'RETAIN_EMPTY' ? emptyOut(h) : null;
  }
  for (const r of records) st.retained.add(r.offset);
  if (ctx.explain) for (const r of records) explainControlRecord(ctx.explain, h, r.offset, r.control?.type ?? 'control', false, markerForEmptyTxn);
  if (records.length === 0) return retention === 'RETAIN_EMPTY' ? emptyOut(h) : null;
  const tombstones = records.some((r) => r.value === null);
  const needHorizon = ctx.rules.stampsDeleteHorizon && (tombstones || markerForEmptyTxn) && !h.hasDeleteHorizon;
  if (!needHorizon) return copied(entry);
  return rebuildSlow(h, records, ctx.now + ctx.deleteRetentionMs);
}

function emptyOut(h: BatchHeader): FilteredBatch {
  return { bytes: emptyHeader(h), records: 0, baseOffset: h.baseOffset, lastOffset: h.lastOffset, maxOffset: h.lastOffset, maxTimestamp: h.maxTimestamp, offsetOfMaxTimestamp: h.lastOffset, copied: false };
}

/** Rebuild through the full decoder/encoder (control batches, and timestamps beyond 2^53). */
function rebuildSlow(h: BatchHeader, survivors: KafkaRecord[], horizon: bigint | null): FilteredBatch {
  const logAppend = h.timestampType === 'LogAppendTime';
  const bytes = encodeBatch({
    baseOffset: h.baseOffset,
    records: survivors.map((r) => ({ offsetDelta: Number(r.offset - h.baseOffset), timestamp: r.timestamp, key: r.key, value: r.value, headers: r.headers, attributes: 0 })),
    partitionLeaderEpoch: h.partitionLeaderEpoch,
    compression: h.compression,
    timestampType: h.timestampType,
    isTransactional: h.isTransactional,
    isControl: h.isControl,
    ...(horizon !== null ? { deleteHorizon: horizon } : {}),
    producerId: h.producerId,
    producerEpoch: h.producerEpoch,
    baseSequence: h.baseSequence,
    lastOffsetDelta: h.lastOffsetDelta,
    ...(logAppend ? { maxTimestamp: h.maxTimestamp } : {}),
  });
  const maxTs = bytes.readBigInt64BE(35);
  const last = survivors[survivors.length - 1]!.offset;
  return { bytes, records: survivors.length, baseOffset: h.baseOffset, lastOffset: h.lastOffset, maxOffset: last, maxTimestamp: maxTs, offsetOfMaxTimestamp: maxTs === -1n ? -1n : h.lastOffset, copied: false };
}

function filterV2Data(entry: BatchEntry, discard: boolean, retention: Retention, ctx: FilterContext): FilteredBatch | null {
  const h = entry.header;
  const st = ctx.stats;
  const count = h.recordCount;
  const data = inflateRecordsArea(h, entry.bytes, ctx.maxMessageBytes);
  ensureScratch(count);
  const base = safeNumber(h.baseOffset, 'offset');
  const map = ctx.map;
  const sup = ctx.superseded;
  const latest = map.latestOffset;
  const rules = ctx.rules;
  const horizon = h.hasDeleteHorizon ? h.baseTimestamp : null;
  const logAppend = h.timestampType === 'LogAppendTime';
  let pos = 0;
  let n = 0;
  let tombstones = false;
  let exact = true;
  let maxKept = -1;
  // Superseded records of a batch the map build walked are dropped from their offset alone: the
  // decision below gives 'superseded' for them too (a keyed record at or below the map's latest
  // offset whose bit is set), and their framing was checked there.
  const skipSuperseded = sup !== undefined && ctx.recordsWalked === true && !discard && ctx.explain === undefined;
  const supersededList = st.removed.superseded;
  try {
    for (let i = 0; i < count; i++) {
      if (skipSuperseded && peekRecordAt(data, pos, data.length, peek) && peek.keyLength >= 0) {
        const o = base + peek.offsetDelta;
        if (o <= latest && sup.covers(o) && sup.isSuperseded(o)) {
          supersededList.addNumber(o);
          pos = peek.end;
          continue;
        }
      }
      pos = readRecordAt(data, pos, data.length, view);
      const offset = base + view.offsetDelta;
      let reason: CompactionReason | null = null;
      if (discard) reason = 'aborted';
      else if (offset > latest) reason = null;
      else if (view.keyLength < 0) {
        if (!rules.keepKeyless) {
          reason = 'keyless';
          st.invalid++;
        }
      } else {
        const older = sup !== undefined && sup.covers(offset) ? sup.isSuperseded(offset) : offset < map.getHashed(map.hash(data, view.keyStart, view.keyLength));
        if (older) reason = 'superseded';
        else if (view.valueLength < 0) {
          const ts = logAppend ? h.maxTimestamp : h.baseTimestamp + BigInt(view.timestampDelta);
          if (!rules.keepTombstone(horizon, ts, ctx.now, ctx.deleteRetentionMs, false, ctx.retainLegacyDeletes)) reason = 'tombstone';
        }
      }
      if (ctx.explain) explainV2(ctx.explain, h, data, offset, reason, logAppend, map);
      if (reason === null) {
        sStart[n] = view.start;
        sRest[n] = view.restStart;
        sEnd[n] = view.end;
        sDelta[n] = view.timestampDelta;
        sOffsetDelta[n] = view.offsetDelta;
        if (!view.timestampDeltaExact) exact = false;
        n++;
        if (view.valueLength < 0) tombstones = true;
        maxKept = offset;
        st.retained.addNumber(offset);
      } else st.removed[reason].addNumber(offset);
    }
  } catch (err) {
    if (err instanceof KlxError && err.position === undefined) throw new KlxError(err.code, `batch at baseOffset ${h.baseOffset}: ${err.reason}`, { position: h.position, cause: err });
    throw err;
  }
  if (pos !== data.length) throw new KlxError('corrupt-batch', `batch at baseOffset ${h.baseOffset}: ${data.length - pos} bytes left in the records area after ${count} records`, { position: h.position });
  if (n === 0) return retention === 'RETAIN_EMPTY' ? emptyOut(h) : null;
  const needHorizon = rules.stampsDeleteHorizon && tombstones && horizon === null;
  if (n === count && !needHorizon) return copied(entry);
  const newHorizon = needHorizon ? ctx.now + ctx.deleteRetentionMs : horizon;
  if (!exact) {
    // A timestamp delta beyond 2^53: rebuild through the full decoder with bigint timestamps.
    const kept = new Set<bigint>();
    for (let i = 0; i < n; i++) kept.add(h.baseOffset + BigInt(sOffsetDelta[i]!));
    return rebuildSlow(h, decodeV2Records(h, entry.bytes).filter((r) => kept.has(r.offset)), newHorizon);
  }
  return rebuildFast(h, entry.bytes, data, n, newHorizon, BigInt(maxKept));
}

/** Writes `v` as an int64 (big-endian) at `at`: from its two halves when it is a safe integer (no BigInt work), else through `writeBigInt64BE`. */
function writeInt64(out: Buffer, v: bigint, at: number): void {
  const n = Number(v);
  if (!Number.isSafeInteger(n)) {
    out.writeBigInt64BE(v, at);
    return;
  }
  const hi = Math.floor(n / 4294967296);
  out.writeInt32BE(hi, at);
  out.writeUInt32BE(n - hi * 4294967296, at + 4);
}

/**
 * Rebuilds a v2 batch from its `n` survivors (the scratch arrays) walked in `data`, its records
 * area; `source` is the whole source batch, whose header fields that do not change (baseOffset,
 * partitionLeaderEpoch, magic, lastOffsetDelta, producerId, producerEpoch, baseSequence) are copied.
 */
function rebuildFast(h: BatchHeader, source: Buffer, data: Buffer, n: number, horizon: bigint | null, maxKept: bigint): FilteredBatch {
  const logAppend = h.timestampType === 'LogAppendTime';
  const firstTs = logAppend ? h.maxTimestamp : h.baseTimestamp + BigInt(sDelta[0]!);
  const newBase = horizon ?? firstTs;
  // New delta = record timestamp − newBase.
  let shift = 0;
  let constDelta = 0;
  if (logAppend) constDelta = safeNumber(h.maxTimestamp - newBase, 'timestamp delta');
  else shift = safeNumber(h.baseTimestamp - newBase, 'timestamp shift');
  // One pass into the scratch buffer, sized for the largest re-encoding: each survivor keeps its
  // bytes from offsetDelta on (together at most the records area) behind a new length (≤ 5 bytes),
  // attributes (1) and timestamp delta (≤ 10). Uncompressed, the records go straight after the
  // header of the output batch; compressed, they are the input of the codec.
  const plain = h.compression === 'none';
  const start = plain ? V2_HEADER_SIZE : 0;
  const scratch = rebuildBuffer(start + data.length + n * MAX_REENCODED_PREFIX);
  let p = start;
  let maxDelta = -Infinity;
  for (let i = 0; i < n; i++) {
    const d = logAppend ? constDelta : sDelta[i]! + shift;
    if (!Number.isSafeInteger(d)) throw new KlxError('internal', `timestamp delta ${d} is beyond 2^53`);
    if (sDelta[i]! > maxDelta) maxDelta = sDelta[i]!;
    p = writeReencoded(scratch, p, data, sRest[i]!, sEnd[i]!, d);
  }
  // Writes past a typed array's end are dropped: a bound that did not hold would show here.
  if (p > scratch.length) throw new KlxError('internal', `rebuilt batch at baseOffset ${h.baseOffset} needs ${p} bytes, above its bound ${scratch.length}`);
  let out: Buffer;
  if (plain) out = scratch.subarray(0, p);
  else {
    const area = compress(h.compression, scratch.subarray(0, p));
    out = Buffer.allocUnsafe(V2_HEADER_SIZE + area.length);
    out.set(area, V2_HEADER_SIZE);
  }
  const total = out.length;
  // baseOffset, partitionLeaderEpoch, magic (2), lastOffsetDelta, producerId, producerEpoch and
  // baseSequence are the source's; length, CRC, attributes, timestamps and count are set below.
  source.copy(out, 0, 0, V2_HEADER_SIZE);
  out.writeInt32BE(total - 12, 8);
  let attributes = compressionId(h.compression);
  if (logAppend) attributes |= ATTR_TIMESTAMP_TYPE;
  if (h.isTransactional) attributes |= ATTR_TRANSACTIONAL;
  if (h.isControl) attributes |= ATTR_CONTROL;
  if (horizon !== null) attributes |= ATTR_DELETE_HORIZON;
  out.writeInt16BE(attributes, 21);
  writeInt64(out, newBase, 27);
  let maxTs: bigint;
  if (logAppend) maxTs = h.maxTimestamp;
  else {
    maxTs = h.baseTimestamp + BigInt(maxDelta);
    if (maxTs < -1n) maxTs = -1n;
  }
  writeInt64(out, maxTs, 35);
  out.writeInt32BE(n, 57);
  out.writeUInt32BE(crc32c(out.subarray(21)), 17);
  return { bytes: out, records: n, baseOffset: h.baseOffset, lastOffset: h.lastOffset, maxOffset: maxKept, maxTimestamp: maxTs, offsetOfMaxTimestamp: maxTs === -1n ? -1n : h.lastOffset, copied: false };
}

function filterLegacy(entry: BatchEntry, ctx: FilterContext): FilteredBatch | null {
  const h = entry.header;
  const st = ctx.stats;
  const records = entry.records ?? [];
  const map = ctx.map;
  const latest = map.latestOffset;
  const keep: KafkaRecord[] = [];
  for (const r of records) {
    const offset = safeNumber(r.offset, 'offset');
    let reason: CompactionReason | null = null;
    if (offset > latest) reason = null;
    else if (r.key === null) {
      if (!ctx.rules.keepKeyless) {
        reason = 'keyless';
        st.invalid++;
      }
    } else {
      const found = map.getHashed(map.hash(r.key, 0, r.key.length));
      if (offset < found) reason = 'superseded';
      else if (r.value === null && !ctx.rules.keepTombstone(null, r.timestamp, ctx.now, ctx.deleteRetentionMs, true, ctx.retainLegacyDeletes)) reason = 'tombstone';
    }
    if (ctx.explain) {
      const x = ctx.explain;
      explainRecord(x, h, () => ({ offset: r.offset, key: bytesText(r.key), value: bytesText(r.value), timestamp: r.timestamp, isTombstone: r.value === null, isKeyless: r.key === null, mapped: r.key === null ? -1 : map.getHashed(map.hash(r.key, 0, r.key.length)) }), r.offset, reason);
    }
    if (reason === null) {
      keep.push(r);
      st.retained.add(r.offset);
    } else st.removed[reason].add(r.offset);
  }
  if (keep.length === records.length) return copied(entry);
  // A legacy batch cannot be kept empty (Kafka's MemoryRecords.filterTo throws "Empty batches are only supported for magic v2 and above"); it is dropped.
  if (keep.length === 0) return null;
  const bytes = encodeLegacy(
    h.magic as 0 | 1,
    h.compression,
    keep.map((r) => ({ offset: r.offset, timestamp: r.timestamp, key: r.key, value: r.value })),
    h.timestampType === 'LogAppendTime' ? { timestampType: 'LogAppendTime', wrapperTimestamp: h.maxTimestamp } : {},
  );
  let maxTs = -1n;
  if (h.magic === 1) {
    if (h.timestampType === 'LogAppendTime') maxTs = h.maxTimestamp;
    else for (const r of keep) if (r.timestamp > maxTs) maxTs = r.timestamp;
  }
  const last = keep[keep.length - 1]!.offset;
  return { bytes, records: keep.length, baseOffset: keep[0]!.offset, lastOffset: last, maxOffset: last, maxTimestamp: maxTs, offsetOfMaxTimestamp: maxTs === -1n ? -1n : last, copied: false };
}

/** Decisions of a batch dropped whole (aborted data, or a marker past its horizon). */
function explainDeleted(entry: BatchEntry, x: ExplainContext, controlRecords: KafkaRecord[] | null): void {
  const h = entry.header;
  if (h.isControl) {
    for (const r of controlRecords ?? []) explainControlRecord(x, h, r.offset, r.control?.type ?? 'control', true, true);
    explainBatch(x, h, { kind: 'dropped-marker' });
    return;
  }
  for (const r of recordsOf(entry)) {
    explainRecord(x, h, () => ({ offset: r.offset, key: bytesText(r.key), value: bytesText(r.value), timestamp: r.timestamp, isTombstone: r.value === null, isKeyless: r.key === null, mapped: -1 }), r.offset, 'aborted');
  }
  explainBatch(x, h, { kind: 'dropped-aborted' });
}

/** Decision of one v2 data record, read from the walk's current view. */
function explainV2(x: ExplainContext, h: BatchHeader, data: Buffer, offset: number, reason: CompactionReason | null, logAppend: boolean, map: SkimpyOffsetMap): void {
  const keyless = view.keyLength < 0;
  const tombstone = view.valueLength < 0;
  const ts = logAppend ? h.maxTimestamp : h.baseTimestamp + BigInt(view.timestampDelta);
  const keyStart = view.keyStart;
  const keyLength = view.keyLength;
  const valueStart = view.valueStart;
  const valueLength = view.valueLength;
  // The map is looked up before the callback (the view is reused by the next record).
  const mapped = keyless || reason === 'aborted' ? -1 : map.getHashed(map.hash(data, keyStart, keyLength));
  explainRecord(
    x,
    h,
    (withText) => ({ offset: BigInt(offset), key: keyless || !withText ? null : bytesText(data, keyStart, keyLength), value: tombstone || !withText ? null : bytesText(data, valueStart, valueLength), timestamp: ts, isTombstone: tombstone, isKeyless: keyless, mapped }),
    BigInt(offset),
    reason,
  );
}
