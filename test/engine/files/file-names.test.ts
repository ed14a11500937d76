import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  classifyPartitionFiles,
  filenamePrefixFromOffset,
  listPartitionDir,
  offsetFromFileName,
  parsePartitionDirName,
  parseSegmentFileName,
  partitionDirName,
  segmentFileName,
} from '../../../src-main/engine/files/file-names.ts';

const HEX = '0123456789abcdef0123456789abcdef';

describe('segment file names (spec §10.1)', () => {
  it('prints base offsets as 20 zero-padded digits', () => {
    expect(segmentFileName(0n, '.log')).toBe('00000000000000000000.log');
    expect(segmentFileName(368769n, '.log')).toBe('00000000000000368769.log');
    expect(segmentFileName(368769n, '.timeindex')).toBe('00000000000000368769.timeindex');
    expect(segmentFileName(5n, '.log.deleted')).toBe('00000000000000000005.log.deleted');
    expect(filenamePrefixFromOffset(9223372036854775807n)).toBe('09223372036854775807');
  });

  it('rejects offsets outside 0..2^63-1', () => {
    expect(() => segmentFileName(-1n, '.log')).toThrow(expect.objectContaining({ code: 'invalid-argument' }));
    expect(() => segmentFileName(9223372036854775808n, '.log')).toThrow(expect.objectContaining({ code: 'invalid-argument' }));
  });

  it('parses the integer before the first dot as a bigint', () => {
    expect(offsetFromFileName('00000000000000368769.index')).toBe(368769n);
    expect(offsetFromFileName('00000000000000000000.log.deleted')).toBe(0n);
    expect(offsetFromFileName('09223372036854775807.log')).toBe(9223372036854775807n);
    expect(offsetFromFileName('12.log')).toBe(12n);
    expect(() => offsetFromFileName('leader-epoch-checkpoint')).toThrow(expect.objectContaining({ code: 'invalid-argument' }));
    expect(() => offsetFromFileName('99999999999999999999.log')).toThrow(expect.objectContaining({ code: 'invalid-argument' }));
  });

  it('recognises the five kinds and the four transient suffixes', () => {
    const b = '00000000000000000042';
    expect(parseSegmentFileName(`${b}.log`)).toEqual({ baseOffset: 42n, kind: 'log', canonical: true });
    expect(parseSegmentFileName(`${b}.index`)).toEqual({ baseOffset: 42n, kind: 'index', canonical: true });
    expect(parseSegmentFileName(`${b}.timeindex`)).toEqual({ baseOffset: 42n, kind: 'timeindex', canonical: true });
    expect(parseSegmentFileName(`${b}.txnindex`)).toEqual({ baseOffset: 42n, kind: 'txnindex', canonical: true });
    expect(parseSegmentFileName(`${b}.snapshot`)).toEqual({ baseOffset: 42n, kind: 'snapshot', canonical: true });
    expect(parseSegmentFileName(`${b}.log.deleted`)).toEqual({ baseOffset: 42n, kind: 'log', transient: 'deleted', canonical: true });
    expect(parseSegmentFileName(`${b}.index.cleaned`)).toEqual({ baseOffset: 42n, kind: 'index', transient: 'cleaned', canonical: true });
    expect(parseSegmentFileName(`${b}.log.swap`)).toEqual({ baseOffset: 42n, kind: 'log', transient: 'swap', canonical: true });
    expect(parseSegmentFileName(`${b}.snapshot.deleted`)).toEqual({ baseOffset: 42n, kind: 'snapshot', transient: 'deleted', canonical: true });
    expect(parseSegmentFileName(`${b}.timeindex.tmp`)).toEqual({ baseOffset: 42n, kind: 'timeindex', transient: 'tmp', canonical: true });
    expect(parseSegmentFileName('42.log')).toEqual({ baseOffset: 42n, kind: 'log', canonical: false });
    for (const n of ['leader-epoch-checkpoint', 'partition.metadata', `${b}.foo`, `${b}.log.bak`, `${b}.log.deleted.swap`, 'x.log', `${b}`]) {
      expect(parseSegmentFileName(n), n).toBeNull();
    }
  });
});

