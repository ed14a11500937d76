/**
 * Issue 17, defect 9 (rest): no error the API returns carries a stack. Error paths are driven through
 * the bridge over HTTP (unknown method, bad arguments, a body that is not JSON, a missing folder, a
 * file where a folder is expected, bad SQL in a job) and through `dispatch` and the job manager with
 * internal errors whose message carries another error's stack (`new Error(String(err.stack))`, the
 * usual wrapping slip) or DuckDB's native `Stack Trace:`; no message may hold a stack frame line or
 * a path of our sources. Before `withoutStack` (src-shared/wire.ts), the wrapped-stack message went
 * out as it was.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBridge, type Bridge } from '../../src-main/bridge/server.ts';
import { createApi } from '../../src-main/api/index.ts';
import { createDispatch } from '../../src-main/api/core/dispatch.ts';
import type { Handlers } from '../../src-main/api/core/types.ts';
import type { KlxEvent } from '../../src-shared/contract.ts';
import { withoutStack, type WireErrorInfo } from '../../src-shared/wire.ts';
import { buildPartition, rec } from '../support/log-builder.ts';
import { post, rawRequest, tempDir } from './helpers.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const tmp = tempDir('klx-nostack-');
let bridge: Bridge;

/** What a stack would leave in a message: a frame line, or a path into our sources. */
function stackLeftIn(message: string): string[] {
  return message.split('\n').filter((l) => /^\s*at\s/.test(l) || l.includes(join(ROOT, 'src-main')) || /\.ts:\d+:\d+/.test(l) || /Stack Trace/i.test(l));
}

beforeAll(async () => {
  const rendererDir = join(tmp.dir, 'renderer');
  mkdirSync(rendererDir, { recursive: true });
  writeFileSync(join(rendererDir, 'index.html'), '<!doctype html><title>klx</title>');
  buildPartition(join(tmp.dir, 'logs'), { topic: 'orders', segments: [{ batches: [{ records: [rec('k', 'v')] }] }] });
  writeFileSync(join(tmp.dir, 'plain-file'), 'not a folder');
  bridge = await startBridge({ readOnly: false, roots: [], rendererDir, homeDir: tmp.dir, dataDir: join(tmp.dir, 'app-data'), jobs: { progressIntervalMs: 0 } });
});

afterAll(async () => {
  await bridge.close();
  tmp.remove();
});

