/**
 * Security decisions of the Electron glue, kept free of Electron imports so they are unit-tested
 * directly: which frames may call the API, and the window's web preferences.
 */
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Where our renderer comes from. */
export interface TrustedRenderer {
  /** Absolute path of the built `out/renderer/index.html`. */
  rendererFile: string;
  /** The electron-vite dev server URL (`ELECTRON_RENDERER_URL`), only when not packaged. */
  devServerUrl?: string;
}

/** Whether `url` is our renderer page: the `file://` URL of `rendererFile` (any hash/query) or the dev server's origin. */
export function isTrustedRendererUrl(url: string, trusted: TrustedRenderer): boolean {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return false;
  }
  if (parsed.protocol === 'file:') {
    if (parsed.host !== '') return false; // file://server/share is not ours
    try {
      return resolve(fileURLToPath(parsed)) === resolve(trusted.rendererFile);
    } catch {
      return false;
    }
  }
  if (trusted.devServerUrl) {
    try {
      return parsed.origin === new URL(trusted.devServerUrl).origin;
    } catch {
      return false;
    }
  }
  return false;
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

/** The renderer window's web preferences: isolated, sandboxed, no Node, no webviews. */
export function secureWebPreferences(preload: string) {
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
  } as const;
}
