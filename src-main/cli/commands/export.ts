/**
 * `klx export DIR --format parquet|ndjson|csv [--where SQL] --out PATH [--isolation L] [--up-to L] [--no-decode]
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
 * terminal; Ctrl-C stops and removes the partial output (exit 130; further Ctrl-Cs meanwhile do not
 * interrupt that). The output is written under a hidden name and renamed when complete; what a
 * killed run (SIGKILL) left is removed by the next export to the same output (`export-staging.ts`).
 * Prints a one-line summary (or `--json`).
 * With `--isolation read_committed` the export stops, per partition, at the last stable offset as a
 * read_committed consumer does (UnifiedLog, FetchIsolation.TXN_COMMITTED); when an open transaction
 * holds it there, a `klx:` line on stderr (and `lastStableStops` in the JSON summary) names the LSO,
 * the transaction's producer id and first offset, and how many records after it were not exported.
 * read_uncommitted stops at each partition's high watermark by default, as a consumer does
 * (UnifiedLog.read, FetchIsolation.HIGH_WATERMARK; `--up-to log-end` reads every record the files
 * hold), and names the records past it on stderr (`highWatermarkStops` in JSON). Records after
 * damage are exported as `klx query` lists them (`past_damage`); each damaged region or batch whose
 * records are not exported, and each batch past the decompression bound (`not-checked`), is named
 * with file, byte position and reason on stderr (`notExported` in JSON); the exit code stays 0, as
 * `klx query`'s. Several log directories under DIR: `log_dir` tells the replicas apart, and Parquet
 * gets a `log_dir=` folder level. Nothing is written inside DIR (real paths compared: a symlink
 * into DIR is refused); `--out -` is refused.
 */
import { dirname, relative, resolve } from 'node:path';
import { isInsideDir, realpathLenient } from '../../api/core/paths.ts';
import { KlxError } from '../../engine/errors.ts';
import { allPartitions, openPath } from '../../engine/log/log-dir.ts';
import type { IsolationLevel } from '../../engine/log/read-defaults.ts';
import { exportSpan, notExportedText, writeExport, type ExportFormat, type HighWatermarkStop } from '../../engine/sql/record-export.ts';
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
  /** read_uncommitted: stop at the high watermark (default) or read to the log end and past it. */
  upTo?: 'log-end' | 'high-watermark';
  decode: boolean;
  json?: boolean;
}

/** A text progress bar of `f` (0..1), `width` characters. */
export function progressBar(f: number, width = 24): string {
  const n = Math.max(0, Math.min(width, Math.round(f * width)));
  return `[${'#'.repeat(n)}${'.'.repeat(width - n)}]`;
}

/** A `klx:` line naming the records past a partition's high watermark that were not exported. */
export function highWatermarkStopText(x: HighWatermarkStop, isolation: IsolationLevel): string {
  const n = `${x.records} record${x.records === 1 ? '' : 's'}`;
  const range = x.records === 1 ? `offset ${x.firstOffset}` : `offsets ${x.firstOffset}..${x.lastOffset}`;
  const how = isolation === 'read_committed' ? 'read_committed stops there as a consumer does (UnifiedLog, FetchIsolation.TXN_COMMITTED: the last stable offset is the high watermark when no transaction is open)' : 'a consumer is not given them (UnifiedLog.read, FetchIsolation.HIGH_WATERMARK); --up-to log-end exports them';
  return `${x.topic}-${x.partition}${x.logDir !== '.' ? ` in ${x.logDir}` : ''}: ${n} past the high watermark ${x.highWatermark} not exported (${range}, log end offset ${x.logEndOffset}): ${how}`;
}