describe('errors without stacks', () => {
  it('withoutStack drops JavaScript frames and a DuckDB Stack Trace, keeping what the error says', () => {
    let stack = '';
    try {
      JSON.parse('{');
    } catch (err) {
      stack = (err as Error).stack!;
    }
    expect(stack).toMatch(/\n\s+at /);
    expect(withoutStack(`cannot read the index: ${stack}`)).toBe(`cannot read the index: ${stack.split('\n')[0]}`);
    expect(withoutStack('INTERNAL Error: Attempted to access index 3 within vector of size 3\n\nStack Trace:\n\n/lib/libduckdb.so(+0x1aa) [0x7f]\n')).toBe('INTERNAL Error: Attempted to access index 3 within vector of size 3');
    expect(withoutStack('Binder Error: column "x" not found\n\nLINE 1: SELECT x FROM records\n               ^')).toBe('Binder Error: column "x" not found\n\nLINE 1: SELECT x FROM records\n               ^');
    expect(withoutStack('a message that mentions what it was at 5 o\'clock')).toBe('a message that mentions what it was at 5 o\'clock');
  });

  it('error answers of the bridge over HTTP hold no stack', async () => {
    const answers: WireErrorInfo[] = [];
    const call = async (method: string, body: unknown) => {
      const r = await post(bridge, method, body);
      expect(r.body.ok).toBe(false);
      if (!r.body.ok) answers.push(r.body.error as WireErrorInfo);
    };
    await call('no.such.method', {});
    await call('log.open', { path: 5 });
    await call('log.open', { path: join(tmp.dir, 'missing') });
    await call('log.open', { path: join(tmp.dir, 'plain-file') });
    await call('log.partition', { dir: join(tmp.dir, 'logs', 'orders-0') }); // not opened yet
    const raw = await rawRequest(bridge.port, { method: 'POST', path: '/api/log.open', headers: { 'Content-Type': 'application/json', 'X-Klx-Token': bridge.token, Host: `127.0.0.1:${bridge.port}` }, body: '{"path":' });
    expect(raw.status).toBe(400);
    answers.push((JSON.parse(raw.text) as { error: WireErrorInfo }).error);
    expect(answers.map((e) => e.code)).toEqual(['invalid-argument', 'invalid-argument', 'not-found', expect.any(String), expect.any(String), 'invalid-argument']);
    for (const e of answers) expect(stackLeftIn(e.message), e.message).toEqual([]);
  });

  it('a failed job (bad SQL) ends with an error that holds no stack', async () => {
    const ends: KlxEvent[] = [];
    const off = bridge.api.ctx.events.subscribe((e) => void (e.type === 'job.end' && ends.push(e)));
    try {
      expect((await post(bridge, 'log.open', { path: join(tmp.dir, 'logs') })).body.ok).toBe(true);
      const r = await post(bridge, 'sql.query', { path: join(tmp.dir, 'logs'), sql: 'SELECT nope FROM records' });
      expect(r.body.ok).toBe(true);
      const { jobId } = (r.body as { ok: true; result: { jobId: string } }).result;
      for (let i = 0; i < 600 && !ends.some((e) => e.type === 'job.end' && e.jobId === jobId); i++) await new Promise((res) => setTimeout(res, 50));
      const end = ends.find((e) => e.type === 'job.end' && e.jobId === jobId) as Extract<KlxEvent, { type: 'job.end' }> | undefined;
      expect(end?.ok).toBe(false);
      const error = (end as { error: WireErrorInfo }).error;
      expect(error.message).toMatch(/nope/);
      expect(stackLeftIn(error.message)).toEqual([]);
    } finally {
      off();
    }
  }, 60_000);

  it('internal errors whose message carries a stack lose it, in a call and in a job', async () => {
    let inner = '';
    try {
      (null as unknown as { x: number }).x;
    } catch (err) {
      inner = (err as Error).stack!;
    }
    expect(inner).toContain(fileURLToPath(import.meta.url));
    const ctx = bridge.api.ctx;
    const handlers: Handlers = {
      ...createApi(ctx),
      'app.info': async () => {
        throw new Error(`wrapped: ${inner}`);
      },
      'log.verify': async () => {
        throw new Error(`INTERNAL Error: Attempted to access index 3 within vector of size 3\n\nStack Trace:\n\n${join(ROOT, 'node_modules/@duckdb/node-bindings-linux-x64/libduckdb.so')}(+0x1aa) [0x7f]`);
      },
    };
    const dispatch = createDispatch(ctx, handlers);
    const out = await dispatch('app.info', {}, { readOnly: false });
    expect(out).toEqual({ ok: false, error: { code: 'internal', message: `wrapped: ${inner.split('\n')[0]}` } });
    const ends: KlxEvent[] = [];
    const off = ctx.events.subscribe((e) => void (e.type === 'job.end' && ends.push(e)));
    try {
      const started = await dispatch('log.verify', { dir: join(tmp.dir, 'logs', 'orders-0') }, { readOnly: false });
      expect(started.ok).toBe(true);
      const { jobId } = (started as { ok: true; result: { jobId: string } }).result;
      for (let i = 0; i < 100 && !ends.some((e) => e.type === 'job.end' && e.jobId === jobId); i++) await new Promise((res) => setTimeout(res, 20));
      const end = ends.find((e) => e.type === 'job.end' && e.jobId === jobId) as { ok: boolean; error: WireErrorInfo };
      expect(end.error).toEqual({ code: 'internal', message: 'INTERNAL Error: Attempted to access index 3 within vector of size 3' });
    } finally {
      off();
    }
  });
});
