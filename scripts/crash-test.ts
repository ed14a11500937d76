/**
 * `npm run crash-test -- [--kills N] [--seed S] [--scenarios a,b] [--cli-repair] [--syscall-only]`
 *
 * Real SIGKILLs of a child `klx` process (issue 17, harnesses): for each scenario (compaction,
 * retention, repair, append, undo) a partition folder is built, the `klx` command runs once
 * untouched to learn the state after it and, under `strace`, the sequence of its
 * rename/unlink/fsync/fdatasync/ftruncate calls. Then the command runs again on fresh copies and is
 * killed:
 *  - exactly at the n-th call of one of those syscalls (`strace -e inject=NAME:signal=KILL:when=n`:
 *    the kernel delivers SIGKILL on entry to the call, before it runs), every point in turn;
 *  - at a random time (seeded) inside the window in which the command changes the folder, found
 *    by watching the folders with inotify (`fs.watch`): the kill falls 0..W ms after the first
 *    change, W the reference run's window plus a margin.
 * Kills alternate between the two kinds per scenario; `--syscall-only` places every kill at a
 * syscall point (with `--kills` = a scenario's number of points, each point once).
 * After each kill the partition is repaired the way a broker's startup recovery would
 * (LogLoader.load; `klx repair`'s own functions in this process, or the `klx repair` command with `--cli-repair`),
 * opened, and every (offset, key, value) compared with the states before and after the command:
 * the partition must hold exactly one of them (nothing lost, nothing duplicated, no mix), and a
 * deep verify must find no error.
 *
 * Without `strace` on the PATH only the random-time kills run (and the output says so).
 * Exit code 1 when any kill left a partition in neither state. CI runs a small fixed set through
 * vitest (`test/crash-harness.test.ts`); large campaigns are run by hand
 * (`nice -n 15 npm run crash-test -- --kills 300 --cli-repair`).
 */
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, watch, type FSWatcher } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { mulberry32 } from '../src-main/app/prng.ts';
import { runCompaction } from '../src-main/engine/cleaner/compaction.ts';
import { scanLogFile } from '../src-main/engine/format/log-reader.ts';
import { decodeV2Records } from '../src-main/engine/format/record-batch.ts';
import { PartitionLog } from '../src-main/engine/log/partition-log.ts';
import { acquirePartitionLock, applyRecovery, planRecovery } from '../src-main/engine/log/recovery.ts';
import { verifyPartition } from '../src-main/engine/log/verify.ts';
import { buildPartition, rec, singles, type BatchInput } from '../test/support/log-builder.ts';
import { parseOrExit, wholeNumber } from './script-args.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const KLX = join(ROOT, 'bin', 'klx.mjs');
/** The syscalls a kill is placed at (x86-64 and aarch64 names; strace ignores none it knows). */
export const KILL_SYSCALLS = ['rename', 'renameat', 'renameat2', 'unlink', 'unlinkat', 'fsync', 'fdatasync', 'ftruncate'] as const;
const TS = 1_700_000_000_000;
/** A killed run taking longer than this is killed with its process group (a stalled tracer). */
const RUN_TIMEOUT_MS = 120_000;

/** One record as compared: offset, key and value as text (control records by their type). */
type Row = string;

/** A partition's records as `offset key value` rows, and whether its files held damage. */
export function recordRows(partitionDir: string): { rows: Row[]; damage: number } {
  const log = PartitionLog.open(partitionDir);
  const start = log.logStartOffset;
  const rows: Row[] = [];
  let damage = 0;
  const text = (b: Uint8Array | null) => (b === null ? 'null' : JSON.stringify(Buffer.from(b).toString('latin1')));
  for (const seg of log.segments) {
    for (const e of scanLogFile(seg.files.log, { deep: true })) {
      if (e.type !== 'batch' || e.error) {
        damage++;
        continue;
      }
      for (const r of e.records ?? decodeV2Records(e.header, e.bytes)) {
        if (r.offset < start) continue;
        rows.push(r.control ? `${r.offset} control ${r.control.type}` : `${r.offset} ${text(r.key)} ${text(r.value)}`);
      }
    }
  }
  return { rows, damage };
}

