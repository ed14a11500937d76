/**
 * The work behind the `edit.*` methods: previewing and appending one producer batch, previewing
 * and rolling the active segment, always through the engine's crash-safe writer
 * (`PartitionWriter` in `engine/log/partition-writer.ts`: Kafka's `UnifiedLog.append` /
 * `maybeRoll` / `roll`, offset and time index rules, fsync order, writer lock). Nothing here writes
 * a file itself.
 *
 * Preview = append, exactly. A preview opens the partition read-only (no lock) and asks the writer
 * for its plan; the append opens it for writing (taking `klx-writer.lock`) and asks again. Both runs
 * see the same inputs:
 * - the same records, codec, producer fields and timestamp type (the request);
 * - the same clock: `now` (ms) stamps records without a timestamp and LogAppendTime batches; the
 *   preview answers the value it used and the append is sent it back;
 * - the same roll jitter: derived from the partition and its active segment's name instead of a
 *   random draw (Kafka draws it once per segment; only matters with `segment.jitter.ms` > 0).
 * The preview's `fingerprint` hashes the partition's state (name, size and modification time in ns
 * of every file of the folder but the lock, and the log dir's clean-shutdown marker), the request
 * and the plan. The append recomputes it under the lock and refuses with `invalid-argument`
 * (`details.stale: true`, "preview again") when anything differs, so what is appended is what was
 * shown. Appends cannot be undone (Kafka has no such operation either): records leave a log only by
 * retention, from its start (DeleteRecords / `deleteBeforeOffset`).
 *
 * Limits (see `EDIT_LIMITS` in `src-shared/edit-types.ts`): 16 MiB of key, value and header bytes
 * per record and 64 MiB per request, checked from the encoded lengths before anything is decoded.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { hostname } from 'node:os';
import { basename, dirname, join } from 'node:path';
import type { z } from 'zod';
import { KlxError } from '../../engine/errors.ts';
import { CLEAN_SHUTDOWN_FILE, segmentFileName } from '../../engine/files/file-names.ts';
import { MAX_RELATIVE_OFFSET, OFFSET_INDEX_ENTRY_SIZE } from '../../engine/files/offset-index.ts';
import { TIME_INDEX_ENTRY_SIZE } from '../../engine/files/time-index.ts';
import { WRITER_LOCK_FILE, TAKEOVER_STALE_MS, describeHolder, isProcessAlive, readLockHolder, type LockHolder } from '../../engine/log/log-lock.ts';
import { PartitionLog } from '../../engine/log/partition-log.ts';
import { maxSegmentMs } from '../../engine/log/roll-rule.ts';
import { PartitionWriter, type AppendOptions, type AppendPlan, type AppendRecord, type RollResult } from '../../engine/log/partition-writer.ts';
import type { TopicConfig } from '../../engine/log/topic-config.ts';
import { EDIT_LIMITS, type EditAppendResult, type EditPreview, type EditRollResult, type editRecord, type editProducer, type editCompression, type editTimestampType } from '../../../src-shared/edit-types.ts';

/** One record as the handler receives it (validated, defaults applied). */
type ParsedRecord = z.output<typeof editRecord>;

/** The batch part of an `edit.preview` / `edit.append` request (validated, defaults applied). */
export interface BatchRequest {
  records: ParsedRecord[];
  compression: z.output<typeof editCompression>;
  timestampType?: z.output<typeof editTimestampType> | undefined;
  producer?: z.output<typeof editProducer> | undefined;
  now?: string | undefined;
  /** Write a CreateTime a broker refuses (LogValidator.validateTimestamp); the preview's `brokerRefusal` says which brokers. */
  allowTimestampOutOfRange?: boolean | undefined;
}

/** Who uses the lock, written into `klx-writer.lock`. */
const PURPOSE_APPEND = 'Kafka Log Explorer: append';
const PURPOSE_ROLL = 'Kafka Log Explorer: roll segment';

// ---------------------------------------------------------------------------------------------
// Records: sizes, decoding

/** Decoded length of a base64 text (standard, padded; already validated by the schema). */
function base64Length(b64: string): number {
  const pad = b64.endsWith('==') ? 2 : b64.endsWith('=') ? 1 : 0;
  return (b64.length / 4) * 3 - pad;
}

type Bytes = ParsedRecord['key'];

