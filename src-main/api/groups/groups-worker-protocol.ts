/**
 * What the groups worker (`groups-worker.ts`) and its client (`groups-worker-client.ts`) pass each
 * other. A module of its own so that neither side imports the other.
 */
import type { ErrorCode } from '../../../src-shared/errors.ts';
import type { JobProgress } from '../../../src-shared/contract.ts';
import type { GroupsTaskArgs, GroupsTaskKind } from './groups-tasks.ts';

/** A message to the worker: run a task, cancel one, or drop loaded folders whose files changed. */
export type ToGroupsWorker =
  | { type: 'run'; id: number; kind: GroupsTaskKind; args: GroupsTaskArgs[GroupsTaskKind] }
  | { type: 'cancel'; id: number }
  | { type: 'invalidate'; dirs: string[] };

/** A `KlxError` as it crosses the thread boundary. */
export interface GroupsWorkerError {
  code: ErrorCode;
  reason: string;
  file?: string;
  position?: number;
  details?: Record<string, unknown>;
}

/** A message from the worker about task `id`: progress any number of times, then one result or error. */
export type FromGroupsWorker =
  | { type: 'progress'; id: number; progress: JobProgress }
  | { type: 'result'; id: number; result: unknown }
  | { type: 'error'; id: number; error: GroupsWorkerError };
