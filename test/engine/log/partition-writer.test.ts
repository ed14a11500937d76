/**
 * The partition writer: create, append, roll, lock, and the checks made before writing
 * (engine `src-main/engine/log/partition-writer.ts`, `log-lock.ts`). Behaviour cases B07 and B19 (a)(b).
 */
import { chmodSync, cpSync, existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync, appendFileSync, mkdirSync } from 'node:fs';
import { spawn, spawnSync } from 'node:child_process';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { KlxError } from '../../../src-main/engine/errors.ts';
import { encodeBatch } from '../../../src-main/engine/format/record-batch.ts';
import { scanLogBuffer, scanLogFile } from '../../../src-main/engine/format/log-reader.ts';
import { buildOffsetIndexEntries, encodeOffsetIndex } from '../../../src-main/engine/files/offset-index.ts';
import { buildTimeIndexEntries, encodeTimeIndex } from '../../../src-main/engine/files/time-index.ts';
import { readMetaProperties, readPartitionMetadata, readOffsetCheckpoint } from '../../../src-main/engine/files/checkpoint.ts';
import { PartitionLog } from '../../../src-main/engine/log/partition-log.ts';
import { WRITER_LOCK_FILE, acquireLock, isProcessAlive } from '../../../src-main/engine/log/log-lock.ts';
import { PartitionWriter, type AppendRecord } from '../../../src-main/engine/log/partition-writer.ts';
import { createPartition, planCreatePartition } from '../../../src-main/engine/log/partition-create.ts';
import { decideRoll, maxSegmentMs } from '../../../src-main/engine/log/roll-rule.ts';
import { DEFAULT_TOPIC_CONFIG, type TopicConfig } from '../../../src-main/engine/log/topic-config.ts';
import { buildPartition, rec, singles, tempDir } from '../../support/log-builder.ts';
import { REAL_DATA, describeRealData } from '../../support/real-data.ts';
import { thrownKlxError } from '../../support/klx-error.ts';

