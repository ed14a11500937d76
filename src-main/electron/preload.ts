/**
 * Sandboxed preload: exposes `window.klx` with exactly one function per contract method (derived
 * from the contract's method list; each invokes `klx:<method>` and answers an Envelope) and
 * `onEvent(listener)` for main → renderer events (returns the unsubscribe function). Nothing else:
 * no `ipcRenderer`, no Node, and the IPC event object never reaches the page.
 */
import { contextBridge, ipcRenderer, type IpcRendererEvent } from 'electron';
import { METHOD_NAMES, type KlxEvent } from '../../src-shared/contract.ts';
import type { EventListener, KlxPreloadApi } from '../../src-shared/transport.ts';
import { EVENT_CHANNEL, ipcChannel } from './channels.ts';

/** Builds the object exposed as `window.klx`. */
export function buildPreloadApi(): KlxPreloadApi {
  const api: Record<string, unknown> = {};
  for (const method of METHOD_NAMES) api[method] = (request: unknown) => ipcRenderer.invoke(ipcChannel(method), request);
  api.onEvent = (listener: EventListener) => {
    if (typeof listener !== 'function') throw new TypeError('klx.onEvent needs a function');
    const forward = (_event: IpcRendererEvent, payload: KlxEvent): void => listener(payload);
    ipcRenderer.on(EVENT_CHANNEL, forward);
    return () => void ipcRenderer.removeListener(EVENT_CHANNEL, forward);
  };
  return Object.freeze(api) as KlxPreloadApi;
}

contextBridge.exposeInMainWorld('klx', buildPreloadApi());
