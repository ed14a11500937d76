/**
 * `log.search`: the first `limit` data records of one partition, a topic's partitions or a whole
 * opened folder whose key, value or a header holds a text and/or whose decoded key/value satisfy a
 * condition, in offset order, with progress and cancel.
 *
 * A partition is searched in one thread ({@link searchPartition}, the reference), or, with a
 * {@link SegmentTaskRunner} and a partition of at least `minBytes` of `.log` (issue 16), segment by
 * segment on the scan pool's threads ({@link searchSegmentTask}), merged in segment order into
 * exactly the one-thread answer: the same matches in the same order, the same `scannedRecords`,
 * `scannedBytes`, `complete` and next position, the same `aborted` flags. The merge stops (and
 * cancels the segments still being read) as soon as the first `limit` matches in offset order and
 * the record after them are known; a segment task itself stops after `limit` matches and the record
 * after the last.
 *
 * What a segment cannot know alone is settled at the merge:
 * - how many matches the segments before it gave (so which of its matches are kept, and where the
 *   search stops): each match carries the records and bytes walked up to it and the record after it;
 * - whether a transactional batch is aborted data: the read_committed filter
 *   (`AbortedTransactionFilter`, Kafka's `CompletedFetch`) is fed in offset order; its state at a
 *   batch depends on the ABORT markers met before and on the largest lastOffset fed so far, so each
 *   segment reports its ABORT markers and, at each marker and match, the largest lastOffset fed in
 *   the segment up to there; the merge replays the filter over those.
 */
import { KlxError } from '../../engine/errors.ts';
import { Pacer, scanSegmentFrom, segmentIndexFor, streamRecordsOf, walkLog, type WalkedBatch } from '../../engine/log/log-walk.ts';
import { PartitionLog } from '../../engine/log/partition-log.ts';
import { abortedTxnsFromIndexes, AbortedTransactionFilter, isAbortMarker } from '../../engine/log/transactions.ts';
import { inSegmentOrder, splitPays, type ParallelScanOptions } from '../../engine/log/segment-tasks.ts';
import { DecodedCondition } from '../../engine/decode/decoded-condition.ts';
import type { Decoded, FormatChoices } from '../../engine/decode/format.ts';
import { openSchemasTopics, RecordDecoder, schemasOf } from '../../engine/decode/record-decoder.ts';
import { defaultFormatRegistry } from '../../engine/decode/default-formats.ts';
import type { BatchHeader, KafkaRecord } from '../../engine/format/types.ts';
import type { AbortedTxn } from '../../engine/files/txn-index.ts';
import type { JobResult, ParsedReq } from '../../../src-shared/contract.ts';
import type { JobContext } from '../core/types.ts';
import { n, preview, s, sn } from './log-wire.ts';
import { summaryOf } from './log-records.ts';

type SearchReq = ParsedReq<'log.search'>;
type SearchMatch = JobResult<'log.search'>['matches'][number];

// ---------------------------------------------------------------------------------------------
// The decoder of an opened folder

/** Which decoder a search uses: the opened folder (its `_schemas` partitions), its format choices, and the main thread's decode epoch. */
export interface DecoderKey {
  root: string;
  choices: FormatChoices;
  /** Bumped on the main thread when files changed: decoders are made again. */
  decodeEpoch: number;
}

const formats = defaultFormatRegistry();
const decoders = new Map<string, RecordDecoder>();
let decodersEpoch = 0;

/**
 * This thread's decoder for `key`: one per opened folder and choices, its `_schemas` partitions read
 * once (made again when `key.decodeEpoch` moved). A folder whose `_schemas` cannot be read decodes
 * without them. Used by the log worker's tasks and by the scan pool's search tasks alike, so both
 * decode a record the same way.
 */
export function folderDecoder(key: DecoderKey): RecordDecoder {
  if (key.decodeEpoch !== decodersEpoch) {
    decoders.clear();
    decodersEpoch = key.decodeEpoch;
  }
  const k = `${key.root}\u0000${JSON.stringify(key.choices)}`;
  let d = decoders.get(k);
  if (!d) {
    let schemas;
    try {
      schemas = schemasOf(openSchemasTopics(key.root)).registry;
    } catch {
      schemas = undefined;
    }
    for (const old of decoders.keys()) if (old.startsWith(`${key.root}\u0000`)) decoders.delete(old);
    decoders.set(k, (d = new RecordDecoder({ formats, schemas, choices: key.choices })));
  }
  return d;
}