const TS = 1700000000000n;
const dirs: string[] = [];
const writers: PartitionWriter[] = [];
afterEach(() => {
  for (const w of writers.splice(0)) w.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function logDir(): string {
  const d = tempDir('klx-writer-');
  dirs.push(d);
  return d;
}

function open(dir: string, opts: Parameters<typeof PartitionWriter.open>[1] = {}): PartitionWriter {
  const w = PartitionWriter.open(dir, { clock: () => TS + 999n, ...opts });
  writers.push(w);
  return w;
}

/** Every batch of every segment, decoded, with the segment it is in. */
function readAll(dir: string): { segment: bigint; offset: bigint; key: string | null; value: string | null; ts: bigint; batchBase: bigint }[] {
  const log = PartitionLog.open(dir);
  const out: { segment: bigint; offset: bigint; key: string | null; value: string | null; ts: bigint; batchBase: bigint }[] = [];
  for (const seg of log.segments) {
    for (const e of seg.scan({ deep: true })) {
      if (e.type !== 'batch') throw new Error(`damage in ${seg.files.log}: ${e.reason}`);
      for (const r of e.records!) {
        out.push({ segment: seg.baseOffset, offset: r.offset, key: r.key && Buffer.from(r.key).toString(), value: r.value && Buffer.from(r.value).toString(), ts: r.timestamp, batchBase: e.header.baseOffset });
      }
    }
  }
  return out;
}

/** The indexes Kafka's recovery would rebuild for a segment file (trimmed, final time entry). */
function rebuiltIndexes(logPath: string, base: bigint, interval: number): { index: Buffer; timeindex: Buffer } {
  const headers = [...scanLogFile(logPath)].flatMap((e) => (e.type === 'batch' ? [{ position: e.header.position, size: e.header.size, lastOffset: e.header.lastOffset, maxTimestamp: e.header.maxTimestamp }] : []));
  return {
    index: encodeOffsetIndex(base, buildOffsetIndexEntries(base, headers, interval)),
    timeindex: encodeTimeIndex(base, buildTimeIndexEntries(base, headers, { indexIntervalBytes: interval })),
  };
}

function expectIndexesRebuilt(dir: string, interval: number): void {
  for (const seg of PartitionLog.open(dir).segments) {
    const want = rebuiltIndexes(seg.files.log, seg.baseOffset, interval);
    expect(readFileSync(seg.files.index).toString('hex'), `${seg.files.index}`).toBe(want.index.toString('hex'));
    expect(readFileSync(seg.files.timeindex).toString('hex'), `${seg.files.timeindex}`).toBe(want.timeindex.toString('hex'));
  }
}


function snapshotFiles(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const n of readdirSync(dir).sort()) {
    const p = join(dir, n);
    out[n] = statSync(p).isDirectory() ? '<dir>' : readFileSync(p).toString('hex');
  }
  return out;
}

function cfg(over: Partial<TopicConfig> = {}): TopicConfig {
  return { ...DEFAULT_TOPIC_CONFIG, 'cleanup.policy': [...DEFAULT_TOPIC_CONFIG['cleanup.policy']], ...over } as TopicConfig;
}

describe('createPartition', () => {
  it('lays out an empty partition as a broker leading it with epoch 0 does', () => {
    const ld = logDir();
    const plan = createPartition(ld, 'orders', 3, { 'cleanup.policy': ['compact'], 'segment.bytes': 1024 });
    const dir = join(ld, 'orders-3');
    expect(plan.dir).toBe(resolve(dir));
    expect(readdirSync(ld).sort()).toEqual(['meta.properties', 'orders-3', 'recovery-point-offset-checkpoint']);
    expect(readdirSync(dir).sort()).toEqual([
      '00000000000000000000.index',
      '00000000000000000000.log',
      '00000000000000000000.timeindex',
      'klx-topic.properties',
      'leader-epoch-checkpoint',
      'partition.metadata',
    ]);
    for (const f of ['log', 'index', 'timeindex']) expect(statSync(join(dir, `00000000000000000000.${f}`)).size).toBe(0);
    expect(readFileSync(join(dir, 'leader-epoch-checkpoint'), 'utf8')).toBe('0\n1\n0 0\n');
    const pm = readFileSync(join(dir, 'partition.metadata'), 'utf8');
    expect(pm).toMatch(/^version: 0\ntopic_id: [A-Za-z0-9_-]{22}$/);
    expect(pm.slice(20).startsWith('-')).toBe(false);
    expect(readPartitionMetadata(join(dir, 'partition.metadata')).topicId).toBe(plan.topicId);
    expect(Buffer.from(plan.topicId, 'base64url')[6]! >> 4).toBe(4); // a v4 UUID, as Uuid.randomUuid
    const sidecar = readFileSync(join(dir, 'klx-topic.properties'), 'utf8');
    expect(sidecar).toContain('cleanup.policy=compact\n');
    expect(sidecar).toContain('segment.bytes=1024\n');
    const meta = readMetaProperties(join(ld, 'meta.properties'));
    expect(meta.version).toBe(1);
    expect(meta.nodeId).toBe(0);
    expect(meta.clusterId).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(meta.directoryId).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(readFileSync(join(ld, 'recovery-point-offset-checkpoint'), 'utf8')).toBe('0\n1\norders 3 0\n');

    const log = PartitionLog.open(dir);
    expect(log.problems).toEqual([]);
    expect(log.logEndOffset).toBe(0n);
    expect(log.leaderEpochs).toEqual([{ epoch: 0, startOffset: 0n }]);
    expect(log.topicId).toBe(plan.topicId);
    expect(log.config.config['cleanup.policy']).toEqual(['compact']);
    expect(log.config.sources['cleanup.policy']).toBe('sidecar');
    expect(log.config.config['segment.bytes']).toBe(1024);
  });

  it('keeps an existing meta.properties and merges the recovery point with other partitions', () => {
    const ld = logDir();
    writeFileSync(join(ld, 'meta.properties'), '#\n#x\nversion=0\nbroker.id=7\n');
    writeFileSync(join(ld, 'recovery-point-offset-checkpoint'), '0\n2\nother 0 77\nother 1 5\n');
    const plan = createPartition(ld, 'orders', 0);
    expect(plan.metaProperties.create).toBe(false);
    expect(readFileSync(join(ld, 'meta.properties'), 'utf8')).toBe('#\n#x\nversion=0\nbroker.id=7\n');
    expect(readFileSync(join(ld, 'recovery-point-offset-checkpoint'), 'utf8')).toBe('0\n3\nother 0 77\nother 1 5\norders 0 0\n');
    expect(readFileSync(join(ld, 'orders-0', 'klx-topic.properties'), 'utf8')).toBe('# Topic configuration written by Kafka Log Explorer (klx). Brokers ignore this file.\n');
  });

  it('refuses a non-empty partition folder and accepts an empty one', () => {
    const ld = logDir();
    mkdirSync(join(ld, 'orders-0'));
    writeFileSync(join(ld, 'orders-0', 'note.txt'), 'keep me');
    const err = thrownKlxError(() => createPartition(ld, 'orders', 0));
    expect(err.code).toBe('invalid-argument');
    expect(err.message).toContain('already exists and is not empty (1 entry)');
    expect(readdirSync(join(ld, 'orders-0'))).toEqual(['note.txt']);
    expect(existsSync(join(ld, 'meta.properties'))).toBe(false);
    mkdirSync(join(ld, 'empty-1'));
    createPartition(ld, 'empty', 1);
    expect(readdirSync(join(ld, 'empty-1'))).toHaveLength(6);
  });

  it('plans without touching anything, and validates names and configs', () => {
    const base = logDir();
    const ld = join(base, 'not-yet');
    const plan = planCreatePartition(ld, 'orders', 0, { 'cleanup.policy': ['compact'] });
    expect(plan.files).toEqual(['00000000000000000000.log', '00000000000000000000.index', '00000000000000000000.timeindex', 'leader-epoch-checkpoint', 'partition.metadata', 'klx-topic.properties']);
    expect(plan.metaProperties.create).toBe(true);
    expect(existsSync(ld)).toBe(false);
    expect(thrownKlxError(() => planCreatePartition(ld, 'bad topic', 0)).code).toBe('invalid-argument');
    expect(thrownKlxError(() => planCreatePartition(ld, 'orders', -1)).code).toBe('invalid-argument');
    expect(thrownKlxError(() => planCreatePartition(ld, '__cluster_metadata', 0)).code).toBe('invalid-argument');
    expect(thrownKlxError(() => planCreatePartition(ld, 'orders', 0, { 'segment.bytes': 3 })).code).toBe('invalid-config');
    expect(existsSync(ld)).toBe(false);
  });
});

describe('append', () => {
  it('writes the batch a broker writes: spec §15.1 byte for byte, then offsets run on', () => {
    const ld = logDir();
    const { dir } = createPartition(ld, 'test', 0);
    const w = open(dir);
    const r1 = w.append([{ key: 'k', value: 'v', timestamp: TS }]);
    expect(r1).toMatchObject({ baseOffset: 0n, lastOffset: 0n, recordCount: 1, position: 0, size: 70, segmentBaseOffset: 0n, rolled: false, rollReason: null, partitionLeaderEpoch: 0, logEndOffset: 1n, leaderEpochEntry: null, indexEntry: false });
    const log0 = readFileSync(join(dir, '00000000000000000000.log'));
    expect(log0.toString('hex')).toBe(
      '0000000000000000' + '0000003a' + '00000000' + '02' + 'e99b8dd8' + '0000' + '00000000' + '0000018bcfe56800' + '0000018bcfe56800' + 'ffffffffffffffff' + 'ffff' + 'ffffffff' + '00000001' + '10000000026b027600',
    );
    const r2 = w.append([{ key: 'a', value: '1', headers: [{ key: 'h', value: 'x' }], timestamp: TS }, { key: null, value: '2', timestamp: TS + 1n }]);
    expect(r2).toMatchObject({ baseOffset: 1n, lastOffset: 2n, recordCount: 2, position: 70, size: 82, logEndOffset: 3n });
    // Spec §15.5 is the same batch at baseOffset 0: only the base offset differs (it is outside the CRC).
    const b2 = readFileSync(join(dir, '00000000000000000000.log')).subarray(70);
    expect(b2.readBigInt64BE(0)).toBe(1n);
    expect(b2.subarray(8).toString('hex')).toBe(encodeBatch({ baseOffset: 0n, records: [rec('a', '1', TS, [{ key: 'h', value: 'x' }]), rec(null, '2', TS + 1n)] }).subarray(8).toString('hex'));
    expect(b2.readUInt32BE(17)).toBe(0x4dd255d5);
    expect(w.logEndOffset).toBe(3n);
    w.close();
    expect(readAll(dir).map((r) => [r.offset, r.key, r.value, r.ts])).toEqual([
      [0n, 'k', 'v', TS],
      [1n, 'a', '1', TS],
      [2n, null, '2', TS + 1n],
    ]);
    expect(PartitionLog.open(dir).logEndOffset).toBe(3n);
    expect(readFileSync(join(ld, 'recovery-point-offset-checkpoint'), 'utf8')).toBe('0\n1\ntest 0 3\n');
    expect(existsSync(join(dir, WRITER_LOCK_FILE))).toBe(false);
  });

  it('index entries after N appends equal what buildOffsetIndexEntries / buildTimeIndexEntries compute, byte for byte, across reopen and rolls', () => {
    const ld = logDir();
    const interval = 200;
    const { dir } = createPartition(ld, 'idx', 0, { 'index.interval.bytes': interval, 'segment.bytes': 2000 });
    let w = open(dir);
    const tss = [5000, 4000, 7000, 7000, 6000, 9000, 1000, 9500, 9400, 12000];
    for (let i = 0; i < 60; i++) {
      if (i % 17 === 16) {
        w.close();
        w = open(dir);
      }
      const r = w.append([{ key: `key-${i}`, value: 'x'.repeat(10 + ((i * 37) % 90)), timestamp: tss[i % tss.length]! + i }]);
      expect(r.baseOffset).toBe(BigInt(i));
      expectIndexesRebuilt(dir, interval);
    }
    w.close();
    const log = PartitionLog.open(dir);
    expect(log.segments.length).toBeGreaterThan(2);
    expect(log.logEndOffset).toBe(60n);
    expect(log.problems).toEqual([]);
    const withEntries = log.segments.filter((s) => s.offsetIndex().entries.length > 0);
    expect(withEntries.length).toBeGreaterThan(1);
    for (const s of log.segments) {
      expect(s.files.indexSize % 8).toBe(0);
      expect(s.offsetIndex().trailingZeroEntries).toBe(0);
      expect(s.timeIndex().trailingZeroEntries).toBe(0);
    }
    expect(readAll(dir).map((r) => r.offset)).toEqual(Array.from({ length: 60 }, (_, i) => BigInt(i)));
  });

  it('keeps the indexes equal to the rebuild for any sizes, timestamps and reopen points (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ size: fc.integer({ min: 0, max: 300 }), ts: fc.integer({ min: -1, max: 50_000 }), reopen: fc.boolean(), n: fc.integer({ min: 1, max: 3 }) }), { minLength: 1, maxLength: 25 }),
        fc.integer({ min: 0, max: 600 }),
        (steps, interval) => {
          const ld = tempDir('klx-writer-prop-');
          try {
            const { dir } = createPartition(ld, 'p', 0, { 'index.interval.bytes': interval, 'segment.bytes': 3000 });
            let w = PartitionWriter.open(dir, { clock: () => 60_000n });
            try {
              for (const s of steps) {
                if (s.reopen) {
                  w.close();
                  w = PartitionWriter.open(dir, { clock: () => 60_000n });
                }
                w.append(Array.from({ length: s.n }, (_, i) => ({ key: `k${i}`, value: 'v'.repeat(s.size), timestamp: s.ts < 0 ? -1 : s.ts + i })));
              }
            } finally {
              w.close();
            }
            expectIndexesRebuilt(dir, interval);
            expect(PartitionLog.open(dir).logEndOffset).toBe(BigInt(steps.reduce((a, s) => a + s.n, 0)));
          } finally {
            rmSync(ld, { recursive: true, force: true });
          }
        },
      ),
      { numRuns: 15 },
    );
  });

  it('B07: a compacted topic refuses a record without key ("Compacted topic cannot accept message without key")', () => {
    const ld = logDir();
    // The case: the topic held null-key data while it was `delete`, then was switched to compact.
    const dir = buildPartition(ld, {
      topic: 'b07',
      segments: [{ baseOffset: 0n, batches: singles(rec(null, 'x'), rec('k1', 'a'), rec(null, 'y'), rec('k1', 'b')) }, { baseOffset: 4n, batches: singles(rec(null, 'z')) }],
    });
    const before = snapshotFiles(dir);
    const w = open(dir, { config: { 'cleanup.policy': ['compact'] } });
    const err = thrownKlxError(() => w.append([{ key: null, value: 'w' }]));
    expect(err.code).toBe('invalid-record');
    expect(err.message).toBe('Compacted topic cannot accept message without key in topic partition b07-0 (record 0; cleanup.policy=compact)');
    // One keyless record anywhere in the batch refuses the whole batch.
    const err2 = thrownKlxError(() => w.append([{ key: 'k2', value: 'ok' }, { key: null, value: 'w' }]));
    expect(err2.details).toMatchObject({ recordIndex: 1 });
    expect(thrownKlxError(() => w.planAppend([{ key: null, value: 'w' }])).code).toBe('invalid-record');
    expect(w.logEndOffset).toBe(5n);
    w.close();
    expect(snapshotFiles(dir)).toEqual(before);

    // compact,delete refuses too; delete accepts; the sidecar's policy applies without overrides.
    const { dir: cd } = createPartition(ld, 'cd', 0, { 'cleanup.policy': ['compact', 'delete'] });
    const w2 = open(cd);
    expect(thrownKlxError(() => w2.append([{ key: null, value: 'w' }])).message).toContain('Compacted topic cannot accept message without key in topic partition cd-0');
    expect(w2.append([{ key: 'k', value: null }]).baseOffset).toBe(0n); // a keyed tombstone is fine
    const { dir: dd } = createPartition(ld, 'dd', 0);
    expect(open(dd).append([{ key: null, value: 'w' }]).baseOffset).toBe(0n);
  });

  it('refuses a batch above max.message.bytes (and segment.bytes), naming both sizes', () => {
    const ld = logDir();
    const { dir } = createPartition(ld, 'big', 0, { 'max.message.bytes': 100 });
    const w = open(dir);
    // 61-byte header + record of 8 + N bytes: N = 31 gives exactly 100 bytes.
    expect(w.append([{ key: 'k', value: 'v'.repeat(31), timestamp: TS }]).size).toBe(100);
    const err = thrownKlxError(() => w.append([{ key: 'k', value: 'v'.repeat(32), timestamp: TS }]));
    expect(err.code).toBe('invalid-record');
    expect(err.message).toBe('The record batch size in the append to big-0 is 101 bytes which exceeds the maximum configured value of 100 (max.message.bytes)');
    expect(err.details).toEqual({ batchSize: 101, maxMessageBytes: 100 });
    expect(statSync(join(dir, '00000000000000000000.log')).size).toBe(100);
    const { dir: sd } = createPartition(ld, 'seg', 0, { 'segment.bytes': 80 });
    expect(thrownKlxError(() => open(sd).append([{ key: 'k', value: 'v'.repeat(20) }])).message).toBe(
      'Message batch size is 89 bytes in append to partition seg-0 which exceeds the maximum configured segment size of 80 (segment.bytes)',
    );
  });

  it('LogAppendTime topics: attribute bit 3, maxTimestamp = append time, records read as it', () => {
    const ld = logDir();
    const { dir } = createPartition(ld, 'lat', 0, { 'message.timestamp.type': 'LogAppendTime' });
    const now = 1_700_000_123_456n;
    const w = open(dir, { clock: () => now });
    const r = w.append([{ key: 'a', value: '1', timestamp: 1000 }, { key: 'b', value: '2', timestamp: 1005 }]);
    expect(r.timestampType).toBe('LogAppendTime');
    expect(r.maxTimestamp).toBe(now);
    w.close();
    const [e] = [...scanLogFile(join(dir, '00000000000000000000.log'), { deep: true })];
    if (e?.type !== 'batch') throw new Error('no batch');
    expect(e.header.attributes).toBe(0x08);
    expect(e.header.baseTimestamp).toBe(1000n); // the producer's first timestamp is kept, as the broker does in place
    expect(e.header.maxTimestamp).toBe(now);
    expect(e.records!.map((x) => x.timestamp)).toEqual([now, now]);
    expect(readFileSync(join(dir, '00000000000000000000.timeindex')).toString('hex')).toBe(encodeTimeIndex(0n, [{ timestamp: now, offset: 1n }]).toString('hex'));
  });

  it('writes every codec and idempotent producer fields', () => {
    const ld = logDir();
    const { dir } = createPartition(ld, 'codecs', 0);
    const w = open(dir);
    const codecs = ['none', 'gzip', 'snappy', 'lz4', 'zstd'] as const;
    for (const c of codecs) w.append([{ key: `k-${c}`, value: `value of ${c} `.repeat(20), timestamp: TS }, { key: null, value: null, timestamp: TS + 1n }], { compression: c });
    w.append([{ key: 'p', value: 'q', timestamp: TS }], { producerId: 42n, producerEpoch: 3, baseSequence: 7 });
    expect(thrownKlxError(() => w.append([{ key: 'p', value: 'q' }], { producerEpoch: 3 })).code).toBe('invalid-argument');
    expect(thrownKlxError(() => w.append([])).code).toBe('invalid-argument');
    expect(thrownKlxError(() => w.append([{ key: 'k', value: 'v', timestamp: -2 }])).code).toBe('invalid-record');
    w.close();
    const entries = [...scanLogFile(join(dir, '00000000000000000000.log'), { deep: true })].flatMap((e) => (e.type === 'batch' ? [e] : []));
    expect(entries.map((e) => e.header.compression)).toEqual([...codecs, 'none']);
    expect(entries.every((e) => e.header.crcValid === true)).toBe(true);
    codecs.forEach((c, i) => {
      const recs = entries[i]!.records!;
      expect(recs.map((r) => r.offset)).toEqual([BigInt(i * 2), BigInt(i * 2 + 1)]);
      expect(Buffer.from(recs[0]!.value!).toString()).toBe(`value of ${c} `.repeat(20));
      expect(recs[1]!.key).toBeNull();
      expect(recs[1]!.value).toBeNull();
    });
    const last = entries[5]!.header;
    expect([last.producerId, last.producerEpoch, last.baseSequence, last.baseOffset]).toEqual([42n, 3, 7, 10n]);
  });
});

