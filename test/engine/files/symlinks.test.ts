/**
 * Symlinked files (issue 17, defect 7): a segment, an index, a leader-epoch-checkpoint and a log-dir
 * checkpoint inside the opened folder that are symlinks to files outside it are not read (before the
 * fix they were read and served, also by a `--read-only` bridge): the engine leaves them out with a
 * `symlink-outside` problem naming the link and its target; a link that stays inside is read; the
 * bridge serves nothing of them; `klx verify` warns and reads them only with `--follow-symlinks`.
 */
import { copyFileSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildPartition, rec, tempDir } from '../../support/log-builder.ts';
import { klx } from '../../support/klx-cli.ts';
import { openPath, allPartitions } from '../../../src-main/engine/log/log-dir.ts';
import { PartitionLog } from '../../../src-main/engine/log/partition-log.ts';
import { startBridge, type Bridge } from '../../../src-main/bridge/server.ts';
import { post } from '../../api/helpers.ts';

/**
 * A log dir whose `test-0` holds segment 0 (offsets 0–1) as files, and segment 2 whose `.log` is a
 * link to a segment (offsets 2–3, key `secret`) kept outside; its `.timeindex` is a link to a copy
 * inside the partition (followed); `leader-epoch-checkpoint` and the log dir's
 * `replication-offset-checkpoint` are links to files outside.
 */
function build(): { logDir: string; dir: string; outside: string } {
  const base = tempDir('klx-links-');
  const outside = join(base, 'outside');
  mkdirSync(outside);
  const donor = buildPartition(join(base, 'donor'), { segments: [{ baseOffset: 2n, batches: [{ baseOffset: 2n, records: [rec('secret', 's1'), rec('secret', 's2')] }] }] });
  copyFileSync(join(donor, '00000000000000000002.log'), join(outside, 'stolen.log'));
  writeFileSync(join(outside, 'epochs'), '0\n1\n7 0\n');
  writeFileSync(join(outside, 'hw'), '0\n1\ntest 0 4\n');
  const logDir = join(base, 'logs');
  const dir = buildPartition(logDir, { segments: [{ baseOffset: 0n, batches: [{ baseOffset: 0n, records: [rec('a', '1'), rec('b', '2')] }] }] });
  symlinkSync(join(outside, 'stolen.log'), join(dir, '00000000000000000002.log'));
  copyFileSync(join(donor, '00000000000000000002.index'), join(dir, '00000000000000000002.index'));
  copyFileSync(join(donor, '00000000000000000002.timeindex'), join(dir, 'copy.timeindex'));
  symlinkSync(join(dir, 'copy.timeindex'), join(dir, '00000000000000000000.timeindex.link-inside'));
  symlinkSync(join(outside, 'epochs'), join(dir, 'leader-epoch-checkpoint'));
  symlinkSync(join(outside, 'hw'), join(logDir, 'replication-offset-checkpoint'));
  return { logDir, dir, outside };
}

