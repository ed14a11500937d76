/** Runs the `klx` CLI (bin/klx.mjs) in a child process, for the CLI tests. */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { REPO_ROOT } from './real-data.ts';

/** What a `klx` run printed and its exit status (null when killed by a signal). */
export interface KlxRun {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `klx ...args` and waits for it; stdout up to 256 MiB. */
export function klx(...args: string[]): KlxRun {
  return klxWithEnv(args);
}

/** Runs `klx ...args` with `env` added to this process's environment. */
export function klxWithEnv(args: string[], env: NodeJS.ProcessEnv = {}): KlxRun {
  const r = spawnSync(process.execPath, [join(REPO_ROOT, 'bin/klx.mjs'), ...args], { encoding: 'utf8', env: { ...process.env, ...env }, maxBuffer: 1 << 28 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}
