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
