/**
 * One rule for every time option (`offset-for-time --timestamp`, `--now`, `append --timestamp`):
 * ms, or ISO-8601 where a zoneless date-time is UTC as Kafka's Utils.getDateTime reads it (it appends
 * `Z`), and a date alone 00:00 UTC. The tester's case: `2024-05-01T10:00` was local time while
 * `2024-05-01` was UTC (Date.parse). The CLI runs are made under TZ=America/New_York (UTC−4 in May),
 * where local time would be 4 h (14,400,000 ms) later.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseInstant } from '../../src-main/cli/time-arg.ts';
import { klx, klxWithEnv } from '../support/klx-cli.ts';
import { tempDir } from '../support/log-builder.ts';

describe('parseInstant', () => {
  it.each([
    ['1714557600000', 1714557600000n],
    ['2024-05-01T10:00', 1714557600000n],
    ['2024-05-01T10:00:00', 1714557600000n],
    ['2024-05-01T10:00:00.250', 1714557600250n],
    ['2024-05-01T10:00:00Z', 1714557600000n],
    ['2024-05-01T12:00+02:00', 1714557600000n],
    ['2024-05-01T06:00:00-0400', 1714557600000n],
    ['2024-05-01T12:00+02', 1714557600000n],
    ['2024-05-01', 1714521600000n],
    ['1970-01-01T00:00', 0n],
  ])('%s → %s ms', (text, ms) => expect(parseInstant(text, '--timestamp')).toBe(ms));

  it.each(['2024-02-30', '2024-05-01T24:00', '2024-13-01', '1969-12-31T23:59', 'yesterday', '2024-05-01 10:00', '9223372036854775808'])('refuses %s', (text) => {
    expect(() => parseInstant(text, '--now')).toThrow(/^--now .*got "/);
  });
});

describe('the CLI reads a zoneless date-time as UTC whatever TZ is, and echoes the instant in UTC', () => {
  const ld = tempDir('klx-time-');
  const dir = join(ld, 'clock-0');
  afterAll(() => rmSync(ld, { recursive: true, force: true }));
  const ny = (...args: string[]) => klxWithEnv(args, { TZ: 'America/New_York' });

  it('offset-for-time, append --timestamp, retention --now', () => {
    expect(klx('create', dir).status).toBe(0);
    // Records at 09:59:59.999Z, 10:00:00.000Z and 14:00:00.000Z (UTC); the last is where local-time reading lands.
    expect(ny('append', dir, '--key', 'a', '--value', '1', '--timestamp', '2024-05-01T09:59:59.999').status).toBe(0);
    expect(ny('append', dir, '--key', 'b', '--value', '2', '--timestamp', '2024-05-01T10:00').status).toBe(0);
    expect(ny('append', dir, '--key', 'c', '--value', '3', '--timestamp', '1714572000000').status).toBe(0);
    const f = klx('fetch', dir, '--offset', 'earliest', '--json').stdout.trim().split('\n').filter((l) => l.includes('"record"')).map((l) => JSON.parse(l).timestamp);
    expect(f).toEqual([1714557599999, 1714557600000, 1714572000000]);

    const zoneless = JSON.parse(ny('offset-for-time', dir, '--timestamp', '2024-05-01T10:00', '--json').stdout);
    expect(zoneless).toMatchObject({ found: true, target: 1714557600000, targetUtc: '2024-05-01T10:00:00.000Z', offset: 1 });
    const dateOnly = JSON.parse(ny('offset-for-time', dir, '--timestamp', '2024-05-01', '--json').stdout);
    expect(dateOnly).toMatchObject({ target: 1714521600000, targetUtc: '2024-05-01T00:00:00.000Z', offset: 0 });
    expect(ny('offset-for-time', dir, '--timestamp', '2024-05-01T10:00').stdout.split('\n')[0]).toBe(
      'timestamp 1714557600000 (2024-05-01T10:00:00.000Z): offset 1 timestamp 1714557600000 (2024-05-01T10:00:00.000Z) leader epoch 0 (segment 0)',
    );
    const help = klx('offset-for-time', '--help').stdout.replace(/\s+/g, ' ');
    expect(help).toContain("without a zone it is UTC, as Kafka's tools read it (Utils.getDateTime)");

    const r = ny('retention', dir, '--now', '2024-05-01T10:00', '--dry-run');
    expect(r.stderr).toBe('klx: now 2024-05-01T10:00:00.000Z (--now 1714557600000 ms since the epoch, UTC)\n');
  });
});