// ---------------------------------------------------------------------------------------------
// One record against the search

/** Where {@link foldAscii} folds bytes of up to {@link FOLD_SCRATCH_MAX} (grown on demand; a plain Uint8Array: writes to a Buffer cost more). */
let foldScratch = new Uint8Array(4096);
const FOLD_SCRATCH_MAX = 1 << 20;

/**
 * `b` with ASCII letters folded to lower case (so a search ignores case without touching other
 * UTF-8 bytes), as a Buffer valid until the next call: up to 1 MiB it is a view of one scratch area
 * (no allocation per key or value), longer ones get their own.
 */
function foldAscii(b: Uint8Array): Buffer {
  const len = b.byteLength;
  let out = foldScratch;
  if (len > out.length) {
    out = new Uint8Array(len);
    if (len <= FOLD_SCRATCH_MAX) foldScratch = out;
  }
  for (let i = 0; i < len; i++) {
    const c = b[i]!;
    out[i] = c >= 65 && c <= 90 ? c + 32 : c;
  }
  return Buffer.from(out.buffer, out.byteOffset, len);
}

/** A control byte other than tab, LF and CR, in bytes read as Latin-1 (one character per byte). */
const CONTROL_BYTE = /[\x00-\x08\x0b\x0c\x0e-\x1f]/;

/** Keys and values of at most this many bytes are read as Latin-1 strings (a V8 string has a length limit); longer ones are looked at byte by byte. */
const LATIN1_MAX_BYTES = 16 * 1024 * 1024;

/**
 * Whether bytes read as text already (no control byte other than tab, LF, CR): then the table shows
 * them as they are and their decoded text (a string, or JSON re-printed) holds the same words, so a
 * text search need not decode them. Binary bytes (framing, Avro, Protobuf, integers, internal topics)
 * are decoded for the text match.
 * @param latin1 reads `b` as Latin-1 (used up to {@link LATIN1_MAX_BYTES}).
 */
function looksLikeText(b: Uint8Array, latin1: (b: Uint8Array) => string): boolean {
  if (b.byteLength <= LATIN1_MAX_BYTES) return !CONTROL_BYTE.test(latin1(b));
  for (let i = 0; i < b.length; i++) {
    const c = b[i]!;
    if (c < 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) return false;
  }
  return true;
}

/** Lower-cases ASCII letters only (as {@link foldAscii} does to bytes). */
function foldAsciiText(t: string): string {
  return t.replace(/[A-Z]+/g, (m) => m.toLowerCase());
}

/** The first record of `records` (an array of at most one), without reading the others. */
function firstOf(records: Iterable<KafkaRecord>): KafkaRecord[] {
  for (const r of records) return [r];
  return [];
}

/** A record that matched: where the text was, and its decoded key and value. */
interface RecordHit {
  in: ('key' | 'value' | 'header')[];
  key: Decoded;
  value: Decoded;
}

/**
 * The search's test of one data record of `topic`'s `partition` (see {@link searchJob} for what
 * matches): the hit, or null. Keys/values are decoded only as far as the test needs, and both once
 * a record matched (for the match's decoded summaries).
 */
