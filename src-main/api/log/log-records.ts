/**
 * Pages of the records table, one record's bytes, and pages of a segment's batches.
 *
 * A records page is what `readForward` / `readBackward` return (Kafka's fetch rules: offsets are
 * not contiguous, the next offset after a batch is its lastOffset + 1, control records are never
 * data, as CompletedFetch.nextFetchedRecord applies them; cases B01, B02, B11, B14) with the offsets in between made visible: every offset of the
 * page's range is either a record row or inside a hole row, whose cause comes from the holes module
 * (`scanHoles`) run over that range only. Control records and aborted data are rows of their own,
 * flagged (`control`, `aborted`), not holes.
 *
 * Ranges and cursors. A forward page from X covers [X, nextCursor); a backward page before Y covers
 * [prevCursor, Y). The first page (nothing before it) also covers the offsets from the first
 * segment's base offset up to its first record, so a hole at the start (compaction, DeleteRecords)
 * is shown. Pages therefore concatenate without overlap or gap; a hole cut by a page boundary
 * arrives as two adjacent rows of the same cause (the renderer joins them).
 *
 * Cost: a page reads from the offset index's position for its start; the hole scan runs only when
 * the page has gaps (a dense log never pays for it) and reads the same batches again, header-only
 * except for batches that are not dense.
 */
import { KlxError } from '../../engine/errors.ts';
import { scanLogFile } from '../../engine/format/log-reader.ts';
import { readBackward, readForward, recordAt, type FetchedRecord, type IsolationLevel, type ReadProblem as EngineReadProblem, type RecordPage } from '../../engine/log/fetch.ts';
import { scanHoles, type OffsetHole } from '../../engine/log/holes.ts';
import type { PartitionLog } from '../../engine/log/partition-log.ts';
import type { ParsedReq, Res } from '../../../src-shared/contract.ts';
import type { HoleRow, TableRow } from '../../../src-shared/log-types.ts';
import { rangeView } from '../core/log-cache.ts';
import { batchRowOf, holeRowOf, readProblemOf, recordRowOf, s, sn } from './log-wire.ts';
import type { RecordDecoder } from '../../engine/decode/record-decoder.ts';
import type { Decoded } from '../../engine/decode/format.ts';
import type { DecodedSummary } from '../../../src-shared/log-types.ts';

/** The one-line summary of a decoded key/value sent with a table row (text cut at 512 characters). */
export function summaryOf(d: Decoded): DecodedSummary {
  const t = d.text;
  const out: DecodedSummary = { format: d.format, text: t === null ? null : t.length > 512 ? `${t.slice(0, 511)}…` : t };
  if (d.error !== undefined) out.error = d.error;
  if (d.schemaId !== undefined) out.schemaId = d.schemaId;
  return out;
}

/** Parses an int64 decimal string (already validated by the contract). */
export function offsetOf(text: string): bigint {
  return BigInt(text);
}

/**
 * The holes of `[lo, hi)` from the holes module, run on a view of the partition restricted to that
 * range. When the range starts at (or below) logStartOffset the real start is kept, so the
 * `below-log-start` hole is the module's own; otherwise that cause is the view's artefact and dropped.
 */
async function holesIn(log: PartitionLog, lo: bigint, hi: bigint): Promise<OffsetHole[]> {
  const logStart = log.logStartOffset;
  const logEnd = log.logEndOffset;
  const start = lo > logStart ? lo : logStart;
  const realStart = start === logStart;
  // The view must end at a batch boundary at or after `hi`, or the scan would name a gap just
  // before `hi` by what lies past its end ("no batch up to the log end"). So it runs on to the end
  // of the batch holding the first record at or after `hi` (the real log end when there is none).
  let end = logEnd;
  if (hi < logEnd) {
    const next = await readForward(log, hi, 1, { includeControl: true });
    const r = next.records[0];
    if (r) end = r.batchLastOffset + 1n < logEnd ? r.batchLastOffset + 1n : logEnd;
  }
  const view = rangeView(log, start, end > start ? end : start);
  const out: OffsetHole[] = [];
  for await (const h of scanHoles(view)) {
    if (h.cause === 'below-log-start' && !realStart) continue;
    if (h.count > 0n && h.from >= hi && end !== logEnd) break;
    out.push(h);
  }
  return out;
}

/** Causes whose offsets are rows of their own in the table (so they are not gaps). */
function shownCauses(isolation: IsolationLevel): Set<OffsetHole['cause']> {
  return isolation === 'read_committed' ? new Set(['control-record']) : new Set(['control-record', 'aborted-transaction']);
}

/**
 * Merges a page's records with hole rows for every gap of `[lo, hi)` (see the module comment).
 * @param atEnd the page reaches the read limit: damage past the log end (a cut last batch) is shown too.
 */
