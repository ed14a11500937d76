/**
 * `klx fetch DIR --offset N [--max N] [--max-bytes N] [--isolation read_committed]
 * [--include-control] [--up-to high-watermark|log-end] [--partition TOPIC-N] [--json]`: prints the records
 * a consumer positioned at offset N would receive (engine `fetch`, Kafka `UnifiedLog.read` +
 * `CompletedFetch`), following offset holes, skipping control records and, for read_committed,
 * aborted transactions. As for a consumer, reading stops at the high watermark of
 * replication-offset-checkpoint (`FetchIsolation.HIGH_WATERMARK`; the log end offset without an
 * entry; read_committed: the last stable offset), and `--offset latest` is what ListOffsets latest
 * answers (`Partition.fetchOffsetForTimestamp`, as `klx offset-for-time --timestamp latest`);
 * `--up-to log-end` reads every record the files hold instead, `latest` then being the log end offset.
 *
 * Output: text, one line per record (offset, timestamp, key/value previews, flags) and a last line
 * `-- next offset N ...`; or `--json` NDJSON: `{"type":"record",...}` per record (key/value/header
 * values base64, int64 beyond 2^53 as decimal strings), `{"type":"problem",...}` for damage met, and
 * a final `{"type":"end","nextOffset":...}`. A read_committed read that stops at an open transaction
 * says so (text `-- payments-0: read_committed stops at the last stable offset ...`; JSON `openTransaction`
 * {producerId, producerEpoch, firstOffset}, `recordsNotRead`, `notReadUpTo` in the end object).
 *
 * Corruption, as a consumer with `check.crcs=true` meets it (Kafka's `CompletedFetch`): at a batch
 * whose CRC fails the records before it are printed, then the command fails with a `corrupt-record`
 * error (exit 1; under `--json` the error object) naming the offsets, file, byte position and both
 * CRCs. `--skip-corrupt` reads on and marks those records (`[CRC MISMATCH: ...]`, JSON `crcValid:
 * false`, `crc`, `computedCrc`, `crcAlgorithm`). An unreadable batch (unknown magic or codec, bytes
 * that are not a batch) is printed in place as a hole with its cause (`-- hole offsets A..B:
 * CODE: reason (file position P)`, JSON `{"type":"problem","fromOffset","toOffset",...}`), reading
 * goes on, and the command exits 1 at the end. Bytes whose size field a broker cannot frame
 * (`FileLogInputStream.nextBatch`; engine `framing: 'broker'`, with or without `--skip-corrupt`): a size
 * field below 14 ends the read with the consumer's error ("Encountered corrupt message when fetching
 * offset O", exit 1) after the records before it; one running past the end of the file ends the
 * segment's batches on a broker without an error, so the offsets skipped up to the next segment are
 * printed as a hole naming them and reading goes on there, or, in the last segment, reading stops
 * (`-- next offset O (a broker returns nothing from here on ...)`, JSON `stalled: true` in the end object).
 *
 * Leftovers of an interrupted cleaner, split or retention (`.swap`, `.cleaned`, `.deleted`): the
 * records printed are those of the segments on disk (the pre-swap ones); the first line says what
 * is pending and what a broker does with it at startup (`LogLoader.load`, see
 * engine/log/pending-swaps.ts): text `-- note: ...`, JSON `{"type":"notice","code":"pending-swaps",
 * "message","swapFiles","replacedSegments","range"}`.
 *
 * Keys and values are decoded by the decode layer (`--key-format` / `--value-format`, default: the
 * format saved in the app for the topic (its `decode-choices.json`), else `auto`;
 * schemas from the `_schemas` partitions beside the partition and `--schemas PATH`): the text lines
 * show the decoded text (or the bytes and the reason it did not decode), the JSON lines gain
 * `keyFormat`, `valueFormat`, `keyDecoded`, `valueDecoded` (JSON, int64 exact), `schemaId` and
 * `decodeError` (null when both decoded).
 *
 * Also home of {@link openPartitionArg}, the DIR/--partition resolution shared by the read commands.
 */
