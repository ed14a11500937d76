/**
 * `api/`: the handlers implementing the contract, one folder per contract domain (`log/log.ts` holds
 * the `log.*` handlers, its helpers beside it), and `core/` for what they all share.
 *
 * The handler registry. `createApi(ctx)` returns one handler per contract method, assembled from
 * the domains' handler files (`log/log.ts`, `cleanup/cleanup.ts`, `job/job.ts`, ...); the return type
 * {@link Handlers} makes a missing domain or method a compile error, and each domain's type
 * ({@link DomainHandlers}) makes a missing or unknown method of that domain one too.
 *
 * `createServerApi(options)` builds a whole context (event hub, job manager, session) plus its
 * `dispatch`; the Electron main process and the bridge each make one.
 */
import { homedir } from 'node:os';
import { appHandlers } from './app/app.ts';
import { cleanupHandlers } from './cleanup/cleanup.ts';
import { decodeHandlers } from './decode/decode.ts';
import { demoHandlers, testMethodsFromEnv } from './demo/demo.ts';
import { editHandlers } from './edit/edit.ts';
import { createDispatch, type Dispatch } from './core/dispatch.ts';
import { EventHub } from './core/events.ts';
import { fsHandlers } from './fs/fs.ts';
import { groupsHandlers } from './groups/groups.ts';
import { JobManager, type JobManagerOptions } from './core/job-manager.ts';
import { jobHandlers } from './job/job.ts';
import { lessonsHandlers } from './lessons/lessons.ts';
import { logHandlers } from './log/log.ts';
import { sessionHandlers } from './session/session.ts';
import { sqlHandlers } from './sql/sql.ts';
import { SessionState, type RecentStore } from './core/session-state.ts';
import { configureDecodeChoices } from './core/folder-decoders.ts';
import { startFolderWatchers, type FolderWatcherOptions } from './core/folder-watcher.ts';
import type { DecodeChoicesStore } from './core/decode-choices-store.ts';
import type { ApiContext, Handlers } from './core/types.ts';

/** Every contract method's handler, bound to `ctx`. */
export function createApi(ctx: ApiContext, testMethods = testMethodsFromEnv()): Handlers {
  return {
    ...appHandlers(ctx),
    ...fsHandlers(ctx),
    ...sessionHandlers(ctx),
    ...jobHandlers(ctx),
    ...demoHandlers(ctx, testMethods),
    ...logHandlers(ctx),
    ...cleanupHandlers(ctx),
    ...sqlHandlers(ctx),
    ...editHandlers(ctx),
    ...groupsHandlers(ctx),
    ...lessonsHandlers(ctx),
    ...decodeHandlers(ctx),
  };
}

/** Options of {@link createServerApi}. */
export interface ServerApiOptions {
  version: string;
  transport: ApiContext['transport'];
  demoDir?: string;
  /** Default `os.homedir()`. */
  homeDir?: string;
  /** Default: in memory. */
  recent?: RecentStore;
  jobs?: JobManagerOptions;
  /** Where format choices are persisted per opened folder. Default: in memory. */
  decodeChoices?: DecodeChoicesStore;
  /**
   * Follow the opened folders on disk (`folder-watcher.ts`): a watcher per opened folder reports
   * changes made outside the app. Default off (the bridge and the Electron app turn it on).
   */
  watch?: FolderWatcherOptions | false;
  /**
   * Whether the test-only methods (`demo.*`: a sleeping job, touching a file's mtime) run; otherwise
   * they answer `test-only`. Default: KLX_TEST_METHODS=1 in the environment (set by vitest's config
   * and the e2e fixtures), else off.
   */
  testMethods?: boolean;
}

/** A context, its handlers and its dispatch. */
export interface ServerApi {
  readonly ctx: ApiContext;
  readonly handlers: Handlers;
  readonly dispatch: Dispatch;
}

/** Builds a fresh context (events, jobs, session) with its handlers and dispatch. */
export function createServerApi(options: ServerApiOptions): ServerApi {
  const events = new EventHub();
  const ctx: ApiContext = {
    version: options.version,
    transport: options.transport,
    demoDir: options.demoDir,
    homeDir: options.homeDir ?? homedir(),
    events,
    jobs: new JobManager(events, options.jobs),
    session: new SessionState(events, options.recent),
  };
  if (options.decodeChoices) configureDecodeChoices(ctx, options.decodeChoices);
  if (options.watch) startFolderWatchers(ctx, options.watch);
  const handlers = createApi(ctx, options.testMethods ?? testMethodsFromEnv());
  return { ctx, handlers, dispatch: createDispatch(ctx, handlers) };
}

export type { ApiContext, CallContext, Handlers, JobContext, DomainHandlers, Handler } from './core/types.ts';
export type { Dispatch, DispatchOptions } from './core/dispatch.ts';
