/**
 * The scan worker: the module each thread of the segment-scan pool (`scan-pool.ts`) runs. A task
 * reads ONE segment of a partition for a scan split over segments (issue 16: verify, counts, holes, search;
 * `engine/log/segment-tasks.ts`); the scan's own thread merges the segments' results in order.
 * Reads only. Built as a main-process entry (`electron.vite.config.ts`: `out/main/scan-worker.js`);
 * run from TypeScript source under tsx, vitest and Playwright.
 */
import { serveTasks } from '../core/worker-tasks.ts';
import { segmentScanTasks } from './scan-tasks.ts';

serveTasks(segmentScanTasks);
