/**
 * Long work the UI started (count, holes, verify, search): its progress for the status bar and the
 * views, and cancellation (`job.cancel` through an AbortSignal). A job that fails is reported by
 * whoever started it; a cancelled one ends quietly.
 */
import { defineStore } from 'pinia';
import { reactive } from 'vue';
import type { JobMethodName, JobResult, Req } from '../../../src-shared/contract.ts';
import { client } from '../api/client.ts';

/** A job shown in the UI. */
export interface UiJob {
  key: string;
  method: JobMethodName;
  /** Partition folder it works on. */
  dir: string;
  label: string;
  phase: string;
  done: number;
  total: number | null;
  state: 'running' | 'done' | 'failed' | 'cancelled';
  startedAt: number;
  controller: AbortController;
}

let seq = 0;

/** How long the last ended job stays in the status bar, in ms. */
export const ENDED_JOB_SHOWN_MS = 4000;

export const useJobs = defineStore('jobs', () => {
  const jobs = reactive(new Map<string, UiJob>());

  /**
   * Runs a job method with progress tracking. Rejects with the job's error (`cancelled` when
   * cancelled). `key` identifies the job in the UI; a new job with the same key cancels the old one.
   */
  async function run<M extends JobMethodName>(method: M, request: Req<M> & { dir: string }, label: string, key = `${method}:${request.dir}:${++seq}`): Promise<JobResult<M>> {
    const old = jobs.get(key);
    if (old && old.state === 'running') old.controller.abort();
    const job: UiJob = reactive({ key, method, dir: request.dir, label, phase: 'starting', done: 0, total: null, state: 'running', startedAt: performance.now(), controller: new AbortController() }) as UiJob;
    jobs.set(key, job);
    try {
      const result = await client.runJob(method, request, {
        signal: job.controller.signal,
        onProgress: (p) => {
          job.phase = p.phase;
          job.done = p.done;
          job.total = p.total;
        },
      });
      job.state = 'done';
      return result;
    } catch (err) {
      job.state = job.controller.signal.aborted ? 'cancelled' : 'failed';
      throw err;
    } finally {
      // The status bar keeps only the last ended job, and only for a moment (it fades out).
      for (const [k, j] of jobs) if (j !== job && j.state !== 'running') jobs.delete(k);
      setTimeout(() => {
        if (jobs.get(key) === job && job.state !== 'running') jobs.delete(key);
      }, ENDED_JOB_SHOWN_MS);
    }
  }

  /** Cancels a running job. */
  function cancel(key: string): void {
    jobs.get(key)?.controller.abort();
  }

  /** The running job of `method` for `dir`, if any. */
  function runningFor(method: JobMethodName, dir: string): UiJob | undefined {
    for (const j of jobs.values()) if (j.method === method && j.dir === dir && j.state === 'running') return j;
    return undefined;
  }

  return { jobs, run, cancel, runningFor };
});
