/**
 * `klx verify` and `klx repair` end to end (the real `bin/klx.mjs`): exit codes on clean and damaged
 * folders, findings printed with file, byte position and reason, `repair --dry-run` touching
 * nothing (file hashes before/after), repair then verify coming back clean, and the
 * `--truncate-at-corruption` decision.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { scanLogFile } from '../../src-main/engine/format/log-reader.ts';
import { encodeBatch } from '../../src-main/engine/format/record-batch.ts';
import { buildPartition, rec, tempDir } from '../support/log-builder.ts';
import { REPO_ROOT } from '../support/real-data.ts';
import { createRequire } from 'node:module';

/** kafkajs' CRC-32C (shares no code with ours). */
const kjsCrc32C = createRequire(import.meta.url)('kafkajs/src/protocol/recordBatch/crc32C') as (b: Buffer) => number;

/** Stored and independently computed CRC of the batch at `position` of a `.log`. */
function crcsAt(file: string, position: number): { stored: number; computed: number } {
  const b = readFileSync(file);
  const size = 12 + b.readInt32BE(position + 8);
  return { stored: b.readUInt32BE(position + 17), computed: kjsCrc32C(b.subarray(position + 21, position + size)) >>> 0 };
}

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function logDir(): string {
  const d = tempDir('klx-cli-integrity-');
  dirs.push(d);
  return d;
}

/** The trash of these tests' repairs (never the user's). */
const TRASH = tempDir('klx-cli-integrity-trash-');
afterAll(() => rmSync(TRASH, { recursive: true, force: true }));

function klx(...args: string[]): { code: number; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [join(REPO_ROOT, 'bin/klx.mjs'), ...args], { encoding: 'utf8', maxBuffer: 1 << 28, env: { ...process.env, KLX_TRASH_DIR: TRASH } });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

/** sha256 of every file under `root`, by relative path (names included). */
function hashes(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const n of readdirSync(d).sort()) {
      const p = join(d, n);
      if (statSync(p).isDirectory()) walk(p);
      else out[relative(root, p)] = createHash('sha256').update(readFileSync(p)).digest('hex');
    }
  };
  walk(root);
  return out;
}

const name = (base: number, suffix: string) => `${String(base).padStart(20, '0')}${suffix}`;
const batches = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => ({ baseOffset: BigInt(from + i), records: [rec(`k${from + i}`, 'x'.repeat(200), 1000 + from + i)] }));

function cleanLog(): string {
  const root = logDir();
  buildPartition(root, { topic: 'orders', segments: [{ batches: batches(0, 40) }, { batches: batches(40, 60) }] }, { cleanShutdown: true, recoveryPoint: 60n, highWatermark: 60n });
  return root;
}

/** Unclean stop: a partial last batch in the active segment, an untrimmed index, an orphan index. */
function crashedLog(): { root: string; dir: string } {
  const root = logDir();
  const partial = encodeBatch({ baseOffset: 60n, records: [rec('k60', 'x'.repeat(200), 2000)] }).subarray(0, 90);
  const dir = buildPartition(root, { topic: 'orders', segments: [{ batches: batches(0, 40) }, { batches: batches(40, 60), tail: partial }] }, { recoveryPoint: 40n });
  writeFileSync(join(dir, name(40, '.index')), Buffer.alloc(10_485_760));
  writeFileSync(join(dir, name(80, '.index')), Buffer.alloc(0));
  return { root, dir };
}

/** A CRC failure in the middle of the first segment. */
function corruptLog(): { root: string; dir: string; position: number } {
  const root = logDir();
  const dir = buildPartition(root, { topic: 'orders', segments: [{ batches: batches(0, 40) }, { batches: batches(40, 60) }] }, { cleanShutdown: true });
  const file = join(dir, name(0, '.log'));
  const bytes = readFileSync(file);
  const b = ([...scanLogFile(file)].filter((e) => e.type === 'batch')[10] as { header: { position: number; size: number } }).header;
  bytes[b.position + b.size - 3] ^= 0x55;
  writeFileSync(file, bytes);
  return { root, dir, position: b.position };
}