import { basename, dirname } from 'node:path';
import { appDataDir } from '../../api/core/decode-choices-store.ts';
import type { RecordDecoder, DecodedRecord } from '../../engine/decode/record-decoder.ts';
import { toJsonText } from '../../engine/decode/json-text.ts';
import { openLogDirectory } from '../../engine/log/log-dir.ts';
import { lastStableStop, lastStableStopText } from '../../engine/log/last-stable-stop.ts';
import { KlxError } from '../../engine/errors.ts';
import { int64Json, recordJson } from '../../engine/format/batch-json.ts';
import { crcAlgorithm } from '../../engine/format/crc.ts';
import { allPartitions, openPath } from '../../engine/log/log-dir.ts';
import type { PartitionLog } from '../../engine/log/partition-log.ts';
import type { PendingSwaps } from '../../engine/log/pending-swaps.ts';
import { DEFAULT_MAX_RECORDS, fetch, type FetchedRecord, type FetchResult, type IsolationLevel, type ReadProblem } from '../../engine/log/fetch.ts';
import { lastFetchableOffset } from '../../engine/log/time-lookup.ts';
import { cliDecodeSetup, type CliDecodeFlags } from '../decode-options.ts';
import { OutputWriter } from '../output.ts';
import { preview } from './dump.ts';

/** `klx fetch`'s options; the decode ones (`keyFormat`, `valueFormat`, `schemas`) as `../decode-options.ts` reads them. */
export interface FetchCliOptions extends CliDecodeFlags {
  offset: bigint | 'earliest' | 'latest';
  max: number;
  maxBytes?: number;
  isolation: IsolationLevel;
  includeControl?: boolean;
  upTo: 'log-end' | 'high-watermark';
  partition?: string;
  json?: boolean;
  /** Read past batches whose CRC fails, marking their records, instead of stopping (check.crcs=true). */
  skipCorrupt?: boolean;
}

/**
 * The decoder of `klx fetch`: {@link cliDecodeSetup} (shared with `klx query` and `klx export`) for
 * `topic`, with the `_schemas` partitions of the partition's log directory: for each side the format
 * given (`keyFormat` / `valueFormat`), else the one saved in the app for a folder holding the
 * partition (the app's `decode-choices.json` in {@link appDataDir}), else `auto`; schema files given
 * in the app for the topic and `schemaPaths` (`--schemas` arguments: `PATH`, `ID=FILE`,
 * `SUBJECT=FILE`; see `engine/decode/schemas/schema-sources.ts` for how files are mapped); a lone
 * Avro file that maps to nothing is the schema of the one side given as `--key-format avro` /
 * `--value-format avro`, with a note.
 * @returns the decoder and notes for stderr (which saved choices were applied)
 * @throws KlxError `invalid-argument` for an unknown format or a schema file that nothing uses
 *   (naming it and how to map it); `not-found` for a schema path.
 */
export function cliDecoder(log: PartitionLog, topic: string, keyFormat?: string, valueFormat?: string, schemaPaths: string[] = [], dataDir = appDataDir()): { decoder: RecordDecoder; notes: string[] } {
  let opened = null;
  try {
    opened = { root: dirname(log.dir), logDirs: [openLogDirectory(dirname(log.dir))] };
  } catch {
    opened = null;
  }
  const { decoder, notes } = cliDecodeSetup({ opened, topics: [topic], savedFor: log.dir }, { ...(keyFormat !== undefined ? { keyFormat } : {}), ...(valueFormat !== undefined ? { valueFormat } : {}), schemas: schemaPaths }, dataDir);
  return { decoder, notes };
}

/** The decode fields of a record's JSON line. */
export function decodedJson(d: DecodedRecord): Record<string, unknown> {
  const err = d.key.error !== undefined ? (d.value.error !== undefined ? `key: ${d.key.error}; ${d.value.error}` : `key: ${d.key.error}`) : (d.value.error ?? null);
  return {
    keyFormat: d.key.format,
    valueFormat: d.value.format,
    keyDecoded: d.key.ok ? (d.key.json ?? null) : null,
    valueDecoded: d.value.ok ? (d.value.json ?? null) : null,
    schemaId: d.value.schemaId ?? d.key.schemaId ?? null,
    decodeError: err,
  };
}

/**
 * Opens DIR (a partition folder, a log directory or a folder of log directories) and picks one
 * partition: the only one, or the one `--partition` names (`topic-N`, or its path relative to DIR
 * when several log directories hold the same partition).
 * @throws KlxError `not-found` / `not-a-log-dir` for DIR; `invalid-argument` when DIR holds several
 *   partitions and none (or an unknown one) is chosen — the message lists the choices.
 */
