/**
 * The fuzzer's target thread (`scripts/fuzz.ts` runs it through the API's worker pool). Its task
 * `chunk` makes inputs `from..to-1` of a campaign itself (`fuzz-inputs.ts`, no process or thread per
 * input), writes each as a partition folder `logs/t-0` under its own scratch folder, and runs every
 * read path of the engine over it: dump, open, deep scan, verify, holes, fetch both ways, time
 * lookup, the repair plan, the retention and compaction previews; every `sqlEvery`-th input also
 * the SQL table build and two queries, every `apiEvery`-th input the API handlers the bridge serves
 * (log.open, log.partition, log.batches, log.records both ways, log.seekTimestamp).
 *
 * Each operation's outcome is `ok`, a typed `KlxError` (with whether it named a file and a byte
 * position) or a crash (anything else, `internal` API errors included). The number of the input
 * being run is kept in a shared Int32Array so the parent can tell a hang (one input over 5 s of the
 * process's CPU time, or over the wall-time ceiling), terminate the thread and go on after it.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serveTasks } from '../src-main/api/core/worker-tasks.ts';
import { createServerApi, type ServerApi } from '../src-main/api/index.ts';
import { KlxError } from '../src-main/engine/errors.ts';
import { scanLogBuffer, scanLogFile } from '../src-main/engine/format/log-reader.ts';
import { parseLeaderEpochCheckpoint, parseOffsetCheckpoint } from '../src-main/engine/files/checkpoint.ts';
import { parseOffsetIndex } from '../src-main/engine/files/offset-index.ts';
import { parseTimeIndex } from '../src-main/engine/files/time-index.ts';
import { readBackward, readForward, countRecords } from '../src-main/engine/log/fetch.ts';
import { findHoles } from '../src-main/engine/log/holes.ts';
import { openPath } from '../src-main/engine/log/log-dir.ts';
import { PartitionLog } from '../src-main/engine/log/partition-log.ts';
import { planRecovery } from '../src-main/engine/log/recovery-plan.ts';
import { offsetForTimestamp } from '../src-main/engine/log/time-lookup.ts';
import { verifyPartition } from '../src-main/engine/log/verify.ts';
import { compact, retention, type CleanerOutcome } from '../src-main/engine/cleaner/cleaner.ts';
import { SqlSession } from '../src-main/engine/sql/sql-session.ts';
import { generatedSeeds, inputAt, realSeeds, type FuzzInput, type FuzzSeed } from './fuzz-inputs.ts';

/** One operation's outcome. */
export interface OpOutcome {
  op: string;
  outcome: 'ok' | 'typed' | 'crash';
  code?: string;
  message?: string;
  /** A typed error that names neither a file nor a byte position. */
  unplaced?: boolean;
}

/** What a chunk of inputs gave. */
export interface ChunkResult {
  inputs: number;
  ops: number;
  typed: number;
  byCode: Record<string, number>;
  opCounts: Record<string, number>;
  /** Milliseconds per operation. */
  opMs: Record<string, number>;
  /** Inputs with a crash or an unplaced error: number, recipe, the bad outcomes. */
  failures: { k: number; from: string; recipe: string[]; bad: OpOutcome[] }[];
  /** The input of the longest wall time: its number, wall ms and the process's CPU ms meanwhile. */
  slowest: { k: number; ms: number; cpuMs: number };
  /** The input of the most CPU time (every thread of the process, DuckDB's included). */
  costliest: { k: number; ms: number; cpuMs: number };
}

/** Arguments of the `chunk` task. */
export interface ChunkArgs {
  seed: number;
  from: number;
  to: number;
  /** Shared Int32Array: [0] = the input being run. */
  heartbeat: SharedArrayBuffer;
  sqlEvery: number;
  apiEvery: number;
  realSeeds: number;
  /** Every input runs the in-memory parser tier; every `fullEvery`-th also every file-level path (1: all). */
  fullEvery: number;
  /** Outcomes of every op of every input, not only failures (replay). */
  all?: boolean;
}

/** Codes that concern no file position by nature. */
const PLACELESS = new Set(['not-found', 'not-a-log-dir', 'cancelled', 'offset-out-of-range', 'invalid-argument', 'invalid-config', 'locked', 'read-only']);

/** Milliseconds spent per operation in this thread (reset by each chunk). */
let opMs: Record<string, number> = {};

async function attempt(op: string, fn: () => unknown): Promise<OpOutcome> {
  const t0 = performance.now();
  try {
    await fn();
    return { op, outcome: 'ok' };
  } catch (err) {
    if (err instanceof KlxError) {
      const unplaced = !PLACELESS.has(err.code) && (err.file === undefined || err.position === undefined);
      return { op, outcome: 'typed', code: err.code, message: err.message.slice(0, 300), ...(unplaced ? { unplaced } : {}) };
    }
    const e = err as Error;
    return { op, outcome: 'crash', code: e?.name ?? typeof err, message: String(e?.stack ?? e?.message ?? err).slice(0, 600) };
  } finally {
    opMs[op] = (opMs[op] ?? 0) + performance.now() - t0;
  }
}

