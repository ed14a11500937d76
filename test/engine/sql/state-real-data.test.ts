/**
 * On broker-written data (read in place): `latest` and `state` equal, key by key, what the engine
 * computes by reading each partition the way a consumer does (`fetch` from logStartOffset to the log
 * end, control records and aborted data left out, the last record of each key kept). First on the
 * compacted __consumer_offsets partitions of kafka-2.7.1-compacted-offsets (with their known
 * offsets), then on every __consumer_offsets partition of every data set. Also: the record and
 * batch counts of every data set equal the independent decoder's EXPECTED.jsonl.
 */
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { allPartitions, openPath } from '../../../src-main/engine/log/log-dir.ts';
import type { PartitionLog } from '../../../src-main/engine/log/partition-log.ts';
import type { SqlSession } from '../../../src-main/engine/sql/sql-session.ts';
import { describeRealData, expectedBatches, REAL_DATA, realDataCases } from '../../support/real-data.ts';
import { openSql, rows } from './sql-test-helpers.ts';
import { engineLatest, hex } from '../../support/latest-state.ts';

/** key hex → [offset, value hex or null]: the engine's latest state (see `test/support/latest-state.ts`). */
async function engineLatestHex(log: PartitionLog): Promise<Map<string, [bigint, string | null]>> {
  return new Map([...(await engineLatest(log))].map(([k, [o, v]]) => [k, [o, hex(v)]]));
}

/** Same shape from the SQL view `latest` (or `state`) for one partition folder. */
async function sqlLatest(s: SqlSession, view: 'latest' | 'state', dir: string): Promise<Map<string, [bigint, string | null]>> {
  const rs = await rows(s, `SELECT v.key, v."offset", v.value, v.value_truncated FROM ${view} v JOIN partitions p USING (partition_id) WHERE p.dir = '${dir.replaceAll("'", "''")}'`);
  const out = new Map<string, [bigint, string | null]>();
  for (const r of rs) {
    expect(r.value_truncated).toBe(false);
    out.set(hex(r.key as Uint8Array)!, [r.offset as bigint, hex(r.value as Uint8Array | null)]);
  }
  return out;
}

async function compareConsumerOffsets(caseName: string): Promise<{ partitions: number; keys: number; live: number }> {
  const root = join(REAL_DATA, caseName);
  const s = await openSql(root);
  let partitions = 0;
  let keys = 0;
  let live = 0;
  for (const { rel, log } of allPartitions(openPath(root))) {
    if (log.topic !== '__consumer_offsets') continue;
    const engine = await engineLatestHex(log);
    expect(await sqlLatest(s, 'latest', rel), `${caseName}/${rel} latest`).toEqual(engine);
    const engineState = new Map([...engine].filter(([, [, v]]) => v !== null));
    expect(await sqlLatest(s, 'state', rel), `${caseName}/${rel} state`).toEqual(engineState);
    partitions++;
    keys += engine.size;
    live += engineState.size;
  }
  return { partitions, keys, live };
}

describeRealData('SQL latest/state equal the engine\'s key-by-key latest state', () => {
  it('kafka-2.7.1-compacted-offsets: the compacted __consumer_offsets partitions', async () => {
    const s = await openSql(join(REAL_DATA, 'kafka-2.7.1-compacted-offsets'));
    // What the cleaner left (PROVENANCE.md): partition 39 starts with a tombstone at 4, then 16, 17; a second segment at 18.
    expect(await rows(s, `SELECT "offset", is_tombstone, segment_base_offset FROM records WHERE "partition" = 39 ORDER BY 1`)).toEqual([
      { offset: 4n, is_tombstone: true, segment_base_offset: 0n },
      { offset: 16n, is_tombstone: false, segment_base_offset: 0n },
      { offset: 17n, is_tombstone: false, segment_base_offset: 0n },
      { offset: 18n, is_tombstone: true, segment_base_offset: 18n },
      { offset: 19n, is_tombstone: true, segment_base_offset: 18n },
    ]);
    expect(await rows(s, `SELECT "partition", list("offset" ORDER BY "offset") AS offsets FROM latest GROUP BY 1 ORDER BY 1`)).toEqual([
      { partition: 8, offsets: [2n] },
      { partition: 17, offsets: [2n] },
      { partition: 28, offsets: [2n] },
      { partition: 33, offsets: [2n] },
      { partition: 39, offsets: [4n, 18n, 19n] },
    ]);
    // Every group's offsets were committed then deleted (tombstones): nothing is live.
    expect(await rows(s, 'SELECT count(*) AS n FROM state')).toEqual([{ n: 0n }]);
    expect(await rows(s, `SELECT "partition", cleaner_checkpoint FROM partitions WHERE cleaner_checkpoint IS NOT NULL ORDER BY 1`)).toEqual([
      { partition: 17, cleaner_checkpoint: 1n },
      { partition: 28, cleaner_checkpoint: 2n },
      { partition: 39, cleaner_checkpoint: 18n },
    ]);
    const r = await compareConsumerOffsets('kafka-2.7.1-compacted-offsets');
    expect(r).toEqual({ partitions: 50, keys: 7, live: 0 });
  });

  // Partitions, keys in latest, keys in state (live), per data set holding __consumer_offsets.
  const totals: Record<string, { partitions: number; keys: number; live: number }> = {
    'cp-5.1-lz4-connect': { partitions: 50, keys: 23, live: 22 },
    'gzip-mixed-bitnami': { partitions: 50, keys: 2, live: 2 },
    'kafka-0.10.1-magic1': { partitions: 50, keys: 2, live: 2 },
    'kafka-2.8.0-snappy': { partitions: 50, keys: 3, live: 3 },
    'retention-log-start': { partitions: 50, keys: 32, live: 11 },
  };
  for (const [c, expected] of Object.entries(totals)) {
    it(`${c}: every __consumer_offsets partition`, async () => {
      expect(await compareConsumerOffsets(c)).toEqual(expected);
    });
  }

  for (const c of realDataCases()) {
    it(`${c}: records and batches counts equal EXPECTED.jsonl`, async () => {
      const expected = expectedBatches(c);
      const s = await openSql(join(REAL_DATA, c));
      const records = expected.reduce((n, b) => n + (b.records as unknown[]).length, 0);
      expect(await rows(s, 'SELECT (SELECT count(*) FROM records) AS records, (SELECT count(*) FROM batches) AS batches, (SELECT count(*) FROM damage) AS damage')).toEqual([
        { records: BigInt(records), batches: BigInt(expected.length), damage: 0n },
      ]);
    });
  }
});
