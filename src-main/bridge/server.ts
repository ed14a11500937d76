/**
 * The loopback bridge: serves the built renderer and the contract over HTTP on 127.0.0.1, so the
 * app runs in any browser (and in Playwright) without Electron.
 *
 * Routes:
 * - `GET /`, `GET /assets/...`: the files of `rendererDir` (with the CSP header), without the
 *   token: they are the app's public bundle and carry no data of the user's.
 * - `POST /api/<method>` with a JSON body (`Content-Type: application/json`) and the token in the
 *   `X-Klx-Token` header → `dispatch`; the answer is the {@link Envelope} (HTTP 200 whenever
 *   dispatch ran, whatever its outcome).
 * - `GET /api/events`: server-sent events, one `data:` line of JSON per {@link KlxEvent}; the token
 *   in the `X-Klx-Token` header or, for this route only, as `?token=` (a browser's `EventSource`
 *   cannot set a header, and a GET that only subscribes to events is no cross-site write).
 *
 * How the page gets the token: {@link Bridge.url} carries it in the URL fragment (`/#token=…`),
 * which a browser never sends to any server; the page keeps it in the tab's sessionStorage (bound
 * to this origin, port included), removes it from the address bar and sends it as the header.
 * There is no cookie: cookies ignore ports, so one set here would reach every other server on
 * 127.0.0.1 and authorise this API from there (issue 17, defect 8). No answer sets one, and a
 * request carrying only a cookie is refused like one without a token.
 *
 * Without the token an API route answers 403; the token is compared in constant time. Requests
 * whose `Host` is not this loopback address (DNS rebinding) or whose `Origin` is foreign are
 * refused with 403. Write methods are refused when `readOnly`; with `roots`, folders may be opened
 * only inside them.
 */
import { randomBytes, createHash, timingSafeEqual } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, resolve } from 'node:path';
import { CONTENT_SECURITY_POLICY } from '../../src-shared/csp.ts';
import type { KlxEvent } from '../../src-shared/contract.ts';
import type { ErrorInfo } from '../../src-shared/errors.ts';
import { toWireError } from '../../src-shared/wire.ts';
import { readPackageVersion } from '../api/app/app.ts';
import { createServerApi, type ServerApi } from '../api/index.ts';
import { appDataDir, decodeChoicesFile, fileDecodeChoicesStore } from '../api/core/decode-choices-store.ts';
import type { DispatchOptions } from '../api/core/dispatch.ts';
import { folderWatchersOf, type FolderWatcherOptions } from '../api/core/folder-watcher.ts';
import { fileRecentStore } from '../api/core/recent-store.ts';
import type { JobManagerOptions } from '../api/core/job-manager.ts';
import { isInsideDir } from '../api/core/paths.ts';
import { KlxError } from '../engine/errors.ts';

/** The only address the bridge listens on. */
export const BRIDGE_HOST = '127.0.0.1';

/**
 * Largest accepted API request body, in bytes: 90 MiB, room for `edit.append`'s 64 MiB of record
 * bytes as base64 (4/3 of it) plus JSON. The body is read only after the token and origin checks.
 */
export const MAX_BODY_BYTES = 90 * 1024 * 1024;

/**
 * Largest total of request bodies being read at once, in bytes (the same 90 MiB): the per-request
 * cap also holds across concurrent requests, so ten parallel 80 MiB bodies cannot take 800 MiB. A
 * body that would pass it is refused with 503 and `Retry-After` (nothing of it is kept).
 */
export const MAX_IN_FLIGHT_BODY_BYTES = MAX_BODY_BYTES;

/** Options of {@link startBridge}. There is deliberately no `host`: passing one throws. */
export interface BridgeOptions {
  /** TCP port; 0 (default) picks a free one. */
  port?: number;
  /** Refuse every write method. */
  readOnly: boolean;
  /** Fixed roots: folders that are opened at start and outside which nothing is reachable. May be empty. */
  roots: readonly string[];
  /**
   * Folders opened in the session at start without confining it (`npm start` opens the demo log
   * directory or the folder given this way); the page shows them as it loads.
   */
  open?: readonly string[];
  /** The built renderer (`out/renderer`). */
  rendererDir: string;
  /** The access token; default 32 random bytes, base64url. Must be 16–512 characters of `[A-Za-z0-9_-]`. */
  token?: string;
  /** Default: package.json's version. */
  version?: string;
  demoDir?: string;
  /** Default `os.homedir()` (for `fs.complete`'s `~`). */
  homeDir?: string;
  jobs?: JobManagerOptions;
  /** Body limits in bytes (tests make them small); default {@link MAX_BODY_BYTES} per request and {@link MAX_IN_FLIGHT_BODY_BYTES} in flight. */
  bodyLimits?: { perRequest?: number; inFlight?: number };
  /** The app's data folder, where format choices are kept per opened folder (`decode-choices.json`); default {@link appDataDir}. */
  dataDir?: string;
  /**
   * The file keeping the recent folders ("Open recent"); `klx serve` and `npm start` pass
   * `recent-folders.json` of the app's data folder ({@link recentFoldersFile}). Default: in memory.
   */
  recentFile?: string;
  /** Follow the opened folders on disk (default on, with the watcher's defaults); `false` turns it off. */
  watch?: FolderWatcherOptions | false;
  /** Run the test-only methods (`demo.*`); default KLX_TEST_METHODS=1 in the environment, else they answer `test-only`. */
  testMethods?: boolean;
}

