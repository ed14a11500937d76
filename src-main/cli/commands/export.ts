/**
 * `klx export DIR --format parquet|ndjson|csv [--where SQL] --out PATH [--isolation L] [--no-decode]
 * [--key-format F] [--value-format F] [--schemas PATH|ID=FILE|SUBJECT=FILE]...`:
 * writes the records of every partition under DIR (a partition folder, a log directory or a folder
 * of log directories) for tools on bigger machines (Spark, Trino, BigQuery, DuckDB), with the
 * engine's records export (`engine/sql/record-export.ts`): the raw key, value and headers beside
 * the decode layer's `key_decoded`/`value_decoded` JSON, decoded as `klx fetch` and `klx query`
 * decode (`../decode-options.ts`, shared): `--key-format` / `--value-format` for every topic under
 * DIR, else the formats saved in the app for the folder's topics, else `auto`; schemas from the
 * folder's `_schemas` topics and `--schemas` files (Avro/Protobuf/JSON Schema). A format or schema
 * file that cannot be used stops the command before anything is written (exit 2).
 *
 * Parquet goes through DuckDB's `COPY … (FORMAT parquet, PARTITION_BY (topic, partition))`: PATH is
 * a new folder of Hive-style `topic=T/partition=P/data_0.parquet` files. CSV and NDJSON: PATH is a
 * new file. `--where` is a DuckDB condition over the export's columns (`"offset" >= 100`,
 * `key_decoded->>'id' = '7'`). Progress (a bar of offsets passed) goes to stderr when it is a
 * terminal; Ctrl-C stops and removes the partial output. Prints a one-line summary (or `--json`).
 * With `--isolation read_committed` the export stops, per partition, at the last stable offset as a
 * read_committed consumer does (UnifiedLog, FetchIsolation.TXN_COMMITTED); when an open transaction
 * holds it there, a `klx:` line on stderr (and `lastStableStops` in the JSON summary) names the LSO,
 * the transaction's producer id and first offset, and how many records after it were not exported.
 * Nothing is written inside DIR.
 */
import { resolve } from 'node:path';
import { KlxError } from '../../engine/errors.ts';
import { allPartitions, openPath } from '../../engine/log/log-dir.ts';
import type { IsolationLevel } from '../../engine/log/read-defaults.ts';
import { exportSpan, writeExport, type ExportFormat } from '../../engine/sql/record-export.ts';
import { lastStableStopText } from '../../engine/log/last-stable-stop.ts';
import { ProgressLine } from '../output.ts';
import { printResult } from './append.ts';
import { cliDecodeSetup, logDirOfPartition, type CliDecodeFlags } from '../decode-options.ts';
import { openSchemasTopics } from '../../engine/decode/record-decoder.ts';

export interface ExportCliOptions extends CliDecodeFlags {
  format: ExportFormat;
  out: string;
  where?: string;
  isolation?: IsolationLevel;
  decode: boolean;
  json?: boolean;
}

/** Whether `inner` is `outer` or inside it (real paths). */
function inside(inner: string, outer: string): boolean {
  return inner === outer || inner.startsWith(outer.endsWith('/') ? outer : `${outer}/`);
}

/** A text progress bar of `f` (0..1), `width` characters. */
export function progressBar(f: number, width = 24): string {
  const n = Math.max(0, Math.min(width, Math.round(f * width)));
  return `[${'#'.repeat(n)}${'.'.repeat(width - n)}]`;
}

/** Runs `klx export` (options and help in `../registry.ts`). */
export async function runExport(dir: string, opts: ExportCliOptions): Promise<void> {
  const opened = openPath(dir);
  const out = resolve(opts.out);
  if (inside(out, resolve(opened.root))) throw new KlxError('invalid-argument', `--out is inside ${dir}: an export never writes into the log folder; choose a path outside it`, { file: out });
  const parts = allPartitions(opened);
  if (parts.length === 0) throw new KlxError('not-a-log-dir', `no partition folder under ${dir}`, { file: dir });
  const sources = parts.map((p) => ({ log: p.log }));
  const span = exportSpan(sources);
  // As klx fetch and klx query decode (../decode-options.ts): the options for every topic under DIR, else the app's saved choices, else auto.
  let decoder = null;
  if (opts.decode) {
    // A partition folder: the `_schemas` partitions beside it, as klx fetch reads them.
    const beside = logDirOfPartition(dir);
    const setup = cliDecodeSetup({ opened: beside !== null ? openSchemasTopics(beside) : opened, topics: parts.map((p) => p.log.topic), savedFor: dir }, opts);
    for (const n of setup.notes) process.stderr.write(`klx: note: ${n}\n`);
    decoder = setup.decoder;
  }
  const controller = new AbortController();
  const onSigint = () => controller.abort(new KlxError('cancelled', 'interrupted (Ctrl-C)'));
  process.once('SIGINT', onSigint);
  const progress = new ProgressLine(process.stderr);
  try {
    const summary = await writeExport(sources, {
      format: opts.format,
      out,
      ...(opts.where !== undefined ? { where: opts.where } : {}),
      partitionBy: opts.format === 'parquet',
      isolation: opts.isolation ?? 'read_uncommitted',
      decoder,
      signal: controller.signal,
      onProgress: (p) => {
        const f = span > 0n ? Number((p.offsets * 1000n) / span) / 1000 : 1;
        progress.show(`${progressBar(f)} ${Math.floor(f * 100)}% ${p.records.toLocaleString('en-US')} records`);
      },
      onConvert: () => progress.show(`${progressBar(1)} writing ${opts.format === 'parquet' ? 'Parquet' : opts.format.toUpperCase()} with DuckDB…`),
    });
    progress.clear();
    // A read_committed stop at an open transaction (UnifiedLog, FetchIsolation.TXN_COMMITTED) is said on stderr;
    // the summary stays one line / one JSON object on stdout, where `lastStableStops` carries the same.
    for (const stop of summary.lastStableStops) process.stderr.write(`klx: ${lastStableStopText(stop, 'exported')}\n`);
    await printResult(summary, Boolean(opts.json), () => [
      `exported ${summary.records} record${summary.records === 1 ? '' : 's'} from ${summary.partitions} partition${summary.partitions === 1 ? '' : 's'} to ${summary.out} (${opts.format}, ${summary.bytes} bytes${opts.where !== undefined ? `, where ${opts.where}` : ''})`,
    ]);
  } finally {
    progress.clear();
    process.removeListener('SIGINT', onSigint);
  }
}
