/**
 * Conversions from the engine's types (bigint offsets, `Uint8Array` bytes, Node errors) to the
 * JSON-safe shapes of `src-shared/log-types.ts`: int64 as decimal strings, bytes as base64
 * previews, findings and holes with their byte positions.
 *
 * Pure functions; no I/O.
 */
import { crcAlgorithm } from '../../engine/format/crc.ts';
import type { BatchEntry, DamageEntry } from '../../engine/format/log-reader.ts';
import type { FetchedRecord, ReadProblem as EngineReadProblem } from '../../engine/log/fetch.ts';
import type { HoleCause as EngineHoleCause, OffsetHole } from '../../engine/log/holes.ts';
import type { Finding as EngineFinding } from '../../engine/log/findings.ts';
import type { OpenProblem as EngineOpenProblem } from '../../engine/log/partition-log.ts';
import type { BatchRow, BytesPreview, Finding, HoleCause, HoleRow, OpenProblem, ReadProblem, RecordRow } from '../../../src-shared/log-types.ts';

// The shared hole vocabulary must be exactly the engine's (compile-time check both ways).
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const holeCausesAgree: Same<HoleCause, EngineHoleCause> = true;
void holeCausesAgree;

/** int64 → decimal string. */
export function s(v: bigint): string {
  return v.toString();
}

/** Nullable int64 → decimal string or null. */
export function sn(v: bigint | null | undefined): string | null {
  return v === null || v === undefined ? null : v.toString();
}

/** The first `maxBytes` bytes of `b` as base64 plus its full size; null for null. */
export function preview(b: Uint8Array | null, maxBytes: number): BytesPreview | null {
  if (b === null) return null;
  const head = b.byteLength > maxBytes ? b.subarray(0, maxBytes) : b;
  return { base64: Buffer.from(head.buffer, head.byteOffset, head.byteLength).toString('base64'), size: b.byteLength };
}

/** A fetched record as a row of the records table (previews of at most `previewBytes` bytes). */
export function recordRowOf(r: FetchedRecord, previewBytes: number): RecordRow {
  return {
    kind: 'record',
    offset: s(r.offset),
    timestamp: s(r.timestamp),
    timestampType: r.timestampType,
    key: preview(r.key, previewBytes),
    value: preview(r.value, previewBytes),
    headers: r.headers.map((h) => ({ key: h.key, value: preview(h.value, previewBytes) })),
    size: r.sizeInBytes,
    batchBaseOffset: s(r.batchBaseOffset),
    batchLastOffset: s(r.batchLastOffset),
    position: r.position,
    batchSize: r.batchSize,
    segmentBaseOffset: s(r.segmentBaseOffset),
    magic: r.magic,
    compression: r.compression,
    transactional: r.isTransactional,
    producerId: s(r.producerId),
    producerEpoch: r.producerEpoch,
    partitionLeaderEpoch: r.partitionLeaderEpoch,
    crcValid: r.crcValid ?? null,
    crc: r.crc,
    computedCrc: r.computedCrc ?? null,
    crcAlgorithm: crcAlgorithm(r.magic),
    control: r.control ? { type: r.control.type, typeId: r.control.typeId, ...(r.control.coordinatorEpoch !== undefined ? { coordinatorEpoch: r.control.coordinatorEpoch } : {}) } : null,
    aborted: r.aborted === true,
    ...(r.deleteHorizonMs !== undefined ? { deleteHorizonMs: s(r.deleteHorizonMs) } : {}),
  };
}

/** An engine hole as a table row, clipped to [lo, hi] (inclusive) when given. */
export function holeRowOf(h: OffsetHole, clip?: { lo: bigint; hi: bigint }): HoleRow {
  let from = h.from;
  let to = h.to;
  if (clip && h.count > 0n) {
    if (from < clip.lo) from = clip.lo;
    if (to > clip.hi) to = clip.hi;
  }
  const row: HoleRow = { kind: 'hole', from: s(from), to: s(to), count: s(to - from + 1n), cause: h.cause, detail: h.detail, segmentBaseOffset: sn(h.segmentBaseOffset) };
  if (h.position !== undefined) row.position = h.position;
  return row;
}

/** A batch entry of a `.log` as a batches-table row. */
export function batchRowOf(e: BatchEntry | DamageEntry): BatchRow {
  if (e.type !== 'batch') return { kind: 'damage', position: e.position, size: e.size, type: e.type, code: e.code, reason: e.reason, zeros: e.zeros };
  const h = e.header;
  return {
    kind: 'batch',
    position: h.position,
    size: h.size,
    magic: h.magic,
    baseOffset: s(h.baseOffset),
    lastOffset: s(h.lastOffset),
    lastOffsetDelta: h.lastOffsetDelta,
    recordCount: h.recordCount,
    compression: h.compression,
    timestampType: h.timestampType,
    baseTimestamp: s(h.baseTimestamp),
    maxTimestamp: s(h.maxTimestamp),
    producerId: s(h.producerId),
    producerEpoch: h.producerEpoch,
    baseSequence: h.baseSequence,
    partitionLeaderEpoch: h.partitionLeaderEpoch,
    transactional: h.isTransactional,
    control: h.isControl,
    deleteHorizon: h.hasDeleteHorizon,
    crc: h.crc >>> 0,
    crcValid: h.crcValid !== false,
    computedCrc: h.computedCrc ?? null,
    crcAlgorithm: crcAlgorithm(h.magic),
  };
}

/** JSON-safe copy of details: bigints as decimal strings, undefined dropped. */
function jsonDetails(details: Record<string, unknown>): Finding['details'] {
  return JSON.parse(JSON.stringify(details, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v))) as Finding['details'];
}

/** An engine finding on the wire. */
export function findingOf(f: EngineFinding): Finding {
  const out: Finding = { severity: f.severity, code: f.code, file: f.file, reason: f.reason, details: jsonDetails(f.details) };
  if (f.position !== undefined) out.position = f.position;
  return out;
}

/** An open problem on the wire. */
export function openProblemOf(p: EngineOpenProblem): OpenProblem {
  const out: OpenProblem = { code: p.code, file: p.file, reason: p.reason };
  if (p.position !== undefined) out.position = p.position;
  return out;
}

/** A read problem on the wire. */
export function readProblemOf(p: EngineReadProblem): ReadProblem {
  return { code: p.code, file: p.file, position: p.position, size: p.size, reason: p.reason };
}

/** A count that must fit the wire's `count` (≤ 2^53 − 1). */
export function n(v: bigint | number): number {
  const x = typeof v === 'bigint' ? Number(v) : v;
  return Math.max(0, Math.min(Number.MAX_SAFE_INTEGER, Math.round(x)));
}
