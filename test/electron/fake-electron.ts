/**
 * A fake of the parts of the `electron` module the glue uses, for `vi.mock('electron', ...)`.
 * Records what the code under test registers so tests can assert on it and drive it.
 */
import { vi } from 'vitest';

type Listener = (...args: unknown[]) => unknown;

/** A minimal event target like Electron's (on / once / emit). */
class Emitter {
  readonly listeners = new Map<string, Listener[]>();
  on(name: string, fn: Listener): this {
    this.listeners.set(name, [...(this.listeners.get(name) ?? []), fn]);
    return this;
  }
  once(name: string, fn: Listener): this {
    return this.on(name, fn);
  }
  emit(name: string, ...args: unknown[]): unknown[] {
    return (this.listeners.get(name) ?? []).map((fn) => fn(...args));
  }
}

/** Builds a fresh fake; `userData` is the folder `app.getPath('userData')` answers. */
export function makeFakeElectron(userData: string) {
  const handlers = new Map<string, Listener>();
  const windows: FakeWindow[] = [];
  const exposed = new Map<string, unknown>();
  const rendererListeners = new Map<string, Listener[]>();

  class FakeWebContents extends Emitter {
    windowOpenHandler?: (details: { url: string }) => unknown;
    readonly sent: { channel: string; payload: unknown }[] = [];
    readonly session = { setPermissionRequestHandler: vi.fn(), setPermissionCheckHandler: vi.fn() };
    constructor() {
      super();
      // As Electron does for every web contents it creates.
      app.emit('web-contents-created', {}, this);
    }
    setWindowOpenHandler(fn: (details: { url: string }) => unknown): void {
      this.windowOpenHandler = fn;
    }
    send(channel: string, payload: unknown): void {
      this.sent.push({ channel, payload });
    }
  }

  class FakeWindow extends Emitter {
    static getAllWindows = () => windows;
    readonly webContents = new FakeWebContents();
    loaded?: { file?: string; url?: string };
    constructor(readonly options: Record<string, unknown>) {
      super();
      windows.push(this);
    }
    loadFile(file: string) {
      this.loaded = { file };
      return Promise.resolve();
    }
    loadURL(url: string) {
      this.loaded = { url };
      return Promise.resolve();
    }
    show() {}
    focus() {}
    restore() {}
    maximize() {}
    isMinimized() {
      return false;
    }
    isMaximized() {
      return false;
    }
    isDestroyed() {
      return false;
    }
    getNormalBounds() {
      return { x: 10, y: 20, width: 1000, height: 700 };
    }
  }

  const app = Object.assign(new Emitter(), {
    isPackaged: false,
    requestSingleInstanceLock: vi.fn(() => true),
    enableSandbox: vi.fn(),
    quit: vi.fn(),
    whenReady: vi.fn(() => Promise.resolve()),
    getPath: vi.fn(() => userData),
    getVersion: vi.fn(() => '0.1.0'),
  });

  const electron = {
    app,
    BrowserWindow: FakeWindow,
    ipcMain: {
      handle: vi.fn((channel: string, fn: Listener) => {
        if (handlers.has(channel)) throw new Error(`second handler for ${channel}`);
        handlers.set(channel, fn);
      }),
      removeHandler: vi.fn((channel: string) => handlers.delete(channel)),
    },
    ipcRenderer: {
      invoke: vi.fn((channel: string, ...args: unknown[]) => Promise.resolve({ channel, args })),
      on: vi.fn((channel: string, fn: Listener) => rendererListeners.set(channel, [...(rendererListeners.get(channel) ?? []), fn])),
      removeListener: vi.fn((channel: string, fn: Listener) => rendererListeners.set(channel, (rendererListeners.get(channel) ?? []).filter((f) => f !== fn))),
    },
    contextBridge: { exposeInMainWorld: vi.fn((key: string, value: unknown) => exposed.set(key, value)) },
    dialog: { showOpenDialog: vi.fn(async () => ({ canceled: true, filePaths: [] as string[] })), showErrorBox: vi.fn() },
    protocol: { registerSchemesAsPrivileged: vi.fn(), handle: vi.fn() },
    Menu: { buildFromTemplate: vi.fn((t: unknown) => ({ template: t })), setApplicationMenu: vi.fn() },
    session: {
      defaultSession: {
        setPermissionRequestHandler: vi.fn(),
        webRequest: { onHeadersReceived: vi.fn() },
      },
    },
  };
  return { electron, handlers, windows, exposed, rendererListeners };
}

export type FakeElectron = ReturnType<typeof makeFakeElectron>;