function lengthOf(b: Bytes): number {
  if (b === null) return 0;
  return 'text' in b ? Buffer.byteLength(b.text, 'utf8') : base64Length(b.base64);
}

function decode(b: Bytes): string | Uint8Array | null {
  if (b === null) return null;
  return 'text' in b ? b.text : Buffer.from(b.base64, 'base64');
}

function mib(n: number): string {
  return `${(n / 1024 / 1024).toFixed(n % (1024 * 1024) === 0 ? 0 : 2)} MiB`;
}

/**
 * The request's records as the writer takes them, after the size limits.
 * @returns the records and their total key + value + header bytes.
 * @throws KlxError `invalid-argument` naming the record: above 16 MiB, a request above 64 MiB, a
 *   tombstone with a value.
 */
export function toAppendRecords(records: readonly ParsedRecord[]): { records: AppendRecord[]; bytes: number } {
  let total = 0;
  records.forEach((r, i) => {
    if (r.tombstone && r.value !== null) throw new KlxError('invalid-argument', `record ${i} is marked as a tombstone but has a value; a tombstone's value is null`, { details: { recordIndex: i } });
    const n = lengthOf(r.key) + lengthOf(r.value) + r.headers.reduce((sum, h) => sum + Buffer.byteLength(h.key, 'utf8') + lengthOf(h.value), 0);
    if (n > EDIT_LIMITS.recordBytes) {
      throw new KlxError('invalid-argument', `record ${i} holds ${n} bytes of key, value and headers; at most ${mib(EDIT_LIMITS.recordBytes)} (${EDIT_LIMITS.recordBytes} bytes) per record`, {
        details: { recordIndex: i, bytes: n, limit: EDIT_LIMITS.recordBytes },
      });
    }
    total += n;
  });
  if (total > EDIT_LIMITS.requestBytes) {
    throw new KlxError('invalid-argument', `the batch holds ${total} bytes of keys, values and headers; at most ${mib(EDIT_LIMITS.requestBytes)} (${EDIT_LIMITS.requestBytes} bytes) per request`, {
      details: { bytes: total, limit: EDIT_LIMITS.requestBytes },
    });
  }
  const out = records.map((r): AppendRecord => {
    const rec: AppendRecord = { key: decode(r.key), value: r.tombstone ? null : decode(r.value), headers: r.headers.map((h) => ({ key: h.key, value: decode(h.value) })) };
    if (r.timestamp !== undefined) rec.timestamp = BigInt(r.timestamp);
    return rec;
  });
  return { records: out, bytes: total };
}

// ---------------------------------------------------------------------------------------------
// State, lock, fingerprint

/**
 * The state of a partition folder an append or roll depends on: every file but the writer lock
 * (name, size, modification time in ns) and whether the log dir has a clean-shutdown marker.
 */
export function stateStamp(dir: string): string {
  const parts: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    if (name === WRITER_LOCK_FILE || name.startsWith(`${WRITER_LOCK_FILE}.`)) continue;
    try {
      const st = statSync(join(dir, name), { bigint: true });
      parts.push(`${name}:${st.isDirectory() ? 'd' : st.size}:${st.mtimeNs}`);
    } catch {
      parts.push(`${name}:gone`);
    }
  }
  parts.push(`cleanShutdown:${existsSync(join(dirname(dir), CLEAN_SHUTDOWN_FILE))}`);
  return parts.join('|');
}

/** SHA-256 (hex, first 32 characters) of the given parts. */
function hash(...parts: string[]): string {
  const h = createHash('sha256');
  for (const p of parts) h.update(p).update('\0');
  return h.digest('hex').slice(0, 32);
}

/** JSON with bigints as decimal strings. */
function canonical(v: unknown): string {
  return JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? x.toString() : x));
}

/**
 * Who holds the partition's writer lock right now, or null when nobody does. `stale`: the holder's
 * process is gone (same host), so the next writer takes the lock over.
 */
export function lockStateOf(dir: string): { holder: string; stale: boolean } | null {
  const path = join(dir, WRITER_LOCK_FILE);
  if (!existsSync(path)) return null;
  const h: LockHolder | null = readLockHolder(path);
  if (h === null) {
    let age = 0;
    try {
      age = Date.now() - statSync(path).mtimeMs;
    } catch {
      return null;
    }
    return { holder: 'a writer whose lock file is still empty or unreadable', stale: age > TAKEOVER_STALE_MS };
  }
  return { holder: describeHolder(h), stale: h.hostname === hostname() && !isProcessAlive(h.pid) };
}

