/**
 * The main process wiring, with a fake `electron`: the app:// scheme registered before ready and
 * handled, the window loading app://klx/index.html, every web contents hardened when created,
 * IPC registered for exactly the contract's methods, events forwarded, menu, settings file.
 * (The decisions themselves are tested in security.test.ts; Electron itself cannot run here.)
 */
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { METHOD_NAMES } from '../../src-shared/contract.ts';
import { CONTENT_SECURITY_POLICY } from '../../src-shared/csp.ts';
import { APP_SCHEME_PRIVILEGES } from '../../src-main/electron/security.ts';

const userData = mkdtempSync(join(tmpdir(), 'klx-userdata-'));
// `npm start` names the folder to open (the demo log directory by default) in KLX_OPEN_DIR.
const openAtStart = mkdtempSync(join(tmpdir(), 'klx-open-at-start-'));
process.env.KLX_OPEN_DIR = openAtStart;
const fake = vi.hoisted(() => ({ current: undefined as unknown as ReturnType<typeof import('./fake-electron.ts').makeFakeElectron>, userData: '' }));
fake.userData = userData;
vi.mock('electron', async () => {
  const { makeFakeElectron } = await import('./fake-electron.ts');
  fake.current = makeFakeElectron(fake.userData);
  return fake.current.electron;
});

await import('../../src-main/electron/main.ts');
// Let whenReady().then(start) run to its end (it opens KLX_OPEN_DIR, then creates the window): a fixed
// 20 ms wait was too short on a loaded machine.
await vi.waitFor(() => expect(fake.current.windows).toHaveLength(1), { timeout: 30_000, interval: 20 });

afterAll(() => {
  rmSync(userData, { recursive: true, force: true });
  rmSync(openAtStart, { recursive: true, force: true });
  delete process.env.KLX_OPEN_DIR;
});