/** Runs `klx export` (options and help in `../registry.ts`). */
export async function runExport(dir: string, opts: ExportCliOptions): Promise<void> {
  if (opts.out === '-') throw new KlxError('invalid-argument', '--out - is not supported: an export writes a new file or folder (give a path; for records on stdout use klx fetch or klx query)');
  const opened = openPath(dir);
  // Real paths: a symlink on the way to --out (or to DIR) must not lead into the log folder.
  const out = await realpathLenient(resolve(opts.out));
  const root = await realpathLenient(resolve(opened.root));
  if (isInsideDir(out, root)) throw new KlxError('invalid-argument', `--out is inside ${dir}: an export never writes into the log folder; choose a path outside it`, { file: out });
  const parts = allPartitions(opened);
  if (parts.length === 0) throw new KlxError('not-a-log-dir', `no partition folder under ${dir}`, { file: dir });
  // log_dir: the partition's log directory relative to DIR ('.' when DIR is the log directory or a partition folder).
  const logDirOf = (d: string): string => {
    const rel = relative(resolve(opened.root), d);
    return rel === '' || rel === '..' || rel.startsWith('../') ? '.' : rel;
  };
  const sources = parts.map((p) => ({ log: p.log, logDir: logDirOf(dirname(p.log.dir)) }));
  const logDirs = new Set(sources.map((s) => s.logDir)).size;
  const span = exportSpan(sources);
  // As klx fetch and klx query decode (../decode-options.ts): the options for every topic under DIR, else the app's saved choices, else auto.
  let decoder = null;
  if (opts.decode) {
    // A partition folder: the `_schemas` partitions beside it, as klx fetch reads them.
    const beside = logDirOfPartition(opened);
    const setup = cliDecodeSetup({ opened: beside !== null ? openSchemasTopics(beside) : opened, topics: parts.map((p) => p.log.topic), savedFor: dir }, opts);
    for (const n of setup.notes) process.stderr.write(`klx: note: ${n}\n`);
    decoder = setup.decoder;
  }
  const controller = new AbortController();
  // Every SIGINT until the cleanup has ended lands here (`tsx`, as `npm run klx` runs it, forwards a
  // Ctrl-C to this process on top of the terminal's own: two signals): only the first aborts, the
  // later ones must not end the process half way through removing the partial output.
  const onSigint = () => {
    if (!controller.signal.aborted) controller.abort(new KlxError('cancelled', 'interrupted (Ctrl-C)'));
  };
  process.on('SIGINT', onSigint);
  const progress = new ProgressLine(process.stderr);
  try {
    const summary = await writeExport(sources, {
      format: opts.format,
      out,
      ...(opts.where !== undefined ? { where: opts.where } : {}),
      partitionBy: opts.format === 'parquet',
      partitionByLogDir: opts.format === 'parquet' && logDirs > 1,
      isolation: opts.isolation ?? 'read_uncommitted',
      readUpTo: opts.upTo ?? 'high-watermark',
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
    for (const stop of summary.highWatermarkStops) process.stderr.write(`klx: ${highWatermarkStopText(stop, opts.isolation ?? 'read_uncommitted')}\n`);
    // Never a silent skip: every batch or region whose records are not in the output (file, byte position, reason).
    for (const x of summary.notExported) process.stderr.write(`klx: ${notExportedText(x)}\n`);
    await printResult(summary, Boolean(opts.json), () => [
      `exported ${summary.records} record${summary.records === 1 ? '' : 's'} from ${summary.partitions} partition${summary.partitions === 1 ? '' : 's'} to ${summary.out} (${opts.format}, ${summary.bytes} bytes${opts.where !== undefined ? `, where ${opts.where}` : ''})`,
    ]);
  } catch (err) {
    if (!controller.signal.aborted) throw err;
    // writeExport has removed the partial output and its staging: say so, exit 130 as a shell does after Ctrl-C.
    progress.clear();
    process.stderr.write(`klx: interrupted (Ctrl-C): nothing written to ${out} (the partial output was removed)\n`);
    process.exitCode = 130;
  } finally {
    progress.clear();
    // Once interrupted, the handler stays until the process exits: a further Ctrl-C while it closes must not kill it.
    if (!controller.signal.aborted) process.removeListener('SIGINT', onSigint);
  }
}
