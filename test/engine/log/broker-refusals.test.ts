/**
 * What a Kafka 4.0 broker refuses on append and klx now refuses too, or writes only on request saying so:
 * a CreateTime outside [now − message.timestamp.before.max.ms, now + message.timestamp.after.max.ms]
 * (LogValidator.validateTimestamp; after = 3600000 by default since 4.0, KIP-1030), and what it says
 * of a segment.bytes below 1 MiB (LogConfig: refused per topic by 4.1+, KAFKA-19080).
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { KlxError } from '../../../src-main/engine/errors.ts';
import { scanLogFile } from '../../../src-main/engine/format/log-reader.ts';
import { createPartition } from '../../../src-main/engine/log/partition-create.ts';
import { PartitionWriter } from '../../../src-main/engine/log/partition-writer.ts';
import { DEFAULT_TOPIC_CONFIG, parseConfigValue, resolveTopicConfig, segmentBytesNote } from '../../../src-main/engine/log/topic-config.ts';
import { klx } from '../../support/klx-cli.ts';
import { tempDir } from '../../support/log-builder.ts';
import { thrownKlxError } from '../../support/klx-error.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** 2023-11-14 22:13:20 UTC. */
const NOW = 1_700_000_000_000n;
/** 2100-01-01 00:00:00 UTC. */
const Y2100 = 4_102_444_800_000n;

function partition(config: Parameters<typeof createPartition>[3] = {}): string {
  const ld = tempDir('klx-refusals-');
  dirs.push(ld);
  return createPartition(ld, 'clicks', 0, config).dir;
}


describe('CreateTime out of range (LogValidator.validateTimestamp)', () => {
  it("Kafka 4.0's defaults: after 3600000 ms, before Long.MAX_VALUE", () => {
    expect(DEFAULT_TOPIC_CONFIG['message.timestamp.after.max.ms']).toBe(3_600_000n);
    expect(DEFAULT_TOPIC_CONFIG['message.timestamp.before.max.ms']).toBe(9_223_372_036_854_775_807n);
    expect(parseConfigValue('message.timestamp.after.max.ms', '86400000')).toBe(86_400_000n);
    expect(thrownKlxError(() => parseConfigValue('message.timestamp.before.max.ms', '-1')).code).toBe('invalid-config');
  });

  it('a CreateTime in 2100 is refused as a Kafka 4.0 broker refuses it; now + 3600000 is the last accepted', () => {
    const dir = partition();
    const w = PartitionWriter.open(dir, { clock: () => NOW });
    try {
      const e = thrownKlxError(() => w.append([{ key: 'k', value: 'v', timestamp: Y2100 }]));
      expect(e.code).toBe('invalid-record');
      expect(e.message).toBe(
        'CreateTime 4102444800000 of record 0 (offset 0) in the append to clicks-0 is 2402444800000 ms after now (1700000000000): a broker accepts [-9223370336854775807, 1700003600000] and refuses the whole batch ' +
          '("Timestamp 4102444800000 of message with offset 0 is out of range": LogValidator.validateTimestamp, RecordValidationException with InvalidTimestampException); ' +
          'a Kafka 4.0+ broker refuses it with the default message.timestamp.after.max.ms=3600000 (1 h, KIP-1030); Kafka 3.6–3.9 (default Long.MAX_VALUE) and earlier brokers (message.timestamp.difference.max.ms, default Long.MAX_VALUE) accept it; ' +
          'pass --allow-timestamp-out-of-range (klx append) to write it anyway',
      );
      expect(e.details).toMatchObject({ config: 'message.timestamp.after.max.ms', value: '3600000', source: 'default', timestamp: '4102444800000', now: '1700000000000' });
      // The second record of a batch is the one refused: the whole batch goes.
      expect(thrownKlxError(() => w.append([{ key: 'a', value: '1', timestamp: NOW }, { key: 'b', value: '2', timestamp: NOW + 3_600_001n }])).message).toContain('CreateTime 1700003600001 of record 1 (offset 1)');
      expect(w.append([{ key: 'k', value: 'v', timestamp: NOW + 3_600_000n }]).baseOffset).toBe(0n);
      expect(w.logEndOffset).toBe(1n);
    } finally {
      w.close();
    }
  });

  it('--allow-timestamp-out-of-range writes the batch as asked and the plan says which brokers refuse it', () => {
    const dir = partition();
    const w = PartitionWriter.open(dir, { clock: () => NOW });
    try {
      const r = w.append([{ key: 'k', value: 'v', timestamp: Y2100 }], { allowTimestampOutOfRange: true });
      expect(r.maxTimestamp).toBe(Y2100);
      expect(r.brokerRefusal).toContain('a Kafka 4.0+ broker refuses it with the default message.timestamp.after.max.ms=3600000');
      expect(w.append([{ key: 'k', value: 'v', timestamp: NOW }]).brokerRefusal).toBeNull();
    } finally {
      w.close();
    }
    const batches = [...scanLogFile(join(dir, '00000000000000000000.log'))].filter((e) => e.type === 'batch');
    expect(batches.map((b) => (b.type === 'batch' ? b.header.maxTimestamp : null))).toEqual([Y2100, NOW]);
  });

  it("the topic's message.timestamp.before.max.ms refuses an old CreateTime (every 3.6+ broker), and LogAppendTime topics are not checked", () => {
    const dir = partition({ 'message.timestamp.before.max.ms': 86_400_000n });
    const w = PartitionWriter.open(dir, { clock: () => NOW });
    try {
      const e = thrownKlxError(() => w.append([{ key: 'k', value: 'v', timestamp: NOW - 86_400_001n }]));
      expect(e.message).toContain('CreateTime 1699913599999 of record 0 (offset 0) in the append to clicks-0 is 86400001 ms before now (1700000000000): a broker accepts [1699913600000, 1700003600000]');
      expect(e.message).toContain("a Kafka 3.6+ broker with the topic's message.timestamp.before.max.ms=86400000 (klx-topic.properties) refuses it");
      expect(w.append([{ key: 'k', value: 'v', timestamp: NOW - 86_400_000n }]).baseOffset).toBe(0n);
    } finally {
      w.close();
    }
    const lat = partition({ 'message.timestamp.type': 'LogAppendTime' });
    const l = PartitionWriter.open(lat, { clock: () => NOW });
    try {
      const r = l.append([{ key: 'k', value: 'v', timestamp: Y2100 }]);
      expect(r.maxTimestamp).toBe(NOW);
      expect(r.brokerRefusal).toBeNull();
    } finally {
      l.close();
    }
  });

  it('klx append: refused with exit 1 and the typed error; with the flag written and a note', () => {
    const dir = partition();
    const refused = klx('append', dir, '--key', 'k', '--value', 'v', '--timestamp', String(Y2100));
    expect(refused.status).toBe(1);
    expect(refused.stderr).toContain('klx: invalid-record: CreateTime 4102444800000 of record 0 (offset 0) in the append to clicks-0 is ');
    expect(refused.stderr).toContain('a Kafka 4.0+ broker refuses it with the default message.timestamp.after.max.ms=3600000');
    const ok = klx('append', dir, '--key', 'k', '--value', 'v', '--timestamp', String(Y2100), '--allow-timestamp-out-of-range');
    expect(ok.status).toBe(0);
    expect(ok.stdout).toContain('appended 1 record at offset 0 to clicks-0');
    expect(ok.stdout).toMatch(/\nnote: CreateTime 4102444800000 of record 0 \(offset 0\) .*a Kafka 4\.0\+ broker refuses it .*; written because of --allow-timestamp-out-of-range, so no such broker would have written this batch\n/);
  });
});

