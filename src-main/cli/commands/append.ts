/**
 * `klx append DIR [--key K] (--value V | --tombstone | --records FILE.ndjson) [--header k=v ...]
 *  [--timestamp MS] [--compression none|gzip|snappy|lz4|zstd] [--producer-id P [--producer-epoch E]
 *  [--sequence S] [--transactional]] [--leader-epoch N] [--config k=v ...] [--dry-run] [--json]`:
 * appends one batch to a partition folder, as a broker writes a producer batch (engine:
 * `PartitionWriter.append` in `engine/log/partition-writer.ts`).
 * `klx append DIR --commit|--abort --producer-id P --producer-epoch E [--coordinator-epoch N]
 *  [--timestamp MS] [--leader-epoch N]` writes a transaction marker instead
 * (`PartitionWriter.appendMarker`).
 *
 * Without `--key` the record has no key (refused on a compacted topic); `--tombstone` writes a null
 * value. `--records` puts every line of an NDJSON file into the same batch; a line is
 * `{"key": string|null, "value": string|null, "headers": {"k": "v"|null}, "timestamp": ms}` where
 * `keyBase64` / `valueBase64` may replace `key` / `value` for binary data, a missing key means no key,
 * `headers` may also be a list of `{"key", "value"|"valueBase64"}` and a missing timestamp takes
 * `--timestamp` or now. The file is streamed; at most {@link MAX_RECORDS_FILE_BYTES} bytes of record
 * data are accepted (a batch must fit `max.message.bytes` after compression anyway).
 */
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { KlxError } from '../../engine/errors.ts';
import { int64Json } from '../../engine/format/batch-json.ts';
import type { Compression } from '../../engine/format/types.ts';
import { PartitionWriter, type AppendOptions, type AppendPlan, type AppendRecord, type MarkerOptions } from '../../engine/log/partition-writer.ts';
import { parseConfigPairs, segmentBytesNote } from '../../engine/log/topic-config.ts';
import { OutputWriter } from '../output.ts';

/** Largest amount of key/value/header bytes `--records` reads (256 MiB). */
export const MAX_RECORDS_FILE_BYTES = 256 * 1024 * 1024;

export interface AppendCliOptions {
  key?: string;
  value?: string;
  tombstone?: boolean;
  header: string[];
  timestamp?: bigint;
  compression?: Compression;
  records?: string;
  producerId?: bigint;
  producerEpoch?: number;
  sequence?: number;
  transactional?: boolean;
  commit?: boolean;
  abort?: boolean;
  coordinatorEpoch?: number;
  leaderEpoch?: number;
  config: string[];
  dryRun?: boolean;
  json?: boolean;
  allowTimestampOutOfRange?: boolean;
}

/** `JSON.stringify` that prints bigints as int64 JSON (numbers while exact, else strings). */
export function toJson(value: unknown): string {
  return JSON.stringify(value, (_k, v) => (typeof v === 'bigint' ? int64Json(v) : v));
}

/** Prints a command's result: one JSON object with `--json`, else the text lines. */
export async function printResult(result: unknown, json: boolean, text: () => string[]): Promise<void> {
  const out = new OutputWriter(process.stdout);
  if (json) await out.line(toJson(result));
  else for (const l of text()) await out.line(l);
  await out.end();
}

/** `--header k=v` (or `k` alone for a null value). */
function parseHeader(h: string): { key: string; value: string | null } {
  const eq = h.indexOf('=');
  return eq < 0 ? { key: h, value: null } : { key: h.slice(0, eq), value: h.slice(eq + 1) };
}