/** A number in [0, 1) fixed by the partition and its active segment (the roll jitter's draw; see the module comment). */
function jitterDraw(dir: string): () => number {
  let last = '';
  for (const name of readdirSync(dir)) if (name.endsWith('.log') && name > last) last = name;
  const v = parseInt(hash(dir, last).slice(0, 8), 16) / 2 ** 32;
  return () => v;
}

/** The stale-preview error. */
function stale(what: string, dir: string): KlxError {
  return new KlxError('invalid-argument', `the partition changed since the ${what} preview (another append, a roll, a cleanup or a broker wrote to it): preview again`, {
    file: dir,
    details: { stale: true },
  });
}

// ---------------------------------------------------------------------------------------------
// Append

interface Prepared {
  writer: PartitionWriter;
  records: AppendRecord[];
  opts: AppendOptions;
  plan: AppendPlan;
  now: bigint;
  fingerprint: string;
}

/** Opens the writer (read-only for a preview) and plans the batch; the caller closes `writer`. */
function prepare(dir: string, req: BatchRequest, write: boolean): Prepared {
  const now = req.now !== undefined ? BigInt(req.now) : BigInt(Date.now());
  const { records } = toAppendRecords(req.records);
  const config: Partial<TopicConfig> = req.timestampType ? { 'message.timestamp.type': req.timestampType } : {};
  const writer = PartitionWriter.open(dir, { readOnly: !write, clock: () => now, random: jitterDraw(dir), config, purpose: PURPOSE_APPEND });
  try {
    const opts: AppendOptions = { compression: req.compression, ...(req.allowTimestampOutOfRange ? { allowTimestampOutOfRange: true } : {}) };
    if (req.producer) {
      opts.producerId = BigInt(req.producer.producerId);
      opts.producerEpoch = req.producer.producerEpoch;
      opts.baseSequence = req.producer.baseSequence;
    }
    const plan = writer.planAppend(records, opts);
    const request = canonical({ records: req.records, compression: req.compression, timestampType: req.timestampType ?? null, producer: req.producer ?? null, now, allowTimestampOutOfRange: req.allowTimestampOutOfRange ?? false });
    const fingerprint = hash('append.v1', dir, stateStamp(dir), request, canonical(plan));
    return { writer, records, opts, plan, now, fingerprint };
  } catch (err) {
    writer.close();
    throw err;
  }
}

/** A duration in ms as people read it: "7 days", "2.5 hours", "40 seconds". */
function duration(ms: bigint): string {
  const n = Number(ms);
  const units: [number, string][] = [[86_400_000, 'day'], [3_600_000, 'hour'], [60_000, 'minute'], [1000, 'second']];
  for (const [size, name] of units) {
    if (n >= size) {
      const v = n / size;
      const t = Number.isInteger(v) ? String(v) : v.toFixed(1);
      return `${t} ${name}${t === '1' ? '' : 's'}`;
    }
  }
  return `${n} ms`;
}

