/**
 * `klx dump PATH... [--deep] [--json] [--max-bytes N] [--decode auto|none|offsets|transactions|metadata]`:
 * prints the batches of `.log` files and KRaft snapshots (and the entries of `.index` / `.timeindex`
 * files), like Kafka's `kafka-dump-log.sh` (DumpLogSegments) but with NDJSON output whose fields match
 * `shared/kafka-real-data/<case>/EXPECTED.jsonl`.
 *
 * PATH may be a `.log`, `.index` or `.timeindex` file, a KRaft snapshot (`<endOffset>-<epoch>.checkpoint`
 * or `bootstrap.checkpoint`), a partition directory or a whole log directory (walked recursively, names in
 * sorted order; directories dump their `.log` files and the KRaft snapshots of partition folders).
 * `file` in the output is relative to the PATH given (its base name when PATH is a file).
 *
 * `--decode` decodes records as dump-log's `--offsets-decoder`, `--transaction-log-decoder` and
 * `--cluster-metadata-decoder` do (and implies `--deep`); `auto` picks the decoder by the topic of the
 * partition folder (`__consumer_offsets`, `__transaction_state`, `__cluster_metadata`), none for other topics.
 */
import { crcMismatchText } from '../../engine/format/crc.ts';
import { readdirSync, statSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { internalDecoderForTopic, type InternalDecoder } from '../../engine/decode/internal/dump-log-text.ts';
import { BOOTSTRAP_CHECKPOINT_FILE, parseKRaftSnapshotName, parsePartitionDirName } from '../../engine/files/file-names.ts';
import { KlxError } from '../../engine/errors.ts';
import { entryJson } from '../../engine/format/batch-json.ts';
import { scanLogFile, type LogEntry } from '../../engine/format/log-reader.ts';
import type { KafkaRecord } from '../../engine/format/types.ts';
import { indexFileJson } from './dump-index.ts';
import { decodeInternalRecordText, kraftControlText } from '../../engine/decode/internal/dump-log-text.ts';
import { OutputWriter } from '../output.ts';

/** `--decode` values: `auto` (by topic), `none`, or one of dump-log's internal-topic decoders. */
export type DecodeMode = 'auto' | 'none' | InternalDecoder;

export interface DumpOptions {
  deep?: boolean;
  json?: boolean;
  maxBytes?: number;
  decode?: DecodeMode;
}

/** Whether a file name is a KRaft snapshot (`<20-digit endOffset>-<10-digit epoch>.checkpoint` or `bootstrap.checkpoint`). */
function isKRaftSnapshotFile(name: string): boolean {
  return name === BOOTSTRAP_CHECKPOINT_FILE || parseKRaftSnapshotName(name) !== null;
}

/**
 * The internal decoder `--decode auto` uses for a file: by the topic of its partition folder
 * (`bootstrap.checkpoint` holds cluster metadata), null for other topics.
 */
export function autoDecoderFor(file: string): InternalDecoder | null {
  if (basename(file) === BOOTSTRAP_CHECKPOINT_FILE) return 'metadata';
  const dir = parsePartitionDirName(basename(dirname(resolve(file))));
  return dir ? internalDecoderForTopic(dir.topic) : null;
}

/** Runs `klx dump` (its options and help are declared in `../registry.ts`). */
export async function runDump(paths: string[], opts: DumpOptions): Promise<void> {
  const out = new OutputWriter(process.stdout);
  for (const p of paths) await dumpPath(p, opts, out);
  await out.end();
}

/** Files to dump under `path`, with the name to print for each. */
export function filesToDump(path: string): { file: string; label: string }[] {
  let st;
  try {
    st = statSync(path);
  } catch (err) {
    throw new KlxError('not-found', `no such file or directory`, { file: path, cause: err });
  }
  if (st.isFile()) {
    if (path.endsWith('.checkpoint') && !isKRaftSnapshotFile(basename(path))) {
      throw new KlxError('not-a-log-dir', 'not a KRaft snapshot (<20-digit end offset>-<10-digit epoch>.checkpoint or bootstrap.checkpoint)', { file: path });
    }
    if (!/\.(log|index|timeindex|checkpoint)$/.test(path)) throw new KlxError('not-a-log-dir', 'not a .log, .index, .timeindex or KRaft snapshot .checkpoint file', { file: path });
    return [{ file: path, label: basename(path) }];
  }
  const found: { file: string; label: string }[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir).sort()) {
      const full = join(dir, name);
      const s = statSync(full);
      if (s.isDirectory()) walk(full);
      else if (/^\d{20}\.log$/.test(name) || parseKRaftSnapshotName(name)) found.push({ file: full, label: relative(path, full) });
    }
  };
  walk(path);
  if (found.length === 0) throw new KlxError('not-a-log-dir', 'no Kafka segment files (NNNNNNNNNNNNNNNNNNNN.log) under this directory', { file: path });
  return found;
}