describe('rolling', () => {
  it('rolls on segment.bytes before the append that would overflow it', () => {
    const ld = logDir();
    const { dir } = createPartition(ld, 'roll', 0, { 'segment.bytes': 200 });
    const w = open(dir);
    const rs = [0, 1, 2, 3, 4].map((i) => w.append([{ key: `k${i}`, value: `v${i}`, timestamp: TS + BigInt(i) }]));
    expect(rs.map((r) => r.size)).toEqual([72, 72, 72, 72, 72]);
    expect(rs.map((r) => [r.segmentBaseOffset, r.position, r.rolled, r.rollReason])).toEqual([
      [0n, 0, false, null],
      [0n, 72, false, null],
      [2n, 0, true, 'segment.bytes'], // 144 > 200 − 72
      [2n, 72, false, null],
      [4n, 0, true, 'segment.bytes'],
    ]);
    w.close();
    const log = PartitionLog.open(dir);
    expect(log.segments.map((s) => [s.baseOffset, s.size])).toEqual([
      [0n, 144],
      [2n, 144],
      [4n, 72],
    ]);
    // A closed segment ends with its final time-index entry (its largest timestamp).
    expect(log.segments[0]!.timeIndex().entries.map((e) => [e.timestamp, e.offset])).toEqual([[TS + 1n, 1n]]);
    expect(log.segments[1]!.timeIndex().entries.map((e) => [e.timestamp, e.offset])).toEqual([[TS + 3n, 3n]]);
    expectIndexesRebuilt(dir, 4096);
  });

  it('rolls when the offset index or the time index is full', () => {
    const ld = logDir();
    // segment.index.bytes 36: 4 offset-index slots, 3 time-index slots (full at 2, one kept for the final entry).
    const { dir } = createPartition(ld, 'full', 0, { 'segment.index.bytes': 36, 'index.interval.bytes': 0 });
    const w = open(dir);
    const same = Array.from({ length: 6 }, () => w.append([{ key: 'k', value: 'v', timestamp: TS }]));
    expect(same.map((r) => r.rollReason)).toEqual([null, null, null, null, null, 'index-full']);
    expect(PartitionLog.open(dir).segments[0]!.offsetIndex().entries.map((e) => [e.offset, e.position])).toEqual([
      [1n, 70],
      [2n, 140],
      [3n, 210],
      [4n, 280],
    ]);
    const grow = [1n, 2n, 3n].map((d) => w.append([{ key: 'k', value: 'v', timestamp: TS + d }]));
    // seg@5 (offset 5 at TS, no entry): offset 6 adds regular time entry 1, offset 7 regular entry 2 → full.
    expect(grow.map((r) => [r.baseOffset, r.segmentBaseOffset, r.rollReason])).toEqual([
      [6n, 5n, null],
      [7n, 5n, null],
      [8n, 8n, 'time-index-full'],
    ]);
    expect(PartitionLog.open(dir).segments[1]!.timeIndex().entries.map((e) => [e.timestamp, e.offset])).toEqual([
      [TS + 1n, 6n],
      [TS + 2n, 7n],
    ]);
    w.close();
    expectIndexesRebuilt(dir, 0);
  });

  it('rolls on offset overflow (a relative offset must fit an int32)', () => {
    const ld = logDir();
    const dir = buildPartition(ld, { topic: 'ovf', segments: [{ baseOffset: 0n, batches: [{ baseOffset: 2147483600n, records: [rec('k', 'v', 1000)] }] }] });
    const w = open(dir);
    expect(w.logEndOffset).toBe(2147483601n);
    const many: AppendRecord[] = Array.from({ length: 100 }, (_, i) => ({ key: `k${i}`, value: 'v', timestamp: 2000 }));
    const r = w.append(many);
    expect([r.rolled, r.rollReason, r.segmentBaseOffset, r.baseOffset, r.lastOffset]).toEqual([true, 'offset-overflow', 2147483601n, 2147483601n, 2147483700n]);
    w.close();
    expect(PartitionLog.open(dir).segments.map((s) => s.files.log.split('/').pop())).toEqual(['00000000000000000000.log', '00000000002147483601.log']);
  });

  it('B19 (a): segment.ms compares record timestamps (the first batch maxTimestamp), not wall time', () => {
    const ld = logDir();
    const dir = buildPartition(ld, {
      topic: 'b19',
      segments: [
        { baseOffset: 0n, batches: singles(...Array.from({ length: 10 }, (_, i) => rec(`k${i}`, 'x', 900_000 + i))) },
        // Active seg@10: first batch maxTs 1,000,000, last 1,030,000, a duplicate key inside.
        { baseOffset: 10n, batches: singles(rec('k1', 'a', 1_000_000), rec('k1', 'b', 1_015_000), rec('k2', 'c', 1_030_000)) },
      ],
    });
    const config = { 'cleanup.policy': ['compact'] as ('compact' | 'delete')[], 'segment.ms': 60_000n, 'segment.jitter.ms': 0n };
    const w = open(dir, { config, clock: () => 10_000_000n }); // now = 10,000,000: far past any record time
    expect(w.activeSegmentBaseOffset).toBe(10n);
    expect(w.planAppend([{ key: 'k3', value: 'd', timestamp: 1_050_000 }]).rolled).toBe(false);
    expect(w.planAppend([{ key: 'k3', value: 'd', timestamp: 1_060_000 }]).rolled).toBe(false); // 60,000 is not > 60,000
    const plan = w.planAppend([{ key: 'k3', value: 'd', timestamp: 1_060_001 }]);
    expect([plan.rolled, plan.rollReason, plan.segmentBaseOffset, plan.position]).toEqual([true, 'segment.ms', 13n, 0]);
    // Nothing rolled by planning or by time passing: seg@10 is still active with its duplicates.
    expect(readdirSync(dir).filter((n) => n.endsWith('.log'))).toEqual(['00000000000000000000.log', '00000000000000000010.log']);
    const r = w.append([{ key: 'k3', value: 'd', timestamp: 1_060_001 }]);
    expect([r.rolled, r.segmentBaseOffset, r.baseOffset]).toEqual([true, 13n, 13n]);
    w.close();
    const log = PartitionLog.open(dir);
    expect(log.segments.map((s) => s.baseOffset)).toEqual([0n, 10n, 13n]);
    expect(log.segments[1]!.timeIndex().entries.map((e) => [e.timestamp, e.offset])).toEqual([[1_030_000n, 12n]]);
    expect(readAll(dir).filter((x) => x.segment === 10n).map((x) => x.key)).toEqual(['k1', 'k1', 'k2']);
  });

  it('B19 (b): a compacted topic rolls at min(segment.ms, max.compaction.lag.ms)', () => {
    const ld = logDir();
    const dir = buildPartition(ld, {
      topic: 'b19b',
      segments: [{ baseOffset: 10n, batches: [{ baseOffset: 10n, records: [rec('k1', 'a', 1_000_000)] }, ...singles(rec('k1', 'b', 1_015_000), rec('k2', 'c', 1_030_000))] }],
    });
    const compact = { 'cleanup.policy': ['compact'] as ('compact' | 'delete')[], 'segment.ms': 60_000n, 'max.compaction.lag.ms': 30_000n };
    const w = open(dir, { config: compact, clock: () => 10_000_000n });
    expect(w.planAppend([{ key: 'k', value: 'v', timestamp: 1_030_000 }]).rolled).toBe(false);
    const p = w.planAppend([{ key: 'k', value: 'v', timestamp: 1_030_001 }]);
    // Issue 13 finding 7: the rule that fired is named for the limit that set it.
    expect([p.rolled, p.rollReason, p.segmentBaseOffset]).toEqual([true, 'max.compaction.lag.ms', 13n]);
    w.close();
    // The lag caps the roll time of compacted topics only.
    const d = open(dir, { config: { ...compact, 'cleanup.policy': ['delete'] }, clock: () => 10_000_000n });
    expect(d.planAppend([{ key: 'k', value: 'v', timestamp: 1_030_001 }]).rolled).toBe(false);
    d.close();
    expect(maxSegmentMs(cfg(compact))).toBe(30_000n);
    expect(maxSegmentMs(cfg({ ...compact, 'cleanup.policy': ['delete'] }))).toBe(60_000n);
  });

  it('decideRoll: the wall-clock fallback, jitter and the order of the rules', () => {
    const seg = { baseOffset: 0n, size: 100, firstBatchMaxTimestamp: -1n, createdMs: 1000n, jitterMs: 0n, offsetIndexEntries: 0, timeIndexEntries: 0 };
    const c = cfg({ 'segment.ms': 500n });
    expect(decideRoll(seg, { size: 10, maxTimestamp: -1n, lastOffset: 5n }, c, 1500n)).toBe(null);
    expect(decideRoll(seg, { size: 10, maxTimestamp: -1n, lastOffset: 5n }, c, 1501n)).toBe('segment.ms'); // no record timestamps: now − created
    expect(decideRoll({ ...seg, firstBatchMaxTimestamp: 0n, jitterMs: 100n }, { size: 10, maxTimestamp: 401n, lastOffset: 5n }, c, 0n)).toBe('segment.ms');
    expect(decideRoll({ ...seg, size: 0, firstBatchMaxTimestamp: null }, { size: 10, maxTimestamp: 10_000n, lastOffset: 5n }, c, 10_000n)).toBe(null); // empty: never on time
    expect(decideRoll({ ...seg, size: 1073741800 }, { size: 100, maxTimestamp: 10_000n, lastOffset: 5n }, c, 10_000n)).toBe('segment.bytes');
  });

  it('roll(): final time-index entry, trimmed indexes, new segment named after the LEO; an empty active segment is left alone', () => {
    const ld = logDir();
    const { dir } = createPartition(ld, 'r', 0);
    const w = open(dir);
    w.append([{ key: 'a', value: '1', timestamp: 5000 }]);
    w.append([{ key: 'b', value: '2', timestamp: 3000 }]);
    const r = w.roll();
    expect(r).toMatchObject({ rolled: true, reason: 'explicit', previousSegmentBaseOffset: 0n, segmentBaseOffset: 2n, finalTimeIndexEntry: { timestamp: 5000n, offset: 0n }, logEndOffset: 2n });
    expect(readFileSync(join(dir, '00000000000000000000.timeindex')).toString('hex')).toBe(encodeTimeIndex(0n, [{ timestamp: 5000n, offset: 0n }]).toString('hex'));
    for (const f of ['log', 'index', 'timeindex']) expect(statSync(join(dir, `00000000000000000002.${f}`)).size).toBe(0);
    const before = snapshotFiles(dir);
    const again = w.roll();
    expect(again.rolled).toBe(false);
    expect(again.note).toContain('is empty');
    expect(snapshotFiles(dir)).toEqual(before);
    expect(w.append([{ key: 'c', value: '3', timestamp: 6000 }])).toMatchObject({ segmentBaseOffset: 2n, baseOffset: 2n, position: 0, rolled: false });
  });

  it('roll() adds the final time-index entry a broker-written active segment lacks', () => {
    const ld = logDir();
    const dir = buildPartition(ld, { topic: 'mid', indexIntervalBytes: 100, segments: [{ baseOffset: 0n, batches: singles(rec('a', '1', 100), rec('b', '2', 300), rec('c', '3', 200), rec('d', '4', 400)) }] });
    const headers = [...scanLogFile(join(dir, '00000000000000000000.log'))].flatMap((e) => (e.type === 'batch' ? [{ position: e.header.position, size: e.header.size, lastOffset: e.header.lastOffset, maxTimestamp: e.header.maxTimestamp }] : []));
    // One index entry (batch 2 at position 140): time entry (300, 1); a running broker has no more.
    const midLife = buildTimeIndexEntries(0n, headers, { indexIntervalBytes: 100, final: false });
    expect(midLife.map((e) => [e.timestamp, e.offset])).toEqual([[300n, 1n]]);
    writeFileSync(join(dir, '00000000000000000000.timeindex'), encodeTimeIndex(0n, midLife));
    const w = open(dir, { config: { 'index.interval.bytes': 100 } });
    expect(w.roll().finalTimeIndexEntry).toEqual({ timestamp: 400n, offset: 3n });
    w.close();
    expect(PartitionLog.open(dir).segments[0]!.timeIndex().entries.map((e) => [e.timestamp, e.offset])).toEqual([
      [300n, 1n],
      [400n, 3n],
    ]);
    expectIndexesRebuilt(dir, 100);
  });
});

