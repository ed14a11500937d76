/**
 * Playwright global setup: builds the renderer (`npx electron-vite build`) when `out/renderer` is
 * missing or older than the renderer's or the contract's sources, so the tests never run a stale page;
 * then puts the run's temporary files under one folder removed at the end (`test/support/temp-root.ts`).
 */
import { ensureRendererBuilt } from '../../src-main/bridge/build.ts';
import tempRoot from '../support/temp-root.ts';

export default function globalSetup(): () => void {
  if (ensureRendererBuilt({ ifStale: true })) process.stderr.write('e2e: built the renderer\n');
  return tempRoot();
}