/** One scenario: how to build the folder and which `klx` command to kill. */
export interface Scenario {
  name: 'compaction' | 'retention' | 'repair' | 'append' | 'undo';
  /** Builds the log directory under `logDir`; returns the partition folder. */
  build(logDir: string, trashDir: string): string;
  /** The `klx` arguments. */
  args(partitionDir: string, trashDir: string): string[];
}

const txn = (pid: bigint, recs: ReturnType<typeof rec>[]): BatchInput => ({ isTransactional: true, producerId: pid, producerEpoch: 0, baseSequence: 0, records: recs });

/** Four segments with overwritten keys, a tombstone, a gzip batch and an aborted transaction. */
function compactable(logDir: string): string {
  return buildPartition(logDir, {
    topic: 'orders',
    partition: 0,
    segments: [
      { baseOffset: 0n, batches: singles(rec('a', '1', TS), rec('b', '2', TS), rec('a', '3', TS), rec('c', null, TS)) },
      { baseOffset: 4n, batches: [{ records: [rec('b', '4', TS), rec('d', '5', TS)], compression: 'gzip' }, txn(7n, [rec('e', 'x', TS)]), { isControl: true, isTransactional: true, producerId: 7n, producerEpoch: 0, records: [{ key: Buffer.from([0, 0, 0, 0]), value: Buffer.from([0, 0, 0, 0, 0, 0]), timestamp: BigInt(TS) }] }], txnIndex: [{ producerId: 7n, firstOffset: 6n, lastOffset: 7n, lastStableOffset: 8n }] },
      { baseOffset: 8n, batches: [{ records: [rec('a', '6', TS)] }, ...singles(rec('f', '7', TS), rec('d', '8', TS))] },
      { baseOffset: 11n, batches: [{ records: [rec('g', '9', TS)] }] },
    ],
  });
}

const COMPACT_ARGS = ['--now', String(TS + 1000), '--segment-bytes', '700', '--config', 'cleanup.policy=compact'];

export const SCENARIOS: Scenario[] = [
  {
    name: 'compaction',
    build: (logDir) => compactable(logDir),
    args: (dir, trash) => ['compact', dir, ...COMPACT_ARGS, '--trash-dir', trash],
  },
  {
    name: 'retention',
    build: (logDir) =>
      buildPartition(logDir, {
        topic: 'events',
        partition: 0,
        segments: [0, 1, 2, 3, 4].map((s) => ({ baseOffset: BigInt(s * 3), batches: singles(rec(`k${s}a`, `v${s}`, TS + s * 3_600_000), rec(`k${s}b`, `w${s}`, TS + s * 3_600_000), rec(null, `x${s}`, TS + s * 3_600_000)) })),
      }),
    // Segments 0..2 are older than 2 h at now = TS + 5 h; 3 and 4 (the active one) stay.
    args: (dir, trash) => ['retention', dir, '--retention-ms', String(2 * 3_600_000), '--now', String(TS + 5 * 3_600_000), '--trash-dir', trash],
  },
  {
    name: 'repair',
    build: (logDir) => {
      const dir = buildPartition(logDir, {
        topic: 'damaged',
        partition: 0,
        segments: [
          { baseOffset: 0n, batches: singles(rec('a', '1', TS), rec('b', '2', TS + 1)), noIndex: true },
          { baseOffset: 2n, batches: singles(rec('c', '3', TS + 2), rec('d', '4', TS + 3)), noTimeIndex: true },
          // A crashed append: the last batch cut short.
          { baseOffset: 4n, batches: singles(rec('e', '5', TS + 4), rec('f', '6', TS + 5)), tail: Buffer.from([0, 0, 0, 0, 0, 0, 0, 6, 0, 0, 0, 80, 0, 0, 0, 0, 2, 1, 2, 3]) },
        ],
      });
      // Leftovers of an interrupted cleaner run that never reached its swap.
      cpSync(join(dir, '00000000000000000002.log'), join(dir, '00000000000000000002.log.cleaned'));
      cpSync(join(dir, '00000000000000000000.log'), join(dir, '00000000000000000000.log.deleted'));
      return dir;
    },
    args: (dir, trash) => ['repair', dir, '--trash-dir', trash],
  },
  {
    name: 'append',
    build: (logDir) => buildPartition(logDir, { topic: 'appends', partition: 0, segments: [{ baseOffset: 0n, batches: singles(rec('a', '1', TS), rec('b', '2', TS + 1), rec('c', '3', TS + 2)) }] }),
    // segment.bytes small enough that this append rolls a new segment (more steps to kill at).
    args: (dir) => ['append', dir, '--key', 'z', '--value', 'appended value', '--timestamp', String(TS + 10), '--compression', 'gzip', '--config', 'segment.bytes=200'],
  },
  {
    name: 'undo',
    build: (logDir, trash) => {
      const dir = compactable(logDir);
      runCompaction(dir, { now: TS + 1000, config: { 'segment.bytes': 700, 'cleanup.policy': ['compact'] } }, { runId: 'crash-test', trashDir: trash });
      return dir;
    },
    args: (dir, trash) => ['undo', dir, '--trash-dir', trash],
  },
];

