/**
 * The log domain's tasks as they run on a log worker thread (`log-worker.ts`), and their argument
 * shapes, shared with the handlers (`log.ts`) that send them through the pool (`logPool`).
 *
 * Every task gets the partition folder as a real path already checked against the session's opened
 * folders on the main thread (`dir`), the opened folder holding it (`root`, whose `_schemas` topics
 * the record decoder reads), and the main thread's cache generation (`generation`, bumped when this
 * process rewrote files: the thread then drops the partitions it had opened). Each thread keeps its
 * own {@link LogCache} of opened partitions (indexes read once while unchanged) and one
 * {@link RecordDecoder} per opened folder. Answers are the contract's wire shapes (int64 as
 * strings), which cross the thread boundary as they are. What a verify or count learned about the
 * partition (the health badge's facts) comes back beside the answer for the main thread's cache.
 */
import { allPartitions, openPath } from '../../engine/log/log-dir.ts';
import type { PartitionLog } from '../../engine/log/partition-log.ts';
import type { RecordDecoder } from '../../engine/decode/record-decoder.ts';
import type { FormatChoices } from '../../engine/decode/format.ts';
import { offsetForTimestamp } from '../../engine/log/time-lookup.ts';
import { lastStableStopText } from '../../engine/log/last-stable-stop.ts';
import type { ExportSource } from '../../engine/sql/record-export.ts';

/** The records export, loaded on a thread's first copy or export only (it brings DuckDB: other tasks never pay for it). */
const recordExport = () => import('../../engine/sql/record-export.ts');
import type { JobResult, ParsedReq, Res } from '../../../src-shared/contract.ts';
import { LogCache, type CountFacts, type VerifyFacts } from '../core/log-cache.ts';
import { WorkerPool } from '../core/worker-pool.ts';
import type { TaskRun } from '../core/worker-tasks.ts';
import type { JobContext } from '../core/types.ts';
import { countJob, holesJob, verifyJob } from './log-jobs.ts';
import { folderDecoder, searchJob } from './log-search.ts';
import { verifyFolderJob } from './log-folder-verify.ts';
import { scanRunner, scanSplitMinBytes } from './scan-pool.ts';
import { batchesPage, offsetOf, recordsPage, recordValue } from './log-records.ts';
import { s, sn } from './log-wire.ts';
import { partitionSummaryOf, segmentRowsOf } from './log-summary.ts';
import { readPartitionIndexes } from '../../engine/log/quick-check.ts';

/** What every log task receives (see the module comment). */
export interface LogTaskArgs<Req = undefined> {
  dir: string;
  root: string;
  /** The folder's format choices (`api/core/folder-decoders.ts`). */
  choices: FormatChoices;
  generation: number;
  /** Bumped on the main thread when files changed (`log.changed`): decoders are made again. */
  decodeEpoch: number;
  req: Req;
}

let cache = new LogCache();
let cacheGeneration = 0;

/** The partition at `a.dir`, from this thread's cache (dropped when the main thread's generation moved). */
function partitionOf(a: LogTaskArgs<unknown>) {
  if (a.generation !== cacheGeneration) {
    cache = new LogCache();
    cacheGeneration = a.generation;
  }
  return cache.partition(a.dir);
}

/**
 * One decoder per opened folder and choices (`folderDecoder`): its `_schemas` partitions read once,
 * on its first records page (made again when the main thread's `decodeEpoch` moved).
 */
function decoderFor(a: LogTaskArgs<unknown>): RecordDecoder {
  return folderDecoder({ root: a.root, choices: a.choices, decodeEpoch: a.decodeEpoch });
}

/** Another partition of the task's folder (an export of a search result across partitions), from this thread's cache. */
function partitionAtDir(a: LogTaskArgs<unknown>, dir: string) {
  void partitionOf(a);
  return cache.partition(dir);
}

/** Most characters of a copy's text (about 8 MiB of UTF-16). */
export const COPY_MAX_CHARS = 4 * 1024 * 1024;

/** A `log.export` request with its paths resolved on the main thread (`out` checked: new, outside every opened folder). */
export type ExportTaskReq = ParsedReq<'log.export'> & { out: string };

