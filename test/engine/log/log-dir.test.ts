/**
 * The root of a log directory as `LogManager.loadLogs` reads it (Kafka 4.1): every sub-folder but
 * `remote-log-index-cache` has its name parsed by `LocalLog.parseTopicPartitionName`, whose
 * KafkaException `loadLogs` does not catch, so a `lost+found` (or any folder not named
 * <topic>-<partition>) stops the broker from starting.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openLogDirectory } from '../../../src-main/engine/log/log-dir.ts';
import { logDirFindings } from '../../../src-main/engine/log/quick-check.ts';
import { buildPartition, rec, singles, tempDir } from '../../support/log-builder.ts';

describe('root folders a broker does not load', () => {
  const root = tempDir('klx-logdir-');
  buildPartition(root, { segments: [{ batches: singles(rec('a', '1')) }] });
  mkdirSync(join(root, 'lost+found'));
  mkdirSync(join(root, 'remote-log-index-cache'));
  mkdirSync(join(root, 'backup'));

  it('lost+found and a folder without <topic>-<partition> are errors (the broker does not start); remote-log-index-cache is skipped (info)', () => {
    const d = openLogDirectory(root);
    expect(d.partitions).toHaveLength(1);
    const byName = new Map(logDirFindings(d).map((f) => [f.file, f]));
    const lost = byName.get(join(root, 'lost+found'))!;
    expect(lost).toMatchObject({ severity: 'error', code: 'unknown-file' });
    expect(lost.reason).toBe('folder name is not <topic>-<partition>: a broker does not start (LogManager.loadLogs parses the name of every folder of the log directory with LocalLog.parseTopicPartitionName, whose KafkaException it does not catch); move lost+found out, or give Kafka a sub-folder of the mount as its log directory');
    expect(byName.get(join(root, 'backup'))).toMatchObject({ severity: 'error', reason: 'folder name is not <topic>-<partition>: a broker does not start (LogManager.loadLogs parses the name of every folder of the log directory with LocalLog.parseTopicPartitionName, whose KafkaException it does not catch)' });
    expect(byName.get(join(root, 'remote-log-index-cache'))).toMatchObject({ severity: 'info', reason: 'the tiered-storage index cache, not a partition (a broker skips it: LogManager.loadLogs)' });
  });
});

describe('root folders a broker loads but klx does not take for partitions', () => {
  const root = tempDir('klx-logdir-');
  buildPartition(root, { segments: [{ batches: singles(rec('a', '1')) }] });
  mkdirSync(join(root, 'orders-+3'));
  mkdirSync(join(root, 'my orders-0'));
  mkdirSync(join(root, 'orders-2147483648'));

  it('a partition with a sign or a topic with illegal characters loads in Kafka (a warning, not "does not start"); an int32 overflow stops it', () => {
    const d = openLogDirectory(root);
    expect(d.partitions).toHaveLength(1);
    const byName = new Map(logDirFindings(d).map((f) => [f.file, f]));
    // LocalLog.parseTopicPartitionName: Integer.parseInt("+3") = 3, and the topic's characters are not checked.
    expect(byName.get(join(root, 'orders-+3'))).toMatchObject({
      severity: 'warning',
      reason: 'a broker loads this folder as partition 3 of topic "orders" (LocalLog.parseTopicPartitionName reads the partition with Integer.parseInt and does not check the topic name), but it is not a folder name Kafka writes: klx does not open it',
    });
    expect(byName.get(join(root, 'my orders-0'))).toMatchObject({ severity: 'warning', reason: expect.stringContaining('as partition 0 of topic "my orders"') });
    expect(byName.get(join(root, 'orders-2147483648'))).toMatchObject({ severity: 'error', reason: expect.stringContaining('a broker does not start') });
  });
});