/** Where to kill one run. */
export type KillPoint = { kind: 'syscall'; syscall: string; n: number } | { kind: 'random'; afterFirstChangeMs: number };

/** What one killed run left, after repair. */
export interface KillOutcome {
  scenario: string;
  point: KillPoint;
  /** The child died of SIGKILL (false: it finished before the kill point). */
  killed: boolean;
  /** The partition after repair: `before`, `after`, or `mix` (neither). */
  state: 'before' | 'after' | 'mix';
  /** Rows missing from / extra to the nearest state, for a mix. */
  lost: number;
  duplicated: number;
  verifyErrors: string[];
  repairError?: string;
}

interface Reference {
  before: Row[];
  after: Row[];
  calls: { syscall: string; n: number }[];
  windowMs: number;
}

function haveStrace(): boolean {
  return spawnSync('strace', ['-V'], { stdio: 'ignore' }).status === 0;
}

/** A fresh build of the scenario's folders per run (trash manifests name absolute paths, so no copies). */
class Fixture {
  constructor(readonly scenario: Scenario) {}
  copy(): { root: string; dir: string; trash: string } {
    const root = mkdtempSync(join(tmpdir(), `klx-crash-${this.scenario.name}-`));
    const trash = join(root, 'trash');
    const dir = this.scenario.build(join(root, 'logs'), trash);
    return { root, dir, trash };
  }
  dispose(): void {}
}

/** Runs `klx args` in a child; kills it by `point`; resolves with how it ended. */
function runKlx(args: string[], point: KillPoint | null, watchDirs: string[], env: NodeJS.ProcessEnv, traceOut?: string): Promise<{ signal: NodeJS.Signals | null; status: number | null; firstChangeMs: number | null; lastChangeMs: number | null; stderr: string }> {
  return new Promise((resolveRun) => {
    const t0 = Date.now();
    const traced = point?.kind === 'syscall' || traceOut !== undefined;
    const cmd = traced ? 'strace' : process.execPath;
    // No -f: the engine's file steps run on the main thread (the recording shows it), SIGKILL ends
    // every thread, and strace -f can stall waiting on the other threads of a killed tracee.
    const argv =
      point?.kind === 'syscall'
        ? ['-qq', '-o', '/dev/null', '-e', `trace=${point.syscall}`, '-e', `inject=${point.syscall}:signal=KILL:when=${point.n}`, process.execPath, KLX, ...args]
        : traceOut !== undefined
          ? ['-qq', '-o', traceOut, '-e', `trace=${KILL_SYSCALLS.join(',')}`, process.execPath, KLX, ...args]
          : [KLX, ...args];
    const child = spawn(cmd, argv, { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, ...env }, detached: true });
    // A run that neither ends nor dies within RUN_TIMEOUT_MS: its whole process group gets SIGKILL.
    const guard = setTimeout(() => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // already gone
      }
    }, RUN_TIMEOUT_MS);
    let stderr = '';
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()).length > 8192 && (stderr = stderr.slice(-8192)));
    let first: number | null = null;
    let last: number | null = null;
    let timer: NodeJS.Timeout | null = null;
    const watchers: FSWatcher[] = [];
    const onChange = () => {
      const t = Date.now() - t0;
      last = t;
      if (first !== null) return;
      first = t;
      if (point?.kind === 'random') timer = setTimeout(() => child.kill('SIGKILL'), point.afterFirstChangeMs);
    };
    for (const d of watchDirs) if (existsSync(d)) watchers.push(watch(d, { persistent: false }, onChange));
    child.on('close', (status, signal) => {
      clearTimeout(guard);
      if (timer) clearTimeout(timer);
      for (const w of watchers) w.close();
      // strace reports the tracee's death by SIGKILL by dying of it too.
      resolveRun({ signal, status, firstChangeMs: first, lastChangeMs: last, stderr });
    });
  });
}

