/**
 * Runs long work as jobs. `start` answers a job id at once and runs the body on a later tick;
 * the body reports progress (throttled to one `job.progress` event per `progressIntervalMs` per
 * job, phase changes and completion always sent) and ends with exactly one `job.end` event.
 *
 * Cancellation: `cancel(jobId)` aborts the job's `AbortSignal`. A body that then throws (anything)
 * ends the job with code `cancelled`; a body that completes anyway ends normally with its result
 * (work that was done is not reported as undone). Ended jobs are kept for `list()` up to
 * `historyLimit`, oldest dropped first.
 */
import { randomUUID } from 'node:crypto';
import type { JobEndEvent, JobProgress, JobSummary } from '../../../src-shared/contract.ts';
import type { ErrorInfo } from '../../../src-shared/errors.ts';
import { toWireError } from '../../../src-shared/wire.ts';
import { KlxError, toErrorInfo } from '../../engine/errors.ts';
import type { EventHub } from './events.ts';

/** What a job body receives. */
export interface JobRun {
  readonly jobId: string;
  readonly signal: AbortSignal;
  progress(progress: JobProgress): void;
}

/** Options of the {@link JobManager}. */
export interface JobManagerOptions {
  /** Minimum milliseconds between two progress events of one job (default 50; 0 sends every report). */
  progressIntervalMs?: number;
  /** How many ended jobs `list()` keeps (default 100). */
  historyLimit?: number;
}

interface JobRecord {
  summary: JobSummary;
  controller: AbortController;
  ended: Promise<JobEndEvent>;
  lastSentAt: number;
  pending?: JobProgress;
  timer?: ReturnType<typeof setTimeout>;
}

/** Starts, tracks and cancels jobs; emits their events on the hub. */
export class JobManager {
  private readonly jobs = new Map<string, JobRecord>();
  private readonly progressIntervalMs: number;
  private readonly historyLimit: number;

  constructor(
    private readonly events: EventHub,
    options: JobManagerOptions = {},
  ) {
    this.progressIntervalMs = options.progressIntervalMs ?? 50;
    this.historyLimit = options.historyLimit ?? 100;
  }

  /**
   * Starts `body` as a job of `method` and returns its id. `check` validates the body's result
   * (e.g. against the method's `result` schema) and returns what is sent; if it throws, the job
   * fails with `internal`.
   */
  start(method: string, body: (run: JobRun) => Promise<unknown>, check: (result: unknown) => unknown = (r) => r): string {
    const jobId = randomUUID();
    const controller = new AbortController();
    const summary: JobSummary = {
      jobId,
      method,
      state: 'running',
      phase: 'starting',
      done: 0,
      total: null,
      bytes: 0,
      startedAt: new Date().toISOString(),
      endedAt: null,
      error: null,
    };
    const record: JobRecord = { summary, controller, ended: undefined as unknown as Promise<JobEndEvent>, lastSentAt: 0 };
    const run: JobRun = { jobId, signal: controller.signal, progress: (p) => this.progress(record, p) };
    this.jobs.set(jobId, record);
    // Start on a later macrotask, so the `{jobId}` answer leaves before the first event.
    record.ended = new Promise<void>((r) => setImmediate(r))
      .then(() => body(run))
      .then(
        (result) => {
          try {
            return this.end(record, { ok: true, result: check(result) });
          } catch (err) {
            return this.end(record, { ok: false, error: { code: 'internal', message: `${method}: the job's result does not match the contract: ${errorText(err)}` } });
          }
        },
        (err: unknown) => this.end(record, { ok: false, error: this.failure(record, err) }),
      );
    return jobId;
  }

  /**
   * Requests cancellation. Returns true when the job was running (it will end with `cancelled`
   * unless it completes first), false when it had already ended. Unknown id: throws `not-found`.
   */
  cancel(jobId: string): boolean {
    const record = this.jobs.get(jobId);
    if (!record) throw new KlxError('not-found', `no job with id ${jobId}`);
    if (record.summary.state !== 'running') return false;
    record.controller.abort(new KlxError('cancelled', `job ${jobId} (${record.summary.method}) cancelled`));
    return true;
  }

  /** Running and recently ended jobs, in start order (copies). */
  list(): JobSummary[] {
    return [...this.jobs.values()].map((r) => ({ ...r.summary }));
  }

  /** Resolves with the job's `job.end` event. Unknown id: throws `not-found`. */
  wait(jobId: string): Promise<JobEndEvent> {
    const record = this.jobs.get(jobId);
    if (!record) return Promise.reject(new KlxError('not-found', `no job with id ${jobId}`));
    return record.ended;
  }

  /** Cancels every running job and waits for all to end (on window close or bridge shutdown). */
  async shutdown(): Promise<void> {
    const running = [...this.jobs.values()].filter((r) => r.summary.state === 'running');
    for (const r of running) this.cancel(r.summary.jobId);
    await Promise.all(running.map((r) => r.ended));
  }

  private progress(record: JobRecord, p: JobProgress): void {
    if (record.summary.state !== 'running') return;
    const phaseChanged = p.phase !== record.summary.phase;
    Object.assign(record.summary, { phase: p.phase, done: p.done, total: p.total, bytes: p.bytes });
    const now = Date.now();
    const complete = p.total !== null && p.done >= p.total;
    if (phaseChanged || complete || now - record.lastSentAt >= this.progressIntervalMs) {
      this.sendProgress(record, p, now);
      return;
    }
    record.pending = p; // trailing event: the latest state is always sent eventually
    record.timer ??= setTimeout(() => {
      record.timer = undefined;
      if (record.pending && record.summary.state === 'running') this.sendProgress(record, record.pending, Date.now());
    }, this.progressIntervalMs - (now - record.lastSentAt));
  }

  private sendProgress(record: JobRecord, p: JobProgress, now: number): void {
    record.pending = undefined;
    if (record.timer) clearTimeout(record.timer);
    record.timer = undefined;
    record.lastSentAt = now;
    const { jobId, method } = record.summary;
    this.events.emit({ type: 'job.progress', jobId, method, phase: p.phase, done: p.done, total: p.total, bytes: p.bytes });
  }

  private failure(record: JobRecord, err: unknown): ErrorInfo {
    if (record.controller.signal.aborted) {
      const reason = record.controller.signal.reason;
      return reason instanceof KlxError ? reason.toInfo() : { code: 'cancelled', message: `job ${record.summary.jobId} cancelled` };
    }
    return toErrorInfo(err);
  }

  private end(record: JobRecord, outcome: { ok: true; result: unknown } | { ok: false; error: ErrorInfo }): JobEndEvent {
    if (record.pending) this.sendProgress(record, record.pending, Date.now());
    const { jobId, method } = record.summary;
    record.summary.endedAt = new Date().toISOString();
    let event: JobEndEvent;
    if (outcome.ok) {
      record.summary.state = 'succeeded';
      event = { type: 'job.end', jobId, method, ok: true, result: outcome.result } as JobEndEvent; // result checked by `check`
    } else {
      const error = toWireError(outcome.error);
      record.summary.state = error.code === 'cancelled' ? 'cancelled' : 'failed';
      record.summary.error = error;
      event = { type: 'job.end', jobId, method, ok: false, error };
    }
    this.trimHistory();
    this.events.emit(event);
    return event;
  }

  private trimHistory(): void {
    const ended = [...this.jobs.values()].filter((r) => r.summary.state !== 'running');
    for (const r of ended.slice(0, Math.max(0, ended.length - this.historyLimit))) this.jobs.delete(r.summary.jobId);
  }
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
