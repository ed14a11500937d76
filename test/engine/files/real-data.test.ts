/**
 * The files layer over every broker-written data set in ../shared/kafka-real-data (read in place):
 * - every .index / .timeindex equals the independent decoder's EXPECTED-index.json;
 * - every checkpoint, leader-epoch-checkpoint, partition.metadata, meta.properties, clean-shutdown
 *   marker and producer snapshot parses;
 * - every partition folder name parses and its listing has no unknown or orphan files;
 * - rebuilding indexes from the .log with the spec's rule reproduces what the brokers wrote, except
 *   for the cases listed (and explained) below.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import { expect, it } from 'vitest';
import { scanLogFile } from '../../../src-main/engine/format/log-reader.ts';
import {
  METADATA_TOPIC_ID,
  readCleanShutdown,
  readLeaderEpochCheckpoint,
  readMetaProperties,
  readOffsetCheckpoint,
  readPartitionMetadata,
} from '../../../src-main/engine/files/checkpoint.ts';
import { listPartitionDir, offsetFromFileName, parsePartitionDirName } from '../../../src-main/engine/files/file-names.ts';
import { buildOffsetIndexEntries, readOffsetIndex, type IndexableBatch } from '../../../src-main/engine/files/offset-index.ts';
import { readProducerSnapshot } from '../../../src-main/engine/files/producer-snapshot.ts';
import { buildTimeIndexEntries, readTimeIndex } from '../../../src-main/engine/files/time-index.ts';
import { describeRealData, REAL_DATA, realDataCases } from '../../support/real-data.ts';

interface ExpectedIndex {
  baseOffset: number;
  file: string;
  kind: 'index' | 'timeindex';
  entries: { offset: number; relativeOffset: number; position?: number; timestamp?: number }[];
  entryCount: number;
  entrySize: number;
  size: number;
  trailingBytes: number;
  trailingZeroEntries: number;
}

function walk(dir: string, out: string[] = []): string[] {
  for (const n of readdirSync(dir)) {
    const p = join(dir, n);
    if (statSync(p).isDirectory()) walk(p, out);
    else out.push(p);
  }
  return out;
}

function expectedIndexes(c: string): ExpectedIndex[] {
  const f = join(REAL_DATA, c, 'EXPECTED-index.json');
  return existsSync(f) ? (JSON.parse(readFileSync(f, 'utf8')) as { indexes: ExpectedIndex[] }).indexes : [];
}

/** Log directories: folders holding meta.properties. */
function logDirs(): string[] {
  return walk(REAL_DATA)
    .filter((f) => basename(f) === 'meta.properties')
    .map((f) => join(f, '..'))
    .sort();
}

function partitionDirs(): string[] {
  return logDirs().flatMap((d) =>
    readdirSync(d)
      .filter((n) => statSync(join(d, n)).isDirectory())
      .map((n) => join(d, n)),
  );
}