/** A running bridge. */
export interface Bridge {
  /** The page URL with the token in its fragment (`http://127.0.0.1:<port>/#token=…`): what a person opens. */
  readonly url: string;
  /** `http://127.0.0.1:<port>`. */
  readonly origin: string;
  readonly port: number;
  readonly token: string;
  readonly readOnly: boolean;
  /** The fixed roots as real paths. */
  readonly roots: readonly string[];
  /** The context and `dispatch` this bridge serves (the same ones HTTP calls reach). */
  readonly api: ServerApi;
  /** The options every HTTP call is dispatched with. */
  readonly dispatchOptions: DispatchOptions;
  /** Ends event streams, cancels running jobs and closes the server. */
  close(): Promise<void>;
}

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.ttf': 'font/ttf',
  '.wasm': 'application/wasm',
  '.map': 'application/json; charset=utf-8',
};

const SECURITY_HEADERS: Record<string, string> = {
  'Content-Security-Policy': CONTENT_SECURITY_POLICY,
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer', // an older link's `?token=` may be in the page URL: never send it onwards
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Resource-Policy': 'same-origin',
  'Cache-Control': 'no-store',
};

function digest(s: string): Buffer {
  return createHash('sha256').update(s).digest();
}

/**
 * `Set-Cookie` values that expire the token cookies earlier versions set (`klx-token-<port>`, any
 * port) and that this request still carries: the browser would otherwise keep sending them to every
 * server on 127.0.0.1 until it closes (or longer, where it restores sessions). Empty when none.
 */
function expireOldTokenCookies(header: string | undefined): string[] {
  const names = new Set<string>();
  for (const part of (header ?? '').split(';')) {
    const name = part.slice(0, Math.max(0, part.indexOf('='))).trim();
    if (/^klx-token-\d{1,5}$/.test(name)) names.add(name);
  }
  return [...names].map((name) => `${name}=; Max-Age=0; Path=/; HttpOnly; SameSite=Strict`);
}

/**
 * Starts the bridge on 127.0.0.1. Errors: `invalid-argument` (a `host` option, a short token, a
 * root that is not a folder), `not-found` (a missing root), `io-error` (port in use).
 */
