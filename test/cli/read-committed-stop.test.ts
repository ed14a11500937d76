/**
 * `klx export` / `klx fetch --isolation read_committed` stop at the last stable offset when a
 * transaction is open, as a read_committed consumer does (UnifiedLog, FetchIsolation.TXN_COMMITTED),
 * and say so: the LSO, the open transaction's producer and first offset, and how many records after
 * it were left out. (A tester exported 1 of 4 non-aborted records with no word why.)
 * The partition: offset 0 plain, 1 producer 7's transaction (left open), 2 and 3 plain, 4 producer
 * 8's transaction, 5 its ABORT marker.
 */
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { klx } from '../support/klx-cli.ts';
import { tempDir } from '../support/log-builder.ts';

const ld = tempDir('klx-lso-');
const dir = join(ld, 'payments-0');
afterAll(() => rmSync(ld, { recursive: true, force: true }));

function ok(...args: string[]): string {
  const r = klx(...args);
  expect(r.stderr).toBe('');
  expect(r.status).toBe(0);
  return r.stdout;
}

/** Builds the partition described above (open transaction of producer 7 at offset 1). */
function buildOpenTransactionPartition(partitionDir: string): void {
  ok('create', partitionDir);
  ok('append', partitionDir, '--key', 'a', '--value', '1', '--timestamp', '1700000000000');
  ok('append', partitionDir, '--key', 'b', '--value', '2', '--producer-id', '7', '--producer-epoch', '3', '--transactional', '--timestamp', '1700000000001');
  ok('append', partitionDir, '--key', 'c', '--value', '3', '--timestamp', '1700000000002');
  ok('append', partitionDir, '--key', 'd', '--value', '4', '--timestamp', '1700000000003');
  ok('append', partitionDir, '--key', 'e', '--value', '5', '--producer-id', '8', '--producer-epoch', '0', '--transactional', '--timestamp', '1700000000004');
  ok('append', partitionDir, '--abort', '--producer-id', '8', '--producer-epoch', '0', '--timestamp', '1700000000005');
}

const STOP =
  'payments-0: read_committed stops at the last stable offset 1: producer 7 (epoch 3) has a transaction open since offset 1 with no COMMIT or ABORT marker yet, ' +
  'and a read_committed consumer gets nothing at or after it until one is written (UnifiedLog, FetchIsolation.TXN_COMMITTED); 3 records at offsets 1..5 (data, not aborted) were not';

describe('read_committed stops at an open transaction and says so', () => {
  beforeAll(() => buildOpenTransactionPartition(dir), 60_000);

  it('klx export --format csv: 1 record written, the stop on stderr; the summary line unchanged', () => {
    const out = join(ld, 'rc.csv');
    const r = klx('export', dir, '--format', 'csv', '--out', out, '--isolation', 'read_committed');
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^exported 1 record from 1 partition to .*rc\.csv \(csv, \d+ bytes\)\n$/);
    expect(r.stderr).toBe(`klx: ${STOP} exported\n`);
    const lines = readFileSync(out, 'utf8').trimEnd().split('\n');
    expect(lines.length).toBe(2);
    expect(lines[1]!.split(',').slice(0, 3)).toEqual(['payments', '0', '0']);
  });

  it('klx export --json: lastStableStops in the summary', () => {
    const r = klx('export', dir, '--format', 'ndjson', '--out', join(ld, 'rc.ndjson'), '--isolation', 'read_committed', '--json');
    expect(r.status).toBe(0);
    const summary = JSON.parse(r.stdout);
    expect(summary.records).toBe(1);
    expect(summary.lastStableStops).toEqual([{ topic: 'payments', partition: 0, lastStableOffset: 1, openTransaction: { producerId: 7, producerEpoch: 3, firstOffset: 1 }, openTransactions: 1, recordsNotRead: 3, upTo: 6 }]);
  });

  it('read_uncommitted exports the 5 data records and the ABORT marker, and says nothing', () => {
    const r = klx('export', dir, '--format', 'ndjson', '--out', join(ld, 'ru.ndjson'), '--json');
    expect(r.stderr).toBe('');
    expect(JSON.parse(r.stdout)).toMatchObject({ records: 6, lastStableStops: [] });
  });

  it('klx fetch --isolation read_committed: the stop after the last line; JSON end object carries it', () => {
    const text = ok('fetch', dir, '--offset', 'earliest', '--isolation', 'read_committed').trimEnd().split('\n');
    expect(text).toEqual([
      'offset 0 ts 1700000000000 (2023-11-14T22:13:20.000Z) key: "a" value: "1"',
      '-- next offset 1 (end: nothing more to read); 1 records; last stable offset 1, log start offset 0, log end offset 6',
      `-- ${STOP} fetched`,
    ]);
    const end = JSON.parse(ok('fetch', dir, '--offset', 'earliest', '--isolation', 'read_committed', '--json').trimEnd().split('\n').at(-1)!);
    expect(end).toMatchObject({ type: 'end', lastStableOffset: 1, openTransaction: { producerId: 7, producerEpoch: 3, firstOffset: 1 }, recordsNotRead: 3, notReadUpTo: 6 });
  });

  it('once producer 7 commits, read_committed exports offsets 0..3 and the two markers (5, 6), with no stop', () => {
    const d2 = join(ld, 'committed', 'payments-0');
    buildOpenTransactionPartition(d2);
    ok('append', d2, '--commit', '--producer-id', '7', '--producer-epoch', '3', '--timestamp', '1700000000006');
    const r = klx('export', d2, '--format', 'ndjson', '--out', join(ld, 'committed.ndjson'), '--isolation', 'read_committed', '--json');
    expect(r.stderr).toBe('');
    expect(JSON.parse(r.stdout)).toMatchObject({ records: 6, lastStableStops: [] });
    const offsets = readFileSync(join(ld, 'committed.ndjson'), 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l).offset);
    expect(offsets).toEqual([0, 1, 2, 3, 5, 6]);
  }, 60_000);
});
