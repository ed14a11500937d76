/**
 * The `__consumer_offsets` decoder on real records written by brokers 0.10.1, Confluent 5.1 (Kafka
 * 2.1) and 2.7.1 (read in place from ../shared/kafka-real-data), and on hand-built bytes for the
 * versions no real data set holds (key v0, offset-commit values v0, v2, v4, group metadata v0 and
 * the flexible v4), plus errors that name the byte position.
 */
import { describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { recordsOf, walkLog } from '../../src-main/engine/log/fetch.ts';
import { PartitionLog } from '../../src-main/engine/log/partition-log.ts';
import type { KafkaRecord } from '../../src-main/engine/format/types.ts';
import {
  ConsumerOffsetsDecodeError,
  decodeConsumerOffsetsKey,
  decodeConsumerOffsetsRecord,
  decodeGroupMetadataValue,
  decodeOffsetCommitValue,
  summarizeConsumerOffsetsRecord,
} from '../../src-shared/consumer-offsets.ts';
import { describeRealData, REAL_DATA } from '../support/real-data.ts';

/** The record at `offset` of a real partition, read in place. */
function realRecord(caseName: string, partition: string, offset: bigint): KafkaRecord {
  const log = PartitionLog.open(join(REAL_DATA, caseName, partition));
  for (const e of walkLog(log)) {
    if (e.type !== 'batch') continue;
    for (const r of recordsOf(e)) if (r.offset === offset) return r;
  }
  throw new Error(`no record ${offset} in ${caseName}/${partition}`);
}

/** Big-endian builder for hand-made records. */
class W {
  private parts: number[] = [];
  i16(v: number) {
    this.parts.push((v >> 8) & 0xff, v & 0xff);
    return this;
  }
  i32(v: number) {
    this.parts.push((v >>> 24) & 0xff, (v >>> 16) & 0xff, (v >>> 8) & 0xff, v & 0xff);
    return this;
  }
  i64(v: bigint) {
    for (let s = 56n; s >= 0n; s -= 8n) this.parts.push(Number((BigInt.asUintN(64, v) >> s) & 0xffn));
    return this;
  }
  str(s: string | null) {
    if (s === null) return this.i16(-1);
    const b = new TextEncoder().encode(s);
    this.i16(b.length);
    this.parts.push(...b);
    return this;
  }
  uv(v: number) {
    while (v >= 0x80) {
      this.parts.push((v & 0x7f) | 0x80);
      v >>>= 7;
    }
    this.parts.push(v);
    return this;
  }
  cstr(s: string | null) {
    if (s === null) return this.uv(0);
    const b = new TextEncoder().encode(s);
    this.uv(b.length + 1);
    this.parts.push(...b);
    return this;
  }
  cbytes(b: Uint8Array) {
    this.uv(b.length + 1);
    this.parts.push(...b);
    return this;
  }
  bytes(b: Uint8Array) {
    this.i32(b.length);
    this.parts.push(...b);
    return this;
  }
  raw(...b: number[]) {
    this.parts.push(...b);
    return this;
  }
  done(): Uint8Array {
    return Uint8Array.from(this.parts);
  }
}

describeRealData('real __consumer_offsets records', () => {
  it('Kafka 2.7.1: group metadata v3 with one consumer member (subscription v1, assignment), then a tombstone', () => {
    const r0 = realRecord('kafka-2.7.1-compacted-offsets', '__consumer_offsets-17', 0n);
    const d = decodeConsumerOffsetsRecord(r0.key, r0.value);
    expect(d.key).toEqual({ type: 'group-metadata', version: 2, group: 'console-consumer-55231' });
    expect(d.value).toMatchObject({ type: 'group-metadata', version: 3, protocolType: 'consumer', generation: 1, protocol: 'range', currentStateTimestamp: '1670071252892' });
    const g = d.value as ReturnType<typeof decodeGroupMetadataValue>;
    expect(g.leader).toBe('consumer-console-consumer-55231-1-5fc19737-e0a8-47c5-9617-54b903a61502');
    expect(g.members).toEqual([
      {
        memberId: 'consumer-console-consumer-55231-1-5fc19737-e0a8-47c5-9617-54b903a61502',
        groupInstanceId: null,
        clientId: 'consumer-console-consumer-55231-1',
        clientHost: '/127.0.0.1',
        rebalanceTimeout: 300000,
        sessionTimeout: 10000,
        subscription: { version: 1, topics: ['myTopic'], userData: null, ownedPartitions: [], generationId: null, rackId: null },
        assignment: { version: 1, assignedPartitions: [{ topic: 'myTopic', partitions: [0] }], userData: null },
      },
    ]);
    const r2 = realRecord('kafka-2.7.1-compacted-offsets', '__consumer_offsets-17', 2n);
    expect(decodeConsumerOffsetsRecord(r2.key, r2.value)).toEqual({ key: { type: 'group-metadata', version: 2, group: 'console-consumer-55231' }, value: null });
  });

  it('Kafka 2.7.1: offset commit key v1 with value v3 (leader epoch −1)', () => {
    const r = realRecord('kafka-2.7.1-compacted-offsets', '__consumer_offsets-39', 16n);
    expect(decodeConsumerOffsetsRecord(r.key, r.value)).toEqual({
      key: { type: 'offset-commit', version: 1, group: 'console-consumer-65070', topic: 'test_topic_0603', partition: 0 },
      value: { type: 'offset-commit', version: 3, offset: '9', leaderEpoch: -1, metadata: '', commitTimestamp: '1685814551579', expireTimestamp: null },
    });
    expect(summarizeConsumerOffsetsRecord(r.key, r.value)).toEqual({ key: 'offset commit · console-consumer-65070 · test_topic_0603-0', value: 'offset 9 · v3' });
  });

  it('Kafka 0.10.1 (magic 1): offset commit value v1 with its expire timestamp, group metadata v1', () => {
    const c = realRecord('kafka-0.10.1-magic1', '__consumer_offsets-40', 1n);
    expect(decodeConsumerOffsetsRecord(c.key, c.value).value).toEqual({ type: 'offset-commit', version: 1, offset: '2', leaderEpoch: null, metadata: '', commitTimestamp: '1479457455691', expireTimestamp: '1479543855691' });
    const g = realRecord('kafka-0.10.1-magic1', '__consumer_offsets-40', 0n);
    const v = decodeConsumerOffsetsRecord(g.key, g.value).value as ReturnType<typeof decodeGroupMetadataValue>;
    expect(v).toMatchObject({ version: 1, protocolType: 'consumer', generation: 1, protocol: 'range', currentStateTimestamp: null });
    expect(v.members[0]).toMatchObject({ clientId: 'consumer-1', clientHost: '/192.168.2.20', rebalanceTimeout: 300000, sessionTimeout: 30000, subscription: { version: 0, topics: ['foo'] }, assignment: { assignedPartitions: [{ topic: 'foo', partitions: [0] }] } });
  });

  it('Confluent 5.1: group metadata v2 of a Kafka Streams group, offset commit of an empty group id', () => {
    const g = realRecord('cp-5.1-lz4-connect', '__consumer_offsets-13', 0n);
    const v = decodeConsumerOffsetsRecord(g.key, g.value).value as ReturnType<typeof decodeGroupMetadataValue>;
    expect(v).toMatchObject({ version: 2, protocolType: 'consumer', generation: 1, protocol: 'stream', currentStateTimestamp: '1558747819207' });
    expect(v.members[0]!.subscription).toMatchObject({ version: 0, topics: ['_confluent-command'] });
    const c = realRecord('cp-5.1-lz4-connect', '__consumer_offsets-0', 0n);
    expect(decodeConsumerOffsetsKey(c.key!)).toEqual({ type: 'offset-commit', version: 1, group: '', topic: 'docker-connect-configs', partition: 0 });
  });
});

describe('versions not in the real data, built by hand from the schemas', () => {
  it('offset commit key v0, values v0 and v2', () => {
    const key = new W().i16(0).str('g').str('t').i32(7).done();
    expect(decodeConsumerOffsetsKey(key)).toEqual({ type: 'offset-commit', version: 0, group: 'g', topic: 't', partition: 7 });
    const v0 = new W().i16(0).i64(42n).str('meta').i64(1000n).done();
    expect(decodeOffsetCommitValue(v0)).toEqual({ type: 'offset-commit', version: 0, offset: '42', leaderEpoch: null, metadata: 'meta', commitTimestamp: '1000', expireTimestamp: null });
    const v2 = new W().i16(2).i64(9007199254740993n).str('').i64(2000n).done();
    expect(decodeOffsetCommitValue(v2).offset).toBe('9007199254740993'); // beyond 2^53: exact as a string
  });

  it('offset commit value v4 (flexible: compact string, tagged fields)', () => {
    const v4 = new W().i16(4).i64(5n).i32(3).cstr('m').i64(3000n).uv(1).uv(0).uv(2).raw(0xaa, 0xbb).done();
    expect(decodeOffsetCommitValue(v4)).toEqual({ type: 'offset-commit', version: 4, offset: '5', leaderEpoch: 3, metadata: 'm', commitTimestamp: '3000', expireTimestamp: null });
  });

  it('group metadata v0 (no rebalance timeout, no state timestamp) and v4 (flexible, group instance id)', () => {
    const sub = new W().i16(0).i32(1).str('orders').i32(-1).done();
    const asg = new W().i16(0).i32(1).str('orders').i32(2).i32(0).i32(1).i32(-1).done();
    const v0 = new W().i16(0).str('consumer').i32(4).str('range').str('m1').i32(1).str('m1').str('c1').str('/10.0.0.1').i32(10000).bytes(sub).bytes(asg).done();
    expect(decodeGroupMetadataValue(v0)).toEqual({
      type: 'group-metadata',
      version: 0,
      protocolType: 'consumer',
      generation: 4,
      protocol: 'range',
      leader: 'm1',
      currentStateTimestamp: null,
      members: [
        {
          memberId: 'm1',
          groupInstanceId: null,
          clientId: 'c1',
          clientHost: '/10.0.0.1',
          rebalanceTimeout: null,
          sessionTimeout: 10000,
          subscription: { version: 0, topics: ['orders'], userData: null, ownedPartitions: [], generationId: null, rackId: null },
          assignment: { version: 0, assignedPartitions: [{ topic: 'orders', partitions: [0, 1] }], userData: null },
        },
      ],
    });
    const v4 = new W().i16(4).cstr('connect').i32(9).cstr(null).cstr(null).i64(77n).uv(2).cstr('m2').cstr('static-1').cstr('c2').cstr('/h').i32(60000).i32(45000).cbytes(new Uint8Array([1, 2])).cbytes(new Uint8Array([])).uv(0).uv(0).done();
    expect(decodeGroupMetadataValue(v4)).toEqual({
      type: 'group-metadata',
      version: 4,
      protocolType: 'connect',
      generation: 9,
      protocol: null,
      leader: null,
      currentStateTimestamp: '77',
      members: [{ memberId: 'm2', groupInstanceId: 'static-1', clientId: 'c2', clientHost: '/h', rebalanceTimeout: 60000, sessionTimeout: 45000, subscription: { base64: 'AQI=' }, assignment: { base64: '' } }],
    });
  });

  it('keys of the newer coordinator are reported, not decoded; bad bytes fail with the byte position', () => {
    expect(decodeConsumerOffsetsRecord(new W().i16(5).raw(1, 2).done(), new Uint8Array([0, 0]))).toMatchObject({ key: { type: 'other', version: 5 }, value: null });
    const cut = new W().i16(1).str('group').i16(10).raw(0x61).done();
    expect(() => decodeConsumerOffsetsKey(cut)).toThrow(ConsumerOffsetsDecodeError);
    try {
      decodeConsumerOffsetsKey(cut);
    } catch (err) {
      expect((err as ConsumerOffsetsDecodeError).position).toBe(11); // after version (2), group (2 + 5) and the topic's length field (2)
      expect((err as Error).message).toBe('byte 11: topic: needs 10 bytes, 1 left');
    }
    expect(() => decodeOffsetCommitValue(new W().i16(9).done())).toThrow(/version 9 is not one of 0–4/);
    expect(summarizeConsumerOffsetsRecord(cut, null)).toBeNull();
  });
});