export async function startBridge(options: BridgeOptions): Promise<Bridge> {
  if ('host' in options) throw new KlxError('invalid-argument', 'the bridge listens on 127.0.0.1 only; a host cannot be chosen');
  const token = options.token ?? randomBytes(32).toString('base64url');
  if (!/^[A-Za-z0-9_-]{16,512}$/.test(token)) throw new KlxError('invalid-argument', 'the bridge token must be 16 to 512 characters of [A-Za-z0-9_-]');
  const tokenDigest = digest(token);
  const rendererDir = resolve(options.rendererDir);

  const api = createServerApi({
    version: options.version ?? readPackageVersion(),
    transport: 'bridge',
    demoDir: options.demoDir,
    homeDir: options.homeDir,
    jobs: options.jobs,
    decodeChoices: fileDecodeChoicesStore(decodeChoicesFile(options.dataDir ?? appDataDir())),
    recent: options.recentFile !== undefined ? fileRecentStore(options.recentFile) : undefined,
    watch: options.watch ?? {},
    ...(options.testMethods !== undefined ? { testMethods: options.testMethods } : {}),
  });
  const readOnly = options.readOnly;
  const unconfined: DispatchOptions = { readOnly };
  const roots: string[] = [];
  for (const root of options.roots) roots.push(await api.ctx.session.open(resolve(root), unconfined));
  const dispatchOptions: DispatchOptions = roots.length > 0 ? { readOnly, allowedRoots: roots } : unconfined;
  for (const folder of options.open ?? []) await api.ctx.session.open(resolve(folder), dispatchOptions);

  const streams = new Set<ServerResponse>();
  let port = 0;
  /**
   * Whether an API request carries the token: the `X-Klx-Token` header (which a cross-site form or
   * image cannot set); for the event stream also `?token=`, since `EventSource` cannot set headers.
   * Never a cookie (see the module comment).
   */
  const authorized = (req: IncomingMessage, url: URL): boolean => {
    const header = req.headers['x-klx-token'];
    const candidate = typeof header === 'string' ? header : url.pathname === '/api/events' ? url.searchParams.get('token') : null;
    return candidate !== null && timingSafeEqual(digest(candidate), tokenDigest);
  };

  const sendJson = (res: ServerResponse, status: number, body: unknown): void => {
    const text = JSON.stringify(body);
    res.writeHead(status, { ...SECURITY_HEADERS, 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(text) });
    res.end(text);
  };
  const refuse = (res: ServerResponse, status: number, error: ErrorInfo): void => sendJson(res, status, { ok: false, error: toWireError(error) });

  const perRequest = options.bodyLimits?.perRequest ?? MAX_BODY_BYTES;
  const inFlightBudget = options.bodyLimits?.inFlight ?? MAX_IN_FLIGHT_BODY_BYTES;
  /** Bytes of request bodies read and not yet released (see {@link MAX_IN_FLIGHT_BODY_BYTES}). */
  let inFlight = 0;
  /**
   * Reads a body within both budgets; `held` grows with what this request reserved of the in-flight
   * budget (the caller releases it when the request is answered).
   */
  const readBody = async (req: IncomingMessage, held: { bytes: number }): Promise<string> => {
    const declared = Number(req.headers['content-length'] ?? NaN);
    if (declared > perRequest) throw new KlxError('invalid-argument', `request body larger than ${perRequest} bytes`, { details: { status: 413 } });
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of req as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > perRequest) throw new KlxError('invalid-argument', `request body larger than ${perRequest} bytes`, { details: { status: 413 } });
      if (inFlight + chunk.length > inFlightBudget) {
        throw new KlxError('invalid-argument', `the bridge is already reading ${inFlight} bytes of other requests' bodies (at most ${inFlightBudget} at once): try again`, { details: { status: 503 } });
      }
      inFlight += chunk.length;
      held.bytes += chunk.length;
      chunks.push(chunk);
    }
    return Buffer.concat(chunks).toString('utf8');
  };

  const handleApi = async (req: IncomingMessage, res: ServerResponse, method: string): Promise<void> => {
    if (req.method !== 'POST') return refuse(res, 405, { code: 'invalid-argument', message: 'API calls are POST requests' });
    if (!(req.headers['content-type'] ?? '').toLowerCase().startsWith('application/json')) {
      return refuse(res, 415, { code: 'invalid-argument', message: 'API calls need Content-Type: application/json' });
    }
    const held = { bytes: 0 };
    try {
      let text: string;
      try {
        text = await readBody(req, held);
      } catch (err) {
        // Stop reading the rest; close the connection so the unread body cannot poison the next request.
        inFlight -= held.bytes;
        held.bytes = 0;
        res.setHeader('Connection', 'close');
        res.once('finish', () => req.destroy());
        const status = err instanceof KlxError && err.details?.status === 503 ? 503 : 413;
        if (status === 503) res.setHeader('Retry-After', '1');
        return refuse(res, status, { code: 'invalid-argument', message: err instanceof Error ? err.message : String(err) });
      }
      let raw: unknown;
      try {
        raw = text.trim() === '' ? {} : JSON.parse(text);
      } catch {
        return refuse(res, 400, { code: 'invalid-argument', message: `${method}: the body is not JSON` });
      }
      // The body's bytes stay reserved while the request is handled (its parsed form is alive).
      sendJson(res, 200, await api.dispatch(method, raw, dispatchOptions));
    } finally {
      inFlight -= held.bytes;
    }
  };

  const handleEvents = (req: IncomingMessage, res: ServerResponse): void => {
    res.writeHead(200, { ...SECURITY_HEADERS, 'Content-Type': 'text/event-stream; charset=utf-8', Connection: 'keep-alive', 'X-Accel-Buffering': 'no' });
    res.write('retry: 2000\n: connected\n\n');
    streams.add(res);
    // A stream ended by close() (or by the client) may still get an event before its 'close'
    // event unsubscribes it: writing then would throw "write after end" in the emitter.
    const write = (text: string): void => {
      if (!res.writableEnded && !res.destroyed) res.write(text);
    };
    const send = (event: KlxEvent): void => write(`data: ${JSON.stringify(event)}\n\n`);
    const unsubscribe = api.ctx.events.subscribe(send);
    const ping = setInterval(() => write(': ping\n\n'), 15_000);
    ping.unref();
    const stop = (): void => {
      clearInterval(ping);
      unsubscribe();
      streams.delete(res);
    };
    req.on('close', stop);
    res.on('close', stop);
  };

  const handleStatic = async (req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return refuse(res, 405, { code: 'invalid-argument', message: 'only GET and HEAD' });
    let pathname: string;
    try {
      pathname = decodeURIComponent(url.pathname);
    } catch {
      return refuse(res, 400, { code: 'invalid-argument', message: 'bad URL encoding' });
    }
    const rel = pathname === '/' ? 'index.html' : pathname.replace(/^\/+/, '');
    const file = resolve(rendererDir, rel);
    if (pathname.includes('\0') || !isInsideDir(file, rendererDir) || file === rendererDir) {
      return refuse(res, 404, { code: 'not-found', message: 'not found' });
    }
    const info = await stat(file).catch(() => null);
    if (!info?.isFile()) return refuse(res, 404, { code: 'not-found', message: `not found: ${pathname}` });
    const headers: Record<string, string | number> = {
      ...SECURITY_HEADERS,
      'Content-Type': CONTENT_TYPES[extname(file).toLowerCase()] ?? 'application/octet-stream',
      'Content-Length': info.size,
    };
    const expired = expireOldTokenCookies(req.headers.cookie);
    if (expired.length > 0) res.setHeader('Set-Cookie', expired);
    res.writeHead(200, headers);
    if (req.method === 'HEAD') return void res.end();
    createReadStream(file).on('error', () => res.destroy()).pipe(res);
  };

  const server = createServer((req, res) => {
    const fail = (err: unknown): void => {
      if (!res.headersSent) refuse(res, 500, { code: 'internal', message: err instanceof Error ? err.message : String(err) });
      else res.destroy();
    };
    try {
      const origin = `http://${BRIDGE_HOST}:${port}`;
      const hosts = [`${BRIDGE_HOST}:${port}`, `localhost:${port}`];
      if (!hosts.includes(req.headers.host ?? '')) return refuse(res, 403, { code: 'invalid-argument', message: 'forbidden host' });
      const from = req.headers.origin;
      if (from !== undefined && from !== origin && from !== `http://localhost:${port}`) {
        return refuse(res, 403, { code: 'invalid-argument', message: 'forbidden origin' });
      }
      const url = new URL(req.url ?? '/', origin);
      if (url.pathname.startsWith('/api/') && !authorized(req, url)) return refuse(res, 403, { code: 'invalid-argument', message: 'missing or wrong token (the X-Klx-Token header)', details: { reason: 'bridge-token' } });
      if (url.pathname === '/api/events') {
        if (req.method !== 'GET') return refuse(res, 405, { code: 'invalid-argument', message: 'the event stream is a GET' });
        return handleEvents(req, res);
      }
      if (url.pathname.startsWith('/api/')) return void handleApi(req, res, url.pathname.slice('/api/'.length)).catch(fail);
      void handleStatic(req, res, url).catch(fail);
    } catch (err) {
      fail(err);
    }
  });

  await new Promise<void>((resolveListen, rejectListen) => {
    server.once('error', (err) => rejectListen(new KlxError('io-error', `the bridge cannot listen on ${BRIDGE_HOST}:${options.port ?? 0}: ${err.message}`, { cause: err })));
    server.listen({ host: BRIDGE_HOST, port: options.port ?? 0, exclusive: true }, () => resolveListen());
  });
  const address = server.address() as AddressInfo;
  if (address.address !== BRIDGE_HOST) {
    server.close();
    throw new KlxError('internal', `the bridge ended up on ${address.address}, not ${BRIDGE_HOST}`);
  }
  port = address.port;
  const origin = `http://${BRIDGE_HOST}:${port}`;

  return {
    url: `${origin}/#token=${encodeURIComponent(token)}`,
    origin,
    port,
    token,
    readOnly,
    roots,
    api,
    dispatchOptions,
    close: async () => {
      for (const res of streams) res.end();
      streams.clear();
      folderWatchersOf(api.ctx)?.close();
      await api.ctx.jobs.shutdown();
      await new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      });
    },
  };
}
