/**
 * What the cleaner worker (`cleaner-worker.ts`) and its runner (`cleaner-worker-runner.ts`) pass
 * each other: the worker's start data and its messages back (the protocol is described in
 * `cleaner-worker.ts`). A module of its own so that neither side imports the other.
 */
import type { ErrorCode } from '../../../src-shared/errors.ts';
import type { JobProgress } from '../../../src-shared/contract.ts';
import type { CleanerTask, CleanerTaskResult } from './cleanup-task.ts';

/** What the runner passes as `workerData`. */
export interface CleanerWorkerData {
  task: CleanerTask;
  cancel: SharedArrayBuffer;
  /** A private temporary folder for this worker (removed by the runner when the worker ends). */
  tmpDir: string;
}

/** A message from the worker. */
export type WorkerMessage =
  | { type: 'progress'; progress: JobProgress }
  | { type: 'result'; result: CleanerTaskResult }
  | { type: 'error'; error: { code: ErrorCode; reason: string; file?: string; position?: number; details?: Record<string, unknown> } };