async function dumpPath(path: string, opts: DumpOptions, out: OutputWriter): Promise<void> {
  for (const { file, label } of filesToDump(path)) {
    if (file.endsWith('.index') || file.endsWith('.timeindex')) {
      for (const o of indexFileJson(file, label)) {
        await out.line(opts.json ? JSON.stringify(o) : indexText(o));
      }
      continue;
    }
    const decoder = opts.decode === undefined || opts.decode === 'none' ? null : opts.decode === 'auto' ? autoDecoderFor(file) : opts.decode;
    const decoding = opts.decode !== undefined && opts.decode !== 'none';
    const deep = (opts.deep ?? false) || decoding;
    if (!opts.json) {
      await out.line(`Dumping ${label}`);
      const snap = parseKRaftSnapshotName(basename(file));
      if (basename(file) === BOOTSTRAP_CHECKPOINT_FILE) await out.line('KRaft bootstrap snapshot');
      else if (snap) await out.line(`Snapshot end offset: ${snap.endOffset}, epoch: ${snap.epoch}`);
      if (decoding) await out.line(`Decoder: ${decoder ?? 'none'}${opts.decode === 'auto' ? ' (auto: by the partition folder\'s topic)' : ''}`);
    }
    const scan = scanLogFile(file, { deep, end: opts.maxBytes });
    const fileSize = opts.maxBytes === undefined ? 0 : statSync(file).size;
    for (const e of scan) {
      // A batch cut by --max-bytes (the file goes on past it) is where the read stopped, not damage.
      if (opts.maxBytes !== undefined && e.type === 'invalid-tail' && fileSize > opts.maxBytes && e.position + e.size === opts.maxBytes) {
        const reason = `stopped at --max-bytes ${opts.maxBytes}: the batch at position ${e.position} continues past it (the file has ${fileSize} bytes)`;
        await out.line(opts.json ? JSON.stringify({ type: 'max-bytes-reached', file: label, position: e.position, maxBytes: opts.maxBytes, fileSize, reason }) : `-- ${reason}`);
        continue;
      }
      if (decoding) await out.line(opts.json ? decodedEntryJsonText(e, label, decoder) : decodedEntryText(e, decoder));
      else if (opts.json) await out.line(JSON.stringify(entryJson(e, label, deep)));
      else await out.line(entryText(e, deep));
    }
  }
}

function indexText(o: Record<string, unknown>): string {
  return Object.entries(o)
    .filter(([k]) => k !== 'type' && k !== 'file')
    .map(([k, v]) => `${k}: ${v}`)
    .join(' ');
}

/** One line per batch for people; records indented below it under --deep. */
function entryText(e: LogEntry, deep: boolean, record: (r: KafkaRecord) => string = recordText): string {
  if (e.type !== 'batch') return `!! ${e.type} at position ${e.position}: ${e.size} bytes: ${e.reason}`;
  const h = e.header;
  const flags = [h.isTransactional && 'txn', h.isControl && 'control', h.hasDeleteHorizon && `deleteHorizon=${h.baseTimestamp}`].filter(Boolean).join(',');
  const producer = h.producerId >= 0n ? ` producer: ${h.producerId}/${h.producerEpoch} seq: ${h.baseSequence}` : '';
  let line =
    `offsets ${h.baseOffset}..${h.lastOffset} count: ${h.recordCount} position: ${h.position} size: ${h.size} magic: ${h.magic}` +
    ` ${h.compression} ${h.timestampType}: ${h.maxTimestamp}${producer} epoch: ${h.partitionLeaderEpoch}${flags ? ' [' + flags + ']' : ''}` +
    ` crc: ${h.crc}${h.crcValid === false ? ` CRC MISMATCH: ${crcMismatchText(h)}` : ''}`;
  if (e.error) line += `\n  !! ${e.error.reason}`;
  if (deep && e.records) for (const r of e.records) line += '\n' + record(r);
  return line;
}

/** A short printable form of key/value bytes: quoted UTF-8 text, else hex; long values are cut with their size. */
export function preview(b: Uint8Array | null): string {
  if (b === null) return 'null';
  const s = Buffer.from(b.buffer, b.byteOffset, Math.min(b.byteLength, 120)).toString('utf8');
  // Printable UTF-8 is shown as text, anything else as hex.
  const printable = !/[\u0000-\u0008\u000e-\u001f\ufffd]/.test(s);
  const shown = printable ? JSON.stringify(s) : '0x' + Buffer.from(b.buffer, b.byteOffset, Math.min(b.byteLength, 48)).toString('hex');
  return b.byteLength > (printable ? 120 : 48) ? `${shown}… (${b.byteLength} bytes)` : shown;
}

