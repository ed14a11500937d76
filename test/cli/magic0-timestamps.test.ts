/**
 * Issue 13, finding 9: magic 0 messages carry no timestamp. Kafka reports their timestamp type as
 * `NoTimestampType` and their timestamps as −1 (`RecordBatch.NO_TIMESTAMP`;
 * `AbstractLegacyRecordBatch.timestampType`), and `kafka-dump-log` prints "NoTimestampType: -1".
 * The messages are built by kafka-python's `LegacyRecordBatchBuilder` (python3-kafka), not by us.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { scanLogFile } from '../../src-main/engine/format/log-reader.ts';
import { tempDir } from '../support/log-builder.ts';
import { REPO_ROOT } from '../support/real-data.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const PY = `
import sys
from kafka.record.legacy_records import LegacyRecordBatchBuilder
b = LegacyRecordBatchBuilder(magic=0, compression_type=0, batch_size=1024)
b.append(0, timestamp=None, key=b'k', value=b'v')
sys.stdout.write(bytes(b.build()).hex())
`;

describe('magic 0: NoTimestampType and -1', () => {
  const py = spawnSync('/usr/bin/python3', ['-c', PY], { encoding: 'utf8' });
  const have = py.status === 0;
  it.skipIf(!have)('the dump and the reader say NoTimestampType with timestamp -1 (python3-kafka encoder)', () => {
    const bytes = Buffer.from(py.stdout, 'hex');
    expect(bytes.readInt8(16)).toBe(0); // magic
    const dir = join(tempDir('klx-magic0-'), 'old-0');
    dirs.push(dir);
    mkdirSync(dir, { recursive: true });
    const file = join(dir, '00000000000000000000.log');
    writeFileSync(file, bytes);
    const e = [...scanLogFile(file, { deep: true })][0]!;
    expect(e.type).toBe('batch');
    if (e.type !== 'batch') return;
    expect(e.header).toMatchObject({ magic: 0, timestampType: 'NoTimestampType', maxTimestamp: -1n, crcValid: true });
    expect(e.records![0]!.timestamp).toBe(-1n);
    const text = spawnSync(process.execPath, [join(REPO_ROOT, 'bin/klx.mjs'), 'dump', file], { encoding: 'utf8' });
    expect(text.stdout).toContain(`offsets 0..0 count: 1 position: 0 size: ${bytes.length} magic: 0 none NoTimestampType: -1 epoch: -1 crc: ${bytes.readUInt32BE(12)}`);
    const json = spawnSync(process.execPath, [join(REPO_ROOT, 'bin/klx.mjs'), 'dump', '--json', file], { encoding: 'utf8' });
    expect(json.stdout).toContain('"timestampType":"NoTimestampType"');
  });
});