describe('checkpoints and markers', () => {
  it('stamps the current leader epoch and starts an epoch entry like a broker append', () => {
    const ld = logDir();
    const dir = buildPartition(ld, { topic: 'ep', segments: [{ baseOffset: 0n, batches: singles(rec('a', '1'), rec('b', '2')) }] });
    // No leader-epoch-checkpoint: the first append assigns epoch 0 at its base offset.
    const w = open(dir);
    const p = w.planAppend([{ key: 'c', value: '3', timestamp: 1000 }]);
    expect(p.leaderEpochEntry).toEqual({ epoch: 0, startOffset: 2n });
    expect(existsSync(join(dir, 'leader-epoch-checkpoint'))).toBe(false);
    w.append([{ key: 'c', value: '3', timestamp: 1000 }]);
    expect(readFileSync(join(dir, 'leader-epoch-checkpoint'), 'utf8')).toBe('0\n1\n0 2\n');
    expect(w.append([{ key: 'd', value: '4', timestamp: 1000 }]).leaderEpochEntry).toBeNull();
    w.close();
    // An existing epoch 3 is the current one: batches carry it and the file stays as it is.
    writeFileSync(join(dir, 'leader-epoch-checkpoint'), '0\n2\n0 0\n3 4\n');
    const w2 = open(dir);
    expect(w2.leaderEpoch).toBe(3);
    const r = w2.append([{ key: 'e', value: '5', timestamp: 1000 }]);
    expect([r.partitionLeaderEpoch, r.leaderEpochEntry, r.rolled]).toEqual([3, null, false]);
    w2.close();
    expect(readFileSync(join(dir, 'leader-epoch-checkpoint'), 'utf8')).toBe('0\n2\n0 0\n3 4\n');
    const last = [...scanLogFile(join(dir, '00000000000000000000.log'))].pop();
    expect(last?.type === 'batch' && last.header.partitionLeaderEpoch).toBe(3);
  });

  it('merges the recovery point and the high watermark with the other partitions of the log dir', () => {
    const ld = logDir();
    const dir = buildPartition(ld, { topic: 'cp', segments: [{ baseOffset: 0n, batches: singles(rec('a', '1')) }] });
    writeFileSync(join(ld, 'recovery-point-offset-checkpoint'), '0\n2\nother 0 77\ncp 0 1\n');
    writeFileSync(join(ld, 'replication-offset-checkpoint'), '0\n2\ncp 0 1\nother 0 77\n');
    const w = open(dir);
    w.append([{ key: 'b', value: '2' }]);
    w.append([{ key: 'c', value: '3' }]);
    w.close();
    expect(readOffsetCheckpoint(join(ld, 'recovery-point-offset-checkpoint'))).toEqual([
      { topic: 'other', partition: 0, offset: 77n },
      { topic: 'cp', partition: 0, offset: 3n },
    ]);
    expect(readFileSync(join(ld, 'replication-offset-checkpoint'), 'utf8')).toBe('0\n2\ncp 0 3\nother 0 77\n');
    // A high-watermark file that does not list the partition is left alone; a missing one is not created.
    writeFileSync(join(ld, 'replication-offset-checkpoint'), '0\n1\nother 0 77\n');
    const w2 = open(dir);
    w2.append([{ key: 'd', value: '4' }]);
    w2.close();
    expect(readFileSync(join(ld, 'replication-offset-checkpoint'), 'utf8')).toBe('0\n1\nother 0 77\n');
    rmSync(join(ld, 'replication-offset-checkpoint'));
    open(dir).append([{ key: 'e', value: '5' }]);
    expect(existsSync(join(ld, 'replication-offset-checkpoint'))).toBe(false);
    expect(readFileSync(join(ld, 'recovery-point-offset-checkpoint'), 'utf8')).toBe('0\n2\nother 0 77\ncp 0 5\n');
    expect(existsSync(join(ld, '.klx-checkpoints.lock'))).toBe(false);
  });

  it('removes .kafka_cleanshutdown at the first write, not when opening or planning', () => {
    const ld = logDir();
    const dir = buildPartition(ld, { topic: 'cs', segments: [{ baseOffset: 0n, batches: singles(rec('a', '1')) }] }, { cleanShutdown: true });
    const marker = join(ld, '.kafka_cleanshutdown');
    const w = open(dir);
    expect(w.planAppend([{ key: 'b', value: '2' }]).removesCleanShutdownMarker).toBe(true);
    expect(existsSync(marker)).toBe(true);
    expect(w.append([{ key: 'b', value: '2' }]).removesCleanShutdownMarker).toBe(true);
    expect(existsSync(marker)).toBe(false);
    expect(w.append([{ key: 'c', value: '3' }]).removesCleanShutdownMarker).toBe(false);
  });

  it('read-only mode plans without a lock and refuses to write', () => {
    const ld = logDir();
    const dir = buildPartition(ld, { topic: 'ro', segments: [{ baseOffset: 0n, batches: singles(rec('a', '1')) }] }, { cleanShutdown: true });
    const before = { part: snapshotFiles(dir), ld: readdirSync(ld).sort() };
    const w = open(dir, { readOnly: true });
    expect(existsSync(join(dir, WRITER_LOCK_FILE))).toBe(false);
    expect(w.planAppend([{ key: 'b', value: '2', timestamp: 1000 }])).toMatchObject({ baseOffset: 1n, position: 70, size: 70, rolled: false });
    // Record time decides rolling (B19): now-ish records after 1970-era ones roll on segment.ms.
    expect(w.planAppend([{ key: 'b', value: '2' }])).toMatchObject({ baseOffset: 1n, position: 0, rolled: true, rollReason: 'segment.ms' });
    expect(w.planRoll()).toMatchObject({ rolled: true, segmentBaseOffset: 1n });
    expect(thrownKlxError(() => w.append([{ key: 'b', value: '2' }])).code).toBe('read-only');
    expect(thrownKlxError(() => w.roll()).code).toBe('read-only');
    w.close();
    expect(thrownKlxError(() => w.planAppend([{ key: 'b', value: '2' }])).code).toBe('read-only');
    expect({ part: snapshotFiles(dir), ld: readdirSync(ld).sort() }).toEqual(before);
  });
});

