/**
 * `dispatch`: method lookup, read-only refusal, request validation, error mapping and response
 * checking (full, and spot-checked long arrays), independent of any transport.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApi, createServerApi } from '../../../src-main/api/index.ts';
import { createDispatch, defaultResponseCheck, SAMPLE_SPREAD, sampleIndexes, type ResponseCheck } from '../../../src-main/api/core/dispatch.ts';
import type { Res } from '../../../src-shared/contract.ts';
import { buildPartition, rec, tempDir } from '../../support/log-builder.ts';
import type { Handlers } from '../../../src-main/api/core/types.ts';
import { KlxError } from '../../../src-main/engine/errors.ts';

const server = createServerApi({ version: '9.9.9', transport: 'bridge' });
const rw = { readOnly: false };

describe('dispatch', () => {
  it('answers app.info with the context and call facts', async () => {
    expect(await server.dispatch('app.info', {}, { readOnly: true, allowedRoots: ['/x'] })).toEqual({
      ok: true,
      result: { name: 'Kafka Log Explorer', version: '9.9.9', platform: process.platform, transport: 'bridge', readOnly: true, demoDir: null, fixedRoots: ['/x'] },
    });
  });

  it('refuses an unknown method with invalid-argument', async () => {
    for (const m of ['nope', 'toString', '__proto__', 42 as unknown as string]) {
      expect(await server.dispatch(m, {}, rw)).toMatchObject({ ok: false, error: { code: 'invalid-argument' } });
    }
  });

  it("refuses invalid arguments with invalid-argument and zod's message", async () => {
    const out = await server.dispatch('fs.complete', { partial: 5 }, rw);
    expect(out).toMatchObject({ ok: false, error: { code: 'invalid-argument', details: { issues: [{ path: ['partial'] }] } } });
    if (!out.ok) expect(out.error.message).toMatch(/^fs\.complete: .*partial/s);
    expect(await server.dispatch('app.info', undefined, rw)).toMatchObject({ ok: false, error: { code: 'invalid-argument' } });
    expect(await server.dispatch('app.info', [], rw)).toMatchObject({ ok: false, error: { code: 'invalid-argument' } });
    expect(await server.dispatch('fs.complete', { partial: 'a\0b' }, rw)).toMatchObject({ ok: false, error: { code: 'invalid-argument' } });
  });

  it('refuses write methods when read-only, before looking at the arguments', async () => {
    expect(await server.dispatch('demo.touch', { path: '/tmp' }, { readOnly: true })).toMatchObject({ ok: false, error: { code: 'read-only' } });
    expect(await server.dispatch('demo.touch', 'garbage', { readOnly: true })).toMatchObject({ ok: false, error: { code: 'read-only' } });
  });

  it('keeps a KlxError intact (code, file, position, details)', async () => {
    const handlers: Handlers = {
      ...createApi(server.ctx),
      'app.info': async () => {
        throw new KlxError('crc-mismatch', 'bad crc', { file: '0.log', position: 61, details: { baseOffset: '7' } });
      },
    };
    const dispatch = createDispatch(server.ctx, handlers);
    expect(await dispatch('app.info', {}, rw)).toEqual({
      ok: false,
      error: { code: 'crc-mismatch', message: '0.log: position 61: bad crc', file: '0.log', position: 61, details: { baseOffset: '7' } },
    });
  });

  it('maps Node I/O errors (ENOENT → not-found) and anything else to internal', async () => {
    const enoent = Object.assign(new Error('ENOENT: no such file'), { code: 'ENOENT', path: '/x' });
    const d1 = createDispatch(server.ctx, { ...createApi(server.ctx), 'app.info': async () => Promise.reject(enoent) });
    expect(await d1('app.info', {}, rw)).toMatchObject({ ok: false, error: { code: 'not-found', file: '/x' } });
    const d2 = createDispatch(server.ctx, { ...createApi(server.ctx), 'app.info': async () => Promise.reject(new TypeError('oops')) });
    expect(await d2('app.info', {}, rw)).toMatchObject({ ok: false, error: { code: 'internal', message: 'oops' } });
  });

  it('refuses an answer that breaks the contract with internal (a bug must not reach the renderer as data)', async () => {
    const broken = { ...createApi(server.ctx), 'app.info': (async () => ({ version: 1n })) as unknown as Handlers['app.info'] };
    const out = await createDispatch(server.ctx, broken)('app.info', {}, rw);
    expect(out).toMatchObject({ ok: false, error: { code: 'internal' } });
  });

  it('applies request defaults before the handler runs', async () => {
    let seen: unknown;
    const spy = { ...createApi(server.ctx), 'fs.complete': async (req: unknown) => ((seen = req), { dir: null, entries: [], truncated: false }) };
    await createDispatch(server.ctx, spy as Handlers)('fs.complete', { partial: '/' }, rw);
    expect(seen).toEqual({ partial: '/', limit: 200, hidden: false });
  });
});

describe('dispatch: how much of an answer is checked', () => {
  it('checks every element under the test runner and in development; spot-checks otherwise', () => {
    expect(defaultResponseCheck()).toBe('full'); // vitest sets NODE_ENV=test
    expect(defaultResponseCheck({})).toBe('sampled');
    expect(defaultResponseCheck({ NODE_ENV: 'production' })).toBe('sampled');
    expect(defaultResponseCheck({ NODE_ENV: 'development' })).toBe('full');
    expect(defaultResponseCheck({ VITEST: 'true' })).toBe('full');
    expect(defaultResponseCheck({ KLX_CHECK_RESPONSES: 'full' })).toBe('full');
    expect(defaultResponseCheck({ NODE_ENV: 'test', KLX_CHECK_RESPONSES: 'sampled' })).toBe('sampled');
  });

  it('samples the first, the last, the first of each kind and SAMPLE_SPREAD spread elements', () => {
    const items = Array.from({ length: 200 }, (_, i) => ({ kind: i === 57 || i === 140 ? 'hole' : 'record' }));
    const at = sampleIndexes(items, () => 0);
    // step 200 / 14: 0, 14, 28, 42, 57, 71, 85, 100, 114, 128, 142, 157, 171, 185; plus 199 (last); 57 is the first hole.
    expect(at).toEqual([0, 14, 28, 42, 57, 71, 85, 100, 114, 128, 142, 157, 171, 185, 199]);
    expect(SAMPLE_SPREAD).toBe(14);
    const late = sampleIndexes(items, () => 0.999);
    expect(late[0]).toBe(0);
    expect(late.at(-1)).toBe(199);
    expect(late).toContain(57);
    expect(new Set(late).size).toBe(late.length);
    expect(late.every((i, k) => k === 0 || i > late[k - 1]!)).toBe(true);
  });

  describe('on a real 300-row log.records page', () => {
    let dir: string;
    let logDir: string;
    let answer: Res<'log.records'>;
    const api = createServerApi({ version: '9.9.9', transport: 'bridge' });
    const call = { readOnly: true };

    beforeAll(async () => {
      logDir = join(tempDir('klx-dispatch-'), 'kafka-logs');
      // 300 records in 3-record batches, offsets 0..299, with a gap (a compacted-away batch) at 150..152.
      const batches = Array.from({ length: 101 }, (_, b) => ({ baseOffset: BigInt(b * 3), records: [0, 1, 2].map((i) => rec(`k-${b * 3 + i}`, `v-${b * 3 + i}`, 1_700_000_000_000 + b * 3 + i)) })).filter((b) => b.baseOffset !== 150n);
      dir = buildPartition(logDir, { topic: 'big', segments: [{ batches }] });
      expect((await api.dispatch('session.open', { path: logDir }, call)).ok).toBe(true);
      const env = await api.dispatch('log.records', { dir, limit: 300 }, call);
      if (!env.ok) throw new Error(env.error.message);
      answer = env.result as Res<'log.records'>;
      expect(answer.rows.length).toBe(301); // 300 records + the hole row
      expect(answer.rows.filter((r) => r.kind === 'hole').map((r) => [r.kind === 'hole' && r.from, r.kind === 'hole' && r.to])).toEqual([['150', '152']]);
    });
    afterAll(() => rmSync(join(logDir, '..'), { recursive: true, force: true }));

    const answering = (a: unknown, responseCheck: ResponseCheck) => createDispatch(api.ctx, { ...createApi(api.ctx), 'log.records': async () => a as Res<'log.records'> }, { responseCheck });
    const breakRow = (i: number): Res<'log.records'> => ({ ...answer, rows: answer.rows.map((r, k) => (k === i ? { ...r, offset: 'not an offset', from: 'nor this' } : r)) as Res<'log.records'>['rows'] });

    it('a sampled check answers the whole page, every row as the handler made it', async () => {
      const out = await answering(answer, 'sampled')('log.records', { dir }, call);
      expect(out.ok).toBe(true);
      if (!out.ok) return;
      const res = out.result as Res<'log.records'>;
      expect(res.rows).toHaveLength(301);
      expect(res.rows).toEqual(answer.rows);
      expect(res.rows[300]).toBe(answer.rows[300]);
      expect(res.logEndOffset).toBe('303');
    });

    it('a sampled check refuses a broken first row, last row or first row of a kind, naming its real index', async () => {
      const hole = answer.rows.findIndex((r) => r.kind === 'hole');
      expect(hole).toBe(150);
      for (const i of [0, 300, hole]) {
        const out = await answering(breakRow(i), 'sampled')('log.records', { dir }, call);
        expect(out).toMatchObject({ ok: false, error: { code: 'internal' } });
        if (!out.ok) expect(out.error.message).toContain(`rows[${i}]`);
      }
    });

    it('a sampled check refuses a broken top-level field; a full check refuses a broken row anywhere', async () => {
      expect(await answering({ ...answer, logEndOffset: 303 }, 'sampled')('log.records', { dir }, call)).toMatchObject({ ok: false, error: { code: 'internal' } });
      for (const i of [1, 77, 299]) {
        const out = await answering(breakRow(i), 'full')('log.records', { dir }, call);
        expect(out).toMatchObject({ ok: false, error: { code: 'internal' } });
        if (!out.ok) expect(out.error.message).toContain(`rows[${i}]`);
      }
    });

    it('the contract default of this test run is the full check', async () => {
      expect(await api.dispatch('app.info', {}, call)).toMatchObject({ ok: true });
      const out = await createDispatch(api.ctx, { ...createApi(api.ctx), 'log.records': async () => breakRow(77) })('log.records', { dir }, call);
      expect(out).toMatchObject({ ok: false, error: { code: 'internal' } });
    });
  });
});
