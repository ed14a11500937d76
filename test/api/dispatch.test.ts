/**
 * `dispatch`: method lookup, read-only refusal, request validation, error mapping and response
 * checking, independent of any transport.
 */
import { describe, expect, it } from 'vitest';
import { createApi, createServerApi } from '../../src-main/api/index.ts';
import { createDispatch } from '../../src-main/api/dispatch.ts';
import type { Handlers } from '../../src-main/api/types.ts';
import { KlxError } from '../../src-main/engine/errors.ts';

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