/** The rename/unlink/fsync/ftruncate calls of a strace output, in order, numbered per syscall. */
function numberCalls(text: string): { syscall: string; n: number }[] {
  const counts = new Map<string, number>();
  const calls: { syscall: string; n: number }[] = [];
  for (const line of text.split('\n')) {
    const m = /^(?:\d+\s+)?([a-z0-9_]+)\(/.exec(line);
    if (!m || line.includes('resumed>')) continue;
    const n = (counts.get(m[1]!) ?? 0) + 1;
    counts.set(m[1]!, n);
    calls.push({ syscall: m[1]!, n });
  }
  return calls;
}

/** Repairs as a broker's startup recovery would (LogLoader.load): `klx repair`'s plan and apply, or the command itself. */
async function repair(dir: string, cli: boolean, env: NodeJS.ProcessEnv): Promise<void> {
  if (cli) {
    // The copy's own trash (<root>/trash beside <root>/logs/<partition>): a repair keeps what it replaces there.
    const r = spawnSync(process.execPath, [KLX, 'repair', dir, '--trash-dir', join(dirname(dirname(dir)), 'trash')], { env: { ...process.env, ...env }, encoding: 'utf8' });
    if (r.status !== 0 && r.status !== 1) throw new Error(`klx repair: exit ${r.status}: ${r.stderr.slice(-500)}`);
    return;
  }
  const lock = acquirePartitionLock(dir);
  try {
    const plan = await planRecovery(dir);
    if (plan.actions.length > 0) await applyRecovery(plan, { lock: false });
  } finally {
    lock.release();
  }
}

function classify(got: Row[], ref: Reference): Pick<KillOutcome, 'state' | 'lost' | 'duplicated'> {
  const eq = (a: Row[], b: Row[]) => a.length === b.length && a.every((x, i) => x === b[i]);
  if (eq(got, ref.before)) return { state: 'before', lost: 0, duplicated: 0 };
  if (eq(got, ref.after)) return { state: 'after', lost: 0, duplicated: 0 };
  const union = new Set([...ref.before, ...ref.after]);
  const seen = new Map<string, number>();
  let duplicated = 0;
  for (const r of got) {
    const off = r.slice(0, r.indexOf(' '));
    if (seen.has(off)) duplicated++;
    seen.set(off, 1);
  }
  const nearest = ref.after.filter((r) => !got.includes(r)).length <= ref.before.filter((r) => !got.includes(r)).length ? ref.after : ref.before;
  const lost = nearest.filter((r) => !got.includes(r)).length + got.filter((r) => !union.has(r)).length;
  return { state: 'mix', lost, duplicated };
}

/** Options of {@link crashCampaign}. */
export interface CampaignOptions {
  kills: number;
  seed: number;
  scenarios?: string[];
  cliRepair?: boolean;
  /** Only kills at syscall points (no random-time kills): with `kills` = the scenario's points, each point once. */
  syscallOnly?: boolean;
  log?: (line: string) => void;
}

/** Figures of a campaign. */
export interface CampaignResult {
  strace: boolean;
  outcomes: KillOutcome[];
  failures: KillOutcome[];
  perScenario: Record<string, { kills: number; syscallKills: number; randomKills: number; notKilled: number; before: number; after: number; mix: number; points: number }>;
  seconds: number;
}

/**
 * Runs `kills` killed runs spread over the scenarios (round robin: the next syscall point of the
 * scenario, every point before any repeats, alternating with a random-time kill).
 */
export async function crashCampaign(o: CampaignOptions): Promise<CampaignResult> {
  const started = Date.now();
  const log = o.log ?? (() => {});
  const strace = haveStrace();
  const rnd = mulberry32(o.seed >>> 0);
  const scenarios = SCENARIOS.filter((s) => !o.scenarios || o.scenarios.includes(s.name));
  const env: NodeJS.ProcessEnv = { NO_COLOR: '1' };
  const fixtures = scenarios.map((s) => new Fixture(s));
  const refs: Reference[] = [];
  try {
    for (const f of fixtures) {
      const c = f.copy();
      const before = recordRows(c.dir).rows;
      // One untouched run, under strace when there is one: the state after, the numbered
      // rename/unlink/fsync/ftruncate calls, and the window in which the folders change.
      const traceDir = strace ? mkdtempSync(join(tmpdir(), 'klx-strace-')) : null;
      const run = await runKlx(f.scenario.args(c.dir, c.trash), null, [c.dir, dirname(c.dir), c.trash], env, traceDir ? join(traceDir, 'trace') : undefined);
      if (run.status !== 0 && !(f.scenario.name === 'repair' && run.status === 1)) throw new Error(`reference run of ${f.scenario.name}: exit ${run.status}: ${run.stderr}`);
      const after = recordRows(c.dir).rows;
      rmSync(c.root, { recursive: true, force: true });
      const calls = traceDir ? numberCalls(readFileSync(join(traceDir, 'trace'), 'utf8')) : [];
      if (traceDir) rmSync(traceDir, { recursive: true, force: true });
      const windowMs = Math.max(50, (run.lastChangeMs ?? 0) - (run.firstChangeMs ?? 0));
      refs.push({ before, after, calls, windowMs });
      log(`${f.scenario.name}: ${before.length} records before, ${after.length} after; ${calls.length} kill points (${[...new Set(calls.map((c) => c.syscall))].map((s) => `${s} ×${calls.filter((c) => c.syscall === s).length}`).join(', ') || 'no strace'}); change window ${windowMs} ms`);
    }
    const outcomes: KillOutcome[] = [];
    const nextPoint = scenarios.map(() => 0);
    const nextKind: number[] = scenarios.map((_, i) => (refs[i]!.calls.length > 0 ? 0 : 1));
    for (let k = 0; k < o.kills; k++) {
      const i = k % scenarios.length;
      const f = fixtures[i]!;
      const ref = refs[i]!;
      let point: KillPoint;
      if (nextKind[i] === 0 && ref.calls.length > 0) {
        const c = ref.calls[nextPoint[i]! % ref.calls.length]!;
        nextPoint[i]!++;
        point = { kind: 'syscall', syscall: c.syscall, n: c.n };
      } else point = { kind: 'random', afterFirstChangeMs: Math.floor(rnd() * (ref.windowMs * 1.2 + 20)) };
      if (ref.calls.length > 0 && !o.syscallOnly) nextKind[i] = 1 - nextKind[i]!;
      const c = f.copy();
      try {
        const run = await runKlx(f.scenario.args(c.dir, c.trash), point, [c.dir, dirname(c.dir), c.trash], env);
        const killed = run.signal === 'SIGKILL' || run.status === 137 || (point.kind === 'syscall' && run.status !== 0 && run.status !== 1);
        const out: KillOutcome = { scenario: f.scenario.name, point, killed, state: 'mix', lost: 0, duplicated: 0, verifyErrors: [] };
        try {
          await repair(c.dir, o.cliRepair ?? false, env);
        } catch (err) {
          out.repairError = (err as Error).message;
        }
        try {
          const got = recordRows(c.dir);
          Object.assign(out, classify(got.rows, ref));
          const report = await verifyPartition(PartitionLog.open(c.dir), { deep: true });
          out.verifyErrors = report.findings.filter((x) => x.severity === 'error').map((x) => `${x.code}: ${x.file}@${x.position ?? "-"}: ${x.reason}`);
          if (got.damage > 0) out.verifyErrors.push(`${got.damage} damaged entries left after repair`);
        } catch (err) {
          out.repairError ??= `open after repair: ${(err as Error).message}`;
        }
        outcomes.push(out);
        const bad = out.state === 'mix' || out.verifyErrors.length > 0 || out.repairError;
        if (bad) log(`FAIL ${f.scenario.name} ${JSON.stringify(point)}: ${JSON.stringify(out)}`);
        if ((k + 1) % 25 === 0) log(`  ${k + 1} kills, ${((Date.now() - started) / 1000).toFixed(0)} s`);
      } finally {
        rmSync(c.root, { recursive: true, force: true });
      }
    }
    const perScenario: CampaignResult['perScenario'] = {};
    scenarios.forEach((s, i) => {
      const xs = outcomes.filter((x) => x.scenario === s.name);
      perScenario[s.name] = {
        kills: xs.filter((x) => x.killed).length,
        syscallKills: xs.filter((x) => x.killed && x.point.kind === 'syscall').length,
        randomKills: xs.filter((x) => x.killed && x.point.kind === 'random').length,
        notKilled: xs.filter((x) => !x.killed).length,
        before: xs.filter((x) => x.state === 'before').length,
        after: xs.filter((x) => x.state === 'after').length,
        mix: xs.filter((x) => x.state === 'mix').length,
        points: refs[i]!.calls.length,
      };
    });
    const failures = outcomes.filter((x) => x.state === 'mix' || x.verifyErrors.length > 0 || x.repairError);
    return { strace, outcomes, failures, perScenario, seconds: (Date.now() - started) / 1000 };
  } finally {
    for (const f of fixtures) f.dispose();
  }
}

const USAGE = 'usage: npm run crash-test -- [--kills N] [--seed S] [--scenarios compaction,retention,repair,append,undo] [--cli-repair] [--syscall-only]';

/** The options, or (on a bad argument) the reason and the usage on stderr and exit code 2. */
function parse(argv: string[]): CampaignOptions {
  return parseOrExit(USAGE, () => parseOrThrow(argv));
}

function parseOrThrow(argv: string[]): CampaignOptions {
  const { values: v } = parseArgs({
    args: argv,
    strict: true,
    options: {
      kills: { type: 'string' },
      seed: { type: 'string' },
      scenarios: { type: 'string' },
      'cli-repair': { type: 'boolean' },
      'syscall-only': { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (v.help) {
    console.log(USAGE);
    process.exit(0);
  }
  const o: CampaignOptions = { kills: wholeNumber('kills', v.kills, 40), seed: wholeNumber('seed', v.seed, 1) };
  if (v.scenarios !== undefined) o.scenarios = v.scenarios.split(',');
  if (v['cli-repair']) o.cliRepair = true;
  if (v['syscall-only']) o.syscallOnly = true;
  return o;
}

/** One summary line per scenario and a total line: `crash-test: N kills ..., M failures`. */
export function summary(r: CampaignResult): string[] {
  const lines = Object.entries(r.perScenario).map(([name, s]) => `  ${name}: ${s.kills} killed (${s.syscallKills} at a syscall of ${s.points} points, ${s.randomKills} at a random time), ${s.notKilled} finished first; after repair ${s.before} as before, ${s.after} as after, ${s.mix} mixed`);
  const killed = r.outcomes.filter((x) => x.killed).length;
  lines.push(`crash-test: ${killed} SIGKILLs in ${r.seconds.toFixed(0)} s (${r.outcomes.length} runs${r.strace ? '' : '; strace missing: random-time kills only'}), ${r.failures.length} failures (lost, duplicated or mixed records, repair or verify errors)`);
  return lines;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const o = parse(process.argv.slice(2));
  const r = await crashCampaign({ ...o, log: (l) => console.log(l) });
  for (const l of summary(r)) console.log(l);
  process.exitCode = r.failures.length > 0 ? 1 : 0;
}