export function openPartitionArg(dir: string, partition?: string): PartitionLog {
  const all = allPartitions(openPath(dir));
  if (all.length === 0) throw new KlxError('not-a-log-dir', 'this log directory holds no partition folder', { file: dir });
  const choices = (list: typeof all) => {
    const names = list.map((p) => p.rel);
    return names.length > 40 ? `${names.slice(0, 40).join(', ')}, ... (${names.length} in all)` : names.join(', ');
  };
  if (partition !== undefined) {
    const hits = all.filter((p) => p.rel === partition || `${p.log.topic}-${p.log.partition}` === partition || basename(p.log.dir) === partition);
    if (hits.length === 1) return hits[0]!.log;
    if (hits.length > 1) throw new KlxError('invalid-argument', `--partition ${partition} matches ${hits.length} partitions; give its path instead: ${choices(hits)}`, { file: dir });
    throw new KlxError('invalid-argument', `no partition ${partition} here; choose one of: ${choices(all)}`, { file: dir });
  }
  if (all.length === 1) return all[0]!.log;
  throw new KlxError('invalid-argument', `this folder holds ${all.length} partitions; choose one with --partition: ${choices(all)}`, { file: dir });
}

/** The JSON line of a fetched record: `recordJson` fields plus the batch and segment that hold it. */
export function fetchedRecordJson(r: FetchedRecord): Record<string, unknown> {
  const o: Record<string, unknown> = {
    type: 'record',
    ...recordJson({ offset: r.offset, timestamp: r.timestamp, attributes: 0, key: r.key, value: r.value, headers: r.headers, sizeInBytes: r.sizeInBytes, ...(r.control ? { control: r.control } : {}) }),
    timestampType: r.timestampType,
    batchBaseOffset: int64Json(r.batchBaseOffset),
    batchLastOffset: int64Json(r.batchLastOffset),
    position: r.position,
    batchSize: r.batchSize,
    segmentBaseOffset: int64Json(r.segmentBaseOffset),
    magic: r.magic,
    compression: r.compression,
    isControl: r.isControl,
    isTransactional: r.isTransactional,
    producerId: int64Json(r.producerId),
    producerEpoch: r.producerEpoch,
    partitionLeaderEpoch: r.partitionLeaderEpoch,
    crcValid: r.crcValid ?? null,
  };
  if (r.crcValid === false) Object.assign(o, { crc: r.crc, computedCrc: r.computedCrc ?? null, crcAlgorithm: crcAlgorithm(r.magic) });
  if (r.aborted) o.aborted = true;
  return o;
}

/** One line per record for people. */
export function fetchedRecordText(r: FetchedRecord, d?: DecodedRecord): string {
  const ts = r.timestamp >= 0n && r.timestamp < 8640000000000000n ? `${r.timestamp} (${new Date(Number(r.timestamp)).toISOString()})` : `${r.timestamp}`;
  const flags = [
    r.isTransactional && `txn producer ${r.producerId}`,
    r.control && `control ${r.control.type}`,
    r.aborted && 'ABORTED',
    r.crcValid === false && `CRC MISMATCH: stored crc = ${r.crc}, computed crc = ${r.computedCrc ?? 'not computed'}; ${crcAlgorithm(r.magic)}`,
  ].filter(Boolean);
  const headers = r.headers.length ? ` headers: ${r.headers.map((h) => `${h.key}=${preview(h.value)}`).join(',')}` : '';
  const shown = (x: Uint8Array | null, dec: DecodedRecord['key'] | undefined) => {
    if (!dec || x === null) return preview(x);
    if (!dec.ok) return `${preview(x)} (${dec.format}: ${dec.error})`;
    // A string is quoted, as without decoding, so that a key "null" and a null key read differently.
    const t = dec.format === 'string' ? JSON.stringify(dec.text ?? '') : (dec.text ?? '');
    return `${t.length > 200 ? `${t.slice(0, 200)}…` : t}${dec.error ? ` (${dec.error})` : ''}`;
  };
  const body = r.control ? '' : ` key: ${shown(r.key, d?.key)} value: ${shown(r.value, d?.value)}${headers}`;
  return `offset ${r.offset} ts ${ts}${body}${flags.length ? ` [${flags.join(', ')}]` : ''}`;
}

/** JSON line of a problem met while reading (`fromOffset`/`toOffset`: the hole it makes, when it hides offsets). */
export function problemJson(p: ReadProblem): Record<string, unknown> {
  const { fromOffset, toOffset, ...rest } = p;
  return { type: 'problem', ...rest, ...(fromOffset !== undefined && toOffset !== undefined ? { fromOffset: int64Json(fromOffset), toOffset: int64Json(toOffset) } : {}) };
}