/** The export's sources: the partition, an offset or time range of it, or the listed records grouped by partition. */
async function exportSources(a: LogTaskArgs<ExportTaskReq>): Promise<{ sources: ExportSource[]; from: bigint | null; to: bigint | null }> {
  const req = a.req;
  const log = partitionOf(a);
  if (req.scope === 'records') {
    const byDir = new Map<string, bigint[]>();
    for (const r of req.records ?? []) {
      const list = byDir.get(r.dir) ?? [];
      list.push(offsetOf(r.offset));
      byDir.set(r.dir, list);
    }
    return { sources: [...byDir].map(([dir, offsets]) => ({ log: partitionAtDir(a, dir), offsets })), from: null, to: null };
  }
  let from = log.logStartOffset;
  let to = log.logEndOffset - 1n;
  if (req.scope === 'range') {
    if (req.from !== undefined) from = offsetOf(req.from);
    if (req.to !== undefined) to = offsetOf(req.to);
  } else if (req.scope === 'time') {
    // As ListOffsets without isolation level answers a time (Kafka's Partition.fetchOffsetForTimestamp, UnifiedLog.fetchOffsetByTimestamp):
    // the first offset whose record's timestamp is at or after it, up to the log end offset (an export takes every record the files hold).
    if (req.fromTime !== undefined) {
      const hit = await offsetForTimestamp(log, offsetOf(req.fromTime));
      from = hit ? hit.offset : log.logEndOffset;
    }
    if (req.toTime !== undefined) {
      const hit = await offsetForTimestamp(log, offsetOf(req.toTime));
      if (hit) to = hit.offset - 1n;
    }
  }
  if (from < log.logStartOffset) from = log.logStartOffset;
  if (to > log.logEndOffset - 1n) to = log.logEndOffset - 1n;
  return { sources: [{ log, from, to }], from, to };
}

/** A job context for the engine's job functions on this thread. */
function jobOf(run: TaskRun): JobContext {
  return { jobId: '', readOnly: true, signal: run.signal, progress: (p) => run.progress(p) };
}

/** A verify's answer and what it taught about the partition. */
export interface VerifyTaskResult {
  result: JobResult<'log.verify'>;
  facts: VerifyFacts | null;
}

/** A count's answer and the counts learned. */
export interface CountTaskResult {
  result: JobResult<'log.countRecords'>;
  facts: CountFacts | null;
}

/**
 * A `log.partition` request with what this session learned about the partition on the main thread
 * (`LogCache.facts`: a verify's result, record counts, CRC failures met by pages), for its health badge.
 */
export type PartitionTaskReq = ParsedReq<'log.partition'> & { facts: ReturnType<LogCache['facts']> };