describe('segment.bytes below 1 MiB (LogConfig)', () => {
  it('is accepted from 14 as a Kafka 4.0 topic config, with a note that 4.1+ refuses it', () => {
    expect(thrownKlxError(() => parseConfigValue('segment.bytes', '13')).message).toBe('segment.bytes must be at least 14, got 13');
    expect(segmentBytesNote(resolveTopicConfig('t', null, { 'segment.bytes': 1_048_576 }))).toBeNull();
    expect(segmentBytesNote(resolveTopicConfig('t', null, { 'segment.bytes': 1_048_575 }))).toBe(
      'segment.bytes=1048575 (--config) is below 1048576: a Kafka 4.1+ broker refuses it as a topic config (LogConfig validates segment.bytes ≥ 1048576, KAFKA-19080); Kafka 4.0 accepts it per topic (its 1 MiB minimum is only for the broker-wide log.segment.bytes, KIP-1030), as klx does, and 3.x and earlier accept 14 or more',
    );
    const ld = tempDir('klx-refusals-');
    dirs.push(ld);
    const c = klx('create', join(ld, 'tiny-0'), '--config', 'segment.bytes=14');
    expect(c.status).toBe(0);
    expect(c.stdout).toContain('note: segment.bytes=14 (--config) is below 1048576: a Kafka 4.1+ broker refuses it');
    const a = klx('append', join(ld, 'tiny-0'), '--key', 'k', '--value', 'v', '--config', 'segment.bytes=2000', '--dry-run');
    expect(a.status).toBe(0);
    expect(a.stdout).toContain('note: segment.bytes=2000 (--config) is below 1048576');
    expect(klx('create', join(ld, 'big-0')).stdout).not.toContain('note:');
  });
});
