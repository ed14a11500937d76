/**
 * `klx dump --decode` (dump-log's internal-topic decoders) and KRaft snapshot files, spawned as a
 * user runs them: the real KRaft data sets (metadata log and the broker-written bootstrap.checkpoint
 * snapshot), a `__transaction_state` partition written with `klx create` + `klx append --records`
 * from bytes made by an independent Python encoder (test/support/txn_state_records.py), and a KRaft
 * snapshot inside a `__cluster_metadata-0` folder next to the broker's text checkpoint files.
 */
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseJsonExact } from '../../src-main/engine/decode/json-text.ts';
import { listPartitionDir } from '../../src-main/engine/files/file-names.ts';
import { tempDir } from '../support/log-builder.ts';
import { describeRealData, REAL_DATA } from '../support/real-data.ts';
import { klx, transactionStatePartition } from '../support/txn-state.ts';

const payloads = (text: string) => text.split('\n').filter((l) => l.startsWith('  | '));

describe('klx dump --decode transactions on a __transaction_state partition from an independent encoder', () => {
  const dir = transactionStatePartition();
  const key = (id: string) => `key: {"type":"0","data":{"transactionalId":"${id}"}}`;

  it('auto picks the transaction-log decoder by the folder name; text as dump-log prints key and payload', () => {
    const r = klx('dump', '--decode', 'auto', dir);
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('Decoder: transactions (auto');
    const parts = '"transactionPartitions":[{"topic":"orders","partitionIds":[0,2]},{"topic":"audit","partitionIds":[1]}]';
    expect(payloads(r.stdout)).toEqual([
      `  | offset: 0 ts: 1700000000010 ${key('payments-1')} payload: {"version":"0","data":{"producerId":4001,"producerEpoch":0,"transactionTimeoutMs":60000,"transactionStatus":"Ongoing",${parts},"transactionLastUpdateTimestampMs":1700000000010,"transactionStartTimestampMs":1700000000005}}`,
      `  | offset: 1 ts: 1700000000020 ${key('payments-1')} payload: {"version":"1","data":{"producerId":4001,"producerEpoch":0,"nextProducerEpoch":1,"transactionTimeoutMs":60000,"transactionStatus":"PrepareCommit",${parts},"transactionLastUpdateTimestampMs":1700000000020,"transactionStartTimestampMs":1700000000005,"clientTransactionVersion":2}}`,
      `  | offset: 2 ts: 1700000000030 ${key('payments-1')} payload: {"version":"1","data":{"producerId":4001,"previousProducerId":4000,"producerEpoch":1,"transactionTimeoutMs":60000,"transactionStatus":"CompleteCommit","transactionPartitions":[],"transactionLastUpdateTimestampMs":1700000000030,"transactionStartTimestampMs":1700000000005,"clientTransactionVersion":2}}`,
      `  | offset: 3 ts: 1700000000040 ${key('reports-7')} payload: {"version":"1","data":{"producerId":1152921504606846977,"producerEpoch":3,"transactionTimeoutMs":900000,"transactionStatus":"Empty","transactionPartitions":null,"transactionLastUpdateTimestampMs":1700000000040,"transactionStartTimestampMs":-1}}`,
      `  | offset: 4 ts: 1700000000050 ${key('reports-7')} payload: <DELETE>`,
    ]);
    // The explicit decoder gives the same; none prints bytes as before.
    expect(payloads(klx('dump', '--decode', 'transactions', dir).stdout)).toEqual(payloads(r.stdout));
    expect(klx('dump', '--decode', 'none', dir).stdout).toBe(klx('dump', dir).stdout);
  });

  it('--json: keyDecoded/valueDecoded with exact int64, a tombstone has no valueDecoded', () => {
    const r = klx('dump', '--decode', 'auto', '--json', dir);
    expect(r.status).toBe(0);
    const batch = parseJsonExact(r.stdout.trim()) as { records: Record<string, unknown>[] };
    const recs = batch.records;
    expect(recs.map((x) => x.keyFormat)).toEqual(['transactions', 'transactions', 'transactions', 'transactions', 'transactions']);
    expect(recs[3]!.keyDecoded).toEqual({ type: '0', data: { transactionalId: 'reports-7' } });
    expect((recs[3]!.valueDecoded as { data: { producerId: bigint } }).data.producerId).toBe(1152921504606846977n);
    expect(recs[4]!.valueDecoded).toBeNull();
    expect(recs[4]!.value).toBeNull();
    expect(recs.every((x) => x.decodeError === null)).toBe(true);
  });

  it('a wrong decoder says why per record and keeps the bytes', () => {
    const r = klx('dump', '--decode', 'metadata', dir);
    expect(r.status).toBe(0);
    expect(payloads(r.stdout)[0]).toMatch(/^ {2}\| offset: 0 ts: 1700000000010 value: 0x0000.* !! does not decode: value: byte 0: frame version 0 /);
    expect(klx('dump', '--decode', 'bogus', dir).stderr).toMatch(/--decode must be one of auto, none, offsets, transactions, metadata/);
  });
});

