/**
 * The one door to DuckDB: every module of the product takes `@duckdb/node-api` from here (a test
 * in `test/engine/sql/duckdb-gate.test.ts` checks that no other module of `src-main` imports it).
 *
 * Before `@duckdb/node-api` is loaded in a thread, its native binding (`@duckdb/node-bindings`) is
 * replaced in the thread's module cache by a copy whose calls are counted in the thread's gate
 * while in flight (`duckdb-gate.ts`: a synchronous call until it returns, an asynchronous one, such
 * as open, connect, query, prepare, execute or fetching a chunk, until its promise settles), and
 * whose connections are registered so that the thread can interrupt them all. Nothing else
 * changes: the enums and constants are the binding's own. This is what lets a worker pool end a thread
 * that uses DuckDB without aborting the process (see `duckdb-gate.ts`).
 *
 * When `@duckdb/node-api` was already loaded in this thread by someone else (a test that imports it
 * directly), its calls cannot be counted: the thread's gate is then marked uncounted (such a thread
 * is never ended while it runs).
 */
import { createRequire } from 'node:module';
import type * as Api from '@duckdb/node-api';
import { gated, gateUncounted, releaseConnection, trackConnection } from './duckdb-gate.ts';

type Binding = Record<string, unknown> & { interrupt: (connection: object) => void };

function loadApi(): typeof Api {
  const require = createRequire(import.meta.url);
  const apiPath = require.resolve('@duckdb/node-api');
  if (require.cache[apiPath]) {
    if (!(require.cache[apiPath] as unknown as { klxCounted?: boolean }).klxCounted) gateUncounted();
    return require(apiPath) as typeof Api;
  }
  const bindingsPath = createRequire(apiPath).resolve('@duckdb/node-bindings');
  const native = require(bindingsPath) as Binding;
  const counted: Binding = Object.create(native) as Binding;
  for (const name of Object.getOwnPropertyNames(native)) {
    const fn = native[name];
    if (typeof fn !== 'function') continue; // enums and constants: the binding's own, through the prototype
    const call = gated(fn as (...args: unknown[]) => unknown);
    const wrapped =
      name === 'connect'
        ? (...args: unknown[]) =>
            (call(...args) as Promise<object>).then((connection) => {
              trackConnection(connection, (c) => native.interrupt(c));
              return connection;
            })
        : name === 'disconnect_sync'
          ? (...args: unknown[]) => {
              try {
                return call(...args);
              } finally {
                releaseConnection(args[0] as object); // disconnected (or never connected): nothing of it calls this thread
              }
            }
          : call;
    // defineProperty: the binding's own members are read-only, and assigning would hit that through the prototype.
    Object.defineProperty(counted, name, { value: wrapped, enumerable: true });
  }
  require.cache[bindingsPath]!.exports = counted;
  const api = require(apiPath) as typeof Api;
  (require.cache[apiPath] as unknown as { klxCounted?: boolean }).klxCounted = true;
  return api;
}

const api = loadApi();

export const { DuckDBInstance, DuckDBDataChunk, JSDuckDBValueConverter, StatementType, BIGINT, BLOB, INTEGER, LIST, STRUCT, VARCHAR } = api;
export type DuckDBInstance = Api.DuckDBInstance;
export type DuckDBDataChunk = Api.DuckDBDataChunk;
export type StatementType = Api.StatementType;
export type { DuckDBAppender, DuckDBConnection, DuckDBResult, DuckDBType, JS } from '@duckdb/node-api';
