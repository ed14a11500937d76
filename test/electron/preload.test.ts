/**
 * The preload exposes `window.klx` with exactly the contract's methods plus `onEvent`.
 */
import { describe, expect, it, vi } from 'vitest';
import { METHOD_NAMES } from '../../src-shared/contract.ts';
import type { KlxPreloadApi } from '../../src-shared/transport.ts';

const fake = vi.hoisted(() => ({ current: undefined as unknown as ReturnType<typeof import('./fake-electron.ts').makeFakeElectron> }));
vi.mock('electron', async () => {
  const { makeFakeElectron } = await import('./fake-electron.ts');
  fake.current = makeFakeElectron('/nonexistent');
  return fake.current.electron;
});

await import('../../src-main/electron/preload.ts');

describe('preload', () => {
  const exposed = () => fake.current.exposed.get('klx') as KlxPreloadApi;

  it('exposes one object, `klx`, and nothing else', () => {
    expect(fake.current.electron.contextBridge.exposeInMainWorld).toHaveBeenCalledTimes(1);
    expect([...fake.current.exposed.keys()]).toEqual(['klx']);
  });

  it('exposes exactly the contract method list plus onEvent, all functions, frozen', () => {
    const api = exposed();
    expect(Object.keys(api).sort()).toEqual([...METHOD_NAMES, 'onEvent'].sort());
    for (const key of Object.keys(api)) expect(typeof (api as unknown as Record<string, unknown>)[key], key).toBe('function');
    expect(Object.isFrozen(api)).toBe(true);
  });

  it('each method invokes its own channel with the one request argument', async () => {
    const api = exposed();
    await api['fs.complete']({ partial: '/x' });
    expect(fake.current.electron.ipcRenderer.invoke).toHaveBeenLastCalledWith('klx:fs.complete', { partial: '/x' });
  });

  it('onEvent forwards the payload only (never the IPC event) and unsubscribes', () => {
    const api = exposed();
    const seen: unknown[][] = [];
    const off = api.onEvent((...args: unknown[]) => void seen.push(args));
    const [listener] = fake.current.rendererListeners.get('klx:event')!;
    listener({ sender: 'ipc-renderer-internals' }, { type: 'session.opened', path: '/a' });
    expect(seen).toEqual([[{ type: 'session.opened', path: '/a' }]]);
    off();
    expect(fake.current.rendererListeners.get('klx:event')).toEqual([]);
    expect(() => api.onEvent('nope' as never)).toThrow(TypeError);
  });
});
