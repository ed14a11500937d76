/**
 * What `klx` loads before it does anything (src-main/cli/registry.ts): `--help`, `--version` and a
 * usage error load no command implementation and none of the engine beyond its import-free constant
 * modules; a command loads its own implementation only — `klx dump` never DuckDB, zod or the bridge.
 * Spawned as a user runs it, with module hooks recording every module the ES loader loads.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildPartition, rec, singles, tempDir } from '../support/log-builder.ts';
import { REPO_ROOT } from '../support/real-data.ts';

/** Runs klx and returns the repo-relative paths of the modules it loaded (node: built-ins left out). */
function loadsOf(...args: string[]): { status: number | null; loaded: string[] } {
  const file = join(tempDir('klx-loads-'), 'loads.txt');
  const r = spawnSync(process.execPath, ['--import', join(REPO_ROOT, 'test/support/record-loads.mjs'), join(REPO_ROOT, 'bin/klx.mjs'), ...args], {
    encoding: 'utf8',
    env: { ...process.env, KLX_RECORD_LOADS: file },
  });
  let text = '';
  try {
    text = readFileSync(file, 'utf8');
  } finally {
    rmSync(file, { force: true });
  }
  const root = new URL(`file://${REPO_ROOT}/`).href;
  const loaded = text
    .split('\n')
    .filter((u) => u.startsWith('file:'))
    .map((u) => u.replace(root, '').replace(/\?.*$/, ''));
  return { status: r.status, loaded };
}

/**
 * The engine modules registering the commands may load: constants, the config-flag parser, and the
 * symlink policy behind the global `--follow-symlinks` (a 100-line leaf that imports only node:fs and
 * node:path).
 */
const CHEAP_ENGINE = ['src-main/engine/errors.ts', 'src-main/engine/files/symlinks.ts', 'src-main/engine/format/types.ts', 'src-main/engine/log/read-defaults.ts', 'src-main/engine/log/topic-config.ts', 'src-main/engine/sql/sql-defaults.ts'];
const HEAVY_PACKAGES = /node_modules\/(@duckdb|snappy|lz4-napi|zstd-napi|zod|@node-rs)\//;

describe('klx start-up loads only what the command needs', () => {
  it.each(['--help', '--version', 'nosuch-command', 'fetch --help'])('klx %s loads no command implementation and no engine beyond its constants', (line) => {
    const { loaded } = loadsOf(...line.split(' '));
    expect(loaded).toContain('src-main/cli/registry.ts');
    expect(loaded.filter((p) => p.startsWith('src-main/cli/commands/'))).toEqual([]);
    expect(loaded.filter((p) => p.startsWith('src-main/') && !p.startsWith('src-main/cli/') && !CHEAP_ENGINE.includes(p))).toEqual([]);
    expect(loaded.filter((p) => HEAVY_PACKAGES.test(p))).toEqual([]);
  });

  it('klx dump loads the dump command and the log reader, not DuckDB, zod, the bridge or the other commands', () => {
    const dir = buildPartition(tempDir('klx-startup-'), { segments: [{ batches: singles(rec('k', 'v', 1000)) }] });
    const { status, loaded } = loadsOf('dump', join(dir, '00000000000000000000.log'));
    expect(status).toBe(0);
    expect(loaded).toContain('src-main/cli/commands/dump.ts');
    expect(loaded).toContain('src-main/engine/format/log-reader.ts');
    expect(loaded.filter((p) => p.startsWith('src-main/cli/commands/') && !/commands\/dump(-index)?\.ts$/.test(p))).toEqual([]);
    expect(loaded.filter((p) => /src-main\/(api|bridge|engine\/cleaner)\//.test(p) || (p.startsWith('src-main/engine/sql/') && !CHEAP_ENGINE.includes(p)))).toEqual([]);
    expect(loaded.filter((p) => /node_modules\/(@duckdb|zod)\//.test(p))).toEqual([]);
  });
});