describe('symlinks leading out of the opened folder', () => {
  it('the engine reads none of them and names each link with its target; a link staying inside is read', () => {
    const { logDir, dir, outside } = build();
    const log = allPartitions(openPath(logDir))[0]!.log;
    expect(log.segments.map((s) => s.baseOffset)).toEqual([0n]);
    expect(log.logEndOffset).toBe(2n);
    expect(log.leaderEpochs).toEqual([]);
    expect(log.highWatermark).toBeNull();
    const links = log.problems.filter((p) => p.code === 'symlink-outside').map((p) => [p.file, p.reason]);
    expect(links).toEqual([
      [join(logDir, 'replication-offset-checkpoint'), `symbolic link to ${join(outside, 'hw')}, outside the opened folder: not read here, but a broker would follow it and open whatever it resolves to, for reading and writing (FileRecords.openChannel) (the CLI reads it with --follow-symlinks)`],
      [join(dir, '00000000000000000002.log'), `symbolic link to ${join(outside, 'stolen.log')}, outside the opened folder: not read here, but a broker would follow it and open whatever it resolves to, for reading and writing (FileRecords.openChannel) (the CLI reads it with --follow-symlinks)`],
      [join(dir, 'leader-epoch-checkpoint'), `symbolic link to ${join(outside, 'epochs')}, outside the opened folder: not read here, but a broker would follow it and open whatever it resolves to, for reading and writing (FileRecords.openChannel) (the CLI reads it with --follow-symlinks)`],
    ]);
    // The link inside the folder is listed as a file (an unknown one) like any other.
    expect(log.listing.unknown.map((f) => f.name)).toContain('00000000000000000000.timeindex.link-inside');
    // The index of the refused segment is not an orphan: a broker follows the link and keeps it (LogLoader.loadSegmentFiles
    // deletes an index only when its .log does not exist), so klx neither reports nor deletes it.
    expect(log.listing.orphanIndexes.map((f) => f.name)).toEqual([]);
    // Opened with 'follow' (klx --follow-symlinks), everything is read.
    const followed = PartitionLog.open(dir, { symlinks: 'follow' });
    expect(followed.segments.map((s) => s.baseOffset)).toEqual([0n, 2n]);
    expect(followed.logEndOffset).toBe(4n);
    expect(followed.leaderEpochs).toEqual([{ epoch: 7, startOffset: 0n }]);
    expect(followed.highWatermark).toBe(4n);
  });

  const bridges: Bridge[] = [];
  afterAll(async () => {
    for (const b of bridges) await b.close();
  });

  it('a read-only bridge serving the folder serves no byte of them', async () => {
    const { logDir, dir } = build();
    const rendererDir = tempDir('klx-renderer-');
    writeFileSync(join(rendererDir, 'index.html'), '<!doctype html>');
    const b = await startBridge({ readOnly: true, roots: [logDir], rendererDir, homeDir: tempDir('klx-home-') });
    bridges.push(b);
    const opened = await post(b, 'log.open', { path: logDir });
    expect(opened.body.ok).toBe(true);
    const part = await post(b, 'log.partition', { dir });
    expect(part.body).toMatchObject({ ok: true });
    const result = (part.body as { result: { segments: { baseOffset: unknown }[]; partition: { problems: { code: string; file: string }[] } } }).result;
    expect(result.segments.map((s) => String(s.baseOffset))).toEqual(['0']);
    expect(result.partition.problems.filter((p) => p.code === 'symlink-outside').map((p) => p.file)).toContain(join(dir, '00000000000000000002.log'));
    const recs = await post(b, 'log.records', { dir, from: 'start', limit: 50 });
    expect(JSON.stringify(recs.body)).not.toContain(Buffer.from('secret').toString('base64'));
    expect(JSON.stringify(recs.body)).not.toContain('secret');
    const batches = await post(b, 'log.batches', { dir, segment: '2' });
    expect(batches.body).toMatchObject({ ok: false });
  });

  it('klx verify warns naming the link and reads it only with --follow-symlinks', () => {
    const { logDir, dir, outside } = build();
    const plain = klx('verify', logDir, '--json');
    expect(plain.stderr).toContain(`klx: warning: ${join(dir, '00000000000000000002.log')} is a symbolic link to ${join(outside, 'stolen.log')}, outside the folder given: not read (--follow-symlinks reads it)`);
    const findings = plain.stdout.trim().split('\n').map((l) => JSON.parse(l) as { type: string; code?: string; file?: string });
    expect(findings.filter((f) => f.code === 'symlink-outside').map((f) => f.file)).toContain('test-0/00000000000000000002.log');
    const followed = klx('--follow-symlinks', 'fetch', dir, '--offset', '2', '--json');
    expect(followed.stderr).toBe('');
    expect(followed.stdout).toContain('secret');
    const notFollowed = klx('fetch', dir, '--offset', '2', '--json');
    expect(notFollowed.stdout).not.toContain('secret');
    expect(readFileSync(join(outside, 'hw'), 'utf8')).toBe('0\n1\ntest 0 4\n');
  });
});