/** Runs `klx append` (its options and help are declared in `../registry.ts`). */
export async function runAppend(dir: string, opts: AppendCliOptions): Promise<void> {
  if (opts.commit || opts.abort) return runMarker(dir, opts);
  if (opts.coordinatorEpoch !== undefined) throw new KlxError('invalid-argument', '--coordinator-epoch goes with --commit or --abort');
  const modes = [opts.value !== undefined, Boolean(opts.tombstone), opts.records !== undefined].filter(Boolean).length;
  if (modes !== 1) throw new KlxError('invalid-argument', 'give exactly one of --value, --tombstone or --records');
  if (opts.records !== undefined && (opts.key !== undefined || opts.header.length > 0)) {
    throw new KlxError('invalid-argument', '--key and --header go with --value or --tombstone; with --records each line carries its own');
  }
  const config = parseConfigPairs(opts.config);
  const records: AppendRecord[] =
    opts.records !== undefined
      ? await readRecordsFile(opts.records)
      : [{ key: opts.key ?? null, value: opts.tombstone ? null : opts.value!, headers: opts.header.map(parseHeader) }];
  const writer = PartitionWriter.open(dir, { config, readOnly: Boolean(opts.dryRun), purpose: 'klx append' });
  let result: AppendPlan;
  try {
    const appendOpts: AppendOptions = {
      ...(opts.timestamp !== undefined ? { timestamp: opts.timestamp } : {}),
      ...(opts.compression ? { compression: opts.compression } : {}),
      ...(opts.producerId !== undefined ? { producerId: opts.producerId } : {}),
      ...(opts.producerEpoch !== undefined ? { producerEpoch: opts.producerEpoch } : {}),
      ...(opts.sequence !== undefined ? { baseSequence: opts.sequence } : {}),
      ...(opts.transactional ? { isTransactional: true } : {}),
      ...(opts.leaderEpoch !== undefined ? { leaderEpoch: opts.leaderEpoch } : {}),
      ...(opts.allowTimestampOutOfRange ? { allowTimestampOutOfRange: true } : {}),
    };
    result = opts.dryRun ? writer.planAppend(records, appendOpts) : writer.append(records, appendOpts);
  } finally {
    writer.close();
  }
  const notes = brokerNotes(result, writer);
  await printResult({ ...result, dryRun: Boolean(opts.dryRun), tookOverStaleLockFrom: writer.tookOverFrom ?? null, notes }, Boolean(opts.json), () => [
    ...staleLockNote(writer),
    ...appendText(result, writer, Boolean(opts.dryRun)),
    ...notes.map((n) => `note: ${n}`),
  ]);
}

/**
 * What a broker would refuse about this append, which klx wrote anyway: a CreateTime out of range let through by
 * --allow-timestamp-out-of-range (LogValidator.validateTimestamp) and a segment.bytes below Kafka 4.1's minimum (LogConfig).
 */
function brokerNotes(r: AppendPlan, w: PartitionWriter): string[] {
  const out: string[] = [];
  if (r.brokerRefusal) out.push(`${r.brokerRefusal}; written because of --allow-timestamp-out-of-range, so no such broker would have written this batch`);
  const seg = segmentBytesNote(w.config);
  if (seg) out.push(seg);
  return out;
}

/** `klx append --commit|--abort`: one transaction marker. */
async function runMarker(dir: string, opts: AppendCliOptions): Promise<void> {
  if (opts.commit && opts.abort) throw new KlxError('invalid-argument', 'give --commit or --abort, not both');
  if (opts.value !== undefined || opts.tombstone || opts.records !== undefined || opts.key !== undefined || opts.header.length > 0) {
    throw new KlxError('invalid-argument', 'a transaction marker carries no records: --commit/--abort go without --key, --value, --tombstone, --records and --header');
  }
  if (opts.sequence !== undefined || opts.transactional || opts.compression) throw new KlxError('invalid-argument', 'a transaction marker has no sequence (−1), is always transactional and uncompressed: drop --sequence, --transactional and --compression');
  if (opts.allowTimestampOutOfRange) throw new KlxError('invalid-argument', '--allow-timestamp-out-of-range goes with records (--value, --tombstone or --records), not with --commit/--abort');
  if (opts.producerId === undefined || opts.producerEpoch === undefined) throw new KlxError('invalid-argument', '--commit/--abort need --producer-id and --producer-epoch');
  // No default epoch for a marker: the coordinator's epoch decides it (TV2 coordinators write epoch + 1, KIP-890), see --producer-epoch's help.
  const writer = PartitionWriter.open(dir, { config: parseConfigPairs(opts.config), readOnly: Boolean(opts.dryRun), purpose: 'klx append' });
  let result: AppendPlan;
  try {
    const m: MarkerOptions = {
      type: opts.commit ? 'COMMIT' : 'ABORT',
      producerId: opts.producerId,
      producerEpoch: opts.producerEpoch,
      ...(opts.coordinatorEpoch !== undefined ? { coordinatorEpoch: opts.coordinatorEpoch } : {}),
      ...(opts.timestamp !== undefined ? { timestamp: opts.timestamp } : {}),
      ...(opts.leaderEpoch !== undefined ? { leaderEpoch: opts.leaderEpoch } : {}),
    };
    result = opts.dryRun ? writer.planMarker(m) : writer.appendMarker(m);
  } finally {
    writer.close();
  }
  await printResult({ ...result, dryRun: Boolean(opts.dryRun), tookOverStaleLockFrom: writer.tookOverFrom ?? null }, Boolean(opts.json), () => [
    ...staleLockNote(writer),
    ...appendText(result, writer, Boolean(opts.dryRun)),
  ]);
}

