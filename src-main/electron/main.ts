/**
 * Electron main process, kept thin: the decisions live in files without Electron imports
 * (`security.ts`, `menu.ts`, `settings.ts`, the API in `../api/`), this file only wires them up.
 *
 * - single instance (a second launch focuses the first window);
 * - the renderer is served from `app://klx/` (a privileged standard scheme registered before
 *   `ready`, `protocol.handle` serving only files of the built renderer folder, with the CSP header;
 *   `security.ts`), never from `file://`;
 * - one window: contextIsolation, sandbox, no Node integration, no DevTools when packaged; every web
 *   contents (`web-contents-created`) has window.open denied, navigation off our origin and webviews
 *   prevented, permission requests refused (clipboard writes from our page aside); the CSP header
 *   also on the dev server's responses;
 * - IPC: exactly the contract's methods (`ipc.ts`), callers checked to be our renderer's top frame;
 *   events (job progress/end, folder opened) forwarded to the window;
 * - File › Open Folder… dialog; recent folders and window bounds in `<userData>/klx-settings.json`
 *   (`klx serve` keeps its recent folders in the app's data folder, `recent-folders.json`);
 * - each opened folder is watched (`api/core/folder-watcher.ts`): changes on disk reach the window.
 *
 * `--read-only` on the command line refuses every write method. `KLX_DEMO_DIR` names a demo folder;
 * `KLX_OPEN_DIR` (set by `npm start`: the demo log directory or the folder given) is opened in the
 * session before the window loads, so the page shows it at once.
 * The engine never imports this file.
 */
import { app, BrowserWindow, dialog, Menu, protocol, session } from 'electron';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { CONTENT_SECURITY_POLICY } from '../../src-shared/csp.ts';
import { createServerApi, type ServerApi } from '../api/index.ts';
import { configureSql } from '../api/sql/sql-sessions.ts';
import { APP_NAME } from '../api/app/app.ts';
import type { DispatchOptions } from '../api/core/dispatch.ts';
import { EVENT_CHANNEL } from './channels.ts';
import { registerIpc } from './ipc.ts';
import { buildMenuTemplate } from './menu.ts';
import { APP_ENTRY_URL, APP_SCHEME, APP_SCHEME_PRIVILEGES, hardenContents, isTrustedSender, secureWebPreferences, serveRendererRequest, type TrustedRenderer } from './security.ts';
import { SettingsStore } from './settings.ts';
import { appDataDir, decodeChoicesFile, fileDecodeChoicesStore } from '../api/core/decode-choices-store.ts';
import { folderWatchersOf } from '../api/core/folder-watcher.ts';

const here = dirname(fileURLToPath(import.meta.url));
const rendererDir = join(here, '../renderer');
const preloadFile = join(here, '../preload/preload.cjs');
const devServerUrl = !app.isPackaged ? process.env.ELECTRON_RENDERER_URL : undefined;
const trusted: TrustedRenderer = { rendererDir, devServerUrl };
const dispatchOptions: DispatchOptions = { readOnly: process.argv.includes('--read-only') };

let mainWindow: BrowserWindow | null = null;

function createWindow(settings: SettingsStore): BrowserWindow {
  const saved = settings.get().window;
  const win = new BrowserWindow({
    width: saved?.width ?? 1280,
    height: saved?.height ?? 800,
    ...(saved?.x !== undefined && saved?.y !== undefined ? { x: saved.x, y: saved.y } : {}),
    minWidth: 640,
    minHeight: 400,
    title: APP_NAME,
    show: false,
    webPreferences: secureWebPreferences(preloadFile, !app.isPackaged),
  });
  if (saved?.maximized) win.maximize();
  win.once('ready-to-show', () => win.show());
  win.on('close', () => {
    const b = win.getNormalBounds();
    try {
      settings.update({ window: { x: b.x, y: b.y, width: b.width, height: b.height, maximized: win.isMaximized() } });
    } catch {
      // an unwritable settings file must not block closing
    }
  });
  win.on('closed', () => {
    if (mainWindow === win) mainWindow = null;
  });
  void win.loadURL(devServerUrl ?? APP_ENTRY_URL);
  return win;
}