describeRealData('files layer on real broker-written data', () => {
  for (const c of realDataCases()) {
    const expected = expectedIndexes(c);
    if (expected.length === 0) continue;
    it(`${c}: every .index/.timeindex equals EXPECTED-index.json (${expected.length} files)`, () => {
      for (const x of expected) {
        const path = join(REAL_DATA, c, x.file);
        const label = `${c}/${x.file}`;
        const r = x.kind === 'index' ? readOffsetIndex(path) : readTimeIndex(path);
        expect(Number(r.baseOffset), label).toBe(x.baseOffset);
        expect(r.fileSize, label).toBe(x.size);
        expect(r.entries.length, label).toBe(x.entryCount);
        expect(r.trailingZeroEntries, label).toBe(x.trailingZeroEntries);
        expect(r.trailingBytes, label).toBe(x.trailingBytes);
        expect(r.staleEntries, label).toBe(0);
        expect(r.problems, label).toEqual([]);
        const mine = r.entries.map((e) =>
          'position' in e ? { offset: Number(e.offset), position: e.position, relativeOffset: e.relativeOffset } : { offset: Number(e.offset), relativeOffset: e.relativeOffset, timestamp: Number(e.timestamp) },
        );
        expect(mine, label).toEqual(x.entries);
      }
    });
  }

  it('every .index and .timeindex on disk is listed in an EXPECTED-index.json', () => {
    const listed = new Set(realDataCases().flatMap((c) => expectedIndexes(c).map((x) => join(REAL_DATA, c, x.file))));
    const onDisk = walk(REAL_DATA).filter((f) => f.endsWith('.index') || f.endsWith('.timeindex'));
    expect(onDisk.length).toBe(226);
    expect(onDisk.filter((f) => !listed.has(f))).toEqual([]);
  });

  it('every log dir: offset checkpoints, meta.properties and the clean-shutdown marker parse', () => {
    const dirs = logDirs();
    expect(dirs.map((d) => relative(REAL_DATA, d))).toHaveLength(11);
    let checkpoints = 0;
    for (const d of dirs) {
      const meta = readMetaProperties(join(d, 'meta.properties'));
      expect([0, 1]).toContain(meta.version);
      if (meta.version === 1) expect(meta.nodeId).toBe(1);
      for (const n of ['recovery-point-offset-checkpoint', 'replication-offset-checkpoint', 'log-start-offset-checkpoint', 'cleaner-offset-checkpoint']) {
        const f = join(d, n);
        if (!existsSync(f)) continue;
        const entries = readOffsetCheckpoint(f);
        const text = readFileSync(f, 'utf8');
        expect(entries.length, f).toBe(text === '' ? 0 : text.split('\n').filter(Boolean).length - 2);
        checkpoints++;
      }
      const marker = readCleanShutdown(d);
      expect(marker.present, d).toBe(existsSync(join(d, '.kafka_cleanshutdown')));
    }
    expect(checkpoints).toBe(43);

    // Concrete values, checked by eye against the files.
    const at = (p: string): string[] => readOffsetCheckpoint(join(REAL_DATA, p)).map((e) => `${e.topic}-${e.partition}=${e.offset}`);
    expect(at('kafka-2.7.1-compacted-offsets/cleaner-offset-checkpoint')).toEqual(['__consumer_offsets-28=2', '__consumer_offsets-17=1', '__consumer_offsets-39=18']);
    expect(at('retention-log-start/kafka2/cleaner-offset-checkpoint')).toEqual(['__consumer_offsets-19=347', '__consumer_offsets-29=1034']);
    expect(at('multisegment-rolled/replication-offset-checkpoint')).toContain('invoice-1=99523');
    expect(at('kafkajs-gzip/recovery-point-offset-checkpoint')).toEqual(['topic-logx-001-2=7', 'topic-logx-001-0=6', 'topic-logx-001-1=6']);
    expect(at('gzip-mixed-bitnami/log-start-offset-checkpoint')).toEqual([]);
    expect(readMetaProperties(join(REAL_DATA, 'kraft-3x-metadata-2seg/meta.properties'))).toMatchObject({ version: 1, nodeId: 1, clusterId: 'WnLkTHhkQaiJbwP8FClPhw', directoryId: 'xtV8ykyou77J3v7TiYexPA' });
    expect(readMetaProperties(join(REAL_DATA, 'cp-5.1-lz4-connect/meta.properties'))).toMatchObject({ version: 0, brokerId: 1001 });
    expect(readCleanShutdown(join(REAL_DATA, 'gzip-mixed-bitnami'))).toEqual({ present: true, size: 0 });
  });

  it('every partition folder: name, listing, leader-epoch-checkpoint and partition.metadata', () => {
    const dirs = partitionDirs();
    expect(dirs.length).toBeGreaterThan(300);
    let epochFiles = 0;
    let metadataFiles = 0;
    for (const d of dirs) {
      const name = parsePartitionDirName(basename(d));
      expect(name, d).not.toBeNull();
      expect(name!.kind).toBe('normal');
      const l = listPartitionDir(d);
      expect(l.unknown, d).toEqual([]);
      expect(l.orphanIndexes, d).toEqual([]);
      expect(l.transient, d).toEqual([]);
      expect(l.directories, d).toEqual([]);
      expect(l.segments.length, d).toBe(readdirSync(d).filter((n) => n.endsWith('.log')).length);
      expect(l.segments.length, d).toBeGreaterThan(0);
      if (existsSync(join(d, 'leader-epoch-checkpoint'))) {
        const epochs = readLeaderEpochCheckpoint(join(d, 'leader-epoch-checkpoint'));
        for (let i = 1; i < epochs.length; i++) expect(epochs[i]!.epoch).toBeGreaterThan(epochs[i - 1]!.epoch);
        epochFiles++;
      }
      if (existsSync(join(d, 'partition.metadata'))) {
        const pm = readPartitionMetadata(join(d, 'partition.metadata'));
        if (name!.topic === '__cluster_metadata') expect(pm.topicId).toBe(METADATA_TOPIC_ID);
        metadataFiles++;
      }
    }
    expect(epochFiles).toBeGreaterThan(250);
    expect(metadataFiles).toBeGreaterThan(60);
    expect(readLeaderEpochCheckpoint(join(REAL_DATA, 'kraft-3x-metadata-2seg/__cluster_metadata-0/leader-epoch-checkpoint'))).toEqual([
      { epoch: 1, startOffset: 0n },
      { epoch: 2, startOffset: 3442n },
      { epoch: 3, startOffset: 3612n },
      { epoch: 4, startOffset: 14667n },
      { epoch: 5, startOffset: 21698n },
    ]);
    expect(readLeaderEpochCheckpoint(join(REAL_DATA, 'retention-log-start/kafka2/SEND_MESSAGE_TO_ALL_USERS-2/leader-epoch-checkpoint'))).toEqual([]);
  });

  it('every producer snapshot has a valid CRC-32C', () => {
    const snaps = walk(REAL_DATA).filter((f) => f.endsWith('.snapshot'));
    expect(snaps).toHaveLength(97);
    let entries = 0;
    for (const f of snaps) {
      const s = readProducerSnapshot(f, { requireValidCrc: true });
      expect(s.offset).toBe(offsetFromFileName(basename(f)));
      expect(s.trailingBytes).toBe(0);
      for (const e of s.entries) {
        expect(e.producerId).toBeGreaterThanOrEqual(0n);
        expect(e.lastOffset).toBeLessThan(s.offset);
      }
      entries += s.entries.length;
    }
    expect(entries).toBe(7);
  });

  it('rebuilding from the .log reproduces the broker-written indexes, except where brokers are known to differ', () => {
    const offsetDiffs: string[] = [];
    const timeOffsetDiffs: string[] = [];
    const timeDiffs: string[] = [];
    let compared = 0;
    for (const c of realDataCases()) {
      for (const x of expectedIndexes(c)) {
        const path = join(REAL_DATA, c, x.file);
        const base = offsetFromFileName(basename(path));
        const batches: (IndexableBatch & { baseOffset: bigint })[] = [];
        for (const e of scanLogFile(path.replace(/\.(index|timeindex)$/, '.log'))) {
          expect(e.type, path).toBe('batch');
          if (e.type === 'batch') batches.push({ position: e.header.position, size: e.header.size, lastOffset: e.header.lastOffset, maxTimestamp: e.header.maxTimestamp, baseOffset: e.header.baseOffset });
        }
        const label = `${c}/${x.file}`;
        compared++;
        if (x.kind === 'index') {
          const disk = readOffsetIndex(path).entries;
          const built = buildOffsetIndexEntries(base, batches);
          if (JSON.stringify(built.map((e) => [`${e.offset}`, e.position])) !== JSON.stringify(disk.map((e) => [`${e.offset}`, e.position]))) offsetDiffs.push(label);
          // What always holds: each entry points at a batch start and names that batch's last offset.
          const byPos = new Map(batches.map((b) => [b.position, b]));
          for (const e of disk) expect(byPos.get(e.position)?.lastOffset, label).toBe(e.offset);
        } else {
          const disk = readTimeIndex(path).entries;
          const built = buildTimeIndexEntries(base, batches);
          const key = (es: { timestamp: bigint; offset: bigint }[], withOffset: boolean): string => JSON.stringify(es.map((e) => (withOffset ? `${e.timestamp}@${e.offset}` : `${e.timestamp}`)));
          if (key(built, false) !== key(disk, false)) timeDiffs.push(label);
          else if (key(built, true) !== key(disk, true)) timeOffsetDiffs.push(label);
          // What always holds: each entry's timestamp is some batch's max timestamp, and its offset lies in that batch.
          for (const e of disk) {
            const holder = batches.find((b) => b.maxTimestamp === e.timestamp && b.baseOffset <= e.offset && e.offset <= b.lastOffset);
            expect(holder, `${label} ${e.timestamp}@${e.offset}`).toBeDefined();
          }
        }
      }
    }
    expect(compared).toBe(226);
    // The KRaft active segment lived across broker restarts: a broker restarts its "bytes since the last
    // index entry" count at 0 when it reopens a segment, and writes a final time-index entry when it
    // closes one, so its entries drift from a from-scratch rebuild after the first restart.
    expect(offsetDiffs).toEqual(['kraft-3x-metadata-2seg/__cluster_metadata-0/00000000000000014667.index']);
    expect(timeDiffs).toEqual(['kraft-3x-metadata-2seg/__cluster_metadata-0/00000000000000014667.timeindex']);
    // Kafka 2.x brokers (leader append path and cleaner, uncompressed batches) stored the offset of the
    // first record carrying the max timestamp, not the batch's last offset that spec §9.2 and
    // LogSegment.recover use; the timestamps agree.
    for (const label of timeOffsetDiffs) {
      const path = join(REAL_DATA, label);
      const batches = [...scanLogFile(path.replace(/\.timeindex$/, '.log'), { deep: true })].flatMap((e) => (e.type === 'batch' ? [e] : []));
      for (const e of readTimeIndex(path).entries) {
        const b = batches.find((x) => x.header.baseOffset <= e.offset && e.offset <= x.header.lastOffset)!;
        expect(b.records!.find((r) => r.timestamp === e.timestamp)?.offset, `${label} ${e.timestamp}@${e.offset}`).toBe(e.offset);
      }
    }
    expect(timeOffsetDiffs).toEqual([
      'multisegment-rolled/invoice-1/00000000000000000000.timeindex',
      'multisegment-rolled/invoice-1/00000000000000030620.timeindex',
      'multisegment-rolled/invoice-1/00000000000000060492.timeindex',
      'retention-log-start/kafka2/__consumer_offsets-19/00000000000000000347.timeindex',
      'retention-log-start/kafka2/__consumer_offsets-29/00000000000000001034.timeindex',
      'retention-log-start/kafka2/__consumer_offsets-9/00000000000000000000.timeindex',
    ]);
  });
});