function recordMatcher(topic: string, partition: number, decoder: RecordDecoder, req: SearchReq, condition: DecodedCondition | null): (r: KafkaRecord) => RecordHit | null {
  const text = req.text;
  // Only ASCII letters fold, as in the bytes ({@link foldAscii}): 'APFEL' finds 'Apfel', 'Äpfel' finds 'Äpfel' but not 'äpfel'.
  const needle = Buffer.from(req.ignoreCase ? foldAsciiText(text) : text, 'utf8');
  const needleText = req.ignoreCase ? foldAsciiText(text) : text;
  const where = new Set(req.in);
  // An ASCII text ignoring case is looked for in the bytes read as Latin-1 and lower-cased by V8
  // (native, no byte loop here): there only A-Z lower-case to ASCII (every other byte stays at or
  // above 0x80), so it matches exactly where the ASCII-folded bytes do.
  const asciiFolded = req.ignoreCase && /^[\x00-\x7f]*$/.test(text) ? text.toLowerCase() : null;
  // The last bytes read as Latin-1 (a key or value is looked at by more than one test).
  let lastBytes: Uint8Array | null = null;
  let lastLatin1 = '';
  const latin1 = (b: Uint8Array): string => {
    if (b !== lastBytes) {
      lastLatin1 = Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('latin1');
      lastBytes = b;
    }
    return lastLatin1;
  };
  const has = (b: Uint8Array | null): boolean => {
    if (b === null || b.byteLength < needle.length) return false;
    if (asciiFolded !== null && b.byteLength <= LATIN1_MAX_BYTES) return latin1(b).toLowerCase().indexOf(asciiFolded) >= 0;
    return (req.ignoreCase ? foldAscii(b) : Buffer.from(b.buffer, b.byteOffset, b.byteLength)).indexOf(needle) >= 0;
  };
  const hasText = (d: Decoded): boolean => {
    const t = d.text;
    if (t === null) return false;
    return (req.ignoreCase ? foldAsciiText(t) : t).includes(needleText);
  };
  /** The decoded text holds the text (only binary bytes are decoded for this; see {@link looksLikeText}). */
  const decodedHas = (side: 'key' | 'value', b: Uint8Array | null, key: Uint8Array | null): Decoded | null => {
    if (!req.decoded || b === null || looksLikeText(b, latin1)) return null;
    const d = decoder.decode(topic, side, b, key);
    return hasText(d) ? d : null;
  };
  return (r) => {
    let key: Decoded | null = null;
    let value: Decoded | null = null;
    const hit: ('key' | 'value' | 'header')[] = [];
    if (text !== '') {
      // Each access makes a new view of the bytes: read once, so the Latin-1 text is made once.
      const kb = r.key;
      const vb = where.has('value') ? r.value : null;
      if (where.has('key') && (has(kb) || (key = decodedHas('key', kb, null)) !== null)) hit.push('key');
      if (where.has('value') && (has(vb) || (value = decodedHas('value', vb, kb)) !== null)) hit.push('value');
      if (where.has('header') && r.headers.some((x) => has(Buffer.from(x.key, 'utf8')) || has(x.value))) hit.push('header');
      if (hit.length === 0) return null;
    }
    if (condition !== null) {
      if (condition.usesKey) key ??= decoder.decode(topic, 'key', r.key);
      if (condition.usesValue) value ??= decoder.decode(topic, 'value', r.value, r.key);
      const ok = condition.test({ key: key?.json, value: value?.json, offset: r.offset, timestamp: r.timestamp, partition, topic });
      if (!ok) return null;
    }
    key ??= decoder.decode(topic, 'key', r.key);
    value ??= decoder.decode(topic, 'value', r.value, r.key);
    return { in: hit, key, value };
  };
}

/** The wire match of record `r` of `log` (in the segment based at `segmentBaseOffset`). */
function matchOf(log: PartitionLog, r: KafkaRecord, hit: RecordHit, segmentBaseOffset: bigint, aborted: boolean, previewBytes: number): SearchMatch {
  return {
    dir: log.dir,
    topic: log.topic,
    partition: log.partition,
    offset: s(r.offset),
    timestamp: s(r.timestamp),
    in: hit.in,
    key: preview(r.key, previewBytes),
    value: preview(r.value, previewBytes),
    segmentBaseOffset: s(segmentBaseOffset),
    aborted,
    keyDecoded: summaryOf(hit.key),
    valueDecoded: summaryOf(hit.value),
  };
}

/** The condition of `req` parsed, or null when none. @throws KlxError `invalid-argument` when it does not parse. */
function conditionOf(req: SearchReq): DecodedCondition | null {
  return req.condition !== undefined && req.condition.trim() !== '' ? DecodedCondition.parse(req.condition) : null;
}

// ---------------------------------------------------------------------------------------------
// The job

/** One partition a search walks, with the decoder of its opened folder. */
export interface SearchTarget {
  log: PartitionLog;
  decoder: RecordDecoder;
}

/** How a search may split a big partition over its segments: the scan pool and the decoder the pool's threads make (see {@link folderDecoder}). */
export interface SearchSplitOptions extends ParallelScanOptions {
  /** The decoder the targets use, as the pool's threads make it again. Without it nothing is split. */
  decoderKey?: DecoderKey;
}

