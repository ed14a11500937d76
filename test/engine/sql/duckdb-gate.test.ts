/**
 * The DuckDB gate (issue 17, hardening item 1: the native abort): DuckDB's native calls are
 * counted while in flight in a thread, every module takes DuckDB through
 * `engine/sql/duckdb.ts` (which counts them), and no module ends a worker thread except through
 * `stopWorker` (which never ends one while a DuckDB call is in flight). The abort itself is
 * reproduced in `test/api/core/duckdb-worker-stop.test.ts`.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { DuckDBInstance } from '../../../src-main/engine/sql/duckdb.ts';
import { callsInFlight, DISCONNECT_TAIL_MS, gated, interruptDuckDb } from '../../../src-main/engine/sql/duckdb-gate.ts';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? sources(join(dir, e.name)) : /\.(ts|mts|vue)$/.test(e.name) ? [join(dir, e.name)] : []));
}

describe('DuckDB gate', () => {
  it("every function of the binding @duckdb/node-api uses is the gate's wrapper; enums and constants are the binding's own", () => {
    const fromApi = createRequire(createRequire(import.meta.url).resolve('@duckdb/node-api'));
    const seen = fromApi('@duckdb/node-bindings') as Record<string, unknown>;
    const native = Object.getPrototypeOf(seen) as Record<string, unknown>;
    const fns = Object.getOwnPropertyNames(native).filter((n) => typeof native[n] === 'function');
    expect(fns.length).toBeGreaterThan(300);
    expect(fns.filter((n) => seen[n] === native[n] || !Object.hasOwn(seen, n))).toEqual([]);
    expect(seen.Type).toBe(native.Type);
    expect((seen.library_version as () => string)()).toMatch(/^v1\./);
  });

  it('a wrapped call counts while in flight: a synchronous one until it returns, an asynchronous one until its promise settles', async () => {
    const base = callsInFlight();
    const sync = gated((x: number) => ({ x, during: callsInFlight() }));
    expect(sync(7)).toEqual({ x: 7, during: base + 1 });
    expect(callsInFlight()).toBe(base);
    let finish!: (v: string) => void;
    const pending = gated(() => new Promise<string>((r) => (finish = r)))();
    expect(callsInFlight()).toBe(base + 1);
    finish('done');
    expect(await pending).toBe('done');
    await Promise.resolve();
    expect(callsInFlight()).toBe(base);
  });

  it('a query is counted while in flight and no longer once it answered; an interrupt ends a long one; an open connection counts until DISCONNECT_TAIL_MS after its disconnect', async () => {
    const before = callsInFlight();
    const instance = await DuckDBInstance.create(':memory:');
    const connection = await instance.connect();
    let closed = false;
    try {
      const base = callsInFlight();
      expect(base).toBe(before + 1); // the open connection
      const p = connection.runAndReadAll('SELECT 42::BIGINT AS v');
      expect(callsInFlight()).toBe(base + 1);
      expect((await p).getRows()).toEqual([[42n]]);
      expect(callsInFlight()).toBe(base);
      const long = connection.run('SELECT count(*) FROM range(10000000000) t(i) WHERE i % 7 = 3');
      expect(callsInFlight()).toBe(base + 1);
      await new Promise((r) => setTimeout(r, 30));
      expect(interruptDuckDb()).toBeGreaterThanOrEqual(1);
      await expect(long).rejects.toThrow(/interrupt/i);
      expect(callsInFlight()).toBe(base);
      connection.closeSync();
      closed = true;
      expect(callsInFlight()).toBe(base); // a scalar function call may still come: see DISCONNECT_TAIL_MS
      await new Promise((r) => setTimeout(r, DISCONNECT_TAIL_MS + 50));
      expect(callsInFlight()).toBe(before);
    } finally {
      if (!closed) connection.closeSync();
      instance.closeSync();
    }
  });

  it('a call that throws synchronously leaves the count as it was', () => {
    const base = callsInFlight();
    expect(() =>
      gated(() => {
        throw new TypeError('bad argument');
      })(),
    ).toThrow('bad argument');
    expect(callsInFlight()).toBe(base);
  });

  it('only engine/sql/duckdb.ts loads @duckdb/node-api, and only engine/sql/duckdb-gate.ts ends a worker thread (terminate)', () => {
    const loads: string[] = [];
    const terminates: string[] = [];
    for (const f of sources(join(ROOT, 'src-main'))) {
      const rel = relative(ROOT, f);
      const text = readFileSync(f, 'utf8');
      const code = text.replace(/^\s*(\*|\/\/).*$/gm, '');
      if (/^import (?!type )[^;]*from '@duckdb\/node-api'|import\('@duckdb\/node-api'\)|require\('@duckdb\/node-api'\)/m.test(code) && rel !== 'src-main/engine/sql/duckdb.ts') loads.push(rel);
      if (/\.terminate\(\)/.test(code) && rel !== 'src-main/engine/sql/duckdb-gate.ts') terminates.push(rel);
    }
    expect(loads).toEqual([]);
    expect(terminates).toEqual([]);
  });
});