/** The JSON `notice` line of a partition's pending swaps (offsets as int64 JSON). */
export function pendingSwapsJson(p: PendingSwaps): Record<string, unknown> {
  return {
    type: 'notice',
    code: 'pending-swaps',
    message: p.notice,
    swapFiles: p.swaps.map((s) => s.name),
    replacedSegments: p.replacedSegments.map(int64Json),
    range: p.range ? { from: int64Json(p.range.from), to: int64Json(p.range.to) } : null,
  };
}

/** Text line of a problem met while reading (written to stderr). */
export function problemText(p: ReadProblem): string {
  return `klx: warning: ${p.file}: position ${p.position}: ${p.reason}`;
}

/**
 * The line `klx fetch` prints in place of the offsets a problem hides, or, for damage that hides none
 * (between batches whose offsets follow on, or past the read limit), where it is and that a reader
 * skips it: `-- unreadable bytes that hide no offset below the read limit 4: …`.
 * @param readLimit the fetch's read limit (high watermark, or the last stable offset for read_committed).
 */
export function holeText(p: ReadProblem, readLimit: bigint): string {
  const where = `${p.file} position ${p.position}, ${p.size} bytes`;
  if (p.fromOffset === undefined || p.toOffset === undefined) return `-- unreadable bytes that hide no offset below the read limit ${readLimit}: ${p.code}: ${p.reason} (${where})`;
  const span = p.fromOffset === p.toOffset ? `offset ${p.fromOffset}` : `offsets ${p.fromOffset}..${p.toOffset}`;
  // A batch past this tool's decompression bound is not damage: its offsets are not checked, not a hole a consumer meets.
  if (p.code === 'decompression-limit') return `-- not checked: ${span}: ${p.reason} (${where})`;
  return `-- hole ${span}: ${p.code}: ${p.reason} (${where})`;
}

