/**
 * A reader that closes stdout early (`klx dump … | head`, fresh tester's finding) ends the command quietly with
 * exit 0: no Node "Unhandled 'error' event … write EPIPE" crash, no "klx: io-error: write EPIPE". Through a real
 * shell pipe, on a copy of the broker-written multisegment-rolled/invoice-1 (99,523 records: far more than a pipe
 * buffer, so klx is still writing when `head` exits).
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { describeRealData, REAL_DATA, REPO_ROOT } from '../support/real-data.ts';

const KLX = `'${process.execPath}' '${join(REPO_ROOT, 'bin/klx.mjs')}'`;
const DIR = join(REAL_DATA, 'multisegment-rolled', 'invoice-1');

/** Runs `klx ARGS | TAIL` in bash: what the pipe's reader printed, klx's exit status and its stderr. */
function piped(args: string, tail: string): { out: string; status: number; stderr: string } {
  const r = spawnSync('bash', ['-c', `${KLX} ${args} | ${tail}; echo "status=\${PIPESTATUS[0]}"`], { encoding: 'utf8' });
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
