/**
 * Lessons: a lab (`labs.ts`) played into a fresh folder of its own, step by step.
 *
 * Layout under the given data dir (the app's data folder, never a user's logs):
 *
 *     <dataDir>/lessons/<labId>/lesson.json   the lab id and the next step to run
 *     <dataDir>/lessons/<labId>/logs/         the lesson's log dir: one partition `<topic>-0` per topic
 *     <dataDir>/lessons/<labId>/trash/        the trash of the lesson's cleaner runs (undo works as usual)
 *
 * {@link createLesson} (also "reset") deletes that folder, creates it again and writes what the
 * first step needs, leaving the lesson at the step to run; {@link runLessonStep} runs the current
 * step's retention or compaction with the step's clock, rules and config (plan only with `dryRun`),
 * then writes what the next step needs. Writes go through the engine's `PartitionWriter` with the
 * writer's clock set to each record's timestamp, so rolls by `segment.ms`, index entries and
 * checkpoints are a broker's (Kafka `UnifiedLog.append` / `roll`).
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { compact, retention, type CleanerOutcome } from '../cleaner/cleaner.ts';
import type { ExplainOptions } from '../cleaner/decisions.ts';
import { KlxError } from '../errors.ts';
import { createPartition } from '../log/partition-create.ts';
import { PartitionWriter } from '../log/partition-writer.ts';
import { labById, LABS, type Lab, type LabStep, type LabWrite } from './labs.ts';

/** Where a lesson lives and which step it is at. */
export interface LessonState {
  labId: string;
  /** `<dataDir>/lessons/<labId>` */
  dir: string;
  /** The lesson's log dir (open it like any log dir). */
  logDir: string;
  /** Trash folder of the lesson's runs. */
  trashDir: string;
  /** Index of the step to run next; equal to the number of steps when the lab is done. */
  next: number;
  /** The step to run next, or null when done. */
  step: LabStep | null;
  /** Partition folder of that step (null when done). */
  partitionDir: string | null;
  lab: Lab;
}

/** The result of running a step. */
export interface LessonRunResult {
  /** The state after the step (unchanged for a dry run). */
  state: LessonState;
  /** The step that was run. */
  step: LabStep;
  /** The cleaner outcome (null for a query step). */
  outcome: CleanerOutcome | null;
}

interface LessonFile {
  labId: string;
  next: number;
}

function lessonDir(dataDir: string, labId: string): string {
  return join(resolve(dataDir), 'lessons', labId);
}

function labOrThrow(labId: string): Lab {
  const lab = labById(labId);
  if (!lab) throw new KlxError('invalid-argument', `no lab "${labId}"; the labs are ${LABS.map((l) => l.id).join(', ')}`);
  return lab;
}

function partitionDirOf(logDir: string, step: LabStep): string {
  return join(logDir, `${step.topic}-0`);
}

function stateOf(dataDir: string, lab: Lab, next: number): LessonState {
  const dir = lessonDir(dataDir, lab.id);
  const logDir = join(dir, 'logs');
  const step = lab.steps[next] ?? null;
  return { labId: lab.id, dir, logDir, trashDir: join(dir, 'trash'), next, step, partitionDir: step ? partitionDirOf(logDir, step) : null, lab };
}

/** The step's writes, through the engine's writer (creating the partition with the step's config on first use). */
function playWrites(logDir: string, step: LabStep): void {
  const dir = partitionDirOf(logDir, step);
  if (!existsSync(dir)) createPartition(logDir, step.topic, 0, step.config ?? {});
  if (step.writes.length === 0) return;
  let clock = 0n;
  const w = PartitionWriter.open(dir, { clock: () => clock, random: () => 0, purpose: 'klx lesson' });
  try {
    for (const x of step.writes as LabWrite[]) {
      if (x === 'roll') {
        w.roll();
        continue;
      }
      clock = BigInt(x.ts);
      w.append([{ key: x.key, value: x.value, timestamp: BigInt(x.ts) }]);
    }
  } finally {
    w.close();
  }
}