interface SearchState {
  matches: SearchMatch[];
  scannedRecords: number;
  /** Bytes of `.log` walked so far over every partition. */
  walked: number;
  next: { dir: string; offset: bigint } | null;
}

/**
 * `log.search`: the first `limit` data records of `targets` (in order; from `fromDir`/`fromOffset`,
 * default each partition's logStartOffset) that match:
 * - the text, when given: contained in the key, value or a header (key or value) as UTF-8 bytes
 *   (ASCII case folded with `ignoreCase`), or, with `decoded`, in the decoded key/value text (the
 *   records table's decoded summary, same folding). Keys/values are decoded for this only when their
 *   bytes did not already match and are binary (text bytes decode to the same words);
 * - the condition, when given (see `decoded-condition.ts`): only the sides it reads are decoded.
 * Control records are not data and are skipped; aborted data is found and flagged.
 * With `split.runner` and `split.decoderKey`, a partition of `split.minBytes` or more is searched
 * segment by segment on the runner's threads (same answer; see the module comment).
 * Memory: at most `limit` matches kept (per segment in flight when split); one record decoded at a time.
 * @throws KlxError `invalid-argument` for neither text nor condition, or a condition that does not
 *   parse (details name the character); `offset-out-of-range` for a start outside
 *   [logStartOffset, logEndOffset]; `not-found` for a `fromDir` not among the targets; `cancelled`.
 */
export async function searchJob(targets: SearchTarget[], req: SearchReq, job: JobContext, split: SearchSplitOptions = {}): Promise<JobResult<'log.search'>> {
  const condition = conditionOf(req);
  if (req.text === '' && condition === null) throw new KlxError('invalid-argument', 'give a text to search for, a condition on decoded values, or both');
  let start = 0;
  if (req.fromDir !== undefined) {
    start = targets.findIndex((t) => t.log.dir === req.fromDir);
    if (start < 0) throw new KlxError('not-found', `${req.fromDir} is not one of the partitions searched`, { file: req.fromDir });
  }
  const total = targets.slice(start).reduce((a, t) => a + t.log.logSize, 0);
  const out: SearchState = { matches: [], scannedRecords: 0, walked: 0, next: null };
  job.progress({ phase: 'searching', done: 0, total, bytes: 0 });
  let partitions = 0;
  for (let i = start; i < targets.length && out.next === null; i++) {
    partitions++;
    const from = i === start && req.fromOffset !== undefined ? BigInt(req.fromOffset) : undefined;
    const target = targets[i]!;
    if (split.runner && split.decoderKey && splitPays(target.log, split)) await searchPartitionSplit(target.log, from, req, split, job, out, total);
    else await searchPartition(target, from, req, condition, job, out, total);
  }
  return {
    matches: out.matches,
    scannedRecords: out.scannedRecords,
    scannedBytes: n(out.walked),
    partitions,
    complete: out.next === null,
    nextDir: out.next?.dir ?? null,
    nextOffset: sn(out.next?.offset ?? null),
  };
}

/** `fromOffset` (default the log start), checked. @throws KlxError `offset-out-of-range`. */
function searchStart(log: PartitionLog, fromOffset: bigint | undefined): bigint {
  const logStart = log.logStartOffset;
  const logEnd = log.logEndOffset;
  const from = fromOffset ?? logStart;
  if (from < logStart || from > logEnd) {
    throw new KlxError('offset-out-of-range', `search start ${from} is outside [${logStart}, ${logEnd}] of ${log.topic}-${log.partition}`, { file: log.dir });
  }
  return from;
}

