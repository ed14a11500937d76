/**
 * `registerIpc`: one handler per contract method and no other, sender checked, arguments validated.
 */
import { describe, expect, it, vi } from 'vitest';
import { METHOD_NAMES } from '../../src-shared/contract.ts';
import { createServerApi } from '../../src-main/api/index.ts';

const fake = vi.hoisted(() => ({ current: undefined as unknown as ReturnType<typeof import('./fake-electron.ts').makeFakeElectron> }));
vi.mock('electron', async () => {
  const { makeFakeElectron: make } = await import('./fake-electron.ts');
  fake.current = make('/nonexistent');
  return fake.current.electron;
});

const { registerIpc } = await import('../../src-main/electron/ipc.ts');
const { isTrustedSender } = await import('../../src-main/electron/security.ts');

const rendererDir = '/app/out/renderer';
const ours = { senderFrame: { url: 'app://klx/index.html', parent: null } };
const server = createServerApi({ version: '1.2.3', transport: 'electron' });
const unregister = registerIpc({
  dispatch: server.dispatch,
  options: { readOnly: true },
  isTrusted: (event) => isTrustedSender(event.senderFrame as never, { rendererDir }),
});

describe('IPC handlers', () => {
  it('are registered for exactly the contract methods, one channel each', () => {
    expect([...fake.current.handlers.keys()].sort()).toEqual(METHOD_NAMES.map((m) => `klx:${m}`).sort());
  });

  it('answer a call from our renderer with the dispatch envelope', async () => {
    const out = await fake.current.handlers.get('klx:app.info')!(ours, {});
    expect(out).toMatchObject({ ok: true, result: { version: '1.2.3', transport: 'electron', readOnly: true } });
  });

  it('reject invalid arguments with invalid-argument', async () => {
    expect(await fake.current.handlers.get('klx:fs.complete')!(ours, { partial: 1 })).toMatchObject({ ok: false, error: { code: 'invalid-argument' } });
    expect(await fake.current.handlers.get('klx:app.info')!(ours, {}, 'extra')).toMatchObject({ ok: false, error: { code: 'invalid-argument' } });
    expect(await fake.current.handlers.get('klx:app.info')!(ours)).toMatchObject({ ok: false, error: { code: 'invalid-argument' } });
  });

  it('refuse write methods with read-only when the app runs read-only', async () => {
    expect(await fake.current.handlers.get('klx:demo.touch')!(ours, { path: '/tmp' })).toMatchObject({ ok: false, error: { code: 'read-only' } });
  });

  it('reject a foreign sender: another page, a sub-frame, another app:// host, the renderer as a file:// URL, another file, no frame', async () => {
    const foreign = [
      { senderFrame: { url: 'https://evil.example/', parent: null } },
      { senderFrame: { url: 'app://klx/index.html', parent: { url: 'x' } } },
      { senderFrame: { url: 'app://evil/index.html', parent: null } },
      { senderFrame: { url: `file://${rendererDir}/index.html`, parent: null } },
      { senderFrame: { url: 'file:///tmp/evil.html', parent: null } },
      { senderFrame: null },
    ];
    for (const event of foreign) {
      await expect(fake.current.handlers.get('klx:app.info')!(event, {})).rejects.toThrow(/untrusted/);
    }
  });

  it('can be unregistered', () => {
    unregister();
    expect(fake.current.handlers.size).toBe(0);
  });
});
