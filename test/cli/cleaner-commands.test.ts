/**
 * `klx retention`, `klx compact`, `klx undo` and `klx trash` end to end through the real CLI:
 * JSON results (segments, bytes and records before and after, log start offset, retained ranges),
 * dry runs that change nothing, invalid flags refused with the reason (exit 2), an uncleanable
 * partition reported with exit status 1, undo restoring every byte.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildPartition, rec, singles, tempDir } from '../support/log-builder.ts';
import { REPO_ROOT } from '../support/real-data.ts';

function klx(args: string[], trashDir: string): { status: number; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [join(REPO_ROOT, 'bin/klx.mjs'), ...args], { encoding: 'utf8', env: { ...process.env, KLX_TRASH_DIR: trashDir } });
  return { status: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

function files(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const n of readdirSync(dir).sort()) if (statSync(join(dir, n)).isFile()) out[n] = readFileSync(join(dir, n)).toString('base64');
  return out;
}

function logWith3Segments(): { logDir: string; dir: string } {
  const logDir = tempDir();
  const dir = buildPartition(logDir, {
    segments: [
      { baseOffset: 0n, batches: singles(...Array.from({ length: 10 }, (_, i) => rec(`k${i}`, `a${i}`, 1000))) },
      { baseOffset: 10n, batches: [{ baseOffset: 10n, records: [rec('k0', 'b0', 2000)] }, ...singles(...Array.from({ length: 9 }, (_, i) => rec(`k${i + 1}`, `b${i + 1}`, 2000)))] },
      { baseOffset: 20n, batches: [{ baseOffset: 20n, records: [rec('k0', 'c', 99_000)] }, ...singles(rec('k1', 'c', 99_000), rec('k2', 'c', 99_000))] },
    ],
  });
  return { logDir, dir };
}

describe('klx cleaner commands', () => {
  it('retention with retention.bytes and retention.ms both firing: each deleted segment names its rule, and no note says a rule stops at a segment a later rule deletes', () => {
    const { logDir } = logWith3Segments();
    const trashDir = tempDir('klx-trash-');
    // 1,653 bytes in 3 segments (720, 720, 213): retention.bytes 900 leaves an excess of 753, so the size step takes
    // segment 0 (720 bytes) and stops at segment 10 (720 > the 33 left); the time step (now 100000, retention.ms 1000)
    // then takes segment 10 (max timestamp 2000) and stops at segment 20 (max timestamp 99000: 1 s old, not above 1 s).
    const r = klx(['retention', logDir, '--retention-bytes', '900', '--retention-ms', '1000', '--now', '100000', '--dry-run'], trashDir);
    expect(r.status).toBe(0);
    const lines = r.stdout.split('\n');
    expect(lines.filter((l) => l.startsWith('  delete '))).toEqual([
      '  delete 00000000000000000000.log: 720 bytes, 10 records in 10 batches, offsets 0..9 — by retention.bytes: excess 753 bytes over retention.bytes 900 − its 720 bytes ≥ 0? yes',
      '  delete 00000000000000000010.log: 720 bytes, 10 records in 10 batches, offsets 10..19 — by retention.ms: max timestamp t=2000 ms is 98 s old > retention.ms 1000 (1000 ms)? yes',
    ]);
    expect(r.stdout).not.toContain('size retention stops at segment 10');
    expect(r.stdout).toContain('time retention stops at segment 20');
    expect(r.stdout).toContain("segments deleted by rule, in UnifiedLog.deleteOldSegments' order: retention.bytes 1, retention.ms 1");
    const j = JSON.parse(klx(['retention', logDir, '--retention-bytes', '900', '--retention-ms', '1000', '--now', '100000', '--dry-run', '--json'], trashDir).stdout);
    expect(j.partitions[0].report.segments.deleted.map((x: { baseOffset: number; deletedBy: string }) => [x.baseOffset, x.deletedBy])).toEqual([
      [0, 'retention.bytes'],
      [10, 'retention.ms'],
    ]);
  });

  it('klx retention --dry-run --json plans without touching; the run deletes, klx trash lists, klx undo restores every byte', () => {
    const { logDir, dir } = logWith3Segments();
    const trashDir = tempDir('klx-trash-');
    const before = files(dir);
    const plan = klx(['retention', logDir, '--retention-ms', '1000', '--now', '100000', '--dry-run', '--json'], trashDir);
    expect(plan.status).toBe(0);
    // One compact JSON line, like every other --json (it was pretty-printed over many lines).
    expect(plan.stdout.split('\n')).toHaveLength(2);
    expect(plan.stdout.endsWith('}\n')).toBe(true);
    const p = JSON.parse(plan.stdout);
    expect(p.dryRun).toBe(true);
    const rep = p.partitions[0].report;
    expect(rep.segments.deleted.map((s: { baseOffset: number; records: number; bytes: number }) => [s.baseOffset, s.records])).toEqual([
      [0, 10],
      [10, 10],
    ]);
    expect(rep.before).toEqual({ segments: 2, bytes: rep.segments.deleted[0].bytes * 2, records: 20, batches: 20 });
    expect(rep.after).toEqual({ segments: 0, bytes: 0, records: 0, batches: 0 });
    expect([rep.log.logStartOffsetBefore, rep.logStartOffset]).toEqual([0, 20]);
    expect(rep.retained).toEqual([[20, 22]]);
    expect(rep.removed.retention).toEqual({ records: 20, ranges: [[0, 19]], truncated: false });
    expect(files(dir)).toEqual(before);

    const r = klx(['retention', logDir, '--retention-ms', '1000', '--now', '100000'], trashDir);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/deleted 00000000000000000000\.log: 720 bytes, 10 records/);
    expect(readFileSync(join(logDir, 'log-start-offset-checkpoint'), 'utf8')).toBe('0\n1\ntest 0 20\n');
    const t = klx(['trash', '--json'], trashDir);
    expect(t.stdout.split('\n')).toHaveLength(2);
    const entries = JSON.parse(t.stdout).entries;
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ operation: 'retention', state: 'committed', partitionDir: dir });
    expect(entries[0].files).toHaveLength(6);

    const u = klx(['undo', logDir], trashDir);
    expect(u.status).toBe(0);
    expect(u.stdout).toMatch(/undid retention .*restored 6 file\(s\)/);
    expect(files(dir)).toEqual(before);
    expect(klx(['trash'], trashDir).stdout).toMatch(/is empty/);
  });

  it('klx compact --key-hash md5 (Kafka\'s digest) and murmur3 (the default) write byte-identical partitions on a normal log; another digest is refused with exit 2', () => {
    const before = files(logWith3Segments().dir);
    const after = ['md5', 'murmur3', null].map((hash) => {
      const { dir } = logWith3Segments();
      const r = klx(['compact', dir, '--now', '100000', ...(hash ? ['--key-hash', hash] : [])], tempDir('klx-trash-'));
      expect(r.status).toBe(0);
      return files(dir);
    });
    expect(after[0]).not.toEqual(before); // the cleaner rewrote segments
    expect(after[1]).toEqual(after[0]);
    expect(after[2]).toEqual(after[0]);
    const { dir } = logWith3Segments();
    const bad = klx(['compact', dir, '--key-hash', 'sha1'], tempDir('klx-trash-'));
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/--key-hash must be murmur3 or md5, got "sha1"/);
    expect(files(dir)).toEqual(before);
  });

  it('klx compact --json reports rewritten and new segments, removed records and retained ranges; klx trash --empty empties the trash', () => {
    const { logDir, dir } = logWith3Segments();
    const trashDir = tempDir('klx-trash-');
    const r = klx(['compact', dir, '--now', '100000', '--json'], trashDir);
    expect(r.status).toBe(0);
    const rep = JSON.parse(r.stdout).partitions[0].report;
    expect(rep.segments.rewritten.map((s: { baseOffset: number }) => s.baseOffset)).toEqual([0, 10]);
    expect(rep.segments.created.map((s: { baseOffset: number; records: number }) => [s.baseOffset, s.records])).toEqual([[0, 10]]); // k0–k2 in the active segment do not count (B04)
    expect(rep.removed.superseded.records).toBe(10);
    expect(rep.retained).toEqual([[10, 19]]);
    expect(rep.holes).toEqual([[0, 9]]);
    expect(rep.cleanerCheckpoint).toEqual({ before: null, after: 20 });
    expect(readFileSync(join(logDir, 'cleaner-offset-checkpoint'), 'utf8')).toBe('0\n1\ntest 0 20\n');
    const e = klx(['trash', '--empty'], trashDir);
    expect(e.stdout).toMatch(/emptied .*: 1 entry/);
    expect(klx(['undo', dir], trashDir).status).toBe(1);
  });

  it('klx compact --explain --json prints NDJSON decision rows (offset, key, decision, reason, evidence); klx retention --explain prints the segment walk', () => {
    const { dir } = logWith3Segments();
    const trashDir = tempDir('klx-trash-');
    const before = files(dir);
    const r = klx(['compact', dir, '--now', '100000', '--dry-run', '--explain', '--json'], trashDir);
    expect(r.status).toBe(0);
    const rows = r.stdout.trim().split('\n').map((l) => JSON.parse(l));
    const recs = rows.filter((x) => x.subject === 'record');
    expect(recs).toHaveLength(20);
    expect(Object.keys(recs[0]).slice(0, 5)).toEqual(['offset', 'key', 'decision', 'reason', 'evidence']);
    expect(recs[0]).toMatchObject({ offset: 0, key: 'k0', decision: 'remove', reason: 'superseded', evidence: 'superseded by offset 10 (key k0)', topic: 'test', partition: 0 });
    expect(recs[10]).toMatchObject({ offset: 10, key: 'k0', decision: 'keep', reason: 'latest-for-key', evidence: 'kept: latest for key k0' });
    expect(rows.filter((x) => x.subject === 'batch')).toHaveLength(20);
    expect(files(dir)).toEqual(before);

    const t = klx(['retention', dir, '--now', '100000', '--retention-ms', '50000', '--dry-run', '--explain'], trashDir);
    expect(t.status).toBe(0);
    expect(t.stdout).toContain('  remove segment 0..9: segment deleted: max timestamp t=1000 ms is 99 s old > retention.ms 50000 (50 s)? yes');
    expect(t.stdout).toContain('  remove segment 10..19: segment deleted: max timestamp t=2000 ms is 98 s old > retention.ms 50000 (50 s)? yes');
    expect(t.stdout).toContain('  keep   segment 20..22: prefix stops at segment 20: time retention: max timestamp t=99000 ms is 1000 ms old > retention.ms 50000 (50 s)? no');
    expect(files(dir)).toEqual(before);
  });

  it('--explain does not imply --dry-run: klx compact --explain runs the compaction (files change, a trash entry) and prints its decisions', () => {
    const { dir } = logWith3Segments();
    const trashDir = tempDir('klx-trash-');
    const before = files(dir);
    const r = klx(['compact', dir, '--now', '100000', '--explain'], trashDir);
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('  remove 0 k0=');
    expect(r.stdout).toContain('superseded by offset 10 (key k0)');
    // The run happened: segments 0 and 10 were rewritten into one (k0..k9 kept at 10..19), the trash holds the old files.
    expect(files(dir)).not.toEqual(before);
    expect(readdirSync(trashDir).filter((f) => !f.startsWith('history-')).length).toBeGreaterThan(0);
    expect(klx(['undo', dir], trashDir).status).toBe(0);
    expect(files(dir)).toEqual(before);
  });

  it('a compaction or retention that changes nothing says so in one line and leaves no trash entry (issue 13 finding 6)', () => {
    const { dir } = logWith3Segments();
    const trashDir = tempDir('klx-trash-');
    expect(klx(['compact', dir, '--now', '100000'], trashDir).status).toBe(0);
    const entries = readdirSync(trashDir).length;
    const again = klx(['compact', dir, '--now', '100000'], trashDir);
    expect(again.status).toBe(0);
    expect(again.stdout).toBe('test-0: compaction (rules: kafka): nothing to clean: the dirty data (from offset 20) is all in the active segment, which is never cleaned; dirty ratio 0.000 (min.cleanable.dirty.ratio 0.5)\n');
    const ret = klx(['retention', dir, '--retention-ms', '-1', '--now', '100000'], trashDir);
    expect(ret.stdout.split('\n').filter(Boolean)).toHaveLength(1);
    expect(ret.stdout).toMatch(/^test-0: retention: nothing to clean: /);
    expect(ret.stdout).not.toContain('affected segments');
    expect(readdirSync(trashDir).length).toBe(entries);
  });

  it('invalid config values are refused with the reason and exit status 2', () => {
    const { dir } = logWith3Segments();
    const trashDir = tempDir('klx-trash-');
    const a = klx(['retention', dir, '--retention-bytes', '-5'], trashDir);
    expect(a.status).toBe(2);
    expect(a.stderr).toMatch(/retention\.bytes must be −1 or more, got -5/);
    const b = klx(['compact', dir, '--delete-retention-ms', 'soon'], trashDir);
    expect(b.status).toBe(2);
    expect(b.stderr).toMatch(/delete\.retention\.ms must be an integer number of milliseconds, got "soon"/);
    const c = klx(['compact', dir, '--segment-bytes', '-1'], trashDir);
    expect(c.status).toBe(2);
    expect(c.stderr).toMatch(/segment\.bytes must be at least 14/);
    const d = klx(['compact', dir, '--rules', 'textbook'], trashDir);
    expect(d.status).toBe(2);
    expect(d.stderr).toMatch(/--rules must be kafka or classic/);
  });

  it('B21: klx compact over a log dir lists the uncleanable partition and exits 1; the other partition is compacted', () => {
    const logDir = tempDir();
    const dirA = buildPartition(logDir, { topic: 'a', segments: [{ baseOffset: 0n, batches: singles(rec('k', '1'), rec('k', '2')) }, { baseOffset: 2n, batches: [{ baseOffset: 2n, records: [rec('x', 'y')] }] }] });
    const tail = Buffer.alloc(300);
    tail.writeBigInt64BE(2n, 0);
    tail.writeInt32BE(2_000_000, 8);
    tail.writeInt8(2, 16);
    const seg = join(dirA, '00000000000000000000.log');
    writeFileSync(seg, Buffer.concat([readFileSync(seg), tail]));
    buildPartition(logDir, { topic: 'b', segments: [{ baseOffset: 0n, batches: singles(rec('k', '1'), rec('k', '2')) }, { baseOffset: 2n, batches: [{ baseOffset: 2n, records: [rec('x', 'y')] }] }] });
    const r = klx(['compact', logDir, '--now', '100000', '--json'], tempDir('klx-trash-'));
    expect(r.status).toBe(1);
    const out = JSON.parse(r.stdout);
    const a = out.partitions.find((p: { topic: string }) => p.topic === 'a');
    const b = out.partitions.find((p: { topic: string }) => p.topic === 'b');
    expect(a.error.code).toBe('truncated-batch');
    expect(a.error.message).toMatch(/so 2000012\) exceeds the 300 bytes left/);
    // Kafka's uncleanable-bytes: the dirty segment's size (seg@0 with its damaged tail), not the 300 damaged bytes (issue 13 finding 8).
    expect(a.uncleanableBytes).toBe(statSync(seg).size);
    expect(b.report.removed.superseded.records).toBe(1);
    expect(r.stderr).toMatch(/1 partition\(s\) not done: a-0 \(truncated-batch\)/);
  });
});
