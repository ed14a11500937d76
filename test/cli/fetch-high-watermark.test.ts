/**
 * `klx fetch` reads as a consumer does (fresh tester's finding): a copy of the broker-written kafka-2.8.0-snappy
 * log directory with some-topic-0's replication-offset-checkpoint entry set to 5 (its log ends at 9). By default
 * reading stops at the high watermark (FetchIsolation.HIGH_WATERMARK in UnifiedLog.read) and `--offset latest`
 * is 5, what ListOffsets latest answers (as `offset-for-time --timestamp latest`); `--up-to log-end` reads to 9.
 */
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { tempDir } from '../support/log-builder.ts';
import { describeRealData, REAL_DATA } from '../support/real-data.ts';
import { klx } from '../support/klx-cli.ts';

describeRealData('klx fetch stops at the high watermark by default', () => {
  it('default, --offset latest, --up-to log-end and offset-for-time latest agree with a consumer', () => {
    const logs = join(tempDir('klx-fetch-hw-'), 'logs');
    cpSync(join(REAL_DATA, 'kafka-2.8.0-snappy'), logs, { recursive: true });
    const cp = join(logs, 'replication-offset-checkpoint');
    writeFileSync(cp, readFileSync(cp, 'utf8').replace('\nsome-topic 0 9\n', '\nsome-topic 0 5\n'));
    const dir = join(logs, 'some-topic-0');
    const lastLine = (args: string[]) => {
      const r = klx('fetch', dir, ...args);
      expect(r.status).toBe(0);
      const l = r.stdout.trim().split('\n');
      return { records: l.filter((x) => x.startsWith('offset ')).map((x) => Number(x.split(' ')[1])), end: l[l.length - 1] };
    };
    expect(lastLine(['--offset', '0'])).toEqual({
      records: [0, 1, 2, 3, 4],
      end: '-- next offset 5 (end: nothing more to read); 5 records; read limit 5 (the high watermark; --up-to log-end reads on), log start offset 0, log end offset 9',
    });
    expect(lastLine(['--offset', 'latest'])).toEqual({ records: [], end: '-- next offset 5 (end: nothing more to read); 0 records; read limit 5 (the high watermark; --up-to log-end reads on), log start offset 0, log end offset 9' });
    expect(klx('offset-for-time', dir, '--timestamp', 'latest').stdout).toBe('latest: offset 5 leader epoch 0 (read_uncommitted: the high watermark; log end offset 9; Kafka Partition.fetchOffsetForTimestamp)\n');
    expect(lastLine(['--offset', '0', '--up-to', 'log-end'])).toEqual({ records: [0, 1, 2, 3, 4, 5, 6, 7, 8], end: '-- next offset 9 (end: nothing more to read); 9 records; read limit 9, log start offset 0, log end offset 9' });
    expect(lastLine(['--offset', 'latest', '--up-to', 'log-end'])).toEqual({ records: [], end: '-- next offset 9 (end: nothing more to read); 0 records; read limit 9, log start offset 0, log end offset 9' });
    const json = klx('fetch', dir, '--offset', '3', '--json').stdout.trim().split('\n').map((l) => JSON.parse(l));
    expect(json.filter((o) => o.type === 'record').map((o) => o.offset)).toEqual([3, 4]);
    expect(json[json.length - 1]).toMatchObject({ type: 'end', nextOffset: 5, logEndOffset: 9, highWatermark: 5 });
  });
});
