/**
 * `klx export` stopped by signals, with a real process (fresh tester's finding: one Ctrl-C under
 * `tsx`, which forwards it so the process gets two, killed the cleanup and left the hidden staging
 * and a partial Parquet folder, and the next export failed with EEXIST):
 * - SIGINTs to the process group while it writes and while it cleans up: exit 130 with a line saying so, and nothing
 *   left beside the output (no partial output, no staging);
 * - SIGKILL: the hidden partial output of that process is left (never under the name asked for);
 *   the next export to the same output removes it (its process is gone) and writes the output whole.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { DuckDBInstance } from '@duckdb/node-api';
import { describe, expect, it } from 'vitest';
import { encodeBatch } from '../../src-main/engine/format/record-batch.ts';
import { buildPartition, rec, tempDir } from '../support/log-builder.ts';
import { klx } from '../support/klx-cli.ts';
import { REPO_ROOT } from '../support/real-data.ts';

const BATCHES = 800;
const PER_BATCH = 100;

/** A partition of 80,000 records (800 batches of 100, ~240-byte values): a few seconds of export. */
function bigPartition(): string {
  const root = tempDir('klx-export-int-');
  const batches = Array.from({ length: BATCHES }, (_, b) =>
    encodeBatch({ baseOffset: BigInt(b * PER_BATCH), records: Array.from({ length: PER_BATCH }, (_, i) => rec(`k${b * PER_BATCH + i}`, `{"n":${b * PER_BATCH + i},"pad":"${'x'.repeat(220)}"}`, 1000 + b)) }),
  );
  return buildPartition(root, { topic: 'big', segments: [{ batches }] });
}

/** Starts `klx export` in its own process group; resolves once its hidden partial output exists. */
async function started(dir: string, out: string): Promise<{ child: ChildProcess; stderrOf: () => string; exit: Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }> }> {
  const child = spawn(process.execPath, [join(REPO_ROOT, 'bin/klx.mjs'), 'export', dir, '--format', 'parquet', '--out', out], { detached: true, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>((resolve) => child.on('close', (code, signal) => resolve({ code, signal, stderr })));
  const partial = join(out, '..', `.x.klx-partial-${child.pid}`);
  for (let i = 0; i < 600 && !existsSync(partial); i++) await sleep(25);
  expect(existsSync(partial), stderr).toBe(true);
  return { child, exit, stderrOf: () => stderr };
}

describe('klx export under signals', () => {
  it('SIGINTs to the process group while it writes, and more while it cleans up: exit 130 saying so, nothing left beside the output', async () => {
    const dir = bigPartition();
    const outDir = tempDir('klx-export-int-out-');
    const out = join(outDir, 'x');
    const { child, exit, stderrOf } = await started(dir, out);
    // Ctrl-C, then more of them while it cleans up (tsx forwards each one too): every 10 ms until it says
    // the cleanup is over (after that, Node's own exit may restore the default action before the process is gone).
    let done = false;
    const r0 = exit.then((x) => ((done = true), x));
    let sent = 0;
    while (!done && !stderrOf().includes('klx: interrupted')) {
      try {
        process.kill(-child.pid!, 'SIGINT');
        sent++;
      } catch {
        break; // the group is gone
      }
      await sleep(10);
    }
    const r = await r0;
    expect(sent).toBeGreaterThan(1);
    expect([r.code, r.signal], r.stderr).toEqual([130, null]);
    expect(r.stderr).toContain(`klx: interrupted (Ctrl-C): nothing written to ${out} (the partial output was removed)`);
    expect(readdirSync(outDir)).toEqual([]);
  }, 60_000);

  it('after a SIGKILL the next export to the same output removes what the killed one left and writes every record', async () => {
    const dir = bigPartition();
    const outDir = tempDir('klx-export-kill-out-');
    const out = join(outDir, 'x');
    const { child, exit } = await started(dir, out);
    process.kill(-child.pid!, 'SIGKILL');
    const r = await exit;
    expect(r.signal).toBe('SIGKILL');
    expect(readdirSync(outDir)).toEqual([`.x.klx-partial-${child.pid}`]);
    const again = klx('export', dir, '--format', 'parquet', '--out', out, '--json');
    expect(again.status, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ records: BATCHES * PER_BATCH });
    expect(readdirSync(outDir)).toEqual(['x']);
    const db = await DuckDBInstance.create(':memory:');
    const c = await db.connect();
    const got = await (await c.run(`SELECT count(*) AS n, min("offset") AS lo, max("offset") AS hi, count(DISTINCT "offset") AS d FROM read_parquet('${out}/**/*.parquet')`)).getRowObjectsJS();
    c.closeSync();
    db.closeSync();
    expect(got).toEqual([{ n: 80000n, lo: 0n, hi: 79999n, d: 80000n }]);
  }, 60_000);
});