/** The log worker's task table. */
export const logTasks = {
  /** Summary and segment rows: each segment's index files read and parsed once for both (`readPartitionIndexes`). */
  partition: async (a: LogTaskArgs<PartitionTaskReq>): Promise<Res<'log.partition'>> => {
    const log = partitionOf(a);
    const indexes = readPartitionIndexes(log);
    return { partition: partitionSummaryOf(log, a.req.facts, indexes), segments: segmentRowsOf(log, indexes) };
  },
  records: (a: LogTaskArgs<ParsedReq<'log.records'>>): Promise<Res<'log.records'>> => recordsPage(partitionOf(a), a.req, decoderFor(a)),
  recordValue: (a: LogTaskArgs<ParsedReq<'log.recordValue'>>): Promise<Res<'log.recordValue'>> => recordValue(partitionOf(a), a.req),
  batches: async (a: LogTaskArgs<ParsedReq<'log.batches'>>): Promise<Res<'log.batches'>> => batchesPage(partitionOf(a), a.req),
  seekTimestamp: async (a: LogTaskArgs<ParsedReq<'log.seekTimestamp'>>): Promise<Res<'log.seekTimestamp'>> => {
    const hit = await offsetForTimestamp(partitionOf(a), offsetOf(a.req.timestamp), { isolation: 'none' });
    if (!hit) return { found: false, offset: null, timestamp: null, segmentBaseOffset: null, leaderEpoch: null };
    return { found: true, offset: s(hit.offset), timestamp: s(hit.timestamp), segmentBaseOffset: sn(hit.segmentBaseOffset), leaderEpoch: hit.leaderEpoch };
  },
  count: async (a: LogTaskArgs<undefined>, run: TaskRun): Promise<CountTaskResult> => {
    let facts: CountFacts | null = null;
    const result = await countJob(partitionOf(a), jobOf(run), { setCounts: (_log, c) => (facts = c) }, { runner: scanRunner(), minBytes: scanSplitMinBytes() });
    return { result, facts };
  },
  holes: (a: LogTaskArgs<ParsedReq<'log.holes'>>, run: TaskRun): Promise<JobResult<'log.holes'>> => holesJob(partitionOf(a), a.req, jobOf(run), { runner: scanRunner(), minBytes: scanSplitMinBytes() }),
  verify: async (a: LogTaskArgs<ParsedReq<'log.verify'>>, run: TaskRun): Promise<VerifyTaskResult> => {
    let facts: VerifyFacts | null = null;
    const result = await verifyJob(partitionOf(a), a.req, jobOf(run), { setVerify: (_log, f) => (facts = f) }, { runner: scanRunner(), minBytes: scanSplitMinBytes() });
    return { result, facts };
  },
  /** Every partition of the opened folder holding `dir` (its root), verified and its repair planned. */
  verifyFolder: (a: LogTaskArgs<ParsedReq<'log.verifyFolder'>>, run: TaskRun): Promise<JobResult<'log.verifyFolder'>> => verifyFolderJob(a.root, a.req.deep, jobOf(run), { runner: scanRunner(), minBytes: scanSplitMinBytes() }),
  search: (a: LogTaskArgs<ParsedReq<'log.search'>>, run: TaskRun): Promise<JobResult<'log.search'>> => {
    let logs: PartitionLog[];
    if (a.req.scope === 'partition') logs = [partitionOf(a)];
    else {
      const all = allPartitions(openPath(a.root)).map((p) => p.log);
      if (a.req.scope === 'topic') {
        const here = all.find((l) => l.dir === a.dir) ?? partitionOf(a);
        logs = all.filter((l) => l.topic === here.topic);
      } else logs = all;
      logs.sort((x, y) => (x.topic < y.topic ? -1 : x.topic > y.topic ? 1 : x.partition - y.partition || (x.dir < y.dir ? -1 : x.dir > y.dir ? 1 : 0)));
    }
    const decoderKey = { root: a.root, choices: a.choices, decodeEpoch: a.decodeEpoch };
    return searchJob(logs.map((log) => ({ log, decoder: decoderFor(a) })), a.req, jobOf(run), { runner: scanRunner(), minBytes: scanSplitMinBytes(), decoderKey });
  },
  copy: async (a: LogTaskArgs<ParsedReq<'log.copyRecords'>>): Promise<Res<'log.copyRecords'>> =>
    (await recordExport()).recordsAsText([{ log: partitionOf(a), from: offsetOf(a.req.from), to: offsetOf(a.req.to) }], a.req.format, {
      decoder: decoderFor(a),
      isolation: a.req.isolation,
      maxRecords: a.req.maxRecords,
      maxChars: COPY_MAX_CHARS,
    }),
  export: async (a: LogTaskArgs<ExportTaskReq>, run: TaskRun): Promise<JobResult<'log.export'>> => {
    const { exportSpan, notExportedText, writeExport } = await recordExport();
    const { sources, from, to } = await exportSources(a);
    const total = exportSpan(sources);
    let bytes = 0;
    run.progress({ phase: 'reading records', done: 0, total: Number(total), bytes: 0 });
    const summary = await writeExport(sources, {
      format: a.req.format,
      out: a.req.out,
      isolation: a.req.isolation,
      decoder: decoderFor(a),
      signal: run.signal,
      onProgress: (p) => run.progress({ phase: `reading records: ${p.records} so far`, done: Number(p.offsets), total: Number(total), bytes: (bytes = p.records) }),
      onConvert: () => run.progress({ phase: 'writing Parquet (DuckDB)', done: Number(total), total: Number(total), bytes }),
    });
    const lastStableStops = summary.lastStableStops.map((x) => ({
      topic: x.topic,
      partition: x.partition,
      lastStableOffset: s(x.lastStableOffset),
      producerId: s(x.openTransaction.producerId),
      producerEpoch: x.openTransaction.producerEpoch,
      firstOffset: s(x.openTransaction.firstOffset),
      recordsNotRead: x.recordsNotRead,
      text: lastStableStopText(x, 'exported'),
    }));
    // Never a silent skip: the damage and the batches not checked in the range, as klx export names them.
    const notExported = summary.notExported.map((x) => ({ topic: x.topic, partition: x.partition, file: x.file, position: x.position, kind: x.kind, text: notExportedText(x) }));
    return { out: summary.out, format: summary.format, records: summary.records, bytes: summary.bytes, partitions: summary.partitions, from: from === null ? null : s(from), to: to === null ? null : s(to), elapsedMs: summary.elapsedMs, lastStableStops, notExported };
  },
} as const;

/** A log task's kind. */
export type LogTaskKind = keyof typeof logTasks;

let pool: WorkerPool | null = null;

/** The log domain's worker pool (started on first use; shared by every API context of this process). */
export function logPool(): WorkerPool {
  pool ??= new WorkerPool({ entry: 'log-worker', near: import.meta.url });
  return pool;
}
