/**
 * The segment tasks the scan worker (`scan-worker.ts`) serves, wrapped for the pool's protocol:
 * progress goes out as bytes of `.log` read in the segment, cancel comes in as the run's signal.
 */
import { verifySegmentTask, type VerifySegmentArgs } from '../../engine/log/verify-parallel.ts';
import { holesSegmentTask, type HolesSegmentArgs } from '../../engine/log/holes.ts';
import type { SegmentTaskKind } from '../../engine/log/segment-tasks.ts';
import type { TaskFn, TaskRun } from '../core/worker-tasks.ts';
import { countSegmentTask, type CountSegmentArgs } from './log-jobs.ts';
import { searchSegmentTask, type SearchSegmentArgs } from './log-search.ts';

/** Progress of a segment task: `bytes` read so far in its segment. */
const reporter = (run: TaskRun, phase: string) => (bytes: number) => run.progress({ phase, done: bytes, total: null, bytes });

/** The scan worker's task table. */
export const segmentScanTasks: Record<SegmentTaskKind, TaskFn> = {
  verifySegment: (a: VerifySegmentArgs, run: TaskRun) => verifySegmentTask(a, { signal: run.signal, onBytes: reporter(run, 'verifying') }),
  countSegment: (a: CountSegmentArgs, run: TaskRun) => countSegmentTask(a, { signal: run.signal, onProgress: (p) => reporter(run, 'counting records')(p.done) }),
  holesSegment: (a: HolesSegmentArgs, run: TaskRun) => holesSegmentTask(a, { signal: run.signal, onBytes: reporter(run, 'finding holes') }),
  searchSegment: (a: SearchSegmentArgs, run: TaskRun) => searchSegmentTask(a, { signal: run.signal, onBytes: reporter(run, 'searching') }),
};