/** The roll rule that fired, in words with the numbers it compared. */
function explainRoll(plan: AppendPlan, before: { baseOffset: bigint; size: number } | null, cfg: TopicConfig, dir: string): string | null {
  if (!plan.rolled) return null;
  if (before === null) return `the partition has no segment yet: the batch starts ${basename(plan.segmentFile)}`;
  const name = segmentFileName(before.baseOffset, '.log');
  switch (plan.rollReason) {
    case 'segment.bytes':
      return `${name} holds ${before.size} bytes; with this ${plan.size}-byte batch it would pass segment.bytes = ${cfg['segment.bytes']} (Kafka rolls when size > segment.bytes − batch size: LogSegment.shouldRoll)`;
    case 'segment.ms':
    case 'max.compaction.lag.ms': {
      let first: bigint | null = null;
      try {
        first = PartitionLog.open(dir).activeSegment?.firstBatch()?.maxTimestamp ?? null;
      } catch {
        first = null;
      }
      const limit = maxSegmentMs(cfg);
      const jitter = cfg['segment.jitter.ms'] > 0n ? ` minus this segment's jitter (segment.jitter.ms = ${cfg['segment.jitter.ms']})` : '';
      const which = limit === cfg['segment.ms'] ? `segment.ms = ${limit} ms` : `max.compaction.lag.ms = ${limit} ms (below segment.ms on a compacted topic)`;
      return first !== null && first >= 0n
        ? `the batch's maxTimestamp ${plan.maxTimestamp} is ${plan.maxTimestamp - first} ms (${duration(plan.maxTimestamp - first)}) after ${name}'s first batch (${first}): more than ${which} (${duration(limit)})${jitter}`
        : `${name} has been open longer than ${which}${jitter} (its first batch has no timestamp, so wall-clock time counts)`;
    }
    case 'index-full':
      return `${name}'s offset index is full: ${Math.floor(cfg['segment.index.bytes'] / OFFSET_INDEX_ENTRY_SIZE)} entries (segment.index.bytes = ${cfg['segment.index.bytes']} / ${OFFSET_INDEX_ENTRY_SIZE})`;
    case 'time-index-full':
      return `${name}'s time index is full: ${Math.floor(cfg['segment.index.bytes'] / TIME_INDEX_ENTRY_SIZE) - 1} entries (segment.index.bytes = ${cfg['segment.index.bytes']} / ${TIME_INDEX_ENTRY_SIZE}, one slot kept for the final entry)`;
    case 'offset-overflow':
      return `offset ${plan.lastOffset} is more than ${MAX_RELATIVE_OFFSET} above ${name}'s base offset ${before.baseOffset}: index entries store offsets relative to it as int32`;
    default:
      return `a new segment ${basename(plan.segmentFile)} is started`;
  }
}

/**
 * What appending this batch to the partition folder `dir` (a real path, checked by the session)
 * would do; touches nothing and takes no lock.
 * @throws KlxError from `PartitionWriter.open` / `planAppend` (`invalid-record` for a batch the
 *   broker would refuse: keyless record on a compacted topic (LogValidator), above `max.message.bytes`
 *   (UnifiedLog.analyzeAndValidateRecords: RecordTooLargeException) or `segment.bytes` (UnifiedLog.append:
 *   RecordBatchTooLargeException); `needsRepair` errors naming file and byte position; `not-a-log-dir`...), and
 *   `invalid-argument` for the limits above.
 */
export function previewAppend(dir: string, req: BatchRequest): EditPreview {
  const p = prepare(dir, req, false);
  try {
    const { writer, plan } = p;
    const cfg = writer.config.config;
    const activeBase = writer.activeSegmentBaseOffset;
    const before = activeBase === null ? null : { baseOffset: activeBase, size: writer.activeSegmentSize };
    return {
      dir,
      topic: writer.topic,
      partition: writer.partition,
      baseOffset: plan.baseOffset.toString(),
      lastOffset: plan.lastOffset.toString(),
      recordCount: plan.recordCount,
      size: plan.size,
      position: plan.position,
      segmentBaseOffset: plan.segmentBaseOffset.toString(),
      segmentFile: plan.segmentFile,
      segmentName: basename(plan.segmentFile),
      newSegment: plan.rolled,
      rollReason: plan.rollReason,
      rollExplanation: explainRoll(plan, before, cfg, dir),
      logEndOffsetBefore: plan.baseOffset.toString(),
      logEndOffset: plan.logEndOffset.toString(),
      activeSegment: before ? { baseOffset: before.baseOffset.toString(), name: segmentFileName(before.baseOffset, '.log'), size: before.size } : null,
      timestampType: plan.timestampType,
      timestampTypeSource: req.timestampType ? 'request' : 'topic',
      maxTimestamp: plan.maxTimestamp.toString(),
      now: p.now.toString(),
      compression: plan.compression,
      partitionLeaderEpoch: plan.partitionLeaderEpoch,
      indexEntry: plan.indexEntry,
      leaderEpochEntry: plan.leaderEpochEntry ? { epoch: plan.leaderEpochEntry.epoch, startOffset: plan.leaderEpochEntry.startOffset.toString() } : null,
      removesCleanShutdownMarker: plan.removesCleanShutdownMarker,
      brokerRefusal: plan.brokerRefusal,
      limits: {
        segmentBytes: cfg['segment.bytes'],
        maxMessageBytes: cfg['max.message.bytes'],
        segmentMs: maxSegmentMs(cfg).toString(),
        indexIntervalBytes: cfg['index.interval.bytes'],
        cleanupPolicy: [...cfg['cleanup.policy']],
      },
      lock: lockStateOf(dir),
      fingerprint: p.fingerprint,
    };
  } finally {
    p.writer.close();
  }
}