async function withHoles(log: PartitionLog, records: FetchedRecord[], problems: EngineReadProblem[], lo: bigint, hi: bigint, atEnd: boolean, isolation: IsolationLevel, previewBytes: number, decoder?: RecordDecoder): Promise<TableRow[]> {
  const gaps: [bigint, bigint][] = [];
  let cur = lo;
  for (const r of records) {
    if (r.offset > cur) gaps.push([cur, r.offset - 1n]);
    if (r.offset + 1n > cur) cur = r.offset + 1n;
  }
  if (cur < hi) gaps.push([cur, hi - 1n]);
  const rows: { at: bigint; order: number; row: TableRow }[] = records.map((r) => {
    const row = recordRowOf(r, previewBytes);
    // Only the rows of this page are decoded (what is on screen), never the log.
    if (decoder && (!r.control || log.topic === '__cluster_metadata')) {
      const d = decoder.decodeRecord(log.topic, r.key, r.value, r.control?.typeId);
      row.keyDecoded = summaryOf(d.key);
      row.valueDecoded = summaryOf(d.value);
    }
    return { at: r.offset, order: 1, row };
  });
  if (gaps.length === 0 && !atEnd) return rows.map((x) => x.row);

  const holes = await holesIn(log, lo, hi);
  const g: GapContext = { log, records, holes, problems };
  const shown = shownCauses(isolation);
  const byOffset = new Map<bigint, FetchedRecord>();
  for (const r of records) byOffset.set(r.offset, r);
  for (const [a, b] of gaps) {
    let next = a;
    const parts = holes.filter((h) => h.count > 0n && !shown.has(h.cause) && h.to >= a && h.from <= b).sort((x, y) => (x.from < y.from ? -1 : x.from > y.from ? 1 : 0));
    for (const h of parts) {
      const from = h.from > next ? h.from : next;
      if (from > next) rows.push({ at: next, order: 0, row: fallbackHole(next, from - 1n, g) });
      const row = holeRowOf(h, { lo: from, hi: b });
      rows.push({ at: from, order: 0, row });
      next = BigInt(row.to) + 1n;
      if (next > b) break;
    }
    if (next <= b) rows.push({ at: next, order: 0, row: fallbackHole(next, b, g) });
  }
  // Damage that takes no offset (a segment's cut tail) where it lies, and past the log end on the last page.
  for (const h of holes) {
    if (h.count > 0n && !(atEnd && h.from >= hi)) continue;
    if (h.count === 0n && (h.from < lo || h.from > hi)) continue;
    rows.push({ at: h.from, order: h.count === 0n ? 0 : 2, row: holeRowOf(h) });
  }
  rows.sort((x, y) => (x.at < y.at ? -1 : x.at > y.at ? 1 : x.order - y.order));
  return rows.map((x) => x.row);
}

/** What a gap the hole scan did not name is classified by. */
interface GapContext {
  log: PartitionLog;
  records: FetchedRecord[];
  holes: OffsetHole[];
  problems: EngineReadProblem[];
}

/**
 * A gap the hole scan did not name, classified by what is around it: damage the read met between
 * the records on both sides (the scan does not decode dense batches, so a batch whose records cannot
 * be decoded is only seen by the read), else compaction inside or between batches.
 */
function fallbackHole(from: bigint, to: bigint, g: GapContext): HoleRow {
  const row = (cause: HoleRow['cause'], detail: string, segment: bigint | null, position?: number): HoleRow => ({
    kind: 'hole',
    from: s(from),
    to: s(to),
    count: s(to - from + 1n),
    cause,
    detail,
    segmentBaseOffset: sn(segment),
    ...(position !== undefined ? { position } : {}),
  });
  let prev: FetchedRecord | undefined;
  let next: FetchedRecord | undefined;
  for (const r of g.records) {
    if (r.offset < from) prev = r;
    else if (r.offset > to) {
      next = r;
      break;
    }
  }
  const fileOf = (r: FetchedRecord | undefined) => (r ? g.log.segmentFor(r.segmentBaseOffset)?.files.log : undefined);
  const damage = g.problems.find((p) => {
    const afterPrev = !prev || fileOf(prev) !== p.file || p.position > prev.position;
    const beforeNext = !next || fileOf(next) !== p.file || p.position < next.position;
    return afterPrev && beforeNext && (p.file === fileOf(prev) || p.file === fileOf(next));
  });
  if (damage) {
    const seg = g.log.segments.find((x) => x.files.log === damage.file)?.baseOffset ?? null;
    return row('corrupt-region', `${damage.size} bytes at position ${damage.position} of ${damage.file} cannot be read (${damage.reason})`, seg, damage.position);
  }
  const inBatch = g.records.some((r) => r.batchBaseOffset <= from && to <= r.batchLastOffset);
  const around = g.holes.find((h) => h.from <= from && to <= h.to);
  const detail = around ? `no record at these offsets (${around.detail})` : 'no record at these offsets';
  return row(inBatch ? 'compacted-in-batch' : 'compacted-between-batches', detail, (prev ?? next)?.segmentBaseOffset ?? null);
}

