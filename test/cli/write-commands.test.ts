/**
 * `klx create`, `klx append`, `klx roll`: what they print (text and `--json`), what they write, and
 * how they fail (exit code 1 with `klx: <code>: <message>`, 2 for usage errors).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync, appendFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { scanLogFile } from '../../src-main/engine/format/log-reader.ts';
import { encodeBatch } from '../../src-main/engine/format/record-batch.ts';
import { PartitionWriter } from '../../src-main/engine/log/partition-writer.ts';
import { tempDir } from '../support/log-builder.ts';
import { klx } from '../support/klx-cli.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});


function records(log: string): { offset: bigint; key: Buffer | null; value: string | null; ts: bigint; headers: [string, string | null][] }[] {
  return [...scanLogFile(log, { deep: true })].flatMap((e) =>
    e.type === 'batch'
      ? e.records!.map((r) => ({
          offset: r.offset,
          key: r.key && Buffer.from(r.key),
          value: r.value && Buffer.from(r.value).toString(),
          ts: r.timestamp,
          headers: r.headers.map((h) => [h.key, h.value && Buffer.from(h.value).toString()] as [string, string | null]),
        }))
      : [],
  );
}

describe('klx create / append / roll', () => {
  const ld = tempDir('klx-cli-write-');
  dirs.push(ld);
  const dir = join(ld, 'orders-0');
  const seg0 = join(dir, '00000000000000000000.log');

  it('create makes the partition folder and prints what it made; --dry-run touches nothing; a non-empty folder is refused', () => {
    const dry = klx('create', join(ld, 'dry-0'), '--dry-run');
    expect(dry.status).toBe(0);
    expect(dry.stdout).toContain(`would create partition dry-0: ${join(ld, 'dry-0')}`);
    expect(existsSync(join(ld, 'dry-0'))).toBe(false);
    expect(existsSync(join(ld, 'meta.properties'))).toBe(false);

    const r = klx('create', dir, '--config', 'cleanup.policy=compact', '--config', 'index.interval.bytes=100');
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe(`created partition orders-0: ${dir}`);
    expect(lines[1]).toMatch(/^ {2}topic id: [A-Za-z0-9_-]{22}$/);
    expect(lines[2]).toBe('  files: 00000000000000000000.log, 00000000000000000000.index, 00000000000000000000.timeindex, leader-epoch-checkpoint, partition.metadata, klx-topic.properties');
    expect(lines[4]).toMatch(/^ {2}meta.properties: created \(version 1, node.id 0, cluster.id [A-Za-z0-9_-]{22}, directory.id [A-Za-z0-9_-]{22}\)$/);
    expect(lines[5]).toBe('  config: cleanup.policy=compact, index.interval.bytes=100');
    expect(readFileSync(join(dir, 'partition.metadata'), 'utf8')).toBe(`version: 0\ntopic_id: ${lines[1]!.slice(12)}`);

    const j = klx('create', join(ld, 'other-2'), '--json');
    expect(j.status).toBe(0);
    const o = JSON.parse(j.stdout);
    expect(o).toMatchObject({ topic: 'other', partition: 2, dir: join(ld, 'other-2'), dryRun: false, metaProperties: { create: false }, config: {} });

    const again = klx('create', dir);
    expect(again.status).toBe(2);
    expect(again.stderr).toMatch(/^klx: invalid-argument: .*orders-0: the partition folder already exists and is not empty \(6 entries\); refusing to overwrite it\n$/);
    expect(klx('create', join(ld, 'no_partition_number')).stderr).toContain('is not a partition folder name: give <logdir>/<topic>-<partition>');
    const bad = klx('create', join(ld, 'x-0'), '--config', 'segment.bytes=-5');
    expect(bad.status).toBe(2); // invalid-config: a refusal of what was asked
    expect(bad.stderr).toBe('klx: invalid-config: segment.bytes must be at least 14, got -5\n');
    expect(existsSync(join(ld, 'x-0'))).toBe(false);
  });

  it('append writes one batch and prints offsets, segment, position and bytes', () => {
    const r = klx('append', dir, '--key', 'k1', '--value', 'v1', '--timestamp', '1700000000000');
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).toBe(
      'appended 1 record at offset 0 to orders-0: segment 00000000000000000000.log, position 0, 72 bytes\n' +
        '  batch: none, CreateTime 1700000000000, leader epoch 0\n' +
        '  log end offset: 1\n',
    );
    expect(statSync(seg0).size).toBe(72);
    const j = klx('append', dir, '--key', 'k2', '--tombstone', '--header', 'trace=abc', '--header', 'flag', '--timestamp', '1700000000005', '--compression', 'gzip', '--json');
    expect(j.status).toBe(0);
    expect(JSON.parse(j.stdout)).toMatchObject({
      baseOffset: 1,
      lastOffset: 1,
      recordCount: 1,
      position: 72,
      segmentBaseOffset: 0,
      segmentFile: seg0,
      rolled: false,
      compression: 'gzip',
      timestampType: 'CreateTime',
      maxTimestamp: 1700000000005,
      logEndOffset: 2,
      dryRun: false,
    });
    expect(records(seg0).map((x) => [x.offset, x.key?.toString(), x.value, x.ts, x.headers])).toEqual([
      [0n, 'k1', 'v1', 1700000000000n, []],
      [1n, 'k2', null, 1700000000005n, [['trace', 'abc'], ['flag', null]]],
    ]);
  });

  it('B07: append refuses a record without key on a compacted topic', () => {
    const before = statSync(seg0).size;
    const r = klx('append', dir, '--value', 'no key');
    expect(r.status).toBe(1);
    expect(r.stderr).toBe('klx: invalid-record: Compacted topic cannot accept message without key in topic partition orders-0 (record 0; cleanup.policy=compact)\n');
    expect(statSync(seg0).size).toBe(before);
    // The same folder accepts it when told the topic is `delete` for this run (not persisted).
    const dry = klx('append', dir, '--value', 'no key', '--config', 'cleanup.policy=delete', '--dry-run', '--timestamp', '1700000000006');
    expect(dry.status).toBe(0);
    expect(dry.stdout.split('\n')[0]).toBe(`would append 1 record at offset 2 to orders-0: segment 00000000000000000000.log, position ${before}, 74 bytes`);
    expect(statSync(seg0).size).toBe(before);
    expect(existsSync(join(dir, 'klx-writer.lock'))).toBe(false);
  });

  it('append --records puts every NDJSON line in one batch (text and base64 fields, headers, timestamps)', () => {
    const file = join(ld, 'records.ndjson');
    writeFileSync(
      file,
      [
        JSON.stringify({ key: 'a', value: '1', headers: { h: 'x', n: null }, timestamp: 1700000000010 }),
        '',
        JSON.stringify({ keyBase64: Buffer.from([0, 1, 2, 255]).toString('base64'), valueBase64: null, timestamp: 1700000000011 }),
        JSON.stringify({ key: 'c', valueBase64: Buffer.from('três').toString('base64'), headers: [{ key: 'b', valueBase64: Buffer.from('bin').toString('base64') }] }),
      ].join('\n') + '\n',
    );
    const r = klx('append', dir, '--records', file, '--timestamp', '1700000000012', '--compression', 'zstd', '--json');
    expect(r.stderr).toBe('');
    const o = JSON.parse(r.stdout);
    expect(o).toMatchObject({ baseOffset: 2, lastOffset: 4, recordCount: 3, compression: 'zstd', maxTimestamp: 1700000000012, logEndOffset: 5 });
    expect(records(seg0).slice(2).map((x) => [x.offset, x.key?.toString('hex'), x.value, x.ts, x.headers])).toEqual([
      [2n, Buffer.from('a').toString('hex'), '1', 1700000000010n, [['h', 'x'], ['n', null]]],
      [3n, '000102ff', null, 1700000000011n, []],
      [4n, Buffer.from('c').toString('hex'), 'três', 1700000000012n, [['b', 'bin']]],
    ]);
    writeFileSync(file, '{"key":"a","value":"1"}\n{"key":"b"}\n');
    const bad = klx('append', dir, '--records', file);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toBe(`klx: invalid-argument: ${file}: position 24: line 2: "value" is missing (write "value": null for a tombstone)\n`);
    writeFileSync(file, '{"key":"a","value":"1"}\nnot json\n');
    expect(klx('append', dir, '--records', file).stderr).toContain(`${file}: position 24: line 2: not valid JSON`);
  });

  it('append argument errors', () => {
    expect(klx('append', dir, '--key', 'k', '--value', 'v', '--tombstone').stderr).toBe('klx: invalid-argument: give exactly one of --value, --tombstone or --records\n');
    expect(klx('append', dir, '--key', 'k').status).toBe(2);
    const codec = klx('append', dir, '--key', 'k', '--value', 'v', '--compression', 'brotli');
    expect(codec.status).toBe(2);
    expect(codec.stderr).toContain('--compression must be one of none, gzip, snappy, lz4, zstd, got "brotli"');
    expect(klx('append', dir, '--key', 'k', '--value', 'v', '--timestamp', 'yesterday').status).toBe(2);
  });

  it('roll closes the active segment; a second roll has nothing to do; --dry-run and --json', () => {
    const dry = klx('roll', dir, '--dry-run');
    expect(dry.stdout).toBe('would roll orders-0: new active segment 00000000000000000005.log (log end offset 5)\n  closed 00000000000000000000.log: final time-index entry 1700000000012 -> offset 4, indexes trimmed\n  would write producer snapshot 00000000000000000005.snapshot (0 producers)\n');
    expect(existsSync(join(dir, '00000000000000000005.log'))).toBe(false);
    const r = klx('roll', dir);
    expect(r.status).toBe(0);
    expect(r.stdout.split('\n')[0]).toBe('rolled orders-0: new active segment 00000000000000000005.log (log end offset 5)');
    expect(readdirSync(dir).filter((n) => n.startsWith('00000000000000000005')).sort()).toEqual(['00000000000000000005.index', '00000000000000000005.log', '00000000000000000005.snapshot', '00000000000000000005.timeindex']);
    // No producer has written: the snapshot is the 10-byte header, version 1, CRC-32C of the count 0 (0x48674bc7), count 0.
    expect(readFileSync(join(dir, '00000000000000000005.snapshot')).toString('hex')).toBe('000148674bc700000000');
    const again = klx('roll', dir, '--json');
    expect(JSON.parse(again.stdout)).toMatchObject({ rolled: false, segmentBaseOffset: 5, logEndOffset: 5 });
    expect(klx('roll', dir).stdout).toBe('nothing to roll in orders-0: the active segment 00000000000000000005.log is empty; rolling would create the same segment again\n');
    const next = klx('append', dir, '--key', 'k', '--value', 'v', '--timestamp', '1700000000020');
    expect(next.stdout.split('\n')[0]).toBe('appended 1 record at offset 5 to orders-0: segment 00000000000000000005.log, position 0, 70 bytes');
  });

  it('a locked partition and a partition that needs repair are refused with the holder / the repair command', () => {
    const w = PartitionWriter.open(dir, { purpose: 'test holder' });
    try {
      const r = klx('append', dir, '--key', 'k', '--value', 'v');
      expect(r.status).toBe(1);
      expect(r.stderr).toContain(`klx: locked: ${join(dir, 'klx-writer.lock')}: partition orders-0 is locked by another writer: pid ${process.pid} on host`);
      expect(r.stderr).toContain('(test holder)');
      expect(klx('roll', dir).stderr).toContain('klx: locked:');
    } finally {
      w.close();
    }
    // A lock left by a process that died is taken over, and the command says so.
    const dead = spawnSync(process.execPath, ['-e', '0']).pid!;
    writeFileSync(join(dir, 'klx-writer.lock'), JSON.stringify({ pid: dead, hostname: hostname(), createdAt: '2020-02-02T00:00:00.000Z', purpose: 'klx append', nonce: 'x' }));
    const took = klx('append', dir, '--key', 'k', '--value', 'v', '--timestamp', '1700000000030');
    expect(took.status).toBe(0);
    expect(took.stdout.split('\n')[0]).toBe(`note: took over the stale writer lock of pid ${dead} on ${hostname()} (taken 2020-02-02T00:00:00.000Z by klx append; that process no longer exists)`);
    expect(existsSync(join(dir, 'klx-writer.lock'))).toBe(false);
    const torn = join(ld, 'torn-0');
    mkdirSync(torn);
    const ok = klx('create', torn);
    expect(ok.status).toBe(0);
    appendFileSync(join(torn, '00000000000000000000.log'), encodeBatch({ baseOffset: 0n, records: [{ key: 'k', value: 'v', timestamp: 1n }] }).subarray(0, 30));
    const r = klx('append', torn, '--key', 'k', '--value', 'v');
    expect(r.status).toBe(1);
    expect(r.stderr).toBe(
      `klx: truncated-batch: ${join(torn, '00000000000000000000.log')}: position 0: 00000000000000000000.log: 30 invalid bytes at the end of the file: the batch size (length field + 12-byte header, so 70) exceeds the 30 bytes left in the file; this partition must be repaired before anything is appended: run \`klx repair ${torn}\`\n`,
    );
  });
});