describe('klx dump --decode offsets: a record type the decoder does not know', () => {
  it("prints dump-log's 'Unknown record type N at offset O, skipping.' as the key and no payload, text and JSON (DumpLogSegments)", () => {
    const root = tempDir('klx-dump-unknown-type-');
    const dir = join(root, '__consumer_offsets-0');
    const ndjson = join(root, 'r.ndjson');
    // key: int16 type 99 + a string "g"; value: int16 version 0 + one byte (built by hand, not by the decoder)
    writeFileSync(ndjson, JSON.stringify({ keyBase64: Buffer.from([0, 99, 0, 1, 0x67]).toString('base64'), valueBase64: Buffer.from([0, 0, 7]).toString('base64'), timestamp: 1700000000000 }) + '\n');
    for (const args of [['create', dir, '--config', 'cleanup.policy=compact'], ['append', dir, '--records', ndjson]]) expect(klx(...args).stderr).toBe('');
    expect(payloads(klx('dump', '--decode', 'auto', dir).stdout)).toEqual(['  | offset: 0 ts: 1700000000000 key: Unknown record type 99 at offset 0, skipping.']);
    const rec = (JSON.parse(klx('dump', '--decode', 'offsets', '--json', dir).stdout) as { records: Record<string, unknown>[] }).records[0]!;
    expect([rec.skipped, rec.keyDecoded, rec.valueDecoded, rec.decodeError]).toEqual(['Unknown record type 99 at offset 0, skipping.', null, null, null]);
  });
});

describe('klx dump: the line of a control record', () => {
  it("a COMMIT marker's line has the ts: label and dump-log's endTxnMarker: COMMIT coordinatorEpoch: E (DumpLogSegments)", () => {
    const dir = join(tempDir('klx-dump-marker-'), 'payments-0');
    for (const args of [
      ['create', dir],
      ['append', dir, '--key', 'a', '--value', '1', '--producer-id', '7', '--producer-epoch', '3', '--transactional', '--timestamp', '1700000000000'],
      ['append', dir, '--commit', '--producer-id', '7', '--producer-epoch', '3', '--coordinator-epoch', '4', '--timestamp', '1700000000002'],
    ]) expect(klx(...args).stderr).toBe('');
    expect(payloads(klx('dump', '--deep', dir).stdout)).toEqual(['  | offset: 0 ts: 1700000000000 key: "a" value: "1"', '  | offset: 1 ts: 1700000000002 endTxnMarker: COMMIT coordinatorEpoch: 4']);
  });
});

