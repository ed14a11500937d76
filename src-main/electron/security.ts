/**
 * Security decisions of the Electron glue, kept free of Electron imports at run time (types only) so
 * they are unit-tested directly: the `app://klx/` protocol the renderer is served from, which pages
 * and frames are ours, the hardening every web contents gets, and the window's web preferences.
 *
 * The renderer is loaded from `app://klx/index.html`, never `file://`: a privileged standard scheme
 * (its own origin, so `'self'` in the CSP means exactly our files), served by {@link serveRendererRequest}
 * from the built renderer folder only, with the CSP as a response header.
 */
import { readFile, realpath, stat } from 'node:fs/promises';
import { extname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import type { WebContents } from 'electron';
import { CONTENT_SECURITY_POLICY } from '../../src-shared/csp.ts';

/** The renderer's scheme, host and origin: `app://klx`. */
export const APP_SCHEME = 'app';
export const APP_HOST = 'klx';
export const APP_ORIGIN = `${APP_SCHEME}://${APP_HOST}`;
/** The page the window loads. */
export const APP_ENTRY_URL = `${APP_ORIGIN}/index.html`;

/**
 * Privileges of the `app` scheme (`protocol.registerSchemesAsPrivileged`, before `ready`): a standard
 * scheme (relative URLs resolve, the origin is `app://klx`), secure (a secure context like https),
 * fetch and CORS-mode loads (Vite's `<script type="module" crossorigin>`, module workers), streamed
 * responses and the V8 code cache. Never `bypassCSP`: the page's CSP applies to it.
 */
export const APP_SCHEME_PRIVILEGES = { standard: true, secure: true, supportFetchAPI: true, corsEnabled: true, stream: true, codeCache: true } as const;

/** Where our renderer comes from. */
export interface TrustedRenderer {
  /** Absolute path of the built renderer folder (`out/renderer`), served as `app://klx/`. */
  rendererDir: string;
  /** The electron-vite dev server URL (`ELECTRON_RENDERER_URL`), only when not packaged. */
  devServerUrl?: string;
}

function parse(url: string): URL | null {
  try {
    return new URL(url);
  } catch {
    return null;
  }
}

function isDevServer(parsed: URL, trusted: TrustedRenderer): boolean {
  if (!trusted.devServerUrl) return false;
  const dev = parse(trusted.devServerUrl);
  return dev !== null && parsed.origin === dev.origin;
}

/** Whether `url` is on our origin: anything under `app://klx/`, or the dev server's origin when one is configured. Navigation elsewhere is refused. */
export function isOurPage(url: string, trusted: TrustedRenderer): boolean {
  const parsed = parse(url);
  if (!parsed) return false;
  if (parsed.protocol === `${APP_SCHEME}:`) return parsed.host.toLowerCase() === APP_HOST;
  return isDevServer(parsed, trusted);
}

/** Whether `url` is our renderer page: `app://klx/index.html` (any hash or query), or the dev server's origin. */
export function isTrustedRendererUrl(url: string, trusted: TrustedRenderer): boolean {
  const parsed = parse(url);
  if (!parsed) return false;
  if (parsed.protocol === `${APP_SCHEME}:`) return parsed.host.toLowerCase() === APP_HOST && parsed.pathname === '/index.html' && parsed.username === '' && parsed.port === '';
  return isDevServer(parsed, trusted);
}

/** The parts of Electron's `WebFrameMain` the sender check reads. */
export interface SenderFrame {
  readonly url: string;
  readonly parent: unknown;
}

/** Whether an IPC sender frame is our renderer's top frame (sub-frames are never trusted). */
export function isTrustedSender(frame: SenderFrame | null | undefined, trusted: TrustedRenderer): boolean {
  return frame != null && frame.parent === null && isTrustedRendererUrl(frame.url, trusted);
}

/** Content types of what the renderer build holds (by extension); anything else is served as `application/octet-stream`. */
export const MIME_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.map': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.ttf': 'font/ttf',
  '.woff': 'font/woff',
  '.woff2': 'font/woff2',
  '.wasm': 'application/wasm',
  '.txt': 'text/plain; charset=utf-8',
};

/** The content type of `path` by its extension (case-insensitive). */
export function mimeTypeOf(path: string): string {
  return MIME_TYPES[extname(path).toLowerCase()] ?? 'application/octet-stream';
}

/** Where an `app://` request leads: a file inside the renderer folder, or the HTTP status refusing it and why. */
export type RendererPath = { ok: true; path: string } | { ok: false; status: 400 | 403 | 404; reason: string };

/** Whether `path` is `dir` itself or inside it (both absolute, already resolved). */
function isInside(dir: string, path: string): boolean {
  const rel = relative(dir, path);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}

/**
 * The file of the renderer folder `url` asks for, by its path alone (`/` is `index.html`; query and
 * hash are ignored; the URL parser has already removed `..` and `%2e%2e` segments). Refused: another
 * scheme or host (404), a path that does not decode or holds a NUL byte (400), a path that resolves
 * outside `rendererDir` once percent-decoded (`..%2f`, encoded backslashes; 403). Symbolic links are checked by {@link serveRendererRequest}.
 */