describe('klx verify', () => {
  it('exits 0 on a clean log dir and prints a summary with counts', () => {
    const root = cleanLog();
    const r = klx('verify', root);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe('verified 1 partition, 2 segments, 60 batches, 60 records, ' + (statSync(join(root, 'orders-0', name(0, '.log'))).size + statSync(join(root, 'orders-0', name(40, '.log'))).size) + ' bytes: 0 errors, 0 warnings, 0 info');
  });

  it('exits 1 on a damaged log and names file, byte position and reason with both CRCs (issue 13 finding 1)', () => {
    const { root, dir, position } = corruptLog();
    const { stored, computed } = crcsAt(join(dir, name(0, '.log')), position);
    expect(stored).not.toBe(computed);
    const r = klx('verify', root);
    expect(r.code).toBe(1);
    const lines = r.stdout.trim().split('\n');
    expect(lines[0]).toContain(`crc-mismatch orders-0/${name(0, '.log')}@${position}: batch at offsets 10..10 fails its CRC: Record is corrupt (stored crc = ${stored}, computed crc = ${computed}; CRC-32C); its bytes were altered: a consumer with check.crcs=true (the default) stops at offset 10 until it seeks past offset 10 (Kafka CompletedFetch); a leader serves the batch as it is (fetches do not check CRCs) and a follower refuses to append it (UnifiedLog.analyzeAndValidateRecords); a broker does not check it at startup (clean shutdown: LogLoader.recoverLog recovers no segment)`);
    // The damaged batch is on disk and counted: 60 batches, 1 failing its CRC.
    expect(lines.at(-1)).toMatch(/^verified 1 partition, 2 segments, 60 batches \(1 failing their CRC\), 60 records, \d+ bytes: 1 error, 0 warnings, 0 info$/);
    const dump = spawnSync(process.execPath, [join(REPO_ROOT, 'bin/klx.mjs'), 'dump', join(dir, name(0, '.log'))], { encoding: 'utf8' });
    expect(dump.stdout).toContain(`position: ${position} `);
    expect(dump.stdout).toContain(`crc: ${stored} CRC MISMATCH: Record is corrupt (stored crc = ${stored}, computed crc = ${computed}; CRC-32C)`);
    const dumpJson = spawnSync(process.execPath, [join(REPO_ROOT, 'bin/klx.mjs'), 'dump', '--json', join(dir, name(0, '.log'))], { encoding: 'utf8' });
    const bad = dumpJson.stdout.trim().split('\n').map((l) => JSON.parse(l)).find((o) => o.position === position);
    expect(bad).toMatchObject({ crc: stored, crcValid: false, computedCrc: computed, crcAlgorithm: 'CRC-32C' });
  });

  it('--json prints one finding per line and a summary; a partition folder can be given directly', () => {
    const { dir, position } = corruptLog();
    const r = klx('verify', '--json', dir);
    expect(r.code).toBe(1);
    const objs = r.stdout.trim().split('\n').map((l) => JSON.parse(l));
    const { stored, computed } = crcsAt(join(dir, name(0, '.log')), position);
    expect(objs[0]).toMatchObject({ type: 'finding', severity: 'error', code: 'crc-mismatch', file: name(0, '.log'), position, details: { baseOffset: 10, lastOffset: 10, crc: stored, computedCrc: computed, crcAlgorithm: 'CRC-32C' } });
    expect(objs.at(-1)).toMatchObject({ type: 'summary', partitions: 1, segments: 2, batches: 60, records: 60, damagedBatches: 1, damagedRecords: 1, error: 1, warning: 0, clean: false });
  });

  it('segments verified on one thread per core print what one thread prints, text and --json (issue 16)', () => {
    for (const { root } of [corruptLog()]) {
      for (const json of [[], ['--json']]) {
        const one = klx('verify', ...json, root);
        const split = spawnSync(process.execPath, [join(REPO_ROOT, 'bin/klx.mjs'), 'verify', ...json, root], { encoding: 'utf8', env: { ...process.env, KLX_SCAN_SPLIT_MIN_BYTES: '0' } });
        expect(split.stderr).toBe('');
        expect(one.code).toBe(1);
        expect(split.status).toBe(one.code);
        expect(split.stdout).toBe(one.stdout);
      }
    }
  });

  it('--quick reads names and index files only: warnings exit 1', () => {
    const { root } = crashedLog();
    const r = klx('verify', '--quick', root);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(`WARNING orphan-index orders-0/${name(80, '.index')}: index file without ${name(80, '.log')}`);
    expect(r.stdout).toContain(`INFO    untrimmed-index orders-0/${name(40, '.index')}@0: 10485760 bytes`);
    expect(r.stdout.trim().split('\n').at(-1)).toBe('verified 1 partition, 2 segments (quick check): 0 errors, 1 warning, 2 info');
  });

  it('a path that is not a log dir is a clean error, exit 1', () => {
    const r = klx('verify', join(logDir(), 'nope'));
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^klx: not-found: /);
  });
});