/** `log.records`: one page of the records table (see the module comment and the contract). */
export async function recordsPage(log: PartitionLog, req: ParsedReq<'log.records'>, decoder?: RecordDecoder): Promise<Res<'log.records'>> {
  const logStart = log.logStartOffset;
  const logEnd = log.logEndOffset;
  const firstBase = log.segments[0]?.baseOffset ?? logStart;
  const startOfLog = firstBase < logStart ? firstBase : logStart;
  const opts = { isolation: req.isolation, includeControl: true } as const;
  const target = req.from === 'start' ? logStart : req.from === 'end' ? logEnd : offsetOf(req.from);
  let page: RecordPage;
  let lo: bigint;
  let hi: bigint;
  let atStart: boolean;
  let atEnd: boolean;
  if (req.direction === 'forward') {
    page = await readForward(log, target, req.limit, opts);
    atStart = target <= logStart;
    atEnd = page.atEnd;
    lo = atStart ? startOfLog : target;
    hi = page.nextOffset;
  } else {
    page = await readBackward(log, target, req.limit, opts);
    atStart = page.atStart;
    hi = target < page.readLimit ? target : page.readLimit;
    atEnd = hi >= page.readLimit;
    lo = atStart ? startOfLog : page.prevOffset;
  }
  const rows = await withHoles(log, page.records, page.problems, lo, hi, atEnd, req.isolation, req.previewBytes, decoder);
  return {
    rows,
    from: s(target),
    nextCursor: atEnd ? null : s(hi),
    prevCursor: atStart ? null : s(lo),
    atStart,
    atEnd,
    logStartOffset: s(logStart),
    logEndOffset: s(logEnd),
    firstSegmentBaseOffset: sn(log.segments[0]?.baseOffset),
    readLimit: s(page.readLimit),
    problems: page.problems.map(readProblemOf),
  };
}

/**
 * `log.recordValue`: up to `maxBytes` bytes of a record's key, value or one header value, from
 * byte `start` (so a large value can be fetched in chunks).
 * @throws KlxError `not-found` when no record has that offset (a hole) or the header does not exist;
 *   `offset-out-of-range` outside [logStartOffset, logEndOffset].
 */
export async function recordValue(log: PartitionLog, req: ParsedReq<'log.recordValue'>): Promise<Res<'log.recordValue'>> {
  const offset = offsetOf(req.offset);
  if (offset >= log.logEndOffset) {
    throw new KlxError('offset-out-of-range', `offset ${offset} is at or after the log end offset ${log.logEndOffset} of ${log.topic}-${log.partition}`, { file: log.dir });
  }
  const r = await recordAt(log, offset, { includeControl: true });
  if (r === null) throw new KlxError('not-found', `no record at offset ${offset}: the offset is in a hole (see the records table for its cause)`, { file: log.dir });
  let bytes: Uint8Array | null;
  let headerKey: string | null = null;
  if (req.part === 'key') bytes = r.key;
  else if (req.part === 'value') bytes = r.value;
  else {
    const i = req.headerIndex ?? 0;
    const h = r.headers[i];
    if (!h) throw new KlxError('not-found', `record ${offset} has ${r.headers.length} header${r.headers.length === 1 ? '' : 's'}; no header ${i}`, { file: log.dir });
    headerKey = h.key;
    bytes = h.value;
  }
  const total = bytes?.byteLength ?? 0;
  const start = Math.min(req.start, total);
  const end = Math.min(total, start + req.maxBytes);
  const chunk = bytes ? bytes.subarray(start, end) : new Uint8Array(0);
  return {
    offset: s(offset),
    part: req.part,
    headerKey,
    isNull: bytes === null,
    totalSize: total,
    start,
    base64: Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength).toString('base64'),
    truncated: end < total,
  };
}

/**
 * `log.batches`: the entries of one segment's `.log` from byte `fromPosition`, CRCs checked, at most
 * `limit` of them; damage (bytes that are not batches) is a row of its own.
 * @throws KlxError `not-found` when the partition has no segment with that base offset.
 */
export function batchesPage(log: PartitionLog, req: ParsedReq<'log.batches'>): Res<'log.batches'> {
  const base = offsetOf(req.segment);
  const seg = log.segments.find((x) => x.baseOffset === base);
  if (!seg) throw new KlxError('not-found', `no segment with base offset ${base} in ${log.topic}-${log.partition}`, { file: log.dir });
  const rows: Res<'log.batches'>['rows'] = [];
  let nextPosition: number | null = null;
  if (req.fromPosition < seg.size) {
    for (const e of scanLogFile(seg.files.log, { start: req.fromPosition, verifyCrc: true })) {
      if (rows.length === req.limit) {
        nextPosition = e.type === 'batch' ? e.header.position : e.position;
        break;
      }
      rows.push(batchRowOf(e));
    }
  }
  return { segment: s(base), file: seg.files.log, fileSize: seg.size, rows, nextPosition };
}