describe('partition folder names (spec §1.2)', () => {
  it('splits plain names at the last dash', () => {
    expect(parsePartitionDirName('orders-0')).toEqual({ topic: 'orders', partition: 0, kind: 'normal' });
    expect(parsePartitionDirName('__consumer_offsets-49')).toEqual({ topic: '__consumer_offsets', partition: 49, kind: 'normal' });
    expect(parsePartitionDirName('topic-logx-001-2')).toEqual({ topic: 'topic-logx-001', partition: 2, kind: 'normal' });
    expect(parsePartitionDirName('_confluent-controlcenter-5-1-2-1-KSTREAM-OUTEROTHER-0000000096-store-changelog-0')).toEqual({
      topic: '_confluent-controlcenter-5-1-2-1-KSTREAM-OUTEROTHER-0000000096-store-changelog',
      partition: 0,
      kind: 'normal',
    });
    expect(parsePartitionDirName('a.b_c-2147483647')).toEqual({ topic: 'a.b_c', partition: 2147483647, kind: 'normal' });
    // Kafka splits at the last dash, so a topic may end with one.
    expect(parsePartitionDirName('orders--1')).toEqual({ topic: 'orders-', partition: 1, kind: 'normal' });
    expect(parsePartitionDirName('__cluster_metadata-0')).toEqual({ topic: '__cluster_metadata', partition: 0, kind: 'normal' });
  });

  it('strips from the last dot first for -delete, -future and -stray folders', () => {
    expect(parsePartitionDirName(`orders-3.${HEX}-delete`)).toEqual({ topic: 'orders', partition: 3, kind: 'delete', uniqueId: HEX });
    expect(parsePartitionDirName(`my-topic-12.${HEX}-future`)).toEqual({ topic: 'my-topic', partition: 12, kind: 'future', uniqueId: HEX });
    expect(parsePartitionDirName(`my.dotted-topic-1.${HEX}-stray`)).toEqual({ topic: 'my.dotted-topic', partition: 1, kind: 'stray', uniqueId: HEX });
  });

  it('returns null for folders that are not partitions', () => {
    for (const n of [
      'remote-log-index-cache',
      'lost+found',
      'orders',
      'orders-',
      '-0',
      'orders-01x',
      'orders-+1',
      'orders-2147483648',
      'orders-0.abc',
      'foo-delete',
      `orders.${HEX}-delete`, // no partition before the dot
      `orders-0 .${HEX}-delete`,
      '.-0',
      'bad topic-0',
      'meta.properties',
    ]) {
      expect(parsePartitionDirName(n), n).toBeNull();
    }
  });

  it('formats names that parse back', () => {
    expect(partitionDirName('orders', 7)).toBe('orders-7');
    expect(partitionDirName('orders', 7, 'delete', HEX)).toBe(`orders-7.${HEX}-delete`);
    for (const [t, p, k] of [['a-b', 0, 'normal'], ['x.y', 9, 'future'], ['z', 1, 'stray']] as const) {
      const name = partitionDirName(t, p, k, k === 'normal' ? undefined : HEX);
      expect(parsePartitionDirName(name)).toMatchObject({ topic: t, partition: p, kind: k });
    }
    expect(() => partitionDirName('bad topic', 0)).toThrow(expect.objectContaining({ code: 'invalid-argument' }));
    expect(() => partitionDirName('t', -1)).toThrow(expect.objectContaining({ code: 'invalid-argument' }));
    expect(() => partitionDirName('t', 0, 'delete')).toThrow(expect.objectContaining({ code: 'invalid-argument' }));
  });
});