async function openFolder(server: ServerApi, path?: string): Promise<void> {
  let chosen = path;
  if (chosen === undefined) {
    const options = { title: 'Open a Kafka log folder', properties: ['openDirectory' as const] };
    const answer = mainWindow ? await dialog.showOpenDialog(mainWindow, options) : await dialog.showOpenDialog(options);
    if (answer.canceled || answer.filePaths.length === 0) return;
    chosen = answer.filePaths[0];
  }
  const result = await server.dispatch('session.open', { path: chosen }, dispatchOptions);
  if (!result.ok) dialog.showErrorBox('Cannot open the folder', result.error.message);
}

function setMenu(server: ServerApi, settings: SettingsStore): void {
  const template = buildMenuTemplate(
    { openFolder: () => void openFolder(server), openRecent: (p) => void openFolder(server, p) },
    settings.get().recentFolders,
    process.platform,
    app.isPackaged,
  );
  Menu.setApplicationMenu(Menu.buildFromTemplate(template));
}

async function start(): Promise<void> {
  const settings = SettingsStore.load(join(app.getPath('userData'), 'klx-settings.json'));
  const server = createServerApi({
    version: app.getVersion(),
    transport: 'electron',
    demoDir: process.env.KLX_DEMO_DIR,
    recent: settings.recentStore(),
    watch: {},
    // Format choices per opened folder, in the app's data folder (never in the opened folder), where
    // `klx serve`, `klx fetch` and `klx query` read them too; earlier versions kept them in userData.
    decodeChoices: fileDecodeChoicesStore(decodeChoicesFile(appDataDir()), decodeChoicesFile(app.getPath('userData'))),
  });
  // SQL table sets and exports live in the app's user-data folder (klx query keeps its own cache).
  configureSql(server.ctx, { cacheDir: join(app.getPath('userData'), 'sql-cache') });

  protocol.handle(APP_SCHEME, (request) => serveRendererRequest(request, rendererDir));
  // The app:// responses carry the CSP from their handler; this adds it to the dev server's.
  session.defaultSession.webRequest.onHeadersReceived((details, callback) => {
    callback({ responseHeaders: { ...details.responseHeaders, 'Content-Security-Policy': [CONTENT_SECURITY_POLICY] } });
  });
  registerIpc({ dispatch: server.dispatch, options: dispatchOptions, isTrusted: (event) => isTrustedSender(event.senderFrame, trusted) });

  server.ctx.events.subscribe((event) => {
    if (mainWindow && !mainWindow.isDestroyed()) mainWindow.webContents.send(EVENT_CHANNEL, event);
    if (event.type === 'session.opened') setMenu(server, settings); // refresh Open Recent
  });
  setMenu(server, settings);
  const openAtStart = process.env.KLX_OPEN_DIR;
  if (openAtStart) {
    const opened = await server.dispatch('session.open', { path: openAtStart }, dispatchOptions);
    if (!opened.ok) dialog.showErrorBox('Cannot open the folder', opened.error.message);
  }
  mainWindow = createWindow(settings);

  app.on('activate', () => {
    if (BrowserWindow.getAllWindows().length === 0) mainWindow = createWindow(settings);
  });
  app.on('before-quit', () => {
    folderWatchersOf(server.ctx)?.close();
    void server.ctx.jobs.shutdown();
  });
}

// Before ready: the renderer's scheme, and the hardening of every web contents ever created.
protocol.registerSchemesAsPrivileged([{ scheme: APP_SCHEME, privileges: APP_SCHEME_PRIVILEGES }]);
app.on('web-contents-created', (_event, contents) => hardenContents(contents, trusted));

if (!app.requestSingleInstanceLock()) {
  app.quit();
} else {
  app.enableSandbox();
  app.on('second-instance', () => {
    if (!mainWindow) return;
    if (mainWindow.isMinimized()) mainWindow.restore();
    mainWindow.focus();
  });
  app.on('window-all-closed', () => {
    if (process.platform !== 'darwin') app.quit();
  });
  void app.whenReady().then(start);
}