describe('main process', () => {
  const win = () => fake.current.windows[0];
  type Item = { id?: string; label?: string; role?: string; accelerator?: string; click?: () => void; submenu?: Item[] };

  it('takes the single-instance lock and enables the sandbox before ready', () => {
    expect(fake.current.electron.app.requestSingleInstanceLock).toHaveBeenCalled();
    expect(fake.current.electron.app.enableSandbox).toHaveBeenCalled();
    expect(fake.current.electron.app.listeners.has('second-instance')).toBe(true);
  });

  it('registers the app:// scheme as privileged before ready, and serves it once ready', async () => {
    const { protocol, app } = fake.current.electron;
    expect(protocol.registerSchemesAsPrivileged).toHaveBeenCalledWith([{ scheme: 'app', privileges: APP_SCHEME_PRIVILEGES }]);
    expect(protocol.registerSchemesAsPrivileged.mock.invocationCallOrder[0]).toBeLessThan(app.whenReady.mock.invocationCallOrder[0]!);
    expect(protocol.handle).toHaveBeenCalledTimes(1);
    const [scheme, handler] = protocol.handle.mock.calls[0] as [string, (r: { url: string; method: string }) => Promise<Response>];
    expect(scheme).toBe('app');
    const refused = await handler({ url: 'app://klx/..%2f..%2fmain%2fmain.js', method: 'GET' });
    expect([refused.status, refused.headers.get('content-security-policy')]).toEqual([403, CONTENT_SECURITY_POLICY]);
  });

  it('creates one window with contextIsolation, sandbox and no Node integration, loading app://klx/index.html', () => {
    expect(fake.current.windows).toHaveLength(1);
    const prefs = win().options.webPreferences as Record<string, unknown>;
    expect(prefs).toMatchObject({ contextIsolation: true, sandbox: true, nodeIntegration: false, webviewTag: false, devTools: true });
    expect(String(prefs.preload)).toMatch(/preload[\\/]preload\.cjs$/);
    expect(win().loaded).toEqual({ url: 'app://klx/index.html' });
  });

  it('hardens every web contents when it is created (web-contents-created): window.open, navigation off our origin, webviews, permissions', () => {
    expect(fake.current.electron.app.listeners.get('web-contents-created')).toHaveLength(1);
    for (const contents of [win().webContents, new fake.current.electron.BrowserWindow({}).webContents]) {
      expect(contents.windowOpenHandler?.({ url: 'https://evil.example' })).toEqual({ action: 'deny' });
      for (const [name, url, prevented] of [
        ['will-navigate', 'https://evil.example', true],
        ['will-redirect', 'file:///etc/passwd', true],
        ['will-attach-webview', 'app://klx/index.html', true],
        ['will-navigate', 'app://klx/index.html#/x', false],
      ] as const) {
        const event = { preventDefault: vi.fn(), url };
        contents.emit(name, event, url);
        expect(event.preventDefault.mock.calls.length > 0, `${name} ${url}`).toBe(prevented);
      }
      const permission = contents.session.setPermissionRequestHandler.mock.calls[0]![0] as (c: unknown, p: string, cb: (ok: boolean) => void, d: unknown) => void;
      const answer = vi.fn();
      permission({}, 'media', answer, { requestingUrl: 'app://klx/index.html' });
      expect(answer).toHaveBeenCalledWith(false);
      expect(contents.session.setPermissionCheckHandler).toHaveBeenCalledTimes(1);
    }
    fake.current.windows.pop();
  });

  it('adds the CSP header to every response of the session (the dev server\'s; app:// responses carry it from their handler)', () => {
    const session = fake.current.electron.session.defaultSession;
    const headers = session.webRequest.onHeadersReceived.mock.calls[0][0] as (d: unknown, cb: (r: unknown) => void) => void;
    const done = vi.fn();
    headers({ responseHeaders: { A: ['b'] } }, done);
    expect(done).toHaveBeenCalledWith({ responseHeaders: { A: ['b'], 'Content-Security-Policy': [CONTENT_SECURITY_POLICY] } });
  });

  it('opens KLX_OPEN_DIR (what `npm start` opens: the demo log directory) in the session before the window loads', async () => {
    const folders = await fake.current.handlers.get('klx:session.folders')!({ senderFrame: { url: win().loaded!.url!, parent: null } }, {});
    expect(folders).toMatchObject({ ok: true, result: { opened: [realpathSync(openAtStart)] } });
  });

  it('registers IPC handlers for exactly the contract methods', () => {
    expect([...fake.current.handlers.keys()].sort()).toEqual(METHOD_NAMES.map((m) => `klx:${m}`).sort());
  });

  it('checks the sender: the renderer page is trusted, anything else is rejected', async () => {
    const ok = await fake.current.handlers.get('klx:app.info')!({ senderFrame: { url: 'app://klx/index.html#/x', parent: null } }, {});
    expect(ok).toMatchObject({ ok: true, result: { transport: 'electron', version: '0.1.0' } });
    await expect(fake.current.handlers.get('klx:app.info')!({ senderFrame: { url: 'http://localhost:5173/', parent: null } }, {})).rejects.toThrow();
    await expect(fake.current.handlers.get('klx:app.info')!({ senderFrame: { url: 'file:///opt/klx/out/renderer/index.html', parent: null } }, {})).rejects.toThrow();
  });

  it('has a menu with Open Folder… (CmdOrCtrl+O), Reload, Toggle DevTools and Quit', () => {
    const template = fake.current.electron.Menu.buildFromTemplate.mock.calls.at(-1)![0] as Item[];
    const items = template.flatMap((m) => [m, ...(m.submenu ?? [])]);
    expect(items.find((i) => i.id === 'open-folder')).toMatchObject({ label: 'Open Folder…', accelerator: 'CmdOrCtrl+O' });
    expect(items.find((i) => i.role === 'reload')).toBeDefined();
    expect(items.find((i) => i.role === 'toggleDevTools')).toBeDefined();
    expect(items.find((i) => i.role === 'quit' || i.role === 'close')).toBeDefined();
    expect(fake.current.electron.Menu.setApplicationMenu).toHaveBeenCalled();
  });

  it('File › Open Folder… opens the chosen folder, tells the window, and records it in the settings file', async () => {
    fake.current.electron.dialog.showOpenDialog.mockResolvedValueOnce({ canceled: false, filePaths: [userData] });
    const template = fake.current.electron.Menu.buildFromTemplate.mock.calls.at(-1)![0] as Item[];
    const open = template.flatMap((m) => m.submenu ?? []).find((i) => i.id === 'open-folder')!;
    open.click!();
    await vi.waitFor(() => expect(win().webContents.sent).toContainEqual({ channel: 'klx:event', payload: { type: 'session.opened', path: userData } }));
    const settings = JSON.parse(readFileSync(join(userData, 'klx-settings.json'), 'utf8'));
    expect(settings.recentFolders).toEqual([userData, realpathSync(openAtStart)]); // newest first
    const latest = fake.current.electron.Menu.buildFromTemplate.mock.calls.at(-1)![0] as Item[];
    const recent = latest.flatMap((m) => m.submenu ?? []).find((i) => i.id === 'open-recent')!;
    expect(recent.submenu?.map((i) => i.label)).toEqual([userData, realpathSync(openAtStart)]);
  });

  it('forwards job events to the window', async () => {
    const out = (await fake.current.handlers.get('klx:demo.sleepJob')!({ senderFrame: { url: 'app://klx/index.html', parent: null } }, { ticks: 1, intervalMs: 0 })) as {
      result: { jobId: string };
    };
    await vi.waitFor(() =>
      expect(win().webContents.sent).toContainEqual({
        channel: 'klx:event',
        payload: { type: 'job.end', jobId: out.result.jobId, method: 'demo.sleepJob', ok: true, result: { ticks: 1 } },
      }),
    );
  });

  it('saves the window bounds on close', () => {
    win().emit('close');
    const settings = JSON.parse(readFileSync(join(userData, 'klx-settings.json'), 'utf8'));
    expect(settings.window).toEqual({ x: 10, y: 20, width: 1000, height: 700, maximized: false });
    expect(existsSync(join(userData, 'klx-settings.json'))).toBe(true);
  });
});
