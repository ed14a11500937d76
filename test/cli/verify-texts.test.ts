/**
 * `klx verify` / `klx repair` texts a new user's trial found wanting (issue 13): the symlink finding
 * says that a broker would follow the link (and repair plans nothing past it), a foreign segment's
 * per-batch errors are summed up, `recovery-needed` names its partition in the quick and the full
 * verify, a garbage checkpoint's bytes are escaped, and a missing active `.index` is `missing-index`.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { buildPartition, rec, tempDir } from '../support/log-builder.ts';
import { REPO_ROOT } from '../support/real-data.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function scratch(): string {
  const d = tempDir('klx-cli-verify-texts-');
  dirs.push(d);
  return d;
}
function klx(...args: string[]): { code: number; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [join(REPO_ROOT, 'bin/klx.mjs'), ...args], { encoding: 'utf8', maxBuffer: 1 << 26 });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}
const name = (base: number, suffix: string) => `${String(base).padStart(20, '0')}${suffix}`;
const singles = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => ({ baseOffset: BigInt(from + i), records: [rec(`k${from + i}`, 'v', 1000 + from + i)] }));

describe('klx verify texts', () => {
  it('a segment that is a link out of the folder: a broker would follow it; its indexes are not orphans; repair plans nothing for the partition', () => {
    const root = scratch();
    const ld = join(root, 'ld');
    const dir = buildPartition(ld, { topic: 't', segments: [{ batches: singles(0, 3) }, { batches: singles(3, 6) }] }, { cleanShutdown: true });
    const outside = join(root, 'elsewhere');
    mkdirSync(outside);
    writeFileSync(join(outside, 'seg.log'), Buffer.alloc(0));
    rmSync(join(dir, name(3, '.log')));
    symlinkSync(join(outside, 'seg.log'), join(dir, name(3, '.log')));
    const v = klx('verify', ld);
    expect(v.stdout).toContain(`WARNING symlink-outside t-0/${name(3, '.log')}: symbolic link to ${join(outside, 'seg.log')}, outside the opened folder: not read here, but a broker would follow it and open whatever it resolves to, for reading and writing (FileRecords.openChannel) (the CLI reads it with --follow-symlinks)`);
    expect(v.stdout).not.toContain('orphan-index');
    const before = readdirSync(dir).sort();
    const r = klx('repair', ld);
    expect(r.code).toBe(1);
    expect(r.stdout.split('\n').slice(0, 2)).toEqual([
      't-0: nothing to do (log end offset 3; clean shutdown)',
      `  ! left in place: t-0/${name(3, '.log')}: symbolic link to ${join(outside, 'seg.log')}, outside the opened folder: not read here, but a broker would follow it and open whatever it resolves to, for reading and writing (FileRecords.openChannel) (the CLI reads it with --follow-symlinks); a broker would follow it, so klx plans nothing for this partition without it (with --follow-symlinks repair reads it, and writes through it if it must)`,
    ]);
    expect(readdirSync(dir).sort()).toEqual(before);
  });

  it('--follow-symlinks on a foreign segment: at most 3 findings of a code per file, then one line with how many more', () => {
    const root = scratch();
    const ld = join(root, 'ld');
    const dir = buildPartition(ld, { topic: 't', segments: [{ batches: singles(0, 10) }, { batches: singles(10, 12) }] }, { cleanShutdown: true });
    const other = buildPartition(join(root, 'other'), { topic: 'u', segments: [{ batches: singles(0, 8) }] }, { cleanShutdown: true });
    rmSync(join(dir, name(10, '.log')));
    symlinkSync(join(other, name(0, '.log')), join(dir, name(10, '.log')));
    const r = klx('--follow-symlinks', 'verify', ld);
    expect(r.code).toBe(1);
    const lines = r.stdout.trim().split('\n');
    const below = lines.filter((l) => l.includes('offset-below-segment-base'));
    expect(below).toHaveLength(4);
    expect(below[3]).toMatch(new RegExp(`^ERROR   offset-below-segment-base t-0/${name(10, '.log')}: 5 more like this \\(positions \\d+\\.\\.\\d+\\)$`));
    // Every finding is still counted and listed in JSON.
    expect(lines.at(-1)).toMatch(/: 17 errors, 0 warnings, 0 info$/);
    const json = klx('--follow-symlinks', 'verify', '--json', ld);
    const codes: Record<string, number> = {};
    for (const l of json.stdout.trim().split('\n').map((x) => JSON.parse(x) as { type: string; code?: string })) if (l.type === 'finding') codes[l.code!] = (codes[l.code!] ?? 0) + 1;
    expect(codes).toEqual({ 'offset-below-segment-base': 8, 'segments-overlap': 1, 'offset-not-increasing': 7, 'time-index-entry-past-end': 1 });
  });

  it('recovery-needed names its partition, once per partition, in the quick and in the full verify', () => {
    const ld = scratch();
    buildPartition(ld, { topic: 'a', segments: [{ batches: singles(0, 3) }] }, { recoveryPoint: 1n });
    buildPartition(ld, { topic: 'b', segments: [{ batches: singles(0, 2) }] }, { recoveryPoint: 2n });
    writeFileSync(join(ld, 'recovery-point-offset-checkpoint'), '0\n2\na 0 1\nb 0 2\n');
    for (const args of [['verify', '--quick', ld], ['verify', ld]]) {
      const lines = klx(...args).stdout.split('\n').filter((l) => l.includes('recovery-needed'));
      expect(lines).toEqual([
        'INFO    recovery-needed .kafka_cleanshutdown: no clean-shutdown marker: for a-0 a broker re-validates 1 segment from the recovery point 1 on (segment 0) and rebuilds their indexes (LogLoader.recoverLog)',
        'INFO    recovery-needed .kafka_cleanshutdown: no clean-shutdown marker: for b-0 a broker re-validates 1 segment from the recovery point 2 on (segment 0) and rebuilds their indexes (LogLoader.recoverLog)',
      ]);
    }
  });

  it("a garbage checkpoint's bytes are printed escaped (\\u0000, \\xff), never raw", () => {
    const ld = scratch();
    buildPartition(ld, { topic: 'a', segments: [{ batches: singles(0, 1) }] }, { cleanShutdown: true });
    writeFileSync(join(ld, 'recovery-point-offset-checkpoint'), Buffer.from([0x30, 0x0a, 0xff, 0x00, 0x67, 0x0a]));
    const r = klx('verify', ld);
    const line = r.stdout.split('\n').find((l) => l.includes('corrupt-checkpoint'))!;
    expect(line.startsWith("ERROR   corrupt-checkpoint recovery-point-offset-checkpoint@2: malformed entry count line '\\xff\\u0000g' (a broker that reads it takes this log directory offline")).toBe(true);
    expect(r.stdout).not.toMatch(/[\u0000\ufffd]/);
  });

  it('klx append to an active segment without its .index is refused as missing-index, naming what a broker does', () => {
    const ld = scratch();
    const dir = buildPartition(ld, { topic: 'a', segments: [{ batches: singles(0, 2) }] }, { cleanShutdown: true });
    rmSync(join(dir, name(0, '.index')));
    const r = klx('append', dir, '--key', 'k', '--value', 'v', '--json');
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout.trim())).toMatchObject({ type: 'error', code: 'missing-index', file: join(dir, name(0, '.index')) });
    expect(r.stderr).toContain('the active segment has no .index file (a broker recovers the segment and rebuilds it at startup: LogLoader.loadSegmentFiles)');
  });
});

describe('klx repair, export and trash texts', () => {
  it('repair on a partition folder names it by its folder name, not "."', () => {
    const ld = scratch();
    const dir = buildPartition(ld, { topic: 'orders', segments: [{ batches: singles(0, 2) }] }, { cleanShutdown: true });
    expect(klx('repair', dir, '--dry-run').stdout.split('\n')[0]).toBe('orders-0: nothing to do (log end offset 2; clean shutdown)');
  });

  it("export: a bad --where shows the user's condition and DuckDB's reason only (exit 2); an existing output is named once; 'N records from M partitions'", () => {
    const ld = scratch();
    buildPartition(ld, { topic: 'a', segments: [{ batches: singles(0, 3) }] }, { cleanShutdown: true });
    buildPartition(ld, { topic: 'b', segments: [{ batches: singles(0, 2) }] }, { cleanShutdown: true });
    const outDir = scratch();
    const bad = klx('export', ld, '--format', 'csv', '--out', join(outDir, 'x.csv'), '--where', 'nosuch > 1');
    expect(bad.code).toBe(2);
    expect(bad.stderr.split('\n')[0]).toBe('klx: invalid-argument: the where condition nosuch > 1 cannot run: Binder Error: Referenced column "nosuch" not found in FROM clause!');
    expect(bad.stderr).not.toContain('LINE 1');
    expect(bad.stderr).not.toContain('read_json');
    const ok = klx('export', ld, '--format', 'csv', '--out', join(outDir, 'y.csv'), '--where', '"offset" >= 1');
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(/^exported 3 records from 2 partitions to /);
    const again = klx('export', ld, '--format', 'csv', '--out', join(outDir, 'y.csv'));
    expect(again.code).toBe(2);
    expect(again.stderr).toBe(`klx: invalid-argument: ${join(outDir, 'y.csv')}: the output exists already: choose a new path (an export never overwrites)\n`);
  });

  it('with KLX_DATA_DIR set (and no KLX_TRASH_DIR) the trash is $KLX_DATA_DIR/trash, the one the app uses (engine defaultTrashDir)', () => {
    const ld = scratch();
    const data = scratch();
    const dir = buildPartition(ld, { topic: 'a', segments: [{ batches: singles(0, 3) }, { batches: singles(3, 5) }] }, { cleanShutdown: true });
    const env = { ...process.env, KLX_DATA_DIR: data, KLX_TRASH_DIR: '' };
    const run = (...args: string[]) => spawnSync(process.execPath, [join(REPO_ROOT, 'bin/klx.mjs'), ...args], { encoding: 'utf8', env });
    const r = run('retention', dir, '--delete-before-offset', '3');
    expect(r.status, r.stderr).toBe(0);
    expect(readdirSync(join(data, 'trash')).length).toBeGreaterThan(0);
    expect(run('trash').stdout).toContain(join(data, 'trash'));
  });
});