export function rendererPathFor(url: string, rendererDir: string): RendererPath {
  const parsed = parse(url);
  if (!parsed || parsed.protocol !== `${APP_SCHEME}:` || parsed.host.toLowerCase() !== APP_HOST) return { ok: false, status: 404, reason: `not an ${APP_ORIGIN}/ URL` };
  let path: string;
  try {
    path = decodeURIComponent(parsed.pathname);
  } catch {
    return { ok: false, status: 400, reason: 'the path does not decode' };
  }
  if (path.includes('\0')) return { ok: false, status: 400, reason: 'the path holds a NUL byte' };
  if (path === '/' || path === '') path = '/index.html';
  const root = resolve(rendererDir);
  const file = resolve(join(root, ...path.split(/[\\/]+/)));
  // join() already normalises '..'; resolve the raw path too, so that no spelling escapes.
  if (!isInside(root, file) || !isInside(root, resolve(root, `.${path}`))) return { ok: false, status: 403, reason: 'the path leads outside the renderer folder' };
  return { ok: true, path: file };
}

/** The headers of every `app://` response: the CSP (a header as well as the page's meta tag), no type sniffing. */
export function appResponseHeaders(contentType: string): Record<string, string> {
  return {
    'Content-Type': contentType,
    'Content-Security-Policy': CONTENT_SECURITY_POLICY,
    'X-Content-Type-Options': 'nosniff',
    'Cache-Control': 'no-cache',
  };
}

function refusal(status: number, reason: string): Response {
  return new Response(reason, { status, headers: appResponseHeaders('text/plain; charset=utf-8') });
}

/**
 * The `protocol.handle('app', …)` handler: the file of the renderer folder the request asks for,
 * with its content type and {@link appResponseHeaders}. Only GET and HEAD (405 otherwise); a path
 * refused by {@link rendererPathFor} gets its status; a file whose real path (symbolic links
 * resolved) lies outside the real renderer folder 403; a missing file or a folder 404.
 */
export async function serveRendererRequest(request: { url: string; method: string }, rendererDir: string): Promise<Response> {
  if (request.method !== 'GET' && request.method !== 'HEAD') return refusal(405, `${request.method} is not served`);
  const where = rendererPathFor(request.url, rendererDir);
  if (!where.ok) return refusal(where.status, where.reason);
  let real: string;
  try {
    real = await realpath(where.path);
    if (!isInside(await realpath(rendererDir), real)) return refusal(403, 'the path leads outside the renderer folder');
    if (!(await stat(real)).isFile()) return refusal(404, 'not a file');
  } catch {
    return refusal(404, 'no such file');
  }
  const body = request.method === 'HEAD' ? null : await readFile(real);
  return new Response(body, { status: 200, headers: appResponseHeaders(mimeTypeOf(real)) });
}

/**
 * Whether a permission request or check is granted: only writing text to the clipboard (the records'
 * Copy and Ctrl+C, the SQL grid's copy), and only for our origin ({@link isOurPage}). Everything else
 * (camera, notifications, clipboard reads, ...) is refused.
 */
export function isPermissionGranted(permission: string, requestingUrl: string | undefined, trusted: TrustedRenderer): boolean {
  return permission === 'clipboard-sanitized-write' && requestingUrl !== undefined && isOurPage(requestingUrl, trusted);
}

/** What {@link hardenContents} uses of a web contents. */
export type HardenedContents = Pick<WebContents, 'setWindowOpenHandler' | 'on' | 'session'>;

/**
 * The hardening every web contents gets (`app.on('web-contents-created')`, so windows, webviews and
 * anything else alike): `window.open` denied, navigation and redirects off our origin
 * ({@link isOurPage}) prevented, webviews never attached, permission requests and checks refused
 * except {@link isPermissionGranted}.
 */
export function hardenContents(contents: HardenedContents, trusted: TrustedRenderer): void {
  contents.setWindowOpenHandler(() => ({ action: 'deny' }));
  const stayHome = (event: { preventDefault(): void; url?: string }, url?: string) => {
    if (!isOurPage(event.url ?? url ?? '', trusted)) event.preventDefault();
  };
  contents.on('will-navigate', stayHome);
  contents.on('will-redirect', stayHome);
  contents.on('will-attach-webview', (event) => event.preventDefault());
  contents.session.setPermissionRequestHandler((_contents, permission, callback, details) => callback(isPermissionGranted(permission, details?.requestingUrl, trusted)));
  contents.session.setPermissionCheckHandler((_contents, permission, requestingOrigin, details) => isPermissionGranted(permission, details?.requestingUrl ?? requestingOrigin, trusted));
}

/** The renderer window's web preferences: isolated, sandboxed, no Node, no webviews; DevTools only when `devTools` (not in a packaged app). */
export function secureWebPreferences(preload: string, devTools = true) {
  return {
    preload,
    contextIsolation: true,
    sandbox: true,
    nodeIntegration: false,
    nodeIntegrationInWorker: false,
    nodeIntegrationInSubFrames: false,
    webviewTag: false,
    webSecurity: true,
    allowRunningInsecureContent: false,
    experimentalFeatures: false,
    spellcheck: false,
    devTools,
  } as const;
}