describe('classifyPartitionFiles', () => {
  it('sorts a listing by role (B12 orphan index, transient leftovers, snapshots, unknown files)', () => {
    const n = (o: number): string => String(o).padStart(20, '0');
    const listing = classifyPartitionFiles([
      { name: `${n(100)}.log`, size: 16200 },
      { name: `${n(100)}.index`, size: 10485760 },
      { name: `${n(100)}.timeindex`, size: 10485756 },
      { name: `${n(0)}.timeindex`, size: 24 },
      { name: `${n(0)}.log`, size: 9000 },
      { name: `${n(0)}.index`, size: 8 },
      { name: `${n(0)}.txnindex`, size: 34 },
      { name: `${n(200)}.index`, size: 0 },
      { name: `${n(100)}.snapshot`, size: 10 },
      { name: `${n(2)}.snapshot`, size: 56 },
      { name: `${n(50)}.log.deleted`, size: 1 },
      { name: `${n(50)}.index.deleted`, size: 2 },
      { name: `${n(0)}.log.cleaned`, size: 3 },
      { name: `${n(0)}.log.swap`, size: 4 },
      { name: 'leader-epoch-checkpoint.tmp', size: 5 },
      { name: 'leader-epoch-checkpoint', size: 14 },
      { name: 'partition.metadata', size: 43 },
      { name: 'quorum-state', size: 125 },
      { name: '00000000000000000100-0000000001.checkpoint', size: 99 },
      { name: '00000000000000000042-0000000003.checkpoint', size: 50 },
      { name: '0000000000000000042-0000000003.checkpoint', size: 7 },
      { name: 'notes.txt', size: 6 },
      { name: 'sub', size: 4096, isDirectory: true },
    ]);
    expect(listing.segments).toEqual([
      { baseOffset: 0n, log: { name: `${n(0)}.log`, size: 9000 }, index: { name: `${n(0)}.index`, size: 8 }, timeindex: { name: `${n(0)}.timeindex`, size: 24 }, txnindex: { name: `${n(0)}.txnindex`, size: 34 } },
      { baseOffset: 100n, log: { name: `${n(100)}.log`, size: 16200 }, index: { name: `${n(100)}.index`, size: 10485760 }, timeindex: { name: `${n(100)}.timeindex`, size: 10485756 } },
    ]);
    expect(listing.orphanIndexes).toEqual([{ name: `${n(200)}.index`, size: 0, baseOffset: 200n, kind: 'index' }]);
    expect(listing.snapshots.map((s) => s.baseOffset)).toEqual([2n, 100n]);
    expect(listing.transient.map((t) => [t.name, t.suffix, t.baseOffset, t.kind])).toEqual([
      [`${n(0)}.log.cleaned`, 'cleaned', 0n, 'log'],
      [`${n(0)}.log.swap`, 'swap', 0n, 'log'],
      [`${n(50)}.index.deleted`, 'deleted', 50n, 'index'],
      [`${n(50)}.log.deleted`, 'deleted', 50n, 'log'],
      ['leader-epoch-checkpoint.tmp', 'tmp', undefined, undefined],
    ]);
    expect(listing.metadata.map((m) => m.name)).toEqual(['leader-epoch-checkpoint', 'partition.metadata', 'quorum-state']);
    expect(listing.kraftSnapshots).toEqual([
      { name: '00000000000000000042-0000000003.checkpoint', size: 50, endOffset: 42n, epoch: 3 },
      { name: '00000000000000000100-0000000001.checkpoint', size: 99, endOffset: 100n, epoch: 1 },
    ]);
    expect(listing.unknown).toEqual([{ name: '0000000000000000042-0000000003.checkpoint', size: 7 }, { name: 'notes.txt', size: 6 }]);
    expect(listing.directories).toEqual(['sub']);
  });

  it('sorts segments numerically, not by name, and reports a second spelling of the same offset as unknown', () => {
    const l = classifyPartitionFiles([
      { name: '10.log', size: 1 },
      { name: '9.log', size: 1 },
      { name: '00000000000000000009.log', size: 2 },
    ]);
    expect(l.segments.map((s) => [s.baseOffset, s.log.name])).toEqual([
      [9n, '9.log'],
      [10n, '10.log'],
    ]);
    expect(l.unknown.map((u) => u.name)).toEqual(['00000000000000000009.log']);
  });

  describe('listPartitionDir', () => {
    let dir: string | undefined;
    afterEach(() => {
      if (dir) rmSync(dir, { recursive: true, force: true });
    });
    it('lists a folder on disk with sizes', () => {
      dir = mkdtempSync(join(tmpdir(), 'klx-list-'));
      writeFileSync(join(dir, '00000000000000000000.log'), Buffer.alloc(70));
      writeFileSync(join(dir, '00000000000000000000.index'), Buffer.alloc(0));
      writeFileSync(join(dir, '00000000000000000070.index'), Buffer.alloc(8));
      mkdirSync(join(dir, 'x'));
      const l = listPartitionDir(dir);
      expect(l.segments).toEqual([{ baseOffset: 0n, log: { name: '00000000000000000000.log', size: 70 }, index: { name: '00000000000000000000.index', size: 0 } }]);
      expect(l.orphanIndexes.map((o) => o.name)).toEqual(['00000000000000000070.index']);
      expect(l.directories).toEqual(['x']);
    });
    it('throws not-found for a missing folder', () => {
      expect(() => listPartitionDir(join(tmpdir(), 'klx-definitely-missing-dir'))).toThrow(expect.objectContaining({ code: 'not-found' }));
    });
  });
});