/** A cleaner outcome's per-partition failure, thrown again as it was reported (`internal` as an untyped error). */
function failureOf(o: CleanerOutcome): void {
  for (const p of o.partitions) {
    if (!p.error) continue;
    if (p.error.code === 'internal') throw new Error(p.error.message);
    throw new KlxError(p.error.code, p.error.message, { file: p.error.file, position: p.error.position });
  }
}

const SQL_QUERIES = ['SELECT count(*), min("offset"), max("offset") FROM records', 'SELECT * FROM holes', 'SELECT key, value_text FROM latest LIMIT 20'];
let seeds: FuzzSeed[] | null = null;
let api: ServerApi | null = null;
const scratch = join(existsSync('/dev/shm') ? '/dev/shm' : tmpdir(), `klx-fuzz-${process.pid}-${Math.random().toString(36).slice(2, 8)}`);
const logs = join(scratch, 'logs');
const dir = join(logs, 't-0');
const logFile = join(dir, '00000000000000000000.log');
const trashDir = join(scratch, 'trash');
const OPTIONAL = ['00000000000000000000.index', '00000000000000000000.timeindex', 'leader-epoch-checkpoint'];
const DIR_FILES = ['log-start-offset-checkpoint', 'recovery-point-offset-checkpoint', 'cleaner-offset-checkpoint', 'replication-offset-checkpoint'];

/** The API calls made on an input: [op name, method, request]. */
const API_CALLS: [string, string, unknown][] = [
  ['api:log.open', 'log.open', { path: logs }],
  ['api:log.partition', 'log.partition', { dir }],
  ['api:log.batches', 'log.batches', { dir, segment: '0' }],
  ['api:log.records', 'log.records', { dir }],
  ['api:log.records-back', 'log.records', { dir, from: 'end', direction: 'backward' }],
  ['api:log.seekTimestamp', 'log.seekTimestamp', { dir, timestamp: '1700000000500' }],
];

function writeInput(m: FuzzInput): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(logFile, m.log);
  const put = (path: string, data: Buffer | string | null | undefined) => (data === null || data === undefined ? rmSync(path, { force: true }) : writeFileSync(path, data));
  put(join(dir, OPTIONAL[0]!), m.index);
  put(join(dir, OPTIONAL[1]!), m.timeIndex);
  put(join(dir, OPTIONAL[2]!), m.partitionFiles['leader-epoch-checkpoint']);
  for (const f of DIR_FILES) put(join(logs, f), m.dirFiles[f]?.replaceAll('TP', 't 0'));
}

/** An API envelope as an outcome: `internal` errors (stack traces, contract mismatches) are crashes. */
async function apiCall(op: string, method: string, req: unknown): Promise<OpOutcome> {
  const t0 = performance.now();
  const env = (await api!.dispatch(method as never, req, { readOnly: true })) as { ok: boolean; error?: { code: string; message: string; file?: string; position?: number } };
  opMs[op] = (opMs[op] ?? 0) + performance.now() - t0;
  if (env.ok) return { op, outcome: 'ok' };
  const e = env.error!;
  if (e.code === 'internal') return { op, outcome: 'crash', code: 'internal', message: e.message.slice(0, 600) };
  const unplaced = !PLACELESS.has(e.code) && (e.file === undefined || e.position === undefined);
  return { op, outcome: 'typed', code: e.code, message: e.message.slice(0, 300), ...(unplaced ? { unplaced } : {}) };
}

/** The parser tier, in memory: the deep batch walk with CRCs, both index parsers, the checkpoint parsers. */
async function parserTier(m: FuzzInput): Promise<OpOutcome[]> {
  const out: OpOutcome[] = [];
  out.push(await attempt('parse-log', () => {
    for (const e of scanLogBuffer(m.log, { verifyCrc: true, deep: true, file: logFile })) if (e.type === 'batch') e.records?.length;
  }));
  if (m.index) out.push(await attempt('parse-index', () => parseOffsetIndex(m.index!, 0n, { file: join(dir, OPTIONAL[0]!) })));
  if (m.timeIndex) out.push(await attempt('parse-timeindex', () => parseTimeIndex(m.timeIndex!, 0n, { file: join(dir, OPTIONAL[1]!) })));
  for (const [name, text] of [...Object.entries(m.dirFiles), ...Object.entries(m.partitionFiles)]) {
    const body = Buffer.from(text.replaceAll('TP', 't 0'));
    out.push(await attempt('parse-checkpoint', () => (name === 'leader-epoch-checkpoint' ? parseLeaderEpochCheckpoint(body, join(dir, name)) : parseOffsetCheckpoint(body, join(logs, name)))));
  }
  return out;
}