function decodedEntryText(e: LogEntry, decoder: InternalDecoder | null): string {
  return entryText(e, true, (r) => decodedRecordText(r, decoder));
}

function decodedEntryJsonText(e: LogEntry, label: string, decoder: InternalDecoder | null): string {
  const o = entryJson(e, label, true);
  if (e.type !== 'batch') return JSON.stringify(o);
  const raw: string[] = [];
  const records = (o.records as Record<string, unknown>[] | undefined) ?? [];
  (e.records ?? []).forEach((r, i) => Object.assign(records[i]!, decodedRecordJson(r, decoder, raw)));
  return rawJsonText(o, raw);
}

/**
 * A record's line: `  | offset: O ts: T key: … value: …`. A control record's line has the same `ts:` label;
 * a COMMIT/ABORT marker says `endTxnMarker: COMMIT coordinatorEpoch: E` as kafka-dump-log does
 * (DumpLogSegments, EndTransactionMarker), other control types `control: TYPE`.
 */
function recordText(r: KafkaRecord): string {
  if (r.control) {
    const what = r.control.coordinatorEpoch !== undefined ? `endTxnMarker: ${r.control.type} coordinatorEpoch: ${r.control.coordinatorEpoch}` : `control: ${r.control.type}`;
    return `  | offset: ${r.offset} ts: ${r.timestamp} ${what}`;
  }
  const headers = r.headers.length ? ` headers: ${r.headers.map((h) => `${h.key}=${preview(h.value)}`).join(',')}` : '';
  return `  | offset: ${r.offset} ts: ${r.timestamp} key: ${preview(r.key)} value: ${preview(r.value)}${headers}`;
}

/** A record's line with dump-log's decoded `key:` / `payload:` (or the KRaft control record's JSON). */
function decodedRecordText(r: KafkaRecord, decoder: InternalDecoder | null): string {
  if (r.control) {
    const text = kraftControlText(r.control.typeId, r.value);
    return recordText(r) + (text ? ` ${text}` : '');
  }
  if (decoder === null) return recordText(r);
  const d = decodeInternalRecordText(decoder, r.key, r.value, r.offset);
  if (d.unknownType !== undefined) return `  | offset: ${r.offset} ts: ${r.timestamp} key: ${d.key}`;
  const key = d.key !== null ? ` key: ${d.key}` : decoder === 'metadata' ? '' : ` key: ${preview(r.key)}`;
  const payload = d.payload !== null ? ` payload: ${d.payload}` : ` value: ${preview(r.value)}`;
  return `  | offset: ${r.offset} ts: ${r.timestamp}${key}${payload}${d.error ? ` !! does not decode: ${d.error}` : ''}`;
}

/**
 * The fields `--decode` adds to a record's JSON: `keyFormat`/`valueFormat` (the decoder), `keyDecoded` /
 * `valueDecoded` (the JSON dump-log prints; null when absent or undecodable; a tombstone's value is null),
 * `decodeError`; a coordinator record of a type the decoder does not know gets `skipped` (dump-log's
 * `Unknown record type N at offset O, skipping.`); control records of KRaft batches get `controlDecoded` (dump-log's control text).
 * JSON texts are kept exact (int64 digits) by passing them through `raw`.
 */
function decodedRecordJson(r: KafkaRecord, decoder: InternalDecoder | null, raw: string[]): Record<string, unknown> {
  const rawRef = (text: string) => {
    raw.push(text);
    return `\u0000raw${raw.length - 1}\u0000`;
  };
  if (r.control) {
    const text = kraftControlText(r.control.typeId, r.value);
    return text ? { controlDecoded: text } : {};
  }
  if (decoder === null) return { keyFormat: null, valueFormat: null };
  const d = decodeInternalRecordText(decoder, r.key, r.value, r.offset);
  if (d.unknownType !== undefined) return { keyFormat: decoder, valueFormat: decoder, keyDecoded: null, valueDecoded: null, decodeError: null, skipped: d.key };
  return {
    keyFormat: decoder,
    valueFormat: decoder,
    keyDecoded: d.key === null ? null : rawRef(d.key),
    valueDecoded: d.payload === null || d.payload === '<DELETE>' ? null : rawRef(d.payload),
    decodeError: d.error,
  };
}

/** JSON.stringify with the `raw` JSON texts put back in place of their markers. */
function rawJsonText(o: unknown, raw: string[]): string {
  return JSON.stringify(o).replace(/"\\u0000raw(\d+)\\u0000"/g, (_m, i: string) => raw[Number(i)]!);
}
