/**
 * The course labs played by the lesson builder and checked against what a broker does: offsets
 * kept, segments deleted or rewritten, log start offsets, cleaner checkpoints and `.log` byte sizes.
 * Sizes are computed here from the record-batch format (spec §5: a v2 batch is a 61-byte header
 * plus its records; a record is a varint length, attributes, varlong timestamp delta, varint offset
 * delta, key and value as varint length + bytes, varint header count) and the cleaner rules of
 * Kafka's `Cleaner.shouldRetainRecord` / `UnifiedLog.deleteOldSegments`, not read from the tool.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../../support/log-builder.ts';
import { createLesson, lessonState, runLessonStep } from '../../../src-main/engine/lessons/lesson-builder.ts';
import { LAB_T0, LABS } from '../../../src-main/engine/lessons/labs.ts';
import { PartitionLog } from '../../../src-main/engine/log/partition-log.ts';
import { SqlSession } from '../../../src-main/engine/sql/sql-session.ts';
import { offsets, visibleRecords } from '../cleaner/support.ts';

/** Bytes of a zigzag varint/varlong. */
function varSize(n: number): number {
  let z = BigInt(n) >= 0n ? BigInt(n) * 2n : -BigInt(n) * 2n - 1n;
  let b = 1;
  while (z >= 128n) {
    z >>= 7n;
    b++;
  }
  return b;
}
/** Bytes of a single-record v2 batch (uncompressed, no headers). */
function batchSize(key: string | null, value: string | null, tsDelta = 0, offsetDelta = 0): number {
  const k = key === null ? varSize(-1) : varSize(key.length) + key.length;
  const v = value === null ? varSize(-1) : varSize(value.length) + value.length;
  const body = 1 + varSize(tsDelta) + varSize(offsetDelta) + k + v + varSize(0);
  return 61 + varSize(body) + body;
}
const T = (ms: number) => LAB_T0 + ms;
/** `.log` files of a partition: base offset → bytes. */
function logFiles(dir: string): [number, number][] {
  return readdirSync(dir)
    .filter((n) => n.endsWith('.log'))
    .sort()
    .map((n) => [Number(n.slice(0, 20)), statSync(join(dir, n)).size]);
}

