/**
 * Helpers for the API and bridge tests: temporary folders, raw HTTP calls to a bridge, a
 * server-sent-event reader for Node, and transports (HTTP and in-process) for the shared client.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import type { KlxEvent, MethodName } from '../../src-shared/contract.ts';
import type { Transport } from '../../src-shared/transport.ts';
import type { Envelope } from '../../src-shared/wire.ts';
import type { ServerApi } from '../../src-main/api/index.ts';
import type { DispatchOptions } from '../../src-main/api/core/dispatch.ts';
import type { Bridge } from '../../src-main/bridge/server.ts';

/** A fresh temporary folder (real path) and its remover. */
export function tempDir(prefix = 'klx-api-'): { dir: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * For the tests of this file: cleanups keep what they replace in `trashDir` (KLX_TRASH_DIR), and
 * the variable's old value comes back after them; `cleanup` (optional) runs last.
 */
export function useTrashDir(trashDir: string, cleanup?: () => void): void {
  let saved: string | undefined;
  beforeAll(() => {
    saved = process.env.KLX_TRASH_DIR;
    process.env.KLX_TRASH_DIR = trashDir;
  });
  afterAll(() => {
    if (saved === undefined) delete process.env.KLX_TRASH_DIR;
    else process.env.KLX_TRASH_DIR = saved;
    cleanup?.();
  });
}

/** POSTs a JSON body to `/api/<method>` with the bridge's token in the header (unless `token` says otherwise). */
export async function post(bridge: Bridge, method: string, body: unknown, init: { token?: string | null; headers?: Record<string, string> } = {}): Promise<{ status: number; body: Envelope<unknown> }> {
  const token = init.token === undefined ? bridge.token : init.token;
  const res = await fetch(`${bridge.origin}/api/${method}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...(token === null ? {} : { 'X-Klx-Token': token }), ...init.headers },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Envelope<unknown> };
}

/** A raw request through node:http (so forbidden fetch headers such as Host can be set). */
export function rawRequest(
  port: number,
  opts: { method?: string; path: string; headers?: Record<string, string>; body?: string },
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; text: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, method: opts.method ?? 'GET', path: opts.path, headers: opts.headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(opts.body);
  });
}

/** An open server-sent-event stream: the events received so far, `waitFor`, `close`. */
export interface EventStream {
  readonly events: KlxEvent[];
  waitFor(pred: (e: KlxEvent) => boolean, timeoutMs?: number): Promise<KlxEvent>;
  close(): void;
}

/** Connects to `/api/events` (resolves once the stream is open). */
export async function openEvents(bridge: Bridge, opts: { token?: string; onEvent?: (e: KlxEvent) => void } = {}): Promise<EventStream> {
  const token = opts.token ?? bridge.token;
  const controller = new AbortController();
  const res = await fetch(`${bridge.origin}/api/events?token=${encodeURIComponent(token)}`, { signal: controller.signal });
  if (res.status !== 200 || !res.body) throw new Error(`event stream: HTTP ${res.status}`);
  const events: KlxEvent[] = [];
  const waiters = new Set<() => void>();
  void (async () => {
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = '';
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value;
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const data = block
            .split('\n')
            .filter((l) => l.startsWith('data: '))
            .map((l) => l.slice(6))
            .join('\n');
          if (data) {
            const event = JSON.parse(data) as KlxEvent;
            events.push(event);
            opts.onEvent?.(event);
            for (const w of [...waiters]) w();
          }
        }
      }
    } catch {
      // aborted
    }
  })();
  return {
    events,
    waitFor: (pred, timeoutMs = 10_000) =>
      new Promise((resolve, reject) => {
        const check = (): boolean => {
          const hit = events.find(pred);
          if (hit) {
            waiters.delete(check as () => void);
            clearTimeout(timer);
            resolve(hit);
          }
          return !!hit;
        };
        const timer = setTimeout(() => {
          waiters.delete(check as () => void);
          reject(new Error('timed out waiting for an event'));
        }, timeoutMs);
        if (!check()) waiters.add(check as () => void);
      }),
    close: () => controller.abort(),
  };
}

/** A client transport over HTTP from Node (what the renderer's HTTP transport does in a browser). */
export function nodeHttpTransport(bridge: Bridge): Transport {
  let stream: Promise<EventStream> | null = null;
  const listeners = new Set<(e: KlxEvent) => void>();
  const connect = (): Promise<EventStream> => {
    stream ??= openEvents(bridge, { onEvent: (e) => listeners.forEach((l) => l(e)) });
    return stream;
  };
  return {
    call: async (method: MethodName, request: unknown) => (await post(bridge, method, request)).body,
    subscribe: (listener) => {
      listeners.add(listener);
      void connect();
      return () => void listeners.delete(listener);
    },
    ready: async () => void (await connect()),
  };
}

/** A client transport straight onto a context's dispatch (no serialization). */
export function directTransport(server: ServerApi, options: DispatchOptions): Transport {
  return {
    call: (method, request) => server.dispatch(method, request, options),
    subscribe: (listener) => server.ctx.events.subscribe(listener),
    ready: () => Promise.resolve(),
  };
}