describe('lock', () => {
  it('refuses a second writer in the same process, naming the holder, until the first closes', () => {
    const ld = logDir();
    const { dir } = createPartition(ld, 'lk', 0);
    const w = open(dir, { purpose: 'test writer' });
    const lockFile = join(dir, WRITER_LOCK_FILE);
    const holder = JSON.parse(readFileSync(lockFile, 'utf8'));
    expect(holder).toMatchObject({ pid: process.pid, hostname: hostname(), purpose: 'test writer' });
    expect(new Date(holder.createdAt).getTime()).toBeGreaterThan(Date.now() - 60_000);
    const err = thrownKlxError(() => PartitionWriter.open(dir));
    expect(err.code).toBe('locked');
    expect(err.file).toBe(lockFile);
    expect(err.message).toContain(`partition lk-0 is locked by another writer: pid ${process.pid} (this process) on host ${hostname()} since ${holder.createdAt} (test writer)`);
    // A read-only opener is not blocked.
    open(dir, { readOnly: true }).close();
    w.close();
    expect(existsSync(lockFile)).toBe(false);
    open(dir).close();
  });

  it('takes over a stale lock of a dead process on this host, and refuses one from another host', () => {
    const ld = logDir();
    const { dir } = createPartition(ld, 'st', 0);
    const dead = spawnSync(process.execPath, ['-e', '0']).pid!;
    expect(isProcessAlive(dead)).toBe(false);
    const lockFile = join(dir, WRITER_LOCK_FILE);
    writeFileSync(lockFile, JSON.stringify({ pid: dead, hostname: hostname(), createdAt: '2020-01-01T00:00:00.000Z', purpose: 'klx append', nonce: 'n1' }));
    const w = open(dir);
    expect(w.tookOverFrom).toMatchObject({ pid: dead, createdAt: '2020-01-01T00:00:00.000Z' });
    expect(JSON.parse(readFileSync(lockFile, 'utf8')).pid).toBe(process.pid);
    w.close();
    writeFileSync(lockFile, JSON.stringify({ pid: dead, hostname: 'elsewhere', createdAt: '2020-01-01T00:00:00.000Z', purpose: 'klx append', nonce: 'n2' }));
    const err = thrownKlxError(() => PartitionWriter.open(dir));
    expect(err.code).toBe('locked');
    expect(err.message).toContain(`pid ${dead} on host elsewhere since 2020-01-01T00:00:00.000Z (klx append); its process cannot be checked from this host: if it is gone, delete ${lockFile}`);
    expect(existsSync(lockFile)).toBe(true);
    // Releasing never deletes somebody else's lock.
    const handle = acquireLock(join(ld, 'x.lock'));
    writeFileSync(join(ld, 'x.lock'), JSON.stringify({ pid: 1, hostname: 'h', createdAt: '', purpose: '', nonce: 'other' }));
    handle.release();
    expect(existsSync(join(ld, 'x.lock'))).toBe(true);
  });

  it('refuses a writer while another process holds the lock, and takes it over once that process is killed', async () => {
    const ld = logDir();
    const { dir } = createPartition(ld, 'xp', 0);
    const script = join(ld, 'holder.ts');
    writeFileSync(
      script,
      `import { PartitionWriter } from ${JSON.stringify(resolve('src-main/engine/log/partition-writer.ts'))};\n` +
        `const w = PartitionWriter.open(process.argv[2]!, { purpose: 'child holder' });\n` +
        `w.append([{ key: 'child', value: 'was here', timestamp: 1000 }]);\n` +
        `process.stdout.write('holding\\n');\n` +
        `setInterval(() => {}, 1000);\n`,
    );
    const child = spawn(process.execPath, ['--import', 'tsx', script, dir], { stdio: ['ignore', 'pipe', 'inherit'] });
    await new Promise<void>((res, rej) => {
      child.stdout.on('data', (d: Buffer) => d.toString().includes('holding') && res());
      child.once('exit', (code) => rej(new Error(`child exited with ${code}`)));
    });
    const err = thrownKlxError(() => PartitionWriter.open(dir));
    expect(err.code).toBe('locked');
    expect(err.message).toContain(`pid ${child.pid} on host ${hostname()}`);
    expect(err.message).toContain('(child holder)');
    expect(err.message).not.toContain('this process');
    const exited = new Promise((res) => child.once('exit', res));
    child.kill('SIGKILL');
    await exited;
    const w = open(dir);
    expect(w.tookOverFrom?.pid).toBe(child.pid);
    expect(w.append([{ key: 'parent', value: 'now', timestamp: 2000 }]).baseOffset).toBe(1n);
    w.close();
    expect(readAll(dir).map((r) => r.key)).toEqual(['child', 'parent']);
  });
});