async function runInput(k: number, a: ChunkArgs): Promise<OpOutcome[]> {
  const m = inputAt(seeds!, a.seed, k);
  const out: OpOutcome[] = await parserTier(m);
  if (a.fullEvery > 1 && k % a.fullEvery !== 0) return out;
  writeInput(m);
  out.push(await attempt('dump', () => {
    for (const e of scanLogFile(logFile, { verifyCrc: true, deep: true })) if (e.type === 'batch') e.records?.length;
  }));
  out.push(await attempt('open-dir', () => openPath(logs)));
  let log: PartitionLog | null = null;
  out.push(await attempt('open', () => (log = PartitionLog.open(dir))));
  if (log) {
    const l: PartitionLog = log;
    out.push(await attempt('deep-scan', () => countRecords(l)));
    out.push(await attempt('verify', () => verifyPartition(l, { deep: true })));
    out.push(await attempt('holes', () => findHoles(l)));
    out.push(await attempt('fetch', () => readForward(l, l.logStartOffset, 500, { includeControl: true })));
    out.push(await attempt('fetch-back', () => readBackward(l, l.logEndOffset, 200, { includeControl: true })));
    out.push(await attempt('time-lookup', () => offsetForTimestamp(l, 1700000000500n)));
    out.push(await attempt('repair-plan', () => planRecovery(l)));
  }
  out.push(await attempt('retention-preview', () => failureOf(retention(dir, { dryRun: true, trashDir, now: 1700000100000 }))));
  out.push(await attempt('compaction-preview', () => failureOf(compact(dir, { dryRun: true, trashDir, now: 1700000100000 }))));
  if (a.sqlEvery > 0 && k % a.sqlEvery === 0) {
    out.push(await attempt('sql', async () => {
      const s = await SqlSession.open(logs);
      try {
        for (const q of SQL_QUERIES) await s.query(q);
      } finally {
        s.close();
      }
    }));
  }
  if (a.apiEvery > 0 && k % a.apiEvery === 0) {
    api ??= createServerApi({ version: '0.0.0-fuzz', transport: 'bridge', jobs: { progressIntervalMs: 0 } });
    for (const [op, method, req] of API_CALLS) out.push(await apiCall(op, method, req));
  }
  return out;
}

async function chunk(a: ChunkArgs): Promise<ChunkResult> {
  seeds ??= [...generatedSeeds(), ...realSeeds(a.realSeeds)];
  const beat = new Int32Array(a.heartbeat);
  opMs = {};
  const r: ChunkResult = { inputs: 0, ops: 0, typed: 0, byCode: {}, opCounts: {}, opMs, failures: [], slowest: { k: -1, ms: 0, cpuMs: 0 }, costliest: { k: -1, ms: 0, cpuMs: 0 } };
  for (let k = a.from; k < a.to; k++) {
    Atomics.store(beat, 0, k);
    const t0 = Date.now();
    const c0 = process.cpuUsage();
    const outcomes = await runInput(k, a);
    const ms = Date.now() - t0;
    const c = process.cpuUsage(c0);
    const cpuMs = Math.round((c.user + c.system) / 1000);
    if (ms > r.slowest.ms) r.slowest = { k, ms, cpuMs };
    if (cpuMs > r.costliest.cpuMs) r.costliest = { k, ms, cpuMs };
    r.inputs++;
    for (const x of outcomes) {
      r.ops++;
      r.opCounts[x.op] = (r.opCounts[x.op] ?? 0) + 1;
      if (x.outcome === 'typed') {
        r.typed++;
        r.byCode[x.code!] = (r.byCode[x.code!] ?? 0) + 1;
      }
    }
    const bad = a.all ? outcomes : outcomes.filter((x) => x.outcome === 'crash' || x.unplaced);
    if (bad.length > 0) {
      const m = inputAt(seeds, a.seed, k);
      r.failures.push({ k, from: m.from, recipe: m.recipe, bad });
    }
  }
  return r;
}

/**
 * The scratch folder of this thread, for the parent to delete. Called once when a thread starts,
 * outside the hang watchdog: it also pays the one-time costs (DuckDB's load, the API's own worker
 * thread) on a clean seed, so that no input is charged with them.
 */
async function scratchDir(a: { sql: boolean; api: boolean; realSeeds: number }): Promise<string> {
  seeds ??= [...generatedSeeds(), ...realSeeds(a.realSeeds)];
  writeInput({ from: seeds[0]!.name, log: seeds[0]!.log, index: null, timeIndex: null, partitionFiles: {}, dirFiles: {}, recipe: [] });
  if (a.sql) {
    const s = await SqlSession.open(logs);
    try {
      for (const q of SQL_QUERIES) await s.query(q);
    } finally {
      s.close();
    }
  }
  if (a.api) {
    api ??= createServerApi({ version: '0.0.0-fuzz', transport: 'bridge', jobs: { progressIntervalMs: 0 } });
    for (const [, method, req] of API_CALLS) await api.dispatch(method as never, req, { readOnly: true });
  }
  return scratch;
}

serveTasks({ chunk, scratchDir, ping: () => 'pong' });
