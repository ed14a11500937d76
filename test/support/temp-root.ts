/**
 * Vitest global setup: every temporary file of a test run goes under one folder of its own,
 * removed when the run ends, so runs leave nothing in the system's temporary folder.
 *
 * The root is `<tmpdir>/klx-vitest-<pid>-XXXXXX`; it becomes `TMPDIR` of this process before the
 * test workers start, so `os.tmpdir()` in the tests, in the code under test and in every `klx`
 * process a test spawns (they inherit the environment) points into it. At the end it is removed
 * unless `KLX_KEEP_TEST_TMP=1` (then its path is printed). Roots of earlier runs whose process is
 * gone (a run killed before its teardown) are removed at the start.
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isProcessAlive } from '../../src-main/engine/log/log-lock.ts';

const PREFIX = 'klx-vitest-';

export default function setup(): () => void {
  const base = tmpdir();
  for (const name of readdirSync(base)) {
    if (!name.startsWith(PREFIX)) continue;
    const pid = Number(name.slice(PREFIX.length).split('-')[0]);
    if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && !isProcessAlive(pid)) rmSync(join(base, name), { recursive: true, force: true });
  }
  const root = mkdtempSync(join(base, `${PREFIX}${process.pid}-`));
  process.env.TMPDIR = root;
  return () => {
    if (process.env.KLX_KEEP_TEST_TMP === '1') {
      console.log(`test temporary files kept in ${root}`);
      return;
    }
    rmSync(root, { recursive: true, force: true });
  };
}
