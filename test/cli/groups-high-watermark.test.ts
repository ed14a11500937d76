/**
 * `klx groups` where the high watermark is below the log end offset (fresh tester's finding): a copy of the
 * broker-written kafka-2.8.0-snappy log directory with some-topic-0's replication-offset-checkpoint entry set
 * to 5 (its log ends at 9; simple-consumer-example committed 8). The text's LOG-END-OFFSET and the JSON's
 * logEndOffset are both what ListOffsets latest answers (5), as kafka-consumer-groups.sh prints it
 * (ConsumerGroupCommand); the JSON keeps the disk's end as localLogEndOffset; LAG −3 is marked and explained.
 */
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { tempDir } from '../support/log-builder.ts';
import { describeRealData, REAL_DATA } from '../support/real-data.ts';
import { klx } from '../support/klx-cli.ts';

const NOW = '1641800000000'; // 2022-01-10: before the offsets expire

describeRealData('klx groups with the high watermark below the log end offset', () => {
  it('text and --json agree on LOG-END-OFFSET (the high watermark 5) and explain the lag of −3', () => {
    const dir = join(tempDir('klx-groups-hw-'), 'logs');
    cpSync(join(REAL_DATA, 'kafka-2.8.0-snappy'), dir, { recursive: true });
    const cp = join(dir, 'replication-offset-checkpoint');
    const text0 = readFileSync(cp, 'utf8');
    expect(text0).toContain('\nsome-topic 0 9\n');
    writeFileSync(cp, text0.replace('\nsome-topic 0 9\n', '\nsome-topic 0 5\n'));

    const json = klx('groups', dir, '--json', '--now', NOW);
    expect(json.status).toBe(0);
    const row = json.stdout.trim().split('\n').map((l) => JSON.parse(l)).find((r) => r.topic === 'some-topic')!;
    expect(row).toMatchObject({ currentOffset: 8, logEndOffset: 5, localLogEndOffset: 9, highWatermark: 5, lag: -3, expired: false });
    const why =
      "LAG -3 is negative: the committed offset 8 is 3 past the high watermark 5 that ListOffsets latest answers (LOG-END-OFFSET; kafka-consumer-groups.sh prints LOG-END-OFFSET − CURRENT-OFFSET as it is, ConsumerGroupCommand.getLag), within this replica's log (log end offset 9), in records not yet known to be replicated; the group counts it as 0; ";
    expect(row.detail.startsWith(why)).toBe(true);

    const text = klx('groups', dir, '--now', NOW);
    expect(text.status).toBe(0);
    const lines = text.stdout.split('\n');
    expect(lines).toContain('Group simple-consumer-example: classic consumer, state Empty, 0 members, generation 31, __consumer_offsets-16; lag 0 (negative lags count as 0), record lag 0');
    const head = lines.find((l) => l.startsWith('GROUP '))!;
    const cells = lines.find((l) => l.includes(' some-topic '))!;
    const col = (name: string) => cells.slice(head.indexOf(name)).split(/ {2,}| (?=-|\d)/)[0]!.trim();
    expect([col('CURRENT-OFFSET'), col('LOG-END-OFFSET')]).toEqual(['8', '5']);
    expect(cells.slice(head.indexOf('LAG'), head.indexOf('CONSUMER-ID')).trim()).toBe('-3 (ahead)');
    expect(lines).toContain(`  some-topic-0: ${row.detail}`);
  });
});