describe('refuses folders that need repair', () => {
  function expectRepair(dir: string, code: string, file: string, position: number | undefined, text: string): void {
    const before = snapshotFiles(dir);
    const err = thrownKlxError(() => PartitionWriter.open(dir));
    expect(err.code).toBe(code);
    expect(err.file).toBe(file);
    expect(err.position).toBe(position);
    expect(err.message).toContain(text);
    expect(err.message).toContain(`run \`klx repair ${dir}\``);
    expect(err.details?.needsRepair).toBe(true);
    expect(snapshotFiles(dir)).toEqual(before); // nothing written, lock released
  }

  const two = (ld: string, extra: { tail?: Buffer } = {}) => buildPartition(ld, { topic: 'rp', segments: [{ baseOffset: 0n, batches: singles(rec('a', '1'), rec('b', '2')), ...extra }] });

  it('leftover .swap / .cleaned / .deleted files and orphan indexes', () => {
    for (const [name, what] of [
      ['00000000000000000000.log.swap', 'leftover .swap file'],
      ['00000000000000000000.log.cleaned', 'leftover .cleaned file'],
      ['00000000000000000000.index.deleted', 'leftover .deleted file'],
      ['00000000000000000009.index', 'index file 00000000000000000009.index has no .log'],
    ] as const) {
      const ld = logDir();
      const dir = two(ld);
      writeFileSync(join(dir, name), '');
      expectRepair(dir, 'invalid-argument', join(dir, name), undefined, what);
    }
    // A checkpoint replacement cut short (.tmp) is harmless.
    const ld = logDir();
    const dir = two(ld);
    writeFileSync(join(dir, 'leader-epoch-checkpoint.tmp'), 'half');
    open(dir).append([{ key: 'c', value: '3' }]);
  });

  it('a damaged tail: a batch cut short at the end of the active segment', () => {
    const ld = logDir();
    const cut = encodeBatch({ baseOffset: 2n, records: [rec('c', '3')] }).subarray(0, 40);
    const dir = two(ld, { tail: cut });
    expectRepair(dir, 'truncated-batch', join(dir, '00000000000000000000.log'), 140, '40 invalid bytes at the end of the file');
  });

  it('a CRC mismatch in the last batch', () => {
    const ld = logDir();
    const dir = two(ld);
    const p = join(dir, '00000000000000000000.log');
    const b = readFileSync(p);
    b[b.length - 2] ^= 0xff;
    writeFileSync(p, b);
    expectRepair(dir, 'crc-mismatch', p, 70, 'the batch at baseOffset 1 fails its CRC');
  });

  it('damage in an older segment after the recovery point, but not below it', () => {
    const ld = logDir();
    const dir = buildPartition(ld, { topic: 'old', segments: [{ baseOffset: 0n, batches: singles(rec('a', '1'), rec('b', '2')) }, { baseOffset: 2n, batches: singles(rec('c', '3')) }] });
    const p = join(dir, '00000000000000000000.log');
    const b = readFileSync(p);
    b[30] ^= 0xff;
    writeFileSync(p, b);
    expectRepair(dir, 'crc-mismatch', p, 0, 'the batch at baseOffset 0 fails its CRC');
    // A recovery point past the damaged segment: a broker trusts (and would not re-check) it.
    writeFileSync(join(ld, 'recovery-point-offset-checkpoint'), '0\n1\nold 0 3\n');
    expect(open(dir).append([{ key: 'd', value: '4' }]).baseOffset).toBe(3n);
  });

  it('preallocated, stale, missing or inconsistent active-segment indexes', () => {
    let ld = logDir();
    let dir = two(ld);
    const idx = join(dir, '00000000000000000000.index');
    appendFileSync(idx, Buffer.alloc(80));
    expectRepair(dir, 'corrupt-index', idx, 0, 'offset index is preallocated (10 empty slots after 0 entries)');

    ld = logDir();
    dir = two(ld);
    const ti = join(dir, '00000000000000000000.timeindex');
    writeFileSync(ti, Buffer.concat([readFileSync(ti), Buffer.alloc(12 * 3)]));
    expectRepair(dir, 'corrupt-index', ti, 36, 'is less than the first timestamp');

    ld = logDir();
    dir = two(ld);
    rmSync(join(dir, '00000000000000000000.index'));
    expectRepair(dir, 'missing-index', join(dir, '00000000000000000000.index'), undefined, 'the active segment has no .index file (a broker recovers the segment and rebuilds it at startup: LogLoader.loadSegmentFiles)');

    ld = logDir();
    dir = two(ld);
    rmSync(join(dir, '00000000000000000000.timeindex'));
    expectRepair(dir, 'missing-index', join(dir, '00000000000000000000.timeindex'), undefined, 'the active segment has no .timeindex file (a broker creates it empty at startup, LogSegment.sanityCheck');

    ld = logDir();
    dir = two(ld);
    writeFileSync(join(dir, '00000000000000000000.index'), encodeOffsetIndex(0n, [{ offset: 1n, position: 69 }]));
    expectRepair(dir, 'corrupt-index', join(dir, '00000000000000000000.index'), 0, '00000000000000000000.index entry (offset 1, position 69) points inside a batch');

    ld = logDir();
    dir = two(ld);
    writeFileSync(join(dir, '00000000000000000000.index'), encodeOffsetIndex(0n, [{ offset: 0n, position: 70 }]));
    expectRepair(dir, 'corrupt-index', join(dir, '00000000000000000000.index'), 0, '00000000000000000000.index entry (offset 0, position 70) names an offset below 1, the last offset of the batch there');

    ld = logDir();
    dir = two(ld);
    writeFileSync(join(dir, '00000000000000000000.index'), encodeOffsetIndex(0n, [{ offset: 5n, position: 70 }]));
    expectRepair(dir, 'corrupt-index', join(dir, '00000000000000000000.index'), 0, '00000000000000000000.index entry (offset 5, position 70) names an offset beyond the last batch (1)');
  });

  it('accepts an index entry keyed by the largest offset of a multi-batch append (replica fetch, cleaner)', () => {
    const ld = logDir();
    const dir = buildPartition(ld, { topic: 'mb', segments: [{ baseOffset: 0n, batches: singles(rec('a', '1'), rec('b', '2'), rec('c', '3')) }] });
    // Batches 1 and 2 appended together at position 70: the entry names offset 2.
    writeFileSync(join(dir, '00000000000000000000.index'), encodeOffsetIndex(0n, [{ offset: 2n, position: 70 }]));
    const w = open(dir);
    expect(w.append([{ key: 'd', value: '4', timestamp: 1000 }])).toMatchObject({ baseOffset: 3n, position: 210, indexEntry: false });
  });

  it('an unreadable leader-epoch-checkpoint or recovery-point file, a -delete folder, the metadata log', () => {
    let ld = logDir();
    let dir = two(ld);
    writeFileSync(join(dir, 'leader-epoch-checkpoint'), '0\n2\n0 0\n');
    expectRepair(dir, 'corrupt-checkpoint', join(dir, 'leader-epoch-checkpoint'), 2, 'cannot read leader-epoch-checkpoint: expected 2 entries but found 1');
    ld = logDir();
    dir = two(ld);
    writeFileSync(join(ld, 'recovery-point-offset-checkpoint'), '1\n0\n');
    expectRepair(dir, 'corrupt-checkpoint', join(ld, 'recovery-point-offset-checkpoint'), 0, 'unrecognised checkpoint version 1');

    ld = logDir();
    const del = join(ld, 'rp-0.0123456789abcdef0123456789abcdef-delete');
    mkdirSync(del);
    expect(thrownKlxError(() => PartitionWriter.open(del)).message).toContain('this is a -delete folder');
    const meta = join(ld, '__cluster_metadata-0');
    mkdirSync(meta);
    expect(thrownKlxError(() => PartitionWriter.open(meta)).code).toBe('invalid-argument');
    expect(thrownKlxError(() => PartitionWriter.open(join(ld, 'nope-0'))).code).toBe('not-found');
  });
});

