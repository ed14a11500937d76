/**
 * Which frames may call the API, the window preferences, the settings file and the menu template
 * (the Electron-free parts of the glue).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { buildMenuTemplate } from '../../src-main/electron/menu.ts';
import { isTrustedRendererUrl, isTrustedSender, secureWebPreferences } from '../../src-main/electron/security.ts';
import { RECENT_LIMIT, SettingsStore } from '../../src-main/electron/settings.ts';

const rendererFile = join('/opt', 'klx', 'out', 'renderer', 'index.html');
const fileUrl = pathToFileURL(rendererFile).href;

describe('isTrustedRendererUrl', () => {
  it('trusts the renderer file, with any hash or query', () => {
    expect(isTrustedRendererUrl(fileUrl, { rendererFile })).toBe(true);
    expect(isTrustedRendererUrl(`${fileUrl}#/topics`, { rendererFile })).toBe(true);
  });

  it('refuses other files, remote pages, file URLs with a host, data and blob URLs, garbage', () => {
    for (const url of [
      pathToFileURL('/opt/klx/out/renderer/other.html').href,
      pathToFileURL('/tmp/index.html').href,
      'file://host/opt/klx/out/renderer/index.html',
      'https://example.com/index.html',
      'data:text/html,<script>1</script>',
      'blob:https://example.com/1',
      'about:blank',
      'not a url',
    ]) {
      expect(isTrustedRendererUrl(url, { rendererFile }), url).toBe(false);
    }
  });

  it('trusts the dev server origin only when one is configured', () => {
    expect(isTrustedRendererUrl('http://localhost:5173/src/x', { rendererFile, devServerUrl: 'http://localhost:5173' })).toBe(true);
    expect(isTrustedRendererUrl('http://localhost:5174/', { rendererFile, devServerUrl: 'http://localhost:5173' })).toBe(false);
    expect(isTrustedRendererUrl('http://localhost:5173/', { rendererFile })).toBe(false);
  });

  it('trusts only the top frame', () => {
    expect(isTrustedSender({ url: fileUrl, parent: null }, { rendererFile })).toBe(true);
    expect(isTrustedSender({ url: fileUrl, parent: {} }, { rendererFile })).toBe(false);
    expect(isTrustedSender(null, { rendererFile })).toBe(false);
  });
});

describe('secureWebPreferences', () => {
  it('isolates and sandboxes the renderer', () => {
    expect(secureWebPreferences('/p.cjs')).toMatchObject({ preload: '/p.cjs', contextIsolation: true, sandbox: true, nodeIntegration: false, webviewTag: false, webSecurity: true });
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
  });
});
