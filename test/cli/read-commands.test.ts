/**
 * `klx fetch`, `klx offset-for-time` and `klx holes`, spawned as a user runs them (node bin/klx.mjs),
 * on built partition folders and on real broker-written data: NDJSON shapes, int64 beyond 2^53 as
 * strings, isolation levels, budgets, exit codes and messages for bad folders and arguments.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { encodeControlKey, encodeEndTxnMarkerValue } from '../../src-main/engine/format/control.ts';
import { buildPartition, rec, singles, tempDir, type BatchInput } from '../support/log-builder.ts';
import { describeRealData, REAL_DATA } from '../support/real-data.ts';
import { klx, klxWithEnv } from '../support/klx-cli.ts';

const lines = (s: string) => s.split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);
const b64 = (s: string) => Buffer.from(s).toString('base64');

function txn(pid: number, baseOffset: number, ...keys: string[]): BatchInput {
  return { baseOffset: BigInt(baseOffset), isTransactional: true, producerId: BigInt(pid), producerEpoch: 0, baseSequence: 0, records: keys.map((k) => rec(k, `${k}-value`, 1000)) };
}
function marker(pid: number, type: 'COMMIT' | 'ABORT', offset: number): BatchInput {
  return { baseOffset: BigInt(offset), isControl: true, isTransactional: true, producerId: BigInt(pid), producerEpoch: 0, records: [{ key: encodeControlKey(type === 'ABORT' ? 0 : 1), value: encodeEndTxnMarkerValue(0), timestamp: 1100n }] };
}

describe('klx fetch / holes / offset-for-time on a built transactional partition (B15 c)', () => {
  const logDir = tempDir('klx-cli-');
  const dir = buildPartition(logDir, {
    segments: [
      {
        batches: [txn(5, 0, 'k1', 'k2'), marker(9, 'ABORT', 2), marker(5, 'ABORT', 3), txn(5, 4, 'k3'), marker(5, 'COMMIT', 5), txn(6, 6, 'k4', 'k5'), marker(6, 'ABORT', 8)],
        txnIndex: [
          { producerId: 5n, firstOffset: 0n, lastOffset: 3n, lastStableOffset: 4n },
          { producerId: 6n, firstOffset: 6n, lastOffset: 8n, lastStableOffset: 9n },
        ],
      },
      { baseOffset: 9n, batches: [{ baseOffset: 9n, records: [rec('k6', 'v6', 2000)] }, txn(11, 10, 'k7')] },
    ],
  });

  it('fetch --json: NDJSON records with base64 keys and batch facts, aborted data flagged, then the end line', () => {
    const r = klx('fetch', dir, '--offset', '0', '--json');
    expect(r.status).toBe(0);
    const out = lines(r.stdout);
    const recs = out.filter((o) => o.type === 'record');
    expect(recs.map((o) => o.offset)).toEqual([0, 1, 4, 6, 7, 9, 10]);
    expect(recs[0]).toMatchObject({ key: b64('k1'), value: b64('k1-value'), headers: [], isTransactional: true, producerId: 5, aborted: true, batchBaseOffset: 0, batchLastOffset: 1, segmentBaseOffset: 0, compression: 'none', crcValid: true });
    expect(recs.filter((o) => o.aborted).map((o) => o.offset)).toEqual([0, 1, 6, 7]);
    expect(out[out.length - 1]).toEqual({ type: 'end', nextOffset: 11, records: 7, reachedLimit: true, readLimit: 11, isolation: 'read_uncommitted', logStartOffset: 0, logEndOffset: 11, highWatermark: null, lastStableOffset: null });
  });

  it('fetch --isolation read_committed: [4, 9], stopping at the last stable offset 10', () => {
    const out = lines(klx('fetch', dir, '--offset', '0', '--isolation', 'read_committed', '--json').stdout);
    expect(out.filter((o) => o.type === 'record').map((o) => o.offset)).toEqual([4, 9]);
    expect(out[out.length - 1]).toMatchObject({ type: 'end', nextOffset: 10, lastStableOffset: 10, readLimit: 10, reachedLimit: true });
  });

  it('fetch text: one line per record and a last "next offset" line; --include-control shows the markers', () => {
    const r = klx('fetch', dir, '--offset', '2', '--max', '2', '--include-control');
    expect(r.status).toBe(0);
    expect(r.stdout.split('\n').filter(Boolean)).toEqual([
      'offset 2 ts 1100 (1970-01-01T00:00:01.100Z) [txn producer 9, control ABORT]',
      'offset 3 ts 1100 (1970-01-01T00:00:01.100Z) [txn producer 5, control ABORT]',
      '-- next offset 4; 2 records; read limit 11, log start offset 0, log end offset 11',
    ]);
    const plain = klx('fetch', dir, '--offset', '4', '--max', '1').stdout.split('\n');
    expect(plain[0]).toBe('offset 4 ts 1000 (1970-01-01T00:00:01.000Z) key: "k3" value: "k3-value" [txn producer 5]');
    expect(plain[1]).toBe('-- next offset 6; 1 records; read limit 11, log start offset 0, log end offset 11');
  });

  it('holes --json: aborted data and markers, then the summary', () => {
    const r = klx('holes', dir, '--json');
    expect(r.status).toBe(0);
    const out = lines(r.stdout);
    expect(out.filter((o) => o.type === 'hole').map((o) => [o.from, o.to, o.cause])).toEqual([
      [0, 1, 'aborted-transaction'],
      [2, 3, 'control-record'],
      [5, 5, 'control-record'],
      [6, 7, 'aborted-transaction'],
      [8, 8, 'control-record'],
    ]);
    expect(out[out.length - 1]).toEqual({
      type: 'summary',
      ranges: 5,
      missingOffsets: 8,
      offsetSpan: 11,
      logStartOffset: 0,
      logEndOffset: 11,
      totals: { 'control-record': { ranges: 3, offsets: 4 }, 'aborted-transaction': { ranges: 2, offsets: 4 } },
    });
  });

  it('holes split over segments (issue 16) prints what one thread prints, text and --json', () => {
    const multi = buildPartition(tempDir('klx-cli-holes-split-'), {
      segments: [{ batches: [txn(7, 0, 'a', 'b'), ...singles(rec('c', '1'))] }, { batches: [...singles(rec('d', '2')), marker(7, 'ABORT', 4)] }, { baseOffset: 10n, batches: [{ baseOffset: 10n, records: [rec('e', '3')] }, { baseOffset: 11n, records: [rec('f', '4')] }] }],
    });
    for (const json of [[], ['--json']]) {
      const one = klx('holes', multi, ...json);
      const split = klxWithEnv(['holes', multi, ...json], { KLX_SCAN_SPLIT_MIN_BYTES: '0' });
      expect(one.status).toBe(0);
      expect(split).toEqual(one);
    }
    expect(klx('holes', multi).stdout).toMatch(/aborted-transaction[\s\S]*control-record[\s\S]*missing-segment/);
  });

  it('holes text: a table and totals', () => {
    const r = klx('holes', dir);
    expect(r.status).toBe(0);
    const text = r.stdout;
    expect(text).toMatch(/^holes of test-0 \(.*test-0\): log start offset 0, log end offset 11, first segment 0$/m);
    expect(text).toMatch(/^\s+0\s+1\s+2\s+aborted-transaction\s+0\s+data of an aborted transaction of producer 5/m);
    expect(text).toMatch(/^ {2}control-record\s+3 ranges\s+4 offsets$/m);
    expect(text).toMatch(/^ {2}8 of the 11 offsets in \[0, 11\) hold no readable record; 3 do$/m);
  });

  it('offset-for-time: a timestamp, earliest, latest, and "not found" as offset -1', () => {
    const note = 'no high watermark for test-0 in replication-offset-checkpoint: the log end offset 11 is used (a broker would load 0, i.e. the log start offset 0, and advance it as the in-sync replicas fetch: Partition.createLog)';
    expect(klx('offset-for-time', dir, '--timestamp', '1500').stdout).toBe(`timestamp 1500 (1970-01-01T00:00:01.500Z): offset 9 timestamp 2000 (1970-01-01T00:00:02.000Z) leader epoch 0 (segment 9)\nnote: ${note}\n`);
    expect(lines(klx('offset-for-time', dir, '--timestamp', 'earliest', '--json').stdout)).toEqual([{ found: true, target: -2, offset: 0, timestamp: -1, leaderEpoch: null, segmentBaseOffset: null, isolation: 'read_uncommitted', lastFetchableOffset: 11, limit: 'log-end', logEndOffset: 11, pastLimitOffset: null, note }]);
    expect(lines(klx('offset-for-time', dir, '--timestamp', 'latest', '--json').stdout)[0]).toMatchObject({ offset: 11, limit: 'log-end', note });
    expect(klx('offset-for-time', dir, '--timestamp', 'latest').stdout).toBe(`latest: offset 11 (read_uncommitted: the log end offset; log end offset 11; Kafka Partition.fetchOffsetForTimestamp)\nnote: ${note}\n`);
    const none = klx('offset-for-time', dir, '--timestamp', '2001', '--json');
    expect(none.status).toBe(0);
    expect(lines(none.stdout)).toEqual([{ found: false, target: 2001, targetUtc: '1970-01-01T00:00:02.001Z', offset: -1, timestamp: -1, leaderEpoch: null, segmentBaseOffset: null, isolation: 'read_uncommitted', lastFetchableOffset: 11, limit: 'log-end', logEndOffset: 11, pastLimitOffset: null, note }]);
  });

  it('offset-for-time --isolation read_committed: latest is the last stable offset 10 (producer 11\'s transaction is open at 10)', () => {
    expect(lines(klx('offset-for-time', dir, '--timestamp', 'latest', '--isolation', 'read_committed', '--json').stdout)[0]).toMatchObject({ found: true, offset: 10, isolation: 'read_committed', lastFetchableOffset: 10, limit: 'last-stable-offset', logEndOffset: 11 });
  });
});

describe('klx offset-for-time: latest is the high watermark a consumer gets, not the log end offset', () => {
  // offsets 0..3 at 1000, 2000, 3000, 4000; replication-offset-checkpoint says 2.
  const dir = buildPartition(tempDir('klx-cli-hw-'), { segments: [{ batches: singles(rec('a', '1', 1000), rec('b', '2', 2000), rec('c', '3', 3000), rec('d', '4', 4000)) }] }, { highWatermark: 2n });

  it('latest → 2 (the checkpointed high watermark), log end 4', () => {
    expect(klx('offset-for-time', dir, '--timestamp', 'latest').stdout).toBe('latest: offset 2 (read_uncommitted: the high watermark; log end offset 4; Kafka Partition.fetchOffsetForTimestamp)\n');
    expect(lines(klx('offset-for-time', dir, '--timestamp', 'latest', '--json').stdout)[0]).toMatchObject({ offset: 2, lastFetchableOffset: 2, limit: 'high-watermark', logEndOffset: 4, note: null });
  });

  it('a timestamp whose first record is past the high watermark: offset -1, naming the withheld record', () => {
    const r = klx('offset-for-time', dir, '--timestamp', '2500');
    expect(r.status).toBe(0);
    expect(r.stdout).toBe('timestamp 2500 (1970-01-01T00:00:02.500Z): no record a read_uncommitted consumer may fetch has a timestamp at or after it (offset -1, timestamp -1): the first one, offset 2 timestamp 3000, is at or past the high watermark 2 (Kafka ReplicaManager.fetchOffset)\n');
    expect(lines(klx('offset-for-time', dir, '--timestamp', '2500', '--json').stdout)[0]).toMatchObject({ found: false, offset: -1, pastLimitOffset: 2 });
    expect(lines(klx('offset-for-time', dir, '--timestamp', '1500', '--json').stdout)[0]).toMatchObject({ found: true, offset: 1, timestamp: 2000 });
  });
});

describe('klx read commands: budgets, big offsets, errors', () => {
  it('fetch --max-bytes 1048576 returns the whole 3 MiB first batch and stops (B17)', () => {
    const dir = buildPartition(tempDir('klx-cli-'), { segments: [{ batches: [{ records: [{ key: 'k1', value: Buffer.alloc(3 << 20, 0x62), timestamp: 1000n }] }, ...singles(rec('k2', 'b'), rec('k1', 'c'))] }] });
    const out = lines(klx('fetch', dir, '--offset', '0', '--max-bytes', '1048576', '--json').stdout);
    expect(out).toHaveLength(2);
    expect(out[0]).toMatchObject({ type: 'record', offset: 0, key: b64('k1') });
    expect(Buffer.from(out[0]!.value as string, 'base64').length).toBe(3 << 20);
    expect(out[1]).toMatchObject({ type: 'end', nextOffset: 1, records: 1, reachedLimit: false });
  });

  it('fetch --json prints int64 beyond 2^53 as decimal strings', () => {
    const base = 1n << 60n;
    const dir = buildPartition(tempDir('klx-cli-'), { segments: [{ batches: [{ baseOffset: base, records: [rec('a', '1', 1000), rec('b', '2', 1001), rec('c', '3', 1002)] }] }] });
    const out = lines(klx('fetch', dir, '--offset', String(base + 1n), '--json').stdout);
    expect(out.map((o) => o.offset)).toEqual([String(base + 1n), String(base + 2n), undefined]);
    expect(out[0]).toMatchObject({ batchBaseOffset: String(base), segmentBaseOffset: String(base), timestamp: 1001 });
    expect(out[2]).toMatchObject({ type: 'end', nextOffset: String(base + 3n), logStartOffset: String(base) });
  });

  it('fetch --max larger than a page reads page after page', () => {
    const dir = buildPartition(tempDir('klx-cli-'), { segments: [{ batches: Array.from({ length: 1300 }, (_, i) => ({ records: [rec(`k${i}`, 'v')] })) }] });
    const out = klx('fetch', dir, '--offset', 'earliest', '--max', '1200').stdout.split('\n').filter(Boolean);
    expect(out).toHaveLength(1201);
    expect(out[1199]).toMatch(/^offset 1199 /);
    expect(out[1200]).toBe('-- next offset 1200; 1200 records; read limit 1300, log start offset 0, log end offset 1300');
  });

  it('fetch below the log start offset: exit 1 with Kafka\'s OffsetOutOfRange wording (B10)', () => {
    const logDir = tempDir('klx-cli-');
    const dir = buildPartition(logDir, { segments: [{ baseOffset: 200n, batches: Array.from({ length: 11 }, (_, i) => ({ baseOffset: 200n + BigInt(i), records: [rec('k', 'v')] })) }] }, { logStartOffset: 200n });
    const r = klx('fetch', dir, '--offset', '50');
    expect(r.status).toBe(1);
    expect(r.stderr).toBe(`klx: offset-out-of-range: ${dir}: Received request for offset 50 for partition test-0, but we only have log segments starting from offset: 200.\n`);
  });

  it('a log directory with several partitions needs --partition; the message lists them', () => {
    const logDir = tempDir('klx-cli-');
    buildPartition(logDir, { topic: 'orders', partition: 0, segments: [{ batches: singles(rec('a', '1')) }] });
    buildPartition(logDir, { topic: 'orders', partition: 1, segments: [{ batches: singles(rec('b', '2'), rec('c', '3')) }] });
    const r = klx('holes', logDir);
    expect(r.status).toBe(2);
    expect(r.stderr).toBe(`klx: invalid-argument: ${logDir}: this folder holds 2 partitions; choose one with --partition: orders-0, orders-1\n`);
    const t = klx('offset-for-time', logDir, '--timestamp', '0');
    expect(t.status).toBe(2);
    expect(t.stderr).toBe(`klx: invalid-argument: ${logDir}: this folder holds 2 partitions; choose one with --partition: orders-0, orders-1\n`);
    expect(klx('offset-for-time', logDir, '--partition', 'orders-1', '--timestamp', 'earliest').stdout.split('\n')[0]).toBe('earliest: offset 0');
    const ok = klx('fetch', logDir, '--partition', 'orders-1', '--offset', '1', '--json');
    expect(lines(ok.stdout).filter((o) => o.type === 'record').map((o) => o.key)).toEqual([b64('c')]);
    const unknown = klx('fetch', logDir, '--partition', 'orders-7', '--offset', '0');
    expect(unknown.stderr).toMatch(/no partition orders-7 here; choose one of: orders-0, orders-1/);
  });

  it('a folder that is not a Kafka log: exit 1 with not-a-log-dir; a bad option value: exit 2', () => {
    const d = tempDir('klx-cli-');
    mkdirSync(join(d, 'photos'));
    writeFileSync(join(d, 'photos', 'cat.jpg'), 'not a log');
    const r = klx('fetch', d, '--offset', '0');
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/^klx: not-a-log-dir: .*not a Kafka log directory/);
    const bad = klx('fetch', d, '--offset', 'soon');
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/--offset must be a non-negative integer, "earliest" or "latest", got "soon"/);
  });
});

describeRealData('klx read commands on real data', () => {
  const compacted = join(REAL_DATA, 'kafka-2.7.1-compacted-offsets');

  it('holes on the compacted __consumer_offsets-39: [0,3] and [5,15]', () => {
    const out = lines(klx('holes', compacted, '--partition', '__consumer_offsets-39', '--json').stdout);
    expect(out.filter((o) => o.type === 'hole').map((o) => [o.from, o.to, o.count, o.cause])).toEqual([
      [0, 3, 4, 'compacted-between-batches'],
      [5, 15, 11, 'compacted-between-batches'],
    ]);
    expect(out[out.length - 1]).toMatchObject({ type: 'summary', missingOffsets: 15, offsetSpan: 20 });
  });

  it('fetch from inside a hole continues at the next record (B01 on broker data)', () => {
    const out = lines(klx('fetch', join(compacted, '__consumer_offsets-39'), '--offset', '5', '--max', '2', '--json').stdout);
    expect(out.map((o) => (o.type === 'end' ? `end ${o.nextOffset}` : o.offset))).toEqual([16, 17, 'end 18']);
  });

  it('offset-for-time on a multi-segment partition', () => {
    const r = lines(klx('offset-for-time', join(REAL_DATA, 'multisegment-rolled', 'invoice-1'), '--timestamp', 'earliest', '--json').stdout);
    expect(r[0]).toMatchObject({ found: true, offset: 0, timestamp: -1 });
  });
});

describe('klx dump --max-bytes (tester report: a read cut by the limit was reported as an invalid tail)', () => {
  const logDir = tempDir('klx-cli-dump-');
  const dir = buildPartition(logDir, { segments: [{ batches: singles(rec('a', '1', 1000), rec('b', '2', 1001), rec('c', '3', 1002)) }] });
  const file = join(dir, '00000000000000000000.log');

  it('says where the limit stopped the read, not that the file is damaged', () => {
    const all = lines(klx('dump', file, '--json').stdout);
    expect(all.map((b) => b.type)).toEqual(['batch', 'batch', 'batch']);
    const second = all[1] as { position: number };
    const limit = second.position + 10; // inside the second batch
    const cut = lines(klx('dump', file, '--json', '--max-bytes', String(limit)).stdout);
    expect(cut.map((b) => b.type)).toEqual(['batch', 'max-bytes-reached']);
    expect(cut[1]).toMatchObject({ position: second.position, maxBytes: limit });
    const text = klx('dump', file, '--max-bytes', String(limit)).stdout;
    expect(text).toContain(`-- stopped at --max-bytes ${limit}: the batch at position ${second.position} continues past it`);
    expect(text).not.toContain('invalid-tail');
  });

  it('still reports a real invalid tail inside the limit', () => {
    const damaged = join(tempDir('klx-cli-dump2-'), '00000000000000000000.log');
    const bytes = readFileSync(file);
    writeFileSync(damaged, Buffer.concat([bytes, Buffer.from('garbage!')]));
    const out = lines(klx('dump', damaged, '--json', '--max-bytes', String(bytes.length + 100)).stdout);
    expect(out.at(-1)).toMatchObject({ type: 'invalid-tail', position: bytes.length });
  });
});