/** One partition in this thread: the reference the split search is held to. */
async function searchPartition(target: SearchTarget, fromOffset: bigint | undefined, req: SearchReq, condition: DecodedCondition | null, job: JobContext, out: SearchState, total: number): Promise<void> {
  const { log, decoder } = target;
  const logStart = log.logStartOffset;
  const logEnd = log.logEndOffset;
  const from = searchStart(log, fromOffset);
  const matcher = recordMatcher(log.topic, log.partition, decoder, req, condition);
  const before = out.walked;
  const phase = `searching ${log.topic}-${log.partition}`;
  const pacer = new Pacer({ signal: job.signal, phase, total, onProgress: (p) => job.progress({ phase, done: Math.min(total, before + p.done), total, bytes: before + p.bytes }) });
  const aborted = abortedTxnsFromIndexes(log).abortedTransactions;
  let filter: AbortedTransactionFilter | null = null;
  outer: for (const e of walkLog(log, { fromOffset: from, reuseWindows: true })) {
    if (e.type !== 'batch') continue;
    const h = e.header;
    out.walked += h.size;
    await pacer.step(h.size);
    if (h.lastOffset < from) continue;
    if (h.baseOffset >= logEnd) break;
    let records: Iterable<KafkaRecord>;
    try {
      // One record object at a time: a batch may hold millions.
      records = streamRecordsOf(e);
    } catch {
      continue; // undecodable batch: reported by the records table and verify, not a search hit
    }
    if (aborted.length > 0 && filter === null) filter = new AbortedTransactionFilter(aborted, h.baseOffset);
    const isAborted = filter !== null && filter.isAborted(h, h.isControl && isAbortMarker(h, firstOf(records)));
    if (h.isControl) continue;
    for (const r of records) {
      if (r.offset < from || r.offset < logStart || r.offset >= logEnd) continue;
      if (out.matches.length >= req.limit) {
        out.next = { dir: log.dir, offset: r.offset };
        break outer;
      }
      out.scannedRecords++;
      const hit = matcher(r);
      if (hit !== null) out.matches.push(matchOf(log, r, hit, e.segment.baseOffset, isAborted, req.previewBytes));
    }
  }
  pacer.finish();
}

// ---------------------------------------------------------------------------------------------
// The same search split over segments (issue 16)

/** Arguments of {@link searchSegmentTask} (structured-cloned to the thread). */
export interface SearchSegmentArgs {
  dir: string;
  /** The segment: its index in the partition and its base offset (checked against the files). */
  index: number;
  baseOffset: bigint;
  /** Byte position to start reading at (the offset index's for `from` in the segment holding it, else 0). */
  position: number;
  /** The search's first offset, and the partition's log start and end offsets. */
  from: bigint;
  logStart: bigint;
  logEnd: bigint;
  req: SearchReq;
  decoder: DecoderKey;
  /** The partition has aborted transactions: report what the read_committed filter needs. */
  txns: boolean;
}

/** Where a walk stood at a record: the record's offset and the bytes of `.log` walked up to its batch (inclusive). */
interface WalkPoint {
  offset: bigint;
  walked: number;
}

/** A match of a segment with what the merge needs to place it. */
export interface SegmentMatch {
  /** The wire match, `aborted` still false (decided at the merge). */
  match: SearchMatch;
  /** Records scanned in the segment up to this one (inclusive). */
  scanned: number;
  /** The data record after it in the segment, or null when it is the segment's last. */
  next: WalkPoint | null;
  /** Its batch, for the read_committed filter: fed to it (magic 2, a producer id), transactional, producer. */
  fed: boolean;
  transactional: boolean;
  producerId: bigint;
  /** ABORT markers of the segment met before it, and the largest lastOffset fed in the segment up to its batch (inclusive). */
  markersBefore: number;
  upTo: bigint | null;
}

/** What {@link searchSegmentTask} returns. */
export interface SearchSegmentResult {
  /** The segment's first `limit` matches at most (the walk stops at the record after the last). */
  matches: SegmentMatch[];
  /** Records scanned and bytes walked in the whole walk (to its end, or to where it stopped). */
  scanned: number;
  walked: number;
  /** The segment's first data record in the searched range, or null. */
  first: WalkPoint | null;
  /** A batch at or past the log end offset was met: the partition's walk stops there. */
  ended: boolean;
  /** Base offset of the first batch the read_committed filter sees (the one-thread walk makes its filter there), or null. */
  filterStart: bigint | null;
  /** ABORT markers fed to the filter, in order: producer, and the largest lastOffset fed in the segment up to the marker (inclusive). */
  markers: { producerId: bigint; upTo: bigint }[];
  /** The largest lastOffset fed to the filter in the segment, or null. */
  maxFed: bigint | null;
}

/**
 * One segment's part of a search, on a scan-pool thread: the walk {@link searchPartition} makes,
 * over this segment only, keeping the first `limit` matches and what the merge needs (see the
 * module comment).
 * @throws KlxError `not-found` when the partition no longer has that segment (its files changed),
 *   `cancelled`, `io-error`; `invalid-argument` as {@link DecodedCondition.parse}.
 */