describe('klx repair', () => {
  it('--dry-run prints the plan and touches nothing (same files, same hashes)', () => {
    const { root } = crashedLog();
    const before = hashes(root);
    const r = klx('repair', '--dry-run', root);
    expect(r.code).toBe(0);
    expect(hashes(root)).toEqual(before);
    const lines = r.stdout.trim().split('\n');
    expect(lines[0]).toBe('orders-0: 3 actions (log end offset 60; no clean shutdown, recovery point 40)');
    expect(lines[1]).toMatch(new RegExp(`^ {2}1\\. delete orders-0/${name(80, '.index')} \\(0 bytes\\): `));
    expect(lines[2]).toMatch(new RegExp(`^ {2}2\\. orders-0/${name(40, '.log')}: rebuild \\.index \\(\\d+ entries\\)`));
    expect(lines[3]).toMatch(new RegExp(`^ {2}3\\. truncate orders-0/${name(40, '.log')} from \\d+ to \\d+ bytes \\(segment log end 60\\)`));
    expect(lines.at(-1)).toBe('repair (dry run: nothing changed): 1 partition(s), 3 action(s) planned, 0 applied, 0 problem(s) left');
    const json = klx('repair', '--dry-run', '--json', root);
    expect(hashes(root)).toEqual(before);
    const plan = JSON.parse(json.stdout.split('\n')[0]!);
    expect(plan).toMatchObject({ type: 'plan', partition: 'orders-0', cleanShutdown: false, recoveryPoint: 40, logEndOffsetAfter: 60 });
    expect(plan.actions.map((a: { type: string }) => a.type)).toEqual(['delete-file', 'rebuild-indexes', 'truncate-log']);
  });

  it('applies the plan, after which verify exits 0 and a second repair has nothing to do', () => {
    const { root, dir } = crashedLog();
    const r = klx('repair', root);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('  applied 3 actions');
    expect(r.stdout.trim().split('\n').at(-1)).toBe('repair: 1 partition(s), 3 action(s) planned, 3 applied, 0 problem(s) left');
    expect(readdirSync(dir)).not.toContain('klx-writer.lock');
    const v = klx('verify', root);
    expect(v.stdout.trim().split('\n').at(-1)).toMatch(/: 0 errors, 0 warnings, 1 info$/);
    expect(v.code).toBe(0);
    const again = klx('repair', root);
    expect(again.stdout.split('\n')[0]).toBe('orders-0: nothing to do (log end offset 60; no clean shutdown, recovery point 40)');
  });

  it('leaves a corrupt region with valid batches after it in place (exit 1) unless --truncate-at-corruption', () => {
    const { root, dir, position } = corruptLog();
    const logHash = hashes(dir)[name(0, '.log')];
    const r = klx('repair', root);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(`! left in place: orders-0/${name(0, '.log')}@${position}: CRC mismatch in the batch at offsets 10..10; 29 valid batches (29 records) follow it`);
    // The log directory had a clean shutdown: a broker recovers nothing at startup (issue 13 finding 3).
    expect(r.stdout).toContain('A broker would not notice it at startup: the log directory had a clean shutdown (.kafka_cleanshutdown), so a broker recovers no segment at startup (LogLoader.recoverLog); a consumer with check.crcs=true (the default) stops at offset 10 (Kafka CompletedFetch)');
    expect(r.stdout).not.toContain('A broker would cut');
    expect(hashes(dir)[name(0, '.log')]).toBe(logHash);
    expect(klx('verify', root).code).toBe(1);

    const cut = klx('repair', '--truncate-at-corruption', root);
    expect(cut.code).toBe(0);
    expect(cut.stdout).toContain(`delete segment 40`);
    expect(cut.stdout).toContain(`truncate orders-0/${name(0, '.log')} from `);
    expect(statSync(join(dir, name(0, '.log'))).size).toBe(position);
    const v = klx('verify', '--json', root);
    expect(JSON.parse(v.stdout.trim().split('\n').at(-1)!)).toMatchObject({ batches: 10, records: 10, error: 0, warning: 0 });
    expect(v.code).toBe(0);
  });

  it('klx undo after klx repair puts back every byte (before: "holds no run to undo"), also after --truncate-at-corruption', () => {
    for (const [make, flags] of [[crashedLog, []], [corruptLog, ['--truncate-at-corruption']]] as const) {
      const { root } = make();
      const before = hashes(root);
      const r = klx('repair', ...flags, root);
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/ {2}applied \d+ actions \(the replaced bytes are in the trash: klx undo orders-0 restores them\)/);
      expect(hashes(root)).not.toEqual(before);
      const u = klx('undo', root);
      expect(u.stderr).toBe('');
      expect(u.code).toBe(0);
      expect(u.stdout).toMatch(/orders-0: undid repair \(.*-orders-0-repair\): restored \d+ file\(s\), removed \d+/);
      expect(hashes(root)).toEqual(before);
    }
  });

  it('rewrites an unparsable recovery-point-offset-checkpoint from the partitions (was: "0 problem(s) left" with the garbage file in place); undo restores it', () => {
    const { root } = crashedLog();
    writeFileSync(join(root, 'recovery-point-offset-checkpoint'), '0\n1\norders 0\n');
    expect(klx('verify', root).stdout).toContain('corrupt-checkpoint');
    const before = hashes(root);
    const dry = klx('repair', '--dry-run', root);
    expect(dry.stdout.split('\n')[0]).toMatch(/^recovery-point-offset-checkpoint: rewrite recovery-point-offset-checkpoint \(unparsable: .*\) with recovery point = each partition's first segment base offset \(1 entry\): .* Your choice, not a broker's: a broker never rewrites it \(on a malformed file it takes the log directory offline: CheckpointFileWithFailureHandler.read, LogDirFailureChannel\); the old file goes to the trash$/);
    expect(hashes(root)).toEqual(before);
    const r = klx('repair', root);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('  rewrote 1 checkpoint file (the old ones are in the trash: klx undo . restores them)');
    expect(r.stdout.trim().split('\n').at(-1)).toBe('repair: 1 partition(s), 4 action(s) planned, 4 applied, 0 problem(s) left');
    expect(readFileSync(join(root, 'recovery-point-offset-checkpoint'), 'utf8')).toBe('0\n1\norders 0 0\n');
    expect(klx('verify', root).stdout).not.toContain('corrupt-checkpoint');
    expect(klx('undo', root).code).toBe(0);
    expect(hashes(root)).toEqual(before);
  });

  it('--help explains the default and --truncate-at-corruption', () => {
    const r = klx('repair', '--help');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('--truncate-at-corruption');
    expect(r.stdout).toContain('only bytes that are not valid batches are cut, and only where a broker');
    expect(r.stdout).toContain("the broker's behaviour for a");
    expect(r.stdout).toContain('recovery-point-offset-checkpoint');
  });
});
