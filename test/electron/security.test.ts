/**
 * The Electron-free parts of the glue: the app:// protocol the renderer is served from (paths,
 * refusals, content types, the CSP header), which pages and frames are ours, the hardening of every
 * web contents, the window preferences, the settings file and the menu template (no Toggle
 * DevTools when packaged).
 *
 * Untested here (Electron cannot run on this machine): that Chromium loads the page, its module
 * scripts and Monaco's workers from app://klx/ with these privileges, and applies the CSP header.
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { CONTENT_SECURITY_POLICY } from '../../src-shared/csp.ts';
import { buildMenuTemplate } from '../../src-main/electron/menu.ts';
import {
  APP_ENTRY_URL,
  APP_SCHEME_PRIVILEGES,
  hardenContents,
  isOurPage,
  isPermissionGranted,
  isTrustedRendererUrl,
  isTrustedSender,
  mimeTypeOf,
  rendererPathFor,
  secureWebPreferences,
  serveRendererRequest,
  type HardenedContents,
} from '../../src-main/electron/security.ts';
import { RECENT_LIMIT, SettingsStore } from '../../src-main/electron/settings.ts';

const rendererDir = join('/opt', 'klx', 'out', 'renderer');
const trusted = { rendererDir };

describe('isTrustedRendererUrl and isOurPage', () => {
  it('trust app://klx/index.html, with any hash or query', () => {
    expect(APP_ENTRY_URL).toBe('app://klx/index.html');
    for (const url of ['app://klx/index.html', 'app://klx/index.html#/topics', 'app://klx/index.html?x=1', 'APP://KLX/index.html']) {
      expect(isTrustedRendererUrl(url, trusted), url).toBe(true);
      expect(isOurPage(url, trusted), url).toBe(true);
    }
  });

  it('refuse the renderer as a file:// URL, other app:// hosts, remote pages, data and blob URLs, garbage', () => {
    for (const url of [
      pathToFileURL(join(rendererDir, 'index.html')).href,
      'file://host/opt/klx/out/renderer/index.html',
      'app://evil/index.html',
      'app://klx.evil/index.html',
      'app://klx:8080/index.html',
      'app://user@klx/index.html',
      'https://example.com/index.html',
      'http://klx/index.html',
      'data:text/html,<script>1</script>',
      'blob:app://klx/1',
      'about:blank',
      'not a url',
    ]) {
      expect(isTrustedRendererUrl(url, trusted), url).toBe(false);
    }
    for (const url of ['app://evil/', 'https://example.com/', 'file:///tmp/x.html', 'about:blank', 'not a url']) expect(isOurPage(url, trusted), url).toBe(false);
  });

  it('the API is for the page only; other files of our origin are ours to navigate to, not callers', () => {
    expect(isOurPage('app://klx/assets/x.js', trusted)).toBe(true);
    expect(isTrustedRendererUrl('app://klx/assets/x.js', trusted)).toBe(false);
    expect(isTrustedRendererUrl('app://klx/', trusted)).toBe(false);
  });

  it('trust the dev server origin only when one is configured', () => {
    expect(isTrustedRendererUrl('http://localhost:5173/src/x', { rendererDir, devServerUrl: 'http://localhost:5173' })).toBe(true);
    expect(isOurPage('http://localhost:5173/', { rendererDir, devServerUrl: 'http://localhost:5173' })).toBe(true);
    expect(isTrustedRendererUrl('http://localhost:5174/', { rendererDir, devServerUrl: 'http://localhost:5173' })).toBe(false);
    expect(isTrustedRendererUrl('http://localhost:5173/', trusted)).toBe(false);
    expect(isOurPage('http://localhost:5173/', trusted)).toBe(false);
  });

  it('trust only the top frame', () => {
    expect(isTrustedSender({ url: APP_ENTRY_URL, parent: null }, trusted)).toBe(true);
    expect(isTrustedSender({ url: APP_ENTRY_URL, parent: {} }, trusted)).toBe(false);
    expect(isTrustedSender(null, trusted)).toBe(false);
  });
});

describe('the app:// scheme', () => {
  it('is privileged as a standard, secure scheme with fetch and CORS, never bypassing the CSP', () => {
    expect(APP_SCHEME_PRIVILEGES).toEqual({ standard: true, secure: true, supportFetchAPI: true, corsEnabled: true, stream: true, codeCache: true });
    expect('bypassCSP' in APP_SCHEME_PRIVILEGES).toBe(false);
  });

  it('maps a URL to a file of the renderer folder; / is index.html; query and hash ignored', () => {
    expect(rendererPathFor('app://klx/', rendererDir)).toEqual({ ok: true, path: join(rendererDir, 'index.html') });
    expect(rendererPathFor('app://klx/index.html#/x?y', rendererDir)).toEqual({ ok: true, path: join(rendererDir, 'index.html') });
    expect(rendererPathFor('app://klx/assets/index-B_mluyrM.css?v=1', rendererDir)).toEqual({ ok: true, path: join(rendererDir, 'assets', 'index-B_mluyrM.css') });
    expect(rendererPathFor('app://klx/assets/a%20b.js', rendererDir)).toEqual({ ok: true, path: join(rendererDir, 'assets', 'a b.js') });
    // The URL parser already drops dot segments (also spelt %2e%2e): it stays inside.
    expect(rendererPathFor('app://klx/../../etc/passwd', rendererDir)).toEqual({ ok: true, path: join(rendererDir, 'etc', 'passwd') });
    expect(rendererPathFor('app://klx/%2e%2e/%2E%2E/etc/passwd', rendererDir)).toEqual({ ok: true, path: join(rendererDir, 'etc', 'passwd') });
  });

  it('refuses paths that decode to outside the folder, NUL bytes, bad escapes, other hosts and schemes', () => {
    for (const url of ['app://klx/..%2fsecret', 'app://klx/assets/%2e%2e%2f%2e%2e%2f..%2fmain%2fmain.js', 'app://klx/..%2f..%2fmain/main.js', 'app://klx/..%5c..%5cmain.js', 'app://klx/%2F..%2F..%2Fetc/passwd']) {
      expect(rendererPathFor(url, rendererDir), url).toMatchObject({ ok: false, status: 403 });
    }
    expect(rendererPathFor('app://klx/index.html%00.png', rendererDir)).toMatchObject({ ok: false, status: 400 });
    expect(rendererPathFor('app://klx/%E0%A4%A', rendererDir)).toMatchObject({ ok: false, status: 400 });
    for (const url of ['app://evil/index.html', 'file:///opt/klx/out/renderer/index.html', 'https://klx/index.html', 'nonsense']) {
      expect(rendererPathFor(url, rendererDir), url).toMatchObject({ ok: false, status: 404 });
    }
  });

  it('gives the content type of each kind of file the build holds', () => {
    expect(['index.html', 'a.js', 'a.mjs', 'a.css', 'a.json', 'a.svg', 'a.png', 'a.ttf', 'a.woff2', 'a.wasm', 'A.JS', 'x.bin'].map(mimeTypeOf)).toEqual([
      'text/html; charset=utf-8',
      'text/javascript; charset=utf-8',
      'text/javascript; charset=utf-8',
      'text/css; charset=utf-8',
      'application/json',
      'image/svg+xml',
      'image/png',
      'font/ttf',
      'font/woff2',
      'application/wasm',
      'text/javascript; charset=utf-8',
      'application/octet-stream',
    ]);
  });

  describe('serveRendererRequest', () => {
    const root = mkdtempSync(join(tmpdir(), 'klx-app-protocol-'));
    const dir = join(root, 'renderer');
    mkdirSync(join(dir, 'assets'), { recursive: true });
    writeFileSync(join(dir, 'index.html'), '<!doctype html><title>klx</title>');
    writeFileSync(join(dir, 'assets', 'index-1.js'), 'export const x = 1;\n');
    writeFileSync(join(dir, 'assets', 'codicon.ttf'), Buffer.from([0, 1, 0, 0]));
    writeFileSync(join(root, 'secret.txt'), 'not for the page');
    symlinkSync(join(root, 'secret.txt'), join(dir, 'assets', 'link.txt'));
    afterAll(() => rmSync(root, { recursive: true, force: true }));
    const get = (url: string, method = 'GET') => serveRendererRequest({ url, method }, dir);

    it('serves the page and its assets with their content type, the CSP header and nosniff', async () => {
      const page = await get('app://klx/index.html#/records');
      expect(page.status).toBe(200);
      expect(await page.text()).toBe('<!doctype html><title>klx</title>');
      expect(Object.fromEntries(page.headers)).toMatchObject({ 'content-type': 'text/html; charset=utf-8', 'content-security-policy': CONTENT_SECURITY_POLICY, 'x-content-type-options': 'nosniff' });
      const js = await get('app://klx/assets/index-1.js');
      expect([js.status, js.headers.get('content-type'), await js.text()]).toEqual([200, 'text/javascript; charset=utf-8', 'export const x = 1;\n']);
      const font = await get('app://klx/assets/codicon.ttf');
      expect([font.headers.get('content-type'), [...new Uint8Array(await font.arrayBuffer())]]).toEqual(['font/ttf', [0, 1, 0, 0]]);
      const head = await get('app://klx/', 'HEAD');
      expect([head.status, head.headers.get('content-type'), await head.text()]).toEqual([200, 'text/html; charset=utf-8', '']);
    });

    it('refuses a link out of the folder (403), traversal (403), a missing file or a folder (404), other methods (405); every answer carries the CSP', async () => {
      const cases: [string, string, number][] = [
        ['app://klx/assets/link.txt', 'GET', 403],
        ['app://klx/..%2fsecret.txt', 'GET', 403],
        ['app://klx/nope.js', 'GET', 404],
        ['app://klx/assets', 'GET', 404],
        ['app://other/index.html', 'GET', 404],
        ['app://klx/index.html', 'POST', 405],
      ];
      for (const [url, method, status] of cases) {
        const r = await get(url, method);
        expect(r.status, `${method} ${url}`).toBe(status);
        expect(r.headers.get('content-security-policy')).toBe(CONTENT_SECURITY_POLICY);
        expect(await r.text()).not.toContain('not for the page');
      }
    });
  });
});

describe('hardenContents (every web contents, on web-contents-created)', () => {
  type Listener = (event: { preventDefault(): void; url?: string }, url?: string) => void;
  type RequestHandler = (w: unknown, p: string, cb: (ok: boolean) => void, d: { requestingUrl?: string }) => void;
  type CheckHandler = (w: unknown, p: string, origin: string, d: { requestingUrl?: string }) => boolean;
  function fakeContents() {
    const on = new Map<string, Listener>();
    const got: { openHandler?: (d: { url: string }) => unknown; request?: RequestHandler; check?: CheckHandler } = {};
    const contents = {
      setWindowOpenHandler: (fn: (d: { url: string }) => unknown) => void (got.openHandler = fn),
      on: (name: string, fn: Listener) => void on.set(name, fn),
      session: {
        setPermissionRequestHandler: (fn: RequestHandler) => void (got.request = fn),
        setPermissionCheckHandler: (fn: CheckHandler) => void (got.check = fn),
      },
    };
    hardenContents(contents as unknown as HardenedContents, trusted);
    const fire = (name: string, url: string): boolean => {
      const event = { preventDefault: vi.fn(), url };
      on.get(name)!(event, url);
      return event.preventDefault.mock.calls.length > 0;
    };
    return { ...got, fire };
  }

  it('denies window.open and webviews; navigation and redirects only within app://klx', () => {
    const c = fakeContents();
    expect(c.openHandler!({ url: 'https://evil.example' })).toEqual({ action: 'deny' });
    expect(c.openHandler!({ url: APP_ENTRY_URL })).toEqual({ action: 'deny' });
    expect(c.fire('will-attach-webview', APP_ENTRY_URL)).toBe(true);
    for (const name of ['will-navigate', 'will-redirect']) {
      expect(c.fire(name, 'https://evil.example/'), name).toBe(true);
      expect(c.fire(name, 'file:///etc/passwd'), name).toBe(true);
      expect(c.fire(name, 'app://evil/index.html'), name).toBe(true);
      expect(c.fire(name, 'app://klx/index.html#/sql'), name).toBe(false);
    }
  });

  it('refuses every permission request and check, except clipboard writes from our origin', () => {
    const c = fakeContents();
    const asked = (permission: string, requestingUrl: string) => {
      const cb = vi.fn();
      c.request!({}, permission, cb, { requestingUrl });
      return cb.mock.calls[0]![0] as boolean;
    };
    for (const p of ['media', 'geolocation', 'notifications', 'clipboard-read', 'openExternal', 'fullscreen']) {
      expect(asked(p, APP_ENTRY_URL), p).toBe(false);
      expect(c.check!({}, p, 'app://klx', { requestingUrl: APP_ENTRY_URL }), p).toBe(false);
    }
    expect(asked('clipboard-sanitized-write', APP_ENTRY_URL)).toBe(true);
    expect(asked('clipboard-sanitized-write', 'https://evil.example/')).toBe(false);
    expect(c.check!({}, 'clipboard-sanitized-write', 'app://klx', {})).toBe(true);
    expect(c.check!({}, 'clipboard-sanitized-write', 'https://evil.example', {})).toBe(false);
    expect(isPermissionGranted('clipboard-sanitized-write', undefined, trusted)).toBe(false);
  });
});

describe('secureWebPreferences', () => {
  it('isolates and sandboxes the renderer; DevTools off when asked (packaged)', () => {
    expect(secureWebPreferences('/p.cjs')).toMatchObject({ preload: '/p.cjs', contextIsolation: true, sandbox: true, nodeIntegration: false, webviewTag: false, webSecurity: true, devTools: true });
    expect(secureWebPreferences('/p.cjs', false).devTools).toBe(false);
  });
});

describe('SettingsStore', () => {
  const dir = mkdtempSync(join(tmpdir(), 'klx-settings-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('starts from defaults when the file is missing or corrupt, and round-trips', () => {
    const file = join(dir, 'a', 'klx-settings.json');
    expect(SettingsStore.load(file).get()).toEqual({ version: 1, recentFolders: [] });
    writeFileSync(join(dir, 'bad.json'), '{nope');
    expect(SettingsStore.load(join(dir, 'bad.json')).get().recentFolders).toEqual([]);
    const store = SettingsStore.load(file);
    store.update({ window: { width: 900, height: 600, maximized: true } });
    expect(SettingsStore.load(file).get().window).toEqual({ width: 900, height: 600, maximized: true });
  });

  it('keeps recent folders most recent first, without duplicates, at most RECENT_LIMIT', () => {
    const file = join(dir, 'recent.json');
    const recent = SettingsStore.load(file).recentStore();
    for (let i = 0; i < RECENT_LIMIT + 3; i++) recent.add(`/f${i}`);
    recent.add('/f5');
    const list = SettingsStore.load(file).recentStore().list();
    expect(list[0]).toBe('/f5');
    expect(list).toHaveLength(RECENT_LIMIT);
    expect(new Set(list).size).toBe(list.length);
  });
});

describe('buildMenuTemplate', () => {
  type Item = { id?: string; role?: string; label?: string; accelerator?: string; enabled?: boolean; click?: () => void; submenu?: Item[] };
  const flat = (t: Item[]) => t.flatMap((m) => [m, ...(m.submenu ?? [])]);

  it('has the usual items and accelerators, and the app menu first on macOS', () => {
    const actions = { openFolder: vi.fn(), openRecent: vi.fn() };
    const linux = flat(buildMenuTemplate(actions, ['/a'], 'linux') as Item[]);
    expect(linux.find((i) => i.id === 'open-folder')?.accelerator).toBe('CmdOrCtrl+O');
    expect(linux.find((i) => i.role === 'quit')?.accelerator).toBe('Ctrl+Q');
    expect(linux.find((i) => i.role === 'toggleDevTools')?.accelerator).toBe('Ctrl+Shift+I');
    linux.find((i) => i.id === 'open-recent')!.submenu![0].click!();
    expect(actions.openRecent).toHaveBeenCalledWith('/a');
    const mac = buildMenuTemplate(actions, [], 'darwin') as Item[];
    expect(mac[0].role).toBe('appMenu');
    expect(flat(mac).find((i) => i.id === 'open-recent')!.submenu![0]).toMatchObject({ enabled: false });
    expect(flat(mac).find((i) => i.role === 'toggleDevTools')?.accelerator).toBe('Alt+Cmd+I');
  });

  it('a packaged app has no Toggle Developer Tools item; everything else stays', () => {
    const actions = { openFolder: vi.fn(), openRecent: vi.fn() };
    for (const platform of ['linux', 'darwin', 'win32'] as const) {
      const dev = flat(buildMenuTemplate(actions, ['/a'], platform, false) as Item[]);
      const packaged = flat(buildMenuTemplate(actions, ['/a'], platform, true) as Item[]);
      expect(dev.filter((i) => i.role === 'toggleDevTools'), platform).toHaveLength(1);
      expect(packaged.filter((i) => i.role === 'toggleDevTools' || i.id === 'toggle-devtools'), platform).toEqual([]);
      const names = (items: Item[]) => items.filter((i) => i.role !== 'toggleDevTools').map((i) => i.id ?? i.role ?? i.label ?? '-');
      expect(names(packaged), platform).toEqual(names(dev));
    }
  });
});