/** A line saying that a stale lock (its process gone) was taken over, when it was. */
export function staleLockNote(w: PartitionWriter): string[] {
  const h = w.tookOverFrom;
  return h ? [`note: took over the stale writer lock of pid ${h.pid} on ${h.hostname} (taken ${h.createdAt || 'at an unknown time'}${h.purpose ? ` by ${h.purpose}` : ''}; that process no longer exists)`] : [];
}

function appendText(r: AppendPlan, w: PartitionWriter, dryRun: boolean): string[] {
  const would = dryRun ? 'would ' : '';
  const offsets = r.recordCount === 1 ? `offset ${r.baseOffset}` : `offsets ${r.baseOffset}..${r.lastOffset}`;
  const lines: string[] = [];
  const file = (p: string) => p.split(/[\\/]/).pop();
  if (r.rolled) lines.push(`${dryRun ? 'would roll' : 'rolled'} a new segment ${r.segmentFile.split(/[\\/]/).pop()} first${r.rollReason ? ` (${r.rollReason})` : ''}`);
  if (r.producerSnapshot) lines.push(`  ${would}write producer snapshot ${file(r.producerSnapshot.file)} (${r.producerSnapshot.producers} producer${r.producerSnapshot.producers === 1 ? '' : 's'})`);
  const p = r.producer;
  if (r.marker && p) {
    lines.push(
      `${dryRun ? 'would append' : 'appended'} ${r.marker.type} marker at offset ${r.baseOffset} to ${w.topic}-${w.partition} for producer ${p.producerId} epoch ${p.producerEpoch} (coordinator epoch ${r.marker.coordinatorEpoch}): segment ${file(r.segmentFile)}, position ${r.position}, ${r.size} bytes`,
      p.completedTransaction
        ? `  ends the transaction of offsets ${p.completedTransaction.firstOffset}..${p.completedTransaction.lastOffset}${p.txnIndexEntry ? `; ${would}add .txnindex entry (producer ${p.txnIndexEntry.producerId}, first ${p.txnIndexEntry.firstOffset}, last ${p.txnIndexEntry.lastOffset}, last stable offset ${p.txnIndexEntry.lastStableOffset})` : ''}`
        : // ProducerAppendInfo.appendEndTxnMarker emits no CompletedTxn for an empty transaction, so no AbortedTxn entry.
          `  the producer has no open transaction: an empty transaction (no .txnindex entry, as a broker writes none)`,
    );
    if (r.leaderEpochEntry) lines.push(`  leader-epoch-checkpoint: ${would}add epoch ${r.leaderEpochEntry.epoch} at offset ${r.leaderEpochEntry.startOffset}`);
    // Without the marker LogLoader.load sees no clean shutdown: recoverLog recovers from the recovery point.
    if (r.removesCleanShutdownMarker) lines.push(`  ${would}remove the log dir's .kafka_cleanshutdown (a broker then recovers the segments from the recovery point on: LogLoader.recoverLog)`);
    lines.push(`  log end offset: ${r.logEndOffset}`);
    return lines;
  }
  lines.push(
    `${dryRun ? 'would append' : 'appended'} ${r.recordCount} record${r.recordCount === 1 ? '' : 's'} at ${offsets} to ${w.topic}-${w.partition}: segment ${r.segmentFile.split(/[\\/]/).pop()}, position ${r.position}, ${r.size} bytes`,
    `  batch: ${r.compression}, ${r.timestampType} ${r.maxTimestamp}, leader epoch ${r.partitionLeaderEpoch}${r.indexEntry ? `, ${would}add offset-index entry (${r.lastOffset} -> ${r.position})` : ''}`,
  );
  if (p) {
    const lastSeq = p.baseSequence + (r.recordCount - 1);
    lines.push(`  producer: id ${p.producerId}, epoch ${p.producerEpoch}, sequences ${p.baseSequence}..${lastSeq}${p.isTransactional ? `, transactional (transaction open since offset ${p.transactionFirstOffset})` : ''}`);
  }
  if (r.leaderEpochEntry) lines.push(`  leader-epoch-checkpoint: ${would}add epoch ${r.leaderEpochEntry.epoch} at offset ${r.leaderEpochEntry.startOffset}`);
  // Without the marker LogLoader.load sees no clean shutdown: recoverLog recovers from the recovery point.
  if (r.removesCleanShutdownMarker) lines.push(`  ${would}remove the log dir's .kafka_cleanshutdown (a broker then recovers the segments from the recovery point on: LogLoader.recoverLog)`);
  lines.push(`  log end offset: ${r.logEndOffset}`);
  return lines;
}

