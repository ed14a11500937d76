/**
 * The renderer's one way to reach the main process, whatever runs it:
 * - in Electron, over `window.klx` (the preload's functions);
 * - in a browser, over HTTP to the loopback bridge: `POST /api/<method>` with the token in the
 *   `X-Klx-Token` header, and events from `GET /api/events` (see {@link pageToken}).
 * Both are typed as `KlxApi` through the shared client.
 */
import { createClient, type KlxClient } from '../../../src-shared/client.ts';
import type { KlxEvent, MethodName } from '../../../src-shared/contract.ts';
import type { EventListener, KlxPreloadApi, Transport } from '../../../src-shared/transport.ts';
import type { Envelope } from '../../../src-shared/wire.ts';

declare global {
  interface Window {
    /** Set by the Electron preload; absent in a browser. */
    readonly klx?: KlxPreloadApi;
  }
}

/** A transport over the preload's `window.klx`. */
export function ipcTransport(klx: KlxPreloadApi): Transport {
  return {
    call: async (method, request) => {
      try {
        return (await klx[method](request)) as Envelope<unknown>;
      } catch (err) {
        return { ok: false, error: { code: 'internal', message: `IPC call ${method} failed: ${err instanceof Error ? err.message : String(err)}` } };
      }
    },
    subscribe: (listener) => klx.onEvent(listener),
    ready: () => Promise.resolve(),
  };
}

/** A transport over HTTP to the bridge serving this page (`base` is its origin, `token` its access token). */
export function httpTransport(base: string, token: string): Transport {
  const listeners = new Set<EventListener>();
  let source: EventSource | null = null;
  let opened: Promise<void> | null = null;

  const connect = (): Promise<void> => {
    if (opened) return opened;
    opened = new Promise<void>((resolve) => {
      source = new EventSource(`${base}/api/events?token=${encodeURIComponent(token)}`);
      source.onopen = () => resolve();
      source.onmessage = (message: MessageEvent<string>) => {
        let event: KlxEvent;
        try {
          event = JSON.parse(message.data) as KlxEvent;
        } catch {
          return;
        }
        for (const listener of [...listeners]) listener(event);
      };
    });
    return opened;
  };

  return {
    call: async (method: MethodName, request: unknown) => {
      try {
        const response = await fetch(`${base}/api/${method}`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', 'X-Klx-Token': token },
          body: JSON.stringify(request ?? {}),
          credentials: 'same-origin',
        });
        const body = (await response.json()) as Envelope<unknown>;
        if (typeof body !== 'object' || body === null || typeof body.ok !== 'boolean') {
          return { ok: false, error: { code: 'internal', message: `${method}: HTTP ${response.status} with no answer` } };
        }
        return body;
      } catch (err) {
        return { ok: false, error: { code: 'io-error', message: `${method}: the bridge cannot be reached: ${err instanceof Error ? err.message : String(err)}` } };
      }
    },
    subscribe: (listener) => {
      listeners.add(listener);
      void connect();
      return () => void listeners.delete(listener);
    },
    ready: connect,
  };
}

/** Where the tab keeps the bridge's token (sessionStorage: this tab and this origin, port included, only). */
const TOKEN_KEY = 'klx-token';

/**
 * The bridge's access token for this page: from the URL fragment (`#token=…`, what `klx serve` and
 * `npm start` print; a fragment is never sent to a server) or an older link's `?token=`, then kept
 * in the tab's sessionStorage and removed from the address bar (a reload finds it there). Never a
 * cookie: cookies ignore ports, so any other server on 127.0.0.1 would receive it (issue 17, defect 8).
 */
export function pageToken(): string {
  const url = new URL(window.location.href);
  const fromUrl = new URLSearchParams(url.hash.slice(1)).get('token') ?? url.searchParams.get('token');
  if (fromUrl) {
    try {
      window.sessionStorage.setItem(TOKEN_KEY, fromUrl);
    } catch {
      // storage refused: the token lives in memory for this page only
    }
    url.hash = '';
    url.searchParams.delete('token');
    window.history.replaceState(window.history.state, '', url.pathname + url.search);
    return fromUrl;
  }
  try {
    return window.sessionStorage.getItem(TOKEN_KEY) ?? '';
  } catch {
    return '';
  }
}

/**
 * Opening the printed URL again in a tab that already shows the app changes only the fragment, which
 * loads nothing (a same-document navigation): take the fragment's token (a restarted bridge has a new
 * one) and load the page afresh, as opening the link did when the token was a query parameter.
 */
function reloadOnTokenLink(): void {
  window.addEventListener('hashchange', () => {
    if (!new URLSearchParams(window.location.hash.slice(1)).get('token')) return;
    pageToken();
    window.location.reload();
  });
}

/** Picks the transport: `window.klx` when present, else the bridge at this page's origin. */
export function defaultTransport(): Transport {
  if (window.klx) return ipcTransport(window.klx);
  reloadOnTokenLink();
  return httpTransport(window.location.origin, pageToken());
}

/** The app's client. */
export const client: KlxClient = createClient(defaultTransport());

/** Shorthand for `client.api`. */
export const api = client.api;