function save(state: LessonState): void {
  const f: LessonFile = { labId: state.labId, next: state.next };
  writeFileSync(join(state.dir, 'lesson.json'), JSON.stringify(f, null, 2) + '\n');
}

/**
 * Creates (or resets) the lesson of a lab: deletes `<dataDir>/lessons/<labId>`, then writes what the
 * first step needs.
 * @returns the lesson at its first step.
 * @throws KlxError `invalid-argument` for an unknown lab; the writer's errors (`io-error`, `locked`…).
 */
export function createLesson(dataDir: string, labId: string): LessonState {
  const lab = labOrThrow(labId);
  const dir = lessonDir(dataDir, labId);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(join(dir, 'logs'), { recursive: true });
  mkdirSync(join(dir, 'trash'), { recursive: true });
  const state = stateOf(dataDir, lab, 0);
  playWrites(state.logDir, lab.steps[0]!);
  save(state);
  return state;
}

/**
 * The lesson of a lab as it is on disk, or null when it was never created.
 * @throws KlxError `invalid-argument` for an unknown lab or an unreadable `lesson.json`.
 */
export function lessonState(dataDir: string, labId: string): LessonState | null {
  const lab = labOrThrow(labId);
  const path = join(lessonDir(dataDir, labId), 'lesson.json');
  if (!existsSync(path)) return null;
  let f: LessonFile;
  try {
    f = JSON.parse(readFileSync(path, 'utf8')) as LessonFile;
  } catch (err) {
    throw new KlxError('invalid-argument', `lesson.json is not valid JSON: reset the lesson`, { file: path, cause: err });
  }
  if (f.labId !== labId || !Number.isInteger(f.next) || f.next < 0 || f.next > lab.steps.length) throw new KlxError('invalid-argument', 'lesson.json does not describe this lab: reset the lesson', { file: path });
  return stateOf(dataDir, lab, f.next);
}

/** Options of {@link runLessonStep}. */
export interface LessonRunOptions {
  /** Plan only: nothing changes, the lesson stays at its step. */
  dryRun?: boolean;
  /** Collect the decisions (`decisions.ts`). */
  explain?: ExplainOptions;
  /** Rule set instead of the step's (the side-by-side comparison). */
  rules?: 'kafka' | 'classic';
  /** Offset map bytes (Kafka's log.cleaner.dedupe.buffer.size; default 1 MiB, plenty for a lab). */
  dedupeBufferSize?: number;
  signal?: AbortSignal;
}

/**
 * Runs the lesson's current step (see the module comment).
 * @throws KlxError `invalid-argument` when the lesson does not exist or is done; the cleaner's errors.
 */
export function runLessonStep(dataDir: string, labId: string, opts: LessonRunOptions = {}): LessonRunResult {
  const state = lessonState(dataDir, labId);
  if (!state) throw new KlxError('invalid-argument', `the lesson "${labId}" has not been created`);
  const step = state.step;
  if (!step) throw new KlxError('invalid-argument', `the lesson "${labId}" is done: reset it to start again`);
  const dir = state.partitionDir!;
  const common = { dryRun: opts.dryRun ?? false, trashDir: state.trashDir, ...(opts.signal ? { signal: opts.signal } : {}), ...(opts.explain ? { explain: opts.explain } : {}) };
  let outcome: CleanerOutcome | null = null;
  const run = step.run;
  if (run.kind === 'compact') outcome = compact(dir, { ...common, now: run.now, rules: opts.rules ?? run.rules, dedupeBufferSize: opts.dedupeBufferSize ?? 1 << 20, ...(run.config ? { config: run.config } : {}) });
  else if (run.kind === 'retention') outcome = retention(dir, { ...common, now: run.now, ...(run.config ? { config: run.config } : {}) });
  const failed = outcome?.partitions.find((p) => p.error);
  if (failed) throw new KlxError(failed.error!.code, failed.error!.message, { file: failed.partitionDir });
  if (opts.dryRun) return { state, step, outcome };
  const after = stateOf(dataDir, state.lab, state.next + 1);
  if (after.step) playWrites(after.logDir, after.step);
  save(after);
  return { state: after, step, outcome };
}
