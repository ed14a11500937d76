/**
 * `npm start`, as the README's first command promises: with no folder it opens the demo log
 * directory. Electron cannot start here, so this drives the bridge fallback (`KLX_NO_ELECTRON=1`):
 * the printed URL shows the demo folder in the tree with its first partition selected, not
 * "Nothing opened yet". (Electron's side, KLX_OPEN_DIR opened before the window loads, is covered in
 * test/electron/main.test.ts.)
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SCREENSHOTS, expect, test } from './fixtures.ts';

let child: ChildProcess | undefined;
let tmp = '';

test.afterEach(() => {
  if (child && child.exitCode === null && child.pid !== undefined) child.kill('SIGTERM');
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

test('npm start with no folder opens the demo log directory (bridge fallback)', async ({ page }) => {
  test.setTimeout(90_000);
  tmp = realpathSync(mkdtempSync(join(tmpdir(), 'klx-e2e-start-')));
  const demo = join(tmp, 'demo-logs');
  child = spawn(process.execPath, ['--import', 'tsx', 'src-main/cli/start.ts'], {
    cwd: join(import.meta.dirname, '..', '..'),
    env: { ...process.env, KLX_NO_ELECTRON: '1', KLX_DEMO_DIR: demo, KLX_PORT: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const url = await new Promise<string>((resolveUrl, reject) => {
    let out = '';
    child!.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /Open (http:\/\/127\.0\.0\.1:\d+\/#token=\S+)/.exec(out);
      if (m) resolveUrl(m[1]);
    });
    child!.on('exit', (code) => reject(new Error(`npm start exited with ${code}: ${stderr}`)));
  });
  expect(stderr).toContain('serving the same UI through the loopback bridge');
  expect(existsSync(demo)).toBe(true);

  await page.goto(url);
  await expect(page.locator('[data-testid=app-loaded]')).toBeVisible();
  await expect(page.getByTestId('opened-folders')).toContainText(demo);
  await expect(page.getByTestId('open-view')).toHaveCount(0);
  await expect(page.getByTestId('partition-header')).toBeVisible();
  await expect(page.getByTestId('tree-partition').first()).toBeVisible();
  await page.screenshot({ path: `${SCREENSHOTS}/start-demo.png` });
});
