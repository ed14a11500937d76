/**
 * `klx serve [DIR...] [--port N] [--read-only]`: runs the app in a browser. Starts the loopback bridge
 * on 127.0.0.1 (building the renderer first if `out/renderer/index.html` is missing) and prints the
 * URL with its access token on stdout (`http://127.0.0.1:PORT/#token=…`: the token in the fragment,
 * which the browser never sends; see `../../bridge/server.ts`); runs until Ctrl+C (SIGINT) or SIGTERM.
 *
 * With folders, the bridge is confined to them: they are opened at start and nothing outside them
 * can be reached (not even by folder completion). `--read-only` refuses every method that writes.
 */
import { resolve } from 'node:path';
import { ensureRendererBuilt, RENDERER_DIR } from '../../bridge/build.ts';
import { startBridge } from '../../bridge/server.ts';
import { appDataDir } from '../../api/core/decode-choices-store.ts';
import { recentFoldersFile } from '../../api/core/recent-store.ts';

export interface ServeOptions {
  port: number;
  readOnly?: boolean;
}

/** Runs `klx serve` (its options and help are declared in `../registry.ts`). */
export async function runServe(dirs: readonly string[] | string | undefined, opts: ServeOptions): Promise<void> {
  const folders = dirs === undefined ? [] : typeof dirs === 'string' ? [dirs] : [...dirs];
  if (opts.port > 65535) throw new Error(`--port must be at most 65535, got ${opts.port}`);
  if (ensureRendererBuilt()) process.stderr.write('klx serve: built the renderer into out/renderer\n');
  const bridge = await startBridge({
    port: opts.port,
    readOnly: opts.readOnly === true,
    roots: folders.map((d) => resolve(d)),
    rendererDir: RENDERER_DIR,
    demoDir: process.env.KLX_DEMO_DIR,
    recentFile: recentFoldersFile(appDataDir()),
  });
  process.stderr.write(
    `klx serve: listening on ${bridge.origin}${bridge.readOnly ? ' (read-only)' : ''}${bridge.roots.length ? `, confined to ${bridge.roots.join(', ')}` : ''}; Ctrl+C stops\n`,
  );
  process.stdout.write(`${bridge.url}\n`);
  await new Promise<void>((done) => {
    const stop = (): void => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      void bridge.close().then(done);
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}