describe('labs', () => {
  it('format arithmetic of this test: a keyless one-record batch with a 2-byte value is 70 bytes', () => {
    expect(batchSize(null, 'r0')).toBe(70);
    expect(batchSize('k3', null, -8000)).toBe(71);
  });

  it('textbook lab: retention 100 at now 300 deletes 0, 1, 2; classic compaction keeps 1, 2, 3, 4; maxima 250/0/0 delete nothing; the tombstone goes in the second pass', () => {
    const data = tempDir('klx-lessons-');
    let s = createLesson(data, 'textbook');
    expect(s.step!.id).toBe('retention');
    expect(logFiles(s.partitionDir!)).toEqual([0, 1, 2, 3].map((b) => [b, batchSize(null, `r${b}`)]));
    let r = runLessonStep(data, 'textbook', { explain: {} });
    let rep = r.outcome!.partitions[0]!.report!;
    expect(rep.segments.deleted.map((x) => [Number(x.baseOffset), x.bytes])).toEqual([0, 1, 2].map((b) => [b, batchSize(null, `r${b}`)]));
    expect(rep.log.logStartOffsetAfter).toBe(3n);
    expect(rep.log.bytesAfter).toBe(batchSize(null, 'r3'));
    expect(rep.decisions!.rows.map((d) => [Number(d.offset), d.decision, d.reason])).toEqual([
      [0, 'remove', 'retention-time'],
      [1, 'remove', 'retention-time'],
      [2, 'remove', 'retention-time'],
      [3, 'keep', 'prefix-stop'],
    ]);
    expect(rep.decisions!.rows[3]!.evidence).toBe('prefix stops at segment 3: time retention: max timestamp t=250 ms is 50 ms old > retention.ms 100 (100 ms)? no');
    expect(offsets(join(s.logDir, 'textbook-retention-0'))).toEqual([3]);

    // The compacted log: a=1@0, b=x@1 | a=2@2, event@3 | active=keep@4, classic rules at now 10.
    s = r.state;
    expect(s.step!.id).toBe('compact');
    const cdir = s.partitionDir!;
    expect(logFiles(cdir)).toEqual([
      [0, batchSize('a', '1') + batchSize('b', 'x')],
      [2, batchSize('a', '2') + batchSize(null, 'event')],
      [4, batchSize('active', 'keep')],
    ]);
    // Side by side: the kafka rules on the same log would also drop the keyless event@3.
    const kafka = runLessonStep(data, 'textbook', { dryRun: true, rules: 'kafka' }).outcome!.partitions[0]!.report!;
    expect(kafka.removed.keyless?.ranges).toEqual([{ first: 3n, last: 3n }]);
    r = runLessonStep(data, 'textbook');
    rep = r.outcome!.partitions[0]!.report!;
    expect(offsets(cdir)).toEqual([1, 2, 3, 4]);
    expect(rep.removed.superseded?.ranges).toEqual([{ first: 0n, last: 0n }]);
    expect(rep.removed.keyless).toBeUndefined();
    expect(logFiles(cdir)).toEqual([
      [0, batchSize('b', 'x') + batchSize('a', '2') + batchSize(null, 'event')],
      [4, batchSize('active', 'keep')],
    ]);

    // Maxima 250, 0, 0 at now 300: the prefix stops at the first segment, nothing goes.
    s = r.state;
    r = runLessonStep(data, 'textbook', { explain: {} });
    rep = r.outcome!.partitions[0]!.report!;
    expect(rep.segments.deleted).toEqual([]);
    expect(rep.log.logStartOffsetAfter).toBe(0n);
    expect(rep.decisions!.rows.map((d) => [Number(d.offset), d.reason])).toEqual([[0, 'prefix-stop'], [1, 'after-prefix'], [2, 'after-prefix']]);

    // The tombstone a=1@ts0, a=null@ts100 at now 500 (classic): a=1 superseded, the tombstone (400 ms old) stays.
    s = r.state;
    const tdir = s.partitionDir!;
    r = runLessonStep(data, 'textbook', { explain: {} });
    rep = r.outcome!.partitions[0]!.report!;
    // The run left the tombstone alone in segment 0; the next step's writes (filler=pad@2, roll) follow.
    expect(rep.segments.created.map((x) => [Number(x.baseOffset), x.bytes])).toEqual([[0, batchSize('a', null)]]);
    expect(rep.retained).toEqual([{ first: 1n, last: 1n }]);
    expect(logFiles(tdir)).toEqual([[0, batchSize('a', null)], [2, batchSize('filler', 'pad')], [3, 0]]);
    expect(rep.decisions!.rows.filter((d) => d.subject === 'record').map((d) => d.evidence)).toEqual([
      'superseded by offset 1 (key a)',
      'tombstone kept: now − its timestamp = 400 ms, not above delete.retention.ms 1000 (classic rules)',
    ]);
    // Again at 2000, after filler=pad@2 and a roll: the tombstone (1900 ms old) goes.
    expect(r.state.step!.id).toBe('tombstone-2000');
    expect(offsets(tdir)).toEqual([1, 2]);
    r = runLessonStep(data, 'textbook', { explain: {} });
    expect(offsets(tdir)).toEqual([2]);
    expect(logFiles(tdir)).toEqual([[0, batchSize('filler', 'pad')], [3, 0]]);
    expect(r.state.step).toBeNull();
    expect(lessonState(data, 'textbook')!.next).toBe(5);
  });

  it('ten-keys: the first clean keeps the nine v5s, the tombstone with horizon T0+15 s and roll=tail; the second, past the horizon, drops the tombstone', () => {
    const data = tempDir('klx-lessons-');
    const s = createLesson(data, 'ten-keys');
    const dir = s.partitionDir!;
    // segment.ms 5000 rolled at 30 (7 s later) and 51 (7 s later again).
    expect(logFiles(dir).map((x) => x[0])).toEqual([0, 30, 51]);
    let r = runLessonStep(data, 'ten-keys', { explain: {} });
    const rep = r.outcome!.partitions[0]!.report!;
    const v5 = [31, 33, 35, 39, 41, 43, 45, 47, 49];
    expect(rep.retained.flatMap((x) => Array.from({ length: Number(x.last - x.first) + 1 }, (_, i) => Number(x.first) + i))).toEqual([...v5, 50]);
    expect(rep.removed.superseded?.records).toBe(41); // 30 of segment 0, the ten v4s and k3=v5
    const horizon = T(15_000);
    // The tombstone batch is rebuilt with baseTimestamp = the horizon: its timestamp delta is 7000 − 15000.
    expect(rep.segments.created.map((x) => [Number(x.baseOffset), x.bytes])).toEqual([[0, 9 * batchSize('k0', 'v5') + batchSize('k3', null, 7000 - 15_000)]]);
    expect(PartitionLog.open(dir).cleanerCheckpoint).toBe(51n);
    expect(rep.decisions!.rows.find((d) => d.offset === 50n && d.subject === 'record')!.evidence).toBe(
      `tombstone kept until its delete horizon 2026-12-01 10:00:15.000 (first cleaned now at 2026-12-01 10:00:14.000, delete.retention.ms 1000: the horizon is written into its batch)`,
    );
    expect(horizon).toBe(Date.parse('2026-12-01T10:00:15.000Z'));
    // roll2=x joins segment 51 (same timestamp), roll3=y 7 s later rolls 53.
    expect(logFiles(dir)).toEqual([[0, 9 * batchSize('k0', 'v5') + batchSize('k3', null, 7000 - 15_000)], [51, batchSize('roll', 'tail') + batchSize('roll2', 'x')], [53, batchSize('roll3', 'y')]]);
    expect(offsets(dir)).toEqual([...v5, 50, 51, 52, 53]);
    r = runLessonStep(data, 'ten-keys', { explain: {} });
    expect(offsets(dir)).toEqual([...v5, 51, 52, 53]);
    expect(r.outcome!.partitions[0]!.report!.removed.tombstone?.ranges).toEqual([{ first: 50n, last: 50n }]);
    expect(logFiles(dir)).toEqual([[0, 9 * batchSize('k0', 'v5') + batchSize('roll', 'tail') + batchSize('roll2', 'x')], [53, batchSize('roll3', 'y')]]);
    expect(visibleRecords(dir).find((x) => x.offset === 50)).toBeUndefined();
  });

  it('five-writes: 3 and 4 survive the first clean; after the tombstone 5, 6, 7, 9, 10, 11 are left with the tombstone kept until T0+14 s', () => {
    const data = tempDir('klx-lessons-');
    const s = createLesson(data, 'five-writes');
    const dir = s.partitionDir!;
    const first = runLessonStep(data, 'five-writes').outcome!.partitions[0]!.report!;
    expect(first.retained).toEqual([{ first: 3n, last: 4n }]);
    expect(first.removed.superseded?.ranges).toEqual([{ first: 0n, last: 2n }]);
    // The next step's writes land in the active segment 5, then the explicit roll starts 12.
    expect(offsets(dir)).toEqual([3, 4, 5, 6, 7, 8, 9, 10, 11]);
    expect(logFiles(dir)).toEqual([[0, batchSize('k2', 'v4') + batchSize('k1', 'v5')], [5, batchSize('filler', 'pad') + sumWrites()], [12, 0]]);
    const r = runLessonStep(data, 'five-writes', { explain: {} });
    expect(offsets(dir)).toEqual([5, 6, 7, 9, 10, 11]);
    expect(logFiles(dir)).toEqual([
      [0, batchSize('filler', 'pad') + batchSize('k1', null, 6000 - 14_000) + batchSize('filler2', 'pad') + batchSize('k2', 'v6') + batchSize('filler3', 'pad') + batchSize('filler4', 'pad')],
      [12, 0],
    ]);
    const rows = r.outcome!.partitions[0]!.report!.decisions!.rows.filter((d) => d.subject === 'record');
    expect(rows.map((d) => [Number(d.offset), d.decision, d.reason])).toEqual([
      [3, 'remove', 'superseded'],
      [4, 'remove', 'superseded'],
      [5, 'keep', 'latest-for-key'],
      [6, 'keep', 'tombstone-until-horizon'],
      [7, 'keep', 'latest-for-key'],
      [8, 'remove', 'superseded'],
      [9, 'keep', 'latest-for-key'],
      [10, 'keep', 'latest-for-key'],
      [11, 'keep', 'latest-for-key'],
    ]);
    expect(rows[6 - 3]!.evidence).toMatch(/until its delete horizon 2026-12-01 10:00:14\.000/);
    /** The second step's writes land in the active segment 5 (no roll before the explicit one). */
    function sumWrites(): number {
      return batchSize('k1', null) + batchSize('filler2', 'pad') + batchSize('k2', 'v5') + batchSize('k2', 'v6') + batchSize('filler3', 'pad') + batchSize('filler4', 'pad');
    }
  });

  it('time retention: segment.ms 2000 rolls at offset 5; retention.ms 5000 at T0+8 s deletes segment 0 (5 records), log start 5', () => {
    const data = tempDir('klx-lessons-');
    const s = createLesson(data, 'time-retention');
    const dir = s.partitionDir!;
    const seg0 = [0, 1, 2, 3, 4].reduce((a, i) => a + batchSize(`e${i}`, `v${i}`), 0);
    expect(logFiles(dir)).toEqual([[0, seg0], [5, batchSize('e5', 'v5') + batchSize('e6', 'v6')]]);
    const rep = runLessonStep(data, 'time-retention').outcome!.partitions[0]!.report!;
    expect(rep.segments.deleted.map((x) => [Number(x.baseOffset), x.bytes, x.records])).toEqual([[0, seg0, 5]]);
    expect(rep.log.logStartOffsetAfter).toBe(5n);
    expect(PartitionLog.open(dir).logStartOffset).toBe(5n);
    expect(offsets(dir)).toEqual([5, 6]);
  });

  it('latest-state: the lab\'s SQL gives 17=gamma@4, 28=null@3, 39=two@5; live 17 and 39; history 0..5 (6 records)', async () => {
    const data = tempDir('klx-lessons-');
    const s = createLesson(data, 'latest-state');
    const run = s.step!.run;
    if (run.kind !== 'query') throw new Error('a query step');
    const sql = await SqlSession.open(s.partitionDir!, { cacheDir: tempDir('klx-sql-cache-') });
    try {
      const latest = await sql.query(run.sql[0]!);
      expect(latest.rows).toEqual([['17', 'gamma', 4n], ['28', null, 3n], ['39', 'two', 5n]]);
      const state = await sql.query(run.sql[1]!);
      expect(state.rows).toEqual([['17', 'gamma'], ['39', 'two']]);
      const bounds = await sql.query(run.sql[2]!);
      expect(bounds.rows).toEqual([[0n, 5n, 6n]]);
    } finally {
      sql.close();
    }
    const r = runLessonStep(data, 'latest-state');
    expect(r.outcome).toBeNull();
    expect(r.state.step).toBeNull();
  });

  it('reset: createLesson deletes the lesson folder and starts again at the first step; every lab has a question and an answer', () => {
    const data = tempDir('klx-lessons-');
    createLesson(data, 'five-writes');
    runLessonStep(data, 'five-writes');
    expect(lessonState(data, 'five-writes')!.next).toBe(1);
    const again = createLesson(data, 'five-writes');
    expect(again.next).toBe(0);
    expect(offsets(again.partitionDir!)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(existsSync(join(again.dir, 'trash'))).toBe(true);
    expect(() => createLesson(data, 'nope')).toThrow(/no lab "nope"/);
    for (const lab of LABS) for (const st of lab.steps) expect(st.question.length > 20 && st.answer.length > 20).toBe(true);
  });
});
