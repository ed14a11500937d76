/**
 * The application menu as a template (no Electron import at run time, so it is unit-tested):
 * File › Open Folder… (Ctrl/Cmd+O), Open Recent, Quit; Edit (the usual roles, needed on macOS for
 * copy/paste in text fields); View › Reload, Toggle Developer Tools (not in a packaged app), zoom,
 * full screen; Window.
 */
import type { MenuItemConstructorOptions } from 'electron';

/** What the menu's own items do. */
export interface MenuActions {
  openFolder(): void;
  openRecent(path: string): void;
}

/**
 * Builds the menu template for `platform` (macOS gets the app menu first). `packaged` (Electron's
 * `app.isPackaged`): a packaged app has no Toggle Developer Tools item (and its window no DevTools).
 */
export function buildMenuTemplate(actions: MenuActions, recent: readonly string[], platform: NodeJS.Platform = process.platform, packaged = false): MenuItemConstructorOptions[] {
  const mac = platform === 'darwin';
  const recentItems: MenuItemConstructorOptions[] =
    recent.length === 0 ? [{ label: 'No recent folders', enabled: false }] : recent.map((path) => ({ label: path, click: () => actions.openRecent(path) }));
  const file: MenuItemConstructorOptions = {
    label: 'File',
    submenu: [
      { id: 'open-folder', label: 'Open Folder…', accelerator: 'CmdOrCtrl+O', click: () => actions.openFolder() },
      { id: 'open-recent', label: 'Open Recent', submenu: recentItems },
      { type: 'separator' },
      mac ? { role: 'close' } : { id: 'quit', role: 'quit', accelerator: 'Ctrl+Q' },
    ],
  };
  const view: MenuItemConstructorOptions = {
    label: 'View',
    submenu: [
      { id: 'reload', role: 'reload', accelerator: 'CmdOrCtrl+R' },
      { role: 'forceReload' },
      ...(packaged ? [] : [{ id: 'toggle-devtools', role: 'toggleDevTools', accelerator: mac ? 'Alt+Cmd+I' : 'Ctrl+Shift+I' } as MenuItemConstructorOptions]),
      { type: 'separator' },
      { role: 'resetZoom' },
      { role: 'zoomIn' },
      { role: 'zoomOut' },
      { type: 'separator' },
      { role: 'togglefullscreen' },
    ],
  };
  return [...(mac ? [{ role: 'appMenu' } as MenuItemConstructorOptions] : []), file, { role: 'editMenu' }, view, { role: 'windowMenu' }];
}
