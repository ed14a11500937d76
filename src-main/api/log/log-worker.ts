/**
 * The log worker: the module each thread of the log domain's {@link WorkerPool} runs
 * (`core/worker-pool.ts`), so that the explorer's heavy reads (verify, hole scans, counts, search,
 * records and batch pages, time lookups, record bytes) never run on the event loop that answers
 * requests. Its tasks are in `log-tasks.ts`; the protocol is `core/worker-protocol.ts`.
 *
 * Built as a main-process entry (`electron.vite.config.ts`: `out/main/log-worker.js`); run from
 * TypeScript source under tsx, vitest and Playwright (the pool registers tsx first).
 */
import { serveTasks } from '../core/worker-tasks.ts';
import { logTasks } from './log-tasks.ts';

serveTasks(logTasks);