describeRealData('klx dump --decode metadata on real KRaft data', () => {
  it('the __cluster_metadata log of kraft-metadata-small, text and JSON', () => {
    const dir = join(REAL_DATA, 'kraft-metadata-small', '__cluster_metadata-0');
    const r = klx('dump', '--decode', 'auto', dir);
    expect(r.status).toBe(0);
    const lines = payloads(r.stdout);
    expect(lines[0]).toBe('  | offset: 0 ts: 1694709927209 control: LEADER_CHANGE LeaderChange: {"version":0,"leaderId":1,"voters":[{"voterId":1}],"grantingVoters":[{"voterId":1}]}');
    expect(lines[2]).toBe('  | offset: 2 ts: 1694709928137 payload: {"type":"UNFENCE_BROKER_RECORD","version":0,"data":{"id":1,"epoch":0}}');
    expect(lines[3]).toBe('  | offset: 3 ts: 1694710627756 payload: {"type":"TOPIC_RECORD","version":0,"data":{"name":"test1","topicId":"pqFUXC1fRJ-sOJ2VK_4P4A"}}');
    const json = klx('dump', '--decode', 'metadata', '--json', dir).stdout.trim().split('\n').map((l) => JSON.parse(l) as { records: Record<string, unknown>[] });
    const recs = json.flatMap((b) => b.records);
    expect(recs[0]!.controlDecoded).toBe('LeaderChange: {"version":0,"leaderId":1,"voters":[{"voterId":1}],"grantingVoters":[{"voterId":1}]}');
    expect(recs[3]!.valueDecoded).toEqual({ type: 'TOPIC_RECORD', version: 0, data: { name: 'test1', topicId: 'pqFUXC1fRJ-sOJ2VK_4P4A' } });
    expect(recs.slice(1).every((x) => x.decodeError === null && x.keyDecoded === null)).toBe(true);
  });

  it('auto uses the __consumer_offsets decoder for a compacted offsets partition (kafka-2.7.1), every record decodes', () => {
    const r = klx('dump', '--decode', 'auto', join(REAL_DATA, 'kafka-2.7.1-compacted-offsets'));
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('Decoder: offsets (auto');
    const lines = payloads(r.stdout);
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.filter((l) => l.includes('does not decode'))).toEqual([]);
    expect(lines[2]).toBe('  | offset: 2 ts: 1685794989998 key: {"type":"2","data":{"group":"console-consumer-55231"}} payload: <DELETE>');
  });

  it("the broker's bootstrap.checkpoint (a KRaft snapshot: header, three feature levels, footer)", () => {
    const r = klx('dump', '--decode', 'auto', join(REAL_DATA, 'kraft-3x-metadata-2seg', 'bootstrap.checkpoint'));
    expect(r.status).toBe(0);
    expect(r.stdout.split('\n').slice(0, 3)).toEqual(['Dumping bootstrap.checkpoint', 'KRaft bootstrap snapshot', 'Decoder: metadata (auto: by the partition folder\'s topic)']);
    expect(payloads(r.stdout)).toEqual([
      '  | offset: 0 ts: 1749603210761 control: SNAPSHOT_HEADER SnapshotHeader {"version":0,"lastContainedLogTimestamp":0}',
      '  | offset: 1 ts: 1749603210790 payload: {"type":"FEATURE_LEVEL_RECORD","version":0,"data":{"name":"metadata.version","featureLevel":25}}',
      '  | offset: 2 ts: 1749603210790 payload: {"type":"FEATURE_LEVEL_RECORD","version":0,"data":{"name":"group.version","featureLevel":1}}',
      '  | offset: 3 ts: 1749603210790 payload: {"type":"FEATURE_LEVEL_RECORD","version":0,"data":{"name":"transaction.version","featureLevel":2}}',
      '  | offset: 4 ts: 1749603210791 control: SNAPSHOT_FOOTER SnapshotFooter {"version":0}',
    ]);
  });

  it('a KRaft snapshot in __cluster_metadata-0 is listed and dumped like a segment; text checkpoint files are not', () => {
    const dir = join(tempDir('klx-kraft-snap-'), '__cluster_metadata-0');
    mkdirSync(dir, { recursive: true });
    const src = join(REAL_DATA, 'kraft-metadata-small', '__cluster_metadata-0');
    for (const f of ['00000000000000000000.log', 'leader-epoch-checkpoint', 'partition.metadata', 'quorum-state']) copyFileSync(join(src, f), join(dir, f));
    copyFileSync(join(REAL_DATA, 'kraft-3x-metadata-2seg', 'bootstrap.checkpoint'), join(dir, '00000000000000000005-0000000001.checkpoint'));
    writeFileSync(join(dir, 'recovery-point-offset-checkpoint'), '0\n1\n__cluster_metadata 0 7\n');

    const listing = listPartitionDir(dir);
    expect(listing.kraftSnapshots).toEqual([{ name: '00000000000000000005-0000000001.checkpoint', size: 309, endOffset: 5n, epoch: 1 }]);
    expect(listing.metadata.map((m) => m.name)).toEqual(['leader-epoch-checkpoint', 'partition.metadata', 'quorum-state']);

    const r = klx('dump', '--decode', 'auto', dir);
    expect(r.status).toBe(0);
    const headers = r.stdout.split('\n').filter((l) => /^(Dumping|Snapshot|Decoder)/.test(l));
    expect(headers).toEqual([
      'Dumping 00000000000000000000.log',
      "Decoder: metadata (auto: by the partition folder's topic)",
      'Dumping 00000000000000000005-0000000001.checkpoint',
      'Snapshot end offset: 5, epoch: 1',
      "Decoder: metadata (auto: by the partition folder's topic)",
    ]);
    expect(r.stdout).toContain('SnapshotFooter {"version":0}');
    const text = klx('dump', join(dir, 'recovery-point-offset-checkpoint'));
    expect(text.status).not.toBe(0);
    expect(text.stderr).toMatch(/not a \.log, \.index, \.timeindex or KRaft snapshot \.checkpoint file/);
    writeFileSync(join(dir, 'cleaner.checkpoint'), 'x');
    expect(klx('dump', join(dir, 'cleaner.checkpoint')).stderr).toMatch(/not a KRaft snapshot/);
  });
});
