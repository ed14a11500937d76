/**
 * "Open for writing": `session.setWriteMode` and `SessionState.resolveForWriting`, the gate every
 * write method (cleanup.run, edit.append, ...) passes before touching a file.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createServerApi } from '../../../src-main/api/index.ts';
import type { KlxEvent } from '../../../src-shared/contract.ts';
import { tempDir } from '../helpers.ts';

const tmp = tempDir('klx-write-mode-');
afterAll(() => tmp.remove());

describe('session.setWriteMode', () => {
  it('starts off, switches on and off, and emits session.writeMode once per change', async () => {
    const server = createServerApi({ version: '1', transport: 'bridge' });
    const seen: KlxEvent[] = [];
    server.ctx.events.subscribe((e) => seen.push(e));
    expect(await server.dispatch('session.folders', {}, { readOnly: false })).toMatchObject({ ok: true, result: { writeMode: false } });
    expect(await server.dispatch('session.setWriteMode', { enabled: true }, { readOnly: false })).toEqual({ ok: true, result: { enabled: true } });
    expect(await server.dispatch('session.setWriteMode', { enabled: true }, { readOnly: false })).toEqual({ ok: true, result: { enabled: true } });
    expect(await server.dispatch('session.folders', {}, { readOnly: false })).toMatchObject({ ok: true, result: { writeMode: true } });
    expect(await server.dispatch('session.setWriteMode', { enabled: false }, { readOnly: false })).toEqual({ ok: true, result: { enabled: false } });
    expect(seen.filter((e) => e.type === 'session.writeMode')).toEqual([
      { type: 'session.writeMode', enabled: true },
      { type: 'session.writeMode', enabled: false },
    ]);
  });

  it('cannot be switched on in a read-only window, but can always be switched off', async () => {
    const server = createServerApi({ version: '1', transport: 'bridge' });
    expect(await server.dispatch('session.setWriteMode', { enabled: true }, { readOnly: true })).toMatchObject({ ok: false, error: { code: 'read-only' } });
    expect(await server.dispatch('session.setWriteMode', { enabled: false }, { readOnly: true })).toEqual({ ok: true, result: { enabled: false } });
  });
});

describe('SessionState.resolveForWriting', () => {
  it('refuses with read-only naming the folder until write mode is on, then resolves like resolve', async () => {
    const dir = join(tmp.dir, 'logs', 'orders-0');
    mkdirSync(dir, { recursive: true });
    const server = createServerApi({ version: '1', transport: 'bridge' });
    const call = { readOnly: false };
    const root = await server.ctx.session.open(join(tmp.dir, 'logs'), call);
    await expect(server.ctx.session.resolveForWriting(dir, call)).rejects.toMatchObject({ code: 'read-only', file: join(root, 'orders-0') });
    server.ctx.session.setWriteMode(true, call);
    expect(await server.ctx.session.resolveForWriting(dir, call)).toBe(join(root, 'orders-0'));
    await expect(server.ctx.session.resolveForWriting(dir, { readOnly: true })).rejects.toMatchObject({ code: 'read-only' });
    await expect(server.ctx.session.resolveForWriting(tmp.dir, call)).rejects.toMatchObject({ code: 'invalid-argument' });
  });
});
