/**
 * `klx dump PATH... [--deep] [--json] [--max-bytes N]`: prints the batches of `.log` files (and the
 * entries of `.index` / `.timeindex` files), like Kafka's `kafka-dump-log.sh` but with NDJSON output
 * whose fields match `shared/kafka-real-data/<case>/EXPECTED.jsonl`.
 *
 * PATH may be a `.log`, `.index` or `.timeindex` file, a partition directory or a whole log
 * directory (walked recursively, names in sorted order; directories dump only their `.log` files).
 * `file` in the output is relative to the PATH given (its base name when PATH is a file).
 */
import { readdirSync, statSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import { KlxError } from '../../engine/errors.ts';
import { entryJson } from '../../engine/format/batch-json.ts';
import { scanLogFile, type LogEntry } from '../../engine/format/log-reader.ts';
import type { KafkaRecord } from '../../engine/format/types.ts';
import { indexFileJson } from './dump-index.ts';
import { OutputWriter } from '../output.ts';

export interface DumpOptions {
  deep?: boolean;
  json?: boolean;
  maxBytes?: number;
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
    if (!/\.(log|index|timeindex)$/.test(path)) throw new KlxError('not-a-log-dir', 'not a .log, .index or .timeindex file', { file: path });
    return [{ file: path, label: basename(path) }];
  }
  const found: { file: string; label: string }[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir).sort()) {
      const full = join(dir, name);
      const s = statSync(full);
      if (s.isDirectory()) walk(full);
      else if (name.endsWith('.log') && /^\d{20}\.log$/.test(name)) found.push({ file: full, label: relative(path, full) });
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
    if (!opts.json) await out.line(`Dumping ${label}`);
    const scan = scanLogFile(file, { deep: opts.deep ?? false, end: opts.maxBytes });
    const fileSize = opts.maxBytes === undefined ? 0 : statSync(file).size;
    for (const e of scan) {
      // A batch cut by --max-bytes (the file goes on past it) is where the read stopped, not damage.
      if (opts.maxBytes !== undefined && e.type === 'invalid-tail' && fileSize > opts.maxBytes && e.position + e.size === opts.maxBytes) {
        const reason = `stopped at --max-bytes ${opts.maxBytes}: the batch at position ${e.position} continues past it (the file has ${fileSize} bytes)`;
        await out.line(opts.json ? JSON.stringify({ type: 'max-bytes-reached', file: label, position: e.position, maxBytes: opts.maxBytes, fileSize, reason }) : `-- ${reason}`);
        continue;
      }
      if (opts.json) await out.line(JSON.stringify(entryJson(e, label, opts.deep ?? false)));
      else await out.line(entryText(e, opts.deep ?? false));
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
function entryText(e: LogEntry, deep: boolean): string {
  if (e.type !== 'batch') return `!! ${e.type} at position ${e.position}: ${e.size} bytes: ${e.reason}`;
  const h = e.header;
  const flags = [h.isTransactional && 'txn', h.isControl && 'control', h.hasDeleteHorizon && `deleteHorizon=${h.baseTimestamp}`].filter(Boolean).join(',');
  const producer = h.producerId >= 0n ? ` producer: ${h.producerId}/${h.producerEpoch} seq: ${h.baseSequence}` : '';
  let line =
    `offsets ${h.baseOffset}..${h.lastOffset} count: ${h.recordCount} position: ${h.position} size: ${h.size} magic: ${h.magic}` +
    ` ${h.compression} ${h.timestampType}: ${h.maxTimestamp}${producer} epoch: ${h.partitionLeaderEpoch}${flags ? ' [' + flags + ']' : ''}` +
    ` crc: ${h.crc}${h.crcValid === false ? ' CRC MISMATCH' : ''}`;
  if (e.error) line += `\n  !! ${e.error.reason}`;
  if (deep && e.records) for (const r of e.records) line += '\n' + recordText(r);
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

function recordText(r: KafkaRecord): string {
  if (r.control) return `  | offset: ${r.offset} ${r.timestamp} control: ${r.control.type}${r.control.coordinatorEpoch !== undefined ? ' coordinatorEpoch: ' + r.control.coordinatorEpoch : ''}`;
  const headers = r.headers.length ? ` headers: ${r.headers.map((h) => `${h.key}=${preview(h.value)}`).join(',')}` : '';
  return `  | offset: ${r.offset} ts: ${r.timestamp} key: ${preview(r.key)} value: ${preview(r.value)}${headers}`;
}