export async function searchSegmentTask(a: SearchSegmentArgs, run: { signal?: AbortSignal; onBytes?: (bytes: number) => void }): Promise<SearchSegmentResult> {
  const log = PartitionLog.open(a.dir);
  const segment = log.segments[a.index];
  if (!segment || segment.baseOffset !== a.baseOffset) throw new KlxError('not-found', `segment ${a.baseOffset} of ${a.dir} is gone: the partition changed while it was being searched`, { file: a.dir });
  const req = a.req;
  const matcher = recordMatcher(log.topic, log.partition, folderDecoder(a.decoder), req, conditionOf(req));
  const pacer = new Pacer({ signal: run.signal, phase: `searching ${log.topic}-${log.partition}`, total: Math.max(0, segment.size), onProgress: run.onBytes ? (p) => run.onBytes!(p.done) : undefined });
  const { from, logStart, logEnd } = a;
  const out: SearchSegmentResult = { matches: [], scanned: 0, walked: 0, first: null, ended: false, filterStart: null, markers: [], maxFed: null };
  let waiting: SegmentMatch | null = null;
  outer: for (const entry of scanSegmentFrom(segment, a.position, { reuseWindows: true })) {
    if (entry.type !== 'batch') continue;
    const e: WalkedBatch = Object.assign(entry, { segment, segmentIndex: a.index });
    const h = e.header;
    out.walked += h.size;
    await pacer.step(h.size);
    if (h.lastOffset < from) continue;
    if (h.baseOffset >= logEnd) {
      out.ended = true;
      break;
    }
    let records: Iterable<KafkaRecord>;
    try {
      records = streamRecordsOf(e);
    } catch {
      continue;
    }
    const fed = a.txns && feedsFilter(h);
    if (a.txns) {
      out.filterStart ??= h.baseOffset;
      if (fed && (out.maxFed === null || h.lastOffset > out.maxFed)) out.maxFed = h.lastOffset;
      if (fed && h.isControl && isAbortMarker(h, firstOf(records))) out.markers.push({ producerId: h.producerId, upTo: out.maxFed! });
    }
    if (h.isControl) continue;
    for (const r of records) {
      if (r.offset < from || r.offset < logStart || r.offset >= logEnd) continue;
      const here = { offset: r.offset, walked: out.walked };
      out.first ??= here;
      if (waiting !== null) {
        waiting.next = here;
        waiting = null;
        if (out.matches.length >= req.limit) break outer;
      }
      out.scanned++;
      const hit = matcher(r);
      if (hit === null) continue;
      const m: SegmentMatch = {
        match: matchOf(log, r, hit, segment.baseOffset, false, req.previewBytes),
        scanned: out.scanned,
        next: null,
        fed,
        transactional: h.isTransactional,
        producerId: h.producerId,
        markersBefore: out.markers.length,
        upTo: out.maxFed,
      };
      out.matches.push(m);
      waiting = m;
    }
  }
  pacer.finish();
  return out;
}

/** Whether `AbortedTransactionFilter.isAborted` takes this batch into account (magic 2, a producer id). */
function feedsFilter(h: BatchHeader): boolean {
  return h.magic === 2 && h.producerId >= 0n;
}

/**
 * The read_committed filter of {@link searchPartition}, replayed at the merge from what the segments
 * reported (see the module comment): `AbortedTransactionFilter`'s state after a batch is the
 * aborted transactions whose firstOffset is at most the largest lastOffset fed so far, less the
 * producers whose ABORT marker was fed since their transaction was taken in.
 */
class FilterReplay {
  private queue: AbortedTxn[] | null = null;
  private next = 0;
  private readonly abortedProducers = new Set<bigint>();
  /** Largest lastOffset fed in the segments merged before the current one. */
  private maxBefore: bigint | null = null;
  /** ABORT markers of the current segment applied so far. */
  private applied = 0;

  constructor(private readonly aborted: readonly AbortedTxn[]) {}

  /** Starts a segment's replay. */
  enter(r: SearchSegmentResult): void {
    if (this.queue === null && r.filterStart !== null) {
      // As AbortedTransactionFilter's constructor, at the first batch the one-thread walk feeds.
      const start = r.filterStart;
      this.queue = this.aborted.filter((t) => t.lastOffset >= start).sort((x, y) => (x.firstOffset < y.firstOffset ? -1 : x.firstOffset > y.firstOffset ? 1 : 0));
    }
    this.applied = 0;
  }

