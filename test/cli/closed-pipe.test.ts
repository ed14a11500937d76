/**
 * A reader that closes stdout early (`klx dump … | head`, fresh tester's finding) ends the command quietly with
 * exit 0: no Node "Unhandled 'error' event … write EPIPE" crash, no "klx: io-error: write EPIPE". Through a real
 * shell pipe, on a copy of the broker-written multisegment-rolled/invoice-1 (99,523 records: far more than a pipe
 * buffer, so klx is still writing when `head` exits). A command that changes files (repair) goes on to the
 * end without printing and exits with its own code (review of stop 26: it exited 0 between two partitions).
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { encodeBatch } from '../../src-main/engine/format/record-batch.ts';
import { buildPartition, rec, tempDir } from '../support/log-builder.ts';
import { describeRealData, REAL_DATA, REPO_ROOT } from '../support/real-data.ts';

const KLX = `'${process.execPath}' '${join(REPO_ROOT, 'bin/klx.mjs')}'`;
const DIR = join(REAL_DATA, 'multisegment-rolled', 'invoice-1');

/** Runs `klx ARGS | TAIL` in bash: what the pipe's reader printed, klx's exit status and its stderr. */
function piped(args: string, tail: string, env: NodeJS.ProcessEnv = process.env): { out: string; status: number; stderr: string } {
  const r = spawnSync('bash', ['-c', `${KLX} ${args} | ${tail}; echo "status=\${PIPESTATUS[0]}"`], { encoding: 'utf8', env });
  const m = /status=(\d+)\n$/.exec(r.stdout);
  if (!m) throw new Error(`no status: ${r.stdout} ${r.stderr}`);
  return { out: r.stdout.slice(0, m.index), status: Number(m[1]), stderr: r.stderr };
}

describeRealData('klx writing into a closed pipe', () => {
  it('dump --deep --json | head -c 10, dump --deep | head -1 and fetch | head -1 exit 0 without an error', () => {
    const run = piped;
    expect(run(`dump '${DIR}' --deep --json`, 'head -c 10')).toEqual({ out: '{"type":"b', status: 0, stderr: '' });
    expect(run(`dump '${DIR}' --deep`, 'head -1')).toEqual({ out: 'Dumping 00000000000000000000.log\n', status: 0, stderr: '' });
    const f = run(`fetch '${DIR}' --offset 0 --max 100000`, 'head -1');
    expect([f.out.startsWith('offset 0 ts 1718446825592 '), f.status, f.stderr]).toEqual([true, 0, '']);
  }, 120_000);
});

describe('a command that changes files, writing into a closed pipe', () => {
  it('repair | head -1 over 250 crashed partitions repairs every one (about 100 KB of plan lines: the pipe closes mid-run) and exits 0', () => {
    const root = tempDir('klx-closed-pipe-repair-');
    const trash = tempDir('klx-closed-pipe-trash-');
    try {
      const partial = encodeBatch({ baseOffset: 3n, records: [rec('k3', 'x'.repeat(100), 2003)] }).subarray(0, 40);
      for (let p = 0; p < 250; p++) {
        buildPartition(root, { topic: 'orders', partition: p, segments: [{ batches: [0, 1, 2].map((i) => ({ baseOffset: BigInt(i), records: [rec(`k${i}`, 'x'.repeat(100), 2000 + i)] })), tail: partial }] });
      }
      const sizeBefore = statSync(join(root, 'orders-249', '00000000000000000000.log')).size;
      const r = piped(`repair '${root}'`, 'head -1', { ...process.env, KLX_TRASH_DIR: trash });
      expect([r.out.startsWith('orders-0: '), r.status, r.stderr]).toEqual([true, 0, '']);
      // Every partition lost its 40-byte partial batch, the last one too; no lock file is left.
      for (const p of [0, 125, 249]) expect(statSync(join(root, `orders-${p}`, '00000000000000000000.log')).size).toBe(sizeBefore - 40);
      expect(readdirSync(join(root, 'orders-249'))).not.toContain('klx-writer.lock');
      const again = spawnSync(process.execPath, [join(REPO_ROOT, 'bin/klx.mjs'), 'repair', '--dry-run', root], { encoding: 'utf8', env: { ...process.env, KLX_TRASH_DIR: trash } });
      expect(again.stdout.trim().split('\n').at(-1)).toBe('repair (dry run: nothing changed): 250 partition(s), 0 action(s) planned, 0 applied, 0 problem(s) left');
    } finally {
      rmSync(root, { recursive: true, force: true });
      rmSync(trash, { recursive: true, force: true });
    }
  }, 120_000);
});