function bytesField(o: Record<string, unknown>, name: string, where: string): string | Uint8Array | null | undefined {
  if (Object.prototype.hasOwnProperty.call(o, `${name}Base64`)) {
    const b64 = o[`${name}Base64`];
    if (b64 === null) return null;
    if (typeof b64 !== 'string' || !/^[A-Za-z0-9+/_-]*={0,2}$/.test(b64)) throw new Error(`${where}: ${name}Base64 must be a base64 string or null`);
    return Buffer.from(b64, 'base64');
  }
  const v = o[name];
  if (v === undefined) return undefined;
  if (v !== null && typeof v !== 'string') throw new Error(`${where}: ${name} must be a string or null (use ${name}Base64 for binary data)`);
  return v;
}

function headersField(h: unknown, where: string): { key: string; value: string | Uint8Array | null }[] {
  if (h === undefined || h === null) return [];
  if (Array.isArray(h)) {
    return h.map((e, i) => {
      if (!e || typeof e !== 'object' || typeof (e as { key?: unknown }).key !== 'string') throw new Error(`${where}: header ${i} needs a string "key"`);
      const v = bytesField(e as Record<string, unknown>, 'value', `${where}: header ${i}`);
      return { key: (e as { key: string }).key, value: v === undefined ? null : v };
    });
  }
  if (typeof h !== 'object') throw new Error(`${where}: headers must be an object {"key": "value"} or a list`);
  return Object.entries(h as Record<string, unknown>).map(([key, value]) => {
    if (value !== null && typeof value !== 'string') throw new Error(`${where}: header "${key}" must be a string or null`);
    return { key, value: value as string | null };
  });
}

/**
 * Reads an NDJSON records file, streaming, for `--records`.
 * @returns the records in file order (blank lines skipped).
 * @throws KlxError `invalid-argument` naming the file and the byte position of a bad line (not JSON,
 *   wrong field types, missing value), `not-found` / `io-error` when it cannot be read.
 */
export async function readRecordsFile(path: string, maxBytes = MAX_RECORDS_FILE_BYTES): Promise<AppendRecord[]> {
  const stream = createReadStream(path);
  const opened = new Promise<void>((res, rej) => {
    stream.once('open', () => res());
    stream.once('error', rej);
  });
  try {
    await opened;
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    throw new KlxError(e.code === 'ENOENT' ? 'not-found' : 'io-error', `cannot read the records file: ${e.message}`, { file: path, cause: err });
  }
  const lines = createInterface({ input: stream, crlfDelay: Infinity });
  const out: AppendRecord[] = [];
  let position = 0;
  let lineNo = 0;
  let total = 0;
  try {
    for await (const line of lines) {
      lineNo++;
      const where = `line ${lineNo}`;
      const at = position;
      position += Buffer.byteLength(line) + 1;
      if (line.trim() === '') continue;
      total += Buffer.byteLength(line);
      if (total > maxBytes) throw new KlxError('invalid-argument', `more than ${maxBytes} bytes of records; a batch must fit max.message.bytes`, { file: path, position: at });
      try {
        const o = JSON.parse(line) as unknown;
        if (!o || typeof o !== 'object' || Array.isArray(o)) throw new Error(`${where}: expected a JSON object`);
        const rec = o as Record<string, unknown>;
        const key = bytesField(rec, 'key', where);
        const value = bytesField(rec, 'value', where);
        if (value === undefined) throw new Error(`${where}: "value" is missing (write "value": null for a tombstone)`);
        const ts = rec.timestamp;
        if (ts !== undefined && ts !== null && !(typeof ts === 'number' && Number.isSafeInteger(ts)) && !(typeof ts === 'string' && /^-?\d+$/.test(ts))) {
          throw new Error(`${where}: timestamp must be an integer number of ms`);
        }
        const r: AppendRecord = { key: key ?? null, value, headers: headersField(rec.headers, where) };
        if (ts !== undefined && ts !== null) r.timestamp = BigInt(ts as number | string);
        out.push(r);
      } catch (err) {
        if (err instanceof KlxError) throw err;
        const msg = (err as Error).message;
        throw new KlxError('invalid-argument', msg.startsWith('line ') ? msg : `${where}: not valid JSON: ${msg}`, { file: path, position: at });
      }
    }
  } finally {
    lines.close();
    stream.destroy();
  }
  if (out.length === 0) throw new KlxError('invalid-argument', 'the records file holds no records', { file: path });
  return out;
}