describeRealData('real broker-written folders', () => {
  function copyLogDir(caseName: string, partitions: string[]): string {
    const ld = logDir();
    const src = join(REAL_DATA, caseName);
    for (const n of readdirSync(src)) {
      const p = join(src, n);
      if (statSync(p).isFile() && !/^EXPECTED|PROVENANCE|ABSENT/.test(n)) cpSync(p, join(ld, n));
    }
    for (const p of partitions) cpSync(join(src, p), join(ld, p), { recursive: true });
    const chmod = (d: string) => {
      chmodSync(d, 0o755);
      for (const n of readdirSync(d)) {
        const p = join(d, n);
        if (statSync(p).isDirectory()) chmod(p);
        else chmodSync(p, 0o644);
      }
    };
    chmod(ld);
    return ld;
  }

  it('appends to a cleanly shut down bitnami partition (trimmed broker indexes) without touching what is there', () => {
    const ld = copyLogDir('gzip-mixed-bitnami', ['tenitems-0']);
    const dir = join(ld, 'tenitems-0');
    const logFile = join(dir, '00000000000000000000.log');
    const original = readFileSync(logFile);
    const before = PartitionLog.open(dir);
    const leo = before.logEndOffset;
    const rpBefore = readOffsetCheckpoint(join(ld, 'recovery-point-offset-checkpoint'));
    const w = open(dir);
    expect(w.logEndOffset).toBe(leo);
    const firstTs = before.activeSegment!.firstBatch()!.maxTimestamp;
    const r = w.append([{ key: 'klx', value: 'appended', timestamp: firstTs + 1n }]);
    // Record time far past the first batch: rolls on segment.ms (7 days), as the broker would.
    const r2 = w.append([{ key: 'klx', value: 'later', timestamp: firstTs + 604_800_001n }]);
    w.close();
    expect([r.baseOffset, r.position, r.partitionLeaderEpoch, r.removesCleanShutdownMarker, r.rolled]).toEqual([leo, original.length, 0, true, false]);
    expect([r2.baseOffset, r2.segmentBaseOffset, r2.position, r2.rollReason]).toEqual([leo + 1n, leo + 1n, 0, 'segment.ms']);
    expect(existsSync(join(ld, '.kafka_cleanshutdown'))).toBe(false);
    const now = readFileSync(logFile);
    expect(now.subarray(0, original.length).equals(original)).toBe(true);
    expect([...scanLogBuffer(now, { deep: true })].every((e) => e.type === 'batch' && e.header.crcValid && !e.error)).toBe(true);
    const rpAfter = readOffsetCheckpoint(join(ld, 'recovery-point-offset-checkpoint'));
    expect(rpAfter).toHaveLength(rpBefore.length + (rpBefore.some((e) => e.topic === 'tenitems') ? 0 : 1));
    expect(rpAfter.find((e) => e.topic === 'tenitems')?.offset).toBe(leo + 2n);
    for (const e of rpBefore.filter((x) => x.topic !== 'tenitems')) expect(rpAfter).toContainEqual(e);
    expect(readAll(dir).slice(-2)).toMatchObject([
      { offset: leo, key: 'klx', value: 'appended', segment: 0n },
      { offset: leo + 1n, key: 'klx', value: 'later', segment: leo + 1n },
    ]);
    expectIndexesRebuilt(dir, 4096);
  });

  it('refuses a copied active segment whose index files were left behind, pointing at klx repair', () => {
    const ld = copyLogDir('kafka-2.8.0-snappy', ['some-topic-0']);
    const dir = join(ld, 'some-topic-0');
    const err = thrownKlxError(() => PartitionWriter.open(dir));
    expect(err.code).toBe('missing-index');
    expect(err.message).toContain('the active segment has no .index file');
    expect(err.message).toContain('klx repair');
    expect(existsSync(join(dir, WRITER_LOCK_FILE))).toBe(false);
  });
});
