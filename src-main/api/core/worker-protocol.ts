/**
 * What a {@link WorkerPool} (`worker-pool.ts`, main side) and a task worker (`worker-tasks.ts`,
 * worker side) pass each other. A module of its own so that neither side imports the other.
 *
 * Main → worker: `run` (one task: `id`, the task table's `kind`, its structured-clonable `args`) and
 * `cancel` (abort the task's signal). Worker → main: `ready` once after start, then per task any
 * number of `progress` and exactly one `result` or `error`. An `error` carries a `KlxError`'s code,
 * reason, file, byte position and details (never a stack), rebuilt as a `KlxError` on the main side.
 */
import type { ErrorCode } from '../../../src-shared/errors.ts';
import type { JobProgress } from '../../../src-shared/contract.ts';

/** A typed error as it crosses the thread boundary. */
export interface WorkerError {
  code: ErrorCode;
  reason: string;
  file?: string;
  position?: number;
  details?: Record<string, unknown>;
}

/** A message from the main thread to a task worker. */
export type ToWorker =
  /** `maxInflatedBytes`: the sending thread's decompression bound (bytes, null = default), applied before the task runs. */
  | { type: 'run'; id: number; kind: string; args: unknown; maxInflatedBytes: number | null }
  | { type: 'cancel'; id: number };

/** A message from a task worker to the main thread. */
export type FromWorker =
  | { type: 'ready' }
  | { type: 'progress'; id: number; progress: JobProgress }
  | { type: 'result'; id: number; result: unknown }
  | { type: 'error'; id: number; error: WorkerError };
