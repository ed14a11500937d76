/**
 * Playwright global setup: builds the renderer (`npx electron-vite build`) when `out/renderer` is
 * missing or older than the renderer's or the contract's sources, so the tests never run a stale page.
 */
import { ensureRendererBuilt } from '../../src-main/bridge/build.ts';

export default function globalSetup(): void {
  if (ensureRendererBuilt({ ifStale: true })) process.stderr.write('e2e: built the renderer\n');
}