/** Runs `klx fetch` (its options and help are declared in `../registry.ts`). */
export async function runFetch(dir: string, opts: FetchCliOptions): Promise<void> {
  const log = openPartitionArg(dir, opts.partition);
  // latest: ListOffsets' answer to a consumer (Partition.fetchOffsetForTimestamp), or the log end with --up-to log-end.
  const latest = async () => (opts.upTo === 'log-end' && opts.isolation !== 'read_committed' ? log.logEndOffset : (await lastFetchableOffset(log, opts.isolation)).offset);
  const offset = opts.offset === 'earliest' ? log.logStartOffset : opts.offset === 'latest' ? await latest() : opts.offset;
  if (opts.max === 0) throw new KlxError('invalid-argument', '--max must be at least 1');
  const out = new OutputWriter(process.stdout);
  const { decoder: dec, notes } = cliDecoder(log, log.topic, opts.keyFormat, opts.valueFormat, opts.schemas);
  for (const n of notes) process.stderr.write(`klx: note: ${n}\n`);
  const pending = log.pendingSwaps;
  if (pending) await out.line(opts.json ? JSON.stringify(pendingSwapsJson(pending)) : `-- note: ${pending.notice}`);
  const common = { isolation: opts.isolation, includeControl: opts.includeControl ?? false, readUpTo: opts.upTo, onCorrupt: opts.skipCorrupt ? 'flag' : 'stop', framing: 'broker' } as const;
  let last: FetchResult | null = null;
  let printed = 0;
  let unreadable = 0;
  let notChecked = 0;
  const emit = async (r: FetchResult) => {
    // Records and problems in offset order: a problem's hole is printed where its offsets would be.
    const problems = r.problems.slice();
    // Damage that hides no offset waits for the end of the page (it lies after the records read, or between two of them).
    const flushProblemsBefore = async (offset: bigint | null) => {
      while (problems.length > 0 && (offset === null || (problems[0]!.fromOffset !== undefined && problems[0]!.fromOffset! <= offset))) {
        const p = problems.shift()!;
        if (p.code === 'decompression-limit') notChecked++;
        else unreadable++;
        await out.line(opts.json ? JSON.stringify(problemJson(p)) : holeText(p, r.readLimit));
      }
    };
    for (const rec of r.records) {
      await flushProblemsBefore(rec.offset);
      const d = dec.decodeRecord(log.topic, rec.key, rec.value, rec.control ? rec.control.typeId : undefined);
      await out.line(opts.json ? toJsonText({ ...fetchedRecordJson(rec), ...decodedJson(d) }) : fetchedRecordText(rec, d));
    }
    await flushProblemsBefore(null);
    printed += r.records.length;
  };
  try {
    if (opts.maxBytes !== undefined) {
      // One fetch: the byte budget bounds the whole answer, as for a consumer.
      last = await fetch(log, { offset, maxRecords: opts.max, maxBytes: opts.maxBytes, ...common });
      await emit(last);
      // A consumer's next poll fails at the corrupt batch that ended this answer (CompletedFetch.maybeEnsureValid).
      if (last.stoppedAtCorrupt) throw last.stoppedAtCorrupt;
    } else {
      // Pages of at most DEFAULT_MAX_RECORDS records, so memory stays bounded for any --max.
      let next = offset;
      do {
        last = await fetch(log, { offset: next, maxRecords: Math.min(DEFAULT_MAX_RECORDS, opts.max - printed), ...common });
        await emit(last);
        if (last.stoppedAtCorrupt) throw last.stoppedAtCorrupt;
        next = last.nextOffset;
      } while (!last.reachedLimit && !last.stalled && printed < opts.max);
    }
  } catch (err) {
    // The records read before the error are on stdout first.
    await out.end();
    if (err instanceof KlxError && err.code === 'corrupt-record') {
      throw new KlxError(err.code, `${err.reason} (read past it with --skip-corrupt)`, { file: err.file, position: err.position, details: err.details, cause: err });
    }
    throw err;
  }
  const end = last!;
  // read_committed stopped at an open transaction's first offset (not at the high watermark): say why and what it held back.
  const upper = opts.upTo === 'log-end' || end.highWatermark === null ? end.logEndOffset : end.highWatermark;
  const stop = end.isolation === 'read_committed' && end.reachedLimit ? await lastStableStop(log, { from: end.nextOffset, upTo: upper }) : null;
  if (opts.json) {
    await out.line(
      JSON.stringify({
        type: 'end',
        nextOffset: int64Json(end.nextOffset),
        records: printed,
        reachedLimit: end.reachedLimit,
        ...(end.stalled ? { stalled: true } : {}),
        readLimit: int64Json(end.readLimit),
        isolation: end.isolation,
        logStartOffset: int64Json(end.logStartOffset),
        logEndOffset: int64Json(end.logEndOffset),
        highWatermark: end.highWatermark === null ? null : int64Json(end.highWatermark),
        lastStableOffset: end.lastStableOffset === null ? null : int64Json(end.lastStableOffset),
        ...(stop ? { openTransaction: { producerId: int64Json(stop.openTransaction.producerId), producerEpoch: stop.openTransaction.producerEpoch, firstOffset: int64Json(stop.openTransaction.firstOffset) }, recordsNotRead: stop.recordsNotRead, notReadUpTo: int64Json(stop.upTo) } : {}),
      }),
    );
  } else {
    const what = end.highWatermark !== null && end.readLimit === end.highWatermark && end.readLimit !== end.logEndOffset ? ' (the high watermark; --up-to log-end reads on)' : '';
    const limit = end.isolation === 'read_committed' ? `last stable offset ${end.readLimit}` : `read limit ${end.readLimit}${what}`;
    const ended = end.reachedLimit ? ' (end: nothing more to read)' : end.stalled ? ' (a broker returns nothing from here on, LocalLog.read, and a consumer waits here: see the hole above)' : '';
    await out.line(`-- next offset ${end.nextOffset}${ended}; ${printed} records; ${limit}, log start offset ${end.logStartOffset}, log end offset ${end.logEndOffset}`);
    if (stop) await out.line(`-- ${lastStableStopText(stop, 'fetched')}`);
  }
  await out.end();
  if (notChecked > 0) process.stderr.write(`klx: ${notChecked} batch${notChecked === 1 ? '' : 'es'} not checked: past this tool's decompression bound (not damage; --max-inflated-bytes reads ${notChecked === 1 ? 'it' : 'them'})\n`);
  if (unreadable > 0) {
    process.stderr.write(`klx: ${unreadable} unreadable batch${unreadable === 1 ? '' : 'es'} or region${unreadable === 1 ? '' : 's'} (shown in place as holes above)\n`);
    process.exitCode = 1;
  }
}