  /** Whether the data of match `m` of segment `r` is aborted (the markers before it applied first). */
  isAborted(r: SearchSegmentResult, m: SegmentMatch): boolean {
    this.applyMarkers(r, m.markersBefore);
    if (!m.fed) return false;
    this.takeUpTo(m.upTo);
    return m.transactional && this.abortedProducers.has(m.producerId);
  }

  /** Ends a segment's replay: its remaining markers applied, its largest lastOffset remembered. */
  leave(r: SearchSegmentResult): void {
    this.applyMarkers(r, r.markers.length);
    if (r.maxFed !== null && (this.maxBefore === null || r.maxFed > this.maxBefore)) this.maxBefore = r.maxFed;
  }

  private applyMarkers(r: SearchSegmentResult, upTo: number): void {
    for (; this.applied < upTo; this.applied++) {
      const mk = r.markers[this.applied]!;
      this.takeUpTo(mk.upTo);
      this.abortedProducers.delete(mk.producerId);
    }
  }

  /** Takes in the transactions whose firstOffset is at most the largest lastOffset fed (this segment's `local` and the ones before). */
  private takeUpTo(local: bigint | null): void {
    const q = this.queue;
    if (q === null) return;
    let max = this.maxBefore;
    if (local !== null && (max === null || local > max)) max = local;
    if (max === null) return;
    while (this.next < q.length && q[this.next]!.firstOffset <= max) this.abortedProducers.add(q[this.next++]!.producerId);
  }
}

/**
 * {@link searchPartition} with the partition's segments searched on `split.runner`'s threads, merged
 * in segment order into the same answer (see the module comment).
 */
async function searchPartitionSplit(log: PartitionLog, fromOffset: bigint | undefined, req: SearchReq, split: SearchSplitOptions, job: JobContext, out: SearchState, total: number): Promise<void> {
  const runner = split.runner!;
  const from = searchStart(log, fromOffset);
  // The segments the one-thread walk reads: from the one holding `from`, that one from its offset-index position.
  const first = segmentIndexFor(log, from);
  const segs = log.segments.slice(first);
  const aborted = abortedTxnsFromIndexes(log).abortedTransactions;
  const replay = new FilterReplay(aborted);
  const args = (k: number): SearchSegmentArgs => {
    const seg = segs[k]!;
    return {
      dir: log.dir,
      index: first + k,
      baseOffset: seg.baseOffset,
      position: k === 0 ? seg.positionFor(from) : 0,
      from,
      logStart: log.logStartOffset,
      logEnd: log.logEndOffset,
      req,
      decoder: split.decoderKey!,
      txns: aborted.length > 0,
    };
  };
  const before = out.walked;
  const phase = `searching ${log.topic}-${log.partition}`;
  const results = inSegmentOrder(segs.length, (k, signal, onBytes) => runner.run<SearchSegmentResult>('searchSegment', args(k), { signal, onBytes }), {
    threads: runner.threads,
    signal: job.signal,
    onProgress: (done) => job.progress({ phase, done: Math.min(total, before + done), total, bytes: before + done }),
  });
  let walked = 0;
  for await (const r of results) {
    replay.enter(r);
    const need = req.limit - out.matches.length;
    if (need <= 0) {
      // The limit was reached before this segment: the search stops at its first data record.
      if (r.first !== null) {
        out.walked = before + walked + r.first.walked;
        out.next = { dir: log.dir, offset: r.first.offset };
        break;
      }
    } else if (r.matches.length >= need) {
      const kept = r.matches.slice(0, need);
      for (const m of kept) out.matches.push({ ...m.match, aborted: replay.isAborted(r, m) });
      const last = kept[kept.length - 1]!;
      out.scannedRecords += last.scanned;
      if (last.next !== null) {
        out.walked = before + walked + last.next.walked;
        out.next = { dir: log.dir, offset: last.next.offset };
        break;
      }
    } else {
      for (const m of r.matches) out.matches.push({ ...m.match, aborted: replay.isAborted(r, m) });
      out.scannedRecords += r.scanned;
    }
    replay.leave(r);
    walked += r.walked;
    out.walked = before + walked;
    if (r.ended) break;
  }
  job.progress({ phase, done: Math.min(total, out.walked), total, bytes: out.walked });
}