/**
 * Appends the batch to `dir` (a real path, checked for writing by the session) if the partition is
 * still as the preview with this `fingerprint` saw it. Returns once the batch is fsynced and the
 * checkpoints updated.
 * @throws KlxError `locked` (another writer: a klx process or window), `invalid-argument` with
 *   `details.stale` (changed since the preview), whatever {@link previewAppend} throws, `io-error`.
 */
export function appendPreviewed(dir: string, req: BatchRequest, fingerprint: string): EditAppendResult {
  const p = prepare(dir, req, true);
  try {
    if (p.fingerprint !== fingerprint) throw stale('append', dir);
    const r = p.writer.append(p.records, p.opts);
    const holder = p.writer.tookOverFrom;
    return {
      dir,
      baseOffset: r.baseOffset.toString(),
      lastOffset: r.lastOffset.toString(),
      recordCount: r.recordCount,
      size: r.size,
      position: r.position,
      segmentBaseOffset: r.segmentBaseOffset.toString(),
      segmentFile: r.segmentFile,
      segmentName: basename(r.segmentFile),
      rolled: r.rolled,
      rollReason: r.rollReason,
      logEndOffset: r.logEndOffset.toString(),
      maxTimestamp: r.maxTimestamp.toString(),
      tookOverStaleLock: holder ? describeHolder(holder) : null,
    };
  } finally {
    p.writer.close();
  }
}

// ---------------------------------------------------------------------------------------------
// Roll

function rollWire(dir: string, r: RollResult, fingerprint: string, lock: EditRollResult['lock'], tookOver: string | null): EditRollResult {
  return {
    dir,
    rolled: r.rolled,
    note: r.note ?? null,
    previousSegmentBaseOffset: r.previousSegmentBaseOffset === null ? null : r.previousSegmentBaseOffset.toString(),
    previousSegmentName: r.previousSegmentBaseOffset === null ? null : segmentFileName(r.previousSegmentBaseOffset, '.log'),
    segmentBaseOffset: r.segmentBaseOffset.toString(),
    segmentFile: r.segmentFile,
    segmentName: basename(r.segmentFile),
    finalTimeIndexEntry: r.finalTimeIndexEntry ? { timestamp: r.finalTimeIndexEntry.timestamp.toString(), offset: r.finalTimeIndexEntry.offset.toString() } : null,
    logEndOffset: r.logEndOffset.toString(),
    removesCleanShutdownMarker: r.removesCleanShutdownMarker,
    lock,
    fingerprint,
    tookOverStaleLock: tookOver,
  };
}

/**
 * What rolling the active segment of `dir` now would do (Kafka `UnifiedLog.roll`): the new
 * segment's base offset (= logEndOffset) and file, the previous segment's final time-index entry.
 * Touches nothing. An empty active segment is not rolled (`rolled: false` with a note).
 * @throws KlxError from `PartitionWriter.open` (see {@link previewAppend}).
 */
export function previewRoll(dir: string): EditRollResult {
  const writer = PartitionWriter.open(dir, { readOnly: true, purpose: PURPOSE_ROLL });
  try {
    const plan = writer.planRoll();
    return rollWire(dir, plan, hash('roll.v1', dir, stateStamp(dir), canonical(plan)), lockStateOf(dir), null);
  } finally {
    writer.close();
  }
}

/**
 * Rolls the active segment of `dir` if the partition is still as the roll preview with this
 * `fingerprint` saw it.
 * @throws KlxError `locked`, `invalid-argument` with `details.stale`, `io-error`; see {@link previewRoll}.
 */
export function rollPreviewed(dir: string, fingerprint: string): EditRollResult {
  const writer = PartitionWriter.open(dir, { purpose: PURPOSE_ROLL });
  try {
    const plan = writer.planRoll();
    if (hash('roll.v1', dir, stateStamp(dir), canonical(plan)) !== fingerprint) throw stale('roll', dir);
    const r = writer.roll();
    const holder = writer.tookOverFrom;
    return rollWire(dir, r, '', null, holder ? describeHolder(holder) : null);
  } finally {
    writer.close();
  }
}
