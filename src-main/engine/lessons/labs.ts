/**
 * The course labs, as data: for each lab, the partitions it writes (records, keys, timestamps,
 * explicit rolls), the cleaner run of each step (retention or compaction, the rule set, the clock
 * and the topic config), the question the step asks and the answer a broker gives. The lesson
 * builder (`lesson-builder.ts`) plays them into a fresh folder with the engine's writer, so every
 * roll, index entry and batch is what a broker would write (the writer follows UnifiedLog.append,
 * LogSegment.append and LocalLog.roll; each answer names the class of the rule it shows).
 *
 * Each record is appended as its own batch (a producer sending one record per request, as the
 * behaviour cases' notation has it). Timestamps are CreateTime in ms: the textbook lab uses the
 * small clock of the chapter (0, 50, 150, 250 …); the experiments start at {@link LAB_T0}
 * (2026-12-01 10:00:00 UTC) so the delete horizons read as dates.
 *
 * Where the labs and Kafka disagree, Kafka wins and the answer says so: a broker refuses keyless
 * records on a compacted topic (Kafka `LogValidator`, B07), so the textbook log with `event` is
 * written while the topic is `cleanup.policy=delete` and compacted with `cleanup.policy=compact`
 * given for the run; and a broker cleans a segment again only when dirty data follows it (Kafka
 * `LogCleanerManager`: the range starts at the cleaner checkpoint), so the second tombstone pass
 * of the textbook exercise first writes a filler record and rolls.
 */
import type { CleanerRulesName } from '../cleaner/cleaner-rules.ts';
import type { TopicConfig } from '../log/topic-config.ts';

/** 2026-12-01 10:00:00.000 UTC, the clock the experiments start at. */
export const LAB_T0 = Date.UTC(2026, 11, 1, 10, 0, 0);

/** One record to append (its own batch). */
export interface LabRecord {
  key: string | null;
  /** null: a tombstone. */
  value: string | null;
  /** CreateTime, ms. */
  ts: number;
}

/** A write of a lab step: a record, or an explicit roll of the active segment. */
export type LabWrite = LabRecord | 'roll';

/** What a step runs. */
export type LabRun =
  | { kind: 'compact'; now: number; rules: CleanerRulesName; config?: Partial<TopicConfig> }
  | { kind: 'retention'; now: number; config?: Partial<TopicConfig> }
  /** Nothing to run in the cleaner: the trainer answers with SQL (the SQL view or `klx query`). */
  | { kind: 'query'; sql: string[] };

/** One step of a lab. */
export interface LabStep {
  id: string;
  title: string;
  /** The partition the step works on: `<topic>-0` in the lesson's log dir. */
  topic: string;
  /** Topic config written when the partition is created (its first step). */
  config?: Partial<TopicConfig>;
  /** Written before the step is run (when the lesson arrives at it). */
  writes: LabWrite[];
  run: LabRun;
  /** The question the step asks. */
  question: string;
  /** What a broker does, with the figures (shown after the run). */
  answer: string;
}

/** A lab. */
export interface Lab {
  id: string;
  title: string;
  summary: string;
  steps: LabStep[];
}

const r = (key: string | null, value: string | null, ts: number): LabRecord => ({ key, value, ts });
const T = (ms: number) => LAB_T0 + ms;

/** The textbook chapter's lab (classic rules) and its exercises. */
const TEXTBOOK: Lab = {
  id: 'textbook',
  title: 'The textbook chapter: time retention and classic compaction',
  summary: 'Four one-record segments against retention.ms 100; a small compacted log under the classic rules; two exercises (segment maxima, a tombstone).',
  steps: [
    {
      id: 'retention',
      title: 'Time retention, retention.ms 100 at now 300',
      topic: 'textbook-retention',
      config: { 'cleanup.policy': ['delete'], 'retention.ms': 100n },
      writes: [r(null, 'r0', 0), 'roll', r(null, 'r1', 50), 'roll', r(null, 'r2', 150), 'roll', r(null, 'r3', 250)],
      run: { kind: 'retention', now: 300 },
      question: 'Four segments of one record each, newest timestamps 0, 50, 150 and 250 (the last is active). With retention.ms 100 at now 300, which segments go and where does the log start?',
      answer: 'Segments 0, 1 and 2 go (300, 250 and 150 ms old, each > 100); segment 3 (50 ms old) stays. The log start offset becomes 3 (UnifiedLog.deleteOldSegments).',
    },
    {
      id: 'compact',
      title: 'Classic compaction, delete.retention.ms 1000 at now 10',
      topic: 'textbook-compact',
      config: { 'cleanup.policy': ['delete'], 'delete.retention.ms': 1000n },
      writes: [r('a', '1', 0), r('b', 'x', 1), 'roll', r('a', '2', 2), r(null, 'event', 3), 'roll', r('active', 'keep', 4)],
      run: { kind: 'compact', now: 10, rules: 'classic', config: { 'cleanup.policy': ['compact'], 'delete.retention.ms': 1000n } },
      question: 'a=1@0, b=x@1 | a=2@2, event(no key)@3 | active=keep@4. Compact with the classic rules at now 10: which offsets survive?',
      answer: 'Offsets 1, 2, 3 and 4: a=1@0 is superseded by a=2@2; the classic rules keep the keyless event; the active segment is never cleaned. Kafka\'s rules would also drop event@3 (keyless, an invalid message), and a broker refuses keyless records on a compacted topic in the first place (LogValidator).',
    },
    {
      id: 'maxima',
      title: 'Exercise: segment maxima 250, 0, 0 at now 300',
      topic: 'exercise-maxima',
      config: { 'cleanup.policy': ['delete'], 'retention.ms': 100n },
      writes: [r(null, 'x', 250), 'roll', r(null, 'y', 0), 'roll', r(null, 'z', 0)],
      run: { kind: 'retention', now: 300 },
      question: 'Segment maxima 250, 0 and 0, retention.ms 100, now 300. What goes?',
      answer: 'Nothing: the oldest segment\'s newest record is only 50 ms old, and retention deletes a prefix of segments only, so the expired segments behind it stay (UnifiedLog.deletableSegments stops at the first that does not qualify).',
    },
    {
      id: 'tombstone-500',
      title: 'Exercise: a tombstone compacted at now 500',
      topic: 'exercise-tombstone',
      config: { 'cleanup.policy': ['compact'], 'delete.retention.ms': 1000n },
      writes: [r('a', '1', 0), r('a', null, 100), 'roll'],
      run: { kind: 'compact', now: 500, rules: 'classic' },
      question: 'a=1@ts0, a=null@ts100, delete.retention.ms 1000. Compacted at now 500: what is left?',
      answer: 'The tombstone a=null@1 only: a=1@0 is superseded, and the tombstone is 400 ms old, not above delete.retention.ms 1000.',
    },
    {
      id: 'tombstone-2000',
      title: 'Exercise: the same tombstone again at now 2000',
      topic: 'exercise-tombstone',
      writes: [r('filler', 'pad', 1500), 'roll'],
      run: { kind: 'compact', now: 2000, rules: 'classic' },
      question: 'Compacted again at now 2000 (a filler record was written and rolled first: a broker only cleans again when dirty data follows). Is the tombstone still there?',
      answer: 'No: it is 1900 ms old, above delete.retention.ms 1000, so the pass removes it; only filler=pad@2 is left. With Kafka\'s rules the first pass (500) wrote the delete horizon 1500 into its batch and this pass, past it, removes it too (Cleaner.shouldRetainRecord).',
    },
  ],
};

/** The ten-keys experiment. */
const TEN_KEYS: Lab = {
  id: 'ten-keys',
  title: 'Ten keys: supersession, a tombstone and its delete horizon',
  summary: 'k0–k9 with v1..v5 across two segments, a tombstone for k3, two compactions 27 s apart.',
  steps: [
    {
      id: 'first-clean',
      title: 'First compaction',
      topic: 'ten-keys',
      config: { 'cleanup.policy': ['compact'], 'segment.ms': 5000n, 'delete.retention.ms': 1000n, 'min.cleanable.dirty.ratio': 0.01 },
      writes: [
        ...Array.from({ length: 10 }, (_, i) => [r(`k${i}`, 'v1', T(0)), r(`k${i}`, 'v2', T(0)), r(`k${i}`, 'v3', T(0))]).flat(),
        ...Array.from({ length: 10 }, (_, i) => [r(`k${i}`, 'v4', T(7000)), r(`k${i}`, 'v5', T(7000))]).flat(),
        r('k3', null, T(7000)),
        r('roll', 'tail', T(14_000)),
      ],
      run: { kind: 'compact', now: T(14_000), rules: 'kafka' },
      question: 'Keys k0–k9 written v1, v2, v3, then 7 s later v4 and v5, a tombstone for k3, and 7 s later roll=tail (segment.ms 5000 rolled twice). Compact: which offsets survive, and until when does k3\'s tombstone stay?',
      answer: 'Offsets 31, 33, 35, 39, 41, 43, 45, 47, 49 (v5 of every key but k3), the tombstone at 50 and roll=tail at 51 (active). The tombstone gets the delete horizon 2026-12-01 10:00:15.000 (now + delete.retention.ms 1000), written into its batch (MemoryRecords.filterTo, Kafka 3.1+).',
    },
    {
      id: 'second-clean',
      title: 'Second compaction, 27 s later',
      topic: 'ten-keys',
      writes: [r('roll2', 'x', T(14_000)), r('roll3', 'y', T(21_000))],
      run: { kind: 'compact', now: T(41_000), rules: 'kafka' },
      question: 'roll2=x, 7 s later roll3=y (rolled), 20 s later compact again. What happens to the tombstone?',
      answer: 'Its horizon (10:00:15) has passed: the pass removes it (Cleaner.shouldRetainRecord). Left: the nine v5 records, roll=tail@51, roll2=x@52 and roll3=y@53 (active).',
    },
  ],
};

/** The five-writes experiment. */
const FIVE_WRITES: Lab = {
  id: 'five-writes',
  title: 'Five writes: what compaction keeps, then a tombstone',
  summary: 'k1 and k2 overwritten, compacted; then a tombstone for k1 and more writes, compacted again.',
  steps: [
    {
      id: 'first-clean',
      title: 'Compaction of five writes',
      topic: 'five-writes',
      config: { 'cleanup.policy': ['compact'], 'delete.retention.ms': 2000n },
      writes: [r('k1', 'v1', T(0)), r('k1', 'v2', T(1000)), r('k2', 'v3', T(2000)), r('k2', 'v4', T(3000)), r('k1', 'v5', T(4000)), 'roll', r('filler', 'pad', T(5000))],
      run: { kind: 'compact', now: T(6000), rules: 'kafka' },
      question: 'k1=v1, k1=v2, k2=v3, k2=v4, k1=v5, roll, filler=pad. Compact: which offsets are left?',
      answer: 'k2=v4@3 and k1=v5@4 in the cleaned segment, filler=pad@5 in the active one; 0, 1 and 2 are superseded. Offsets are never renumbered: the log now has a hole 0–2 (Cleaner.shouldRetainRecord keeps the latest offset per key).',
    },
    {
      id: 'second-clean',
      title: 'A tombstone for k1, more writes, compacted again',
      topic: 'five-writes',
      writes: [r('k1', null, T(6000)), r('filler2', 'pad', T(7000)), r('k2', 'v5', T(8000)), r('k2', 'v6', T(9000)), r('filler3', 'pad', T(10_000)), r('filler4', 'pad', T(11_000)), 'roll'],
      run: { kind: 'compact', now: T(12_000), rules: 'kafka' },
      question: 'A tombstone for k1, filler2, k2=v5, k2=v6, filler3, filler4, roll. Compact again: what is left, and is the tombstone gone?',
      answer: 'Offsets 5, 6, 7, 9, 10 and 11: k2=v4@3, k1=v5@4 and k2=v5@8 are superseded; the tombstone k1@6 stays until its delete horizon 2026-12-01 10:00:14.000 (now + delete.retention.ms 2000).',
    },
  ],
};

/** The time-retention lab. */
const TIME_RETENTION: Lab = {
  id: 'time-retention',
  title: 'Time retention with segment.ms',
  summary: 'Five records, a roll by segment.ms, retention.ms 5000.',
  steps: [
    {
      id: 'retention',
      title: 'Retention 8 s later',
      topic: 'time-retention',
      config: { 'cleanup.policy': ['delete'], 'retention.ms': 5000n, 'segment.ms': 2000n },
      writes: [...Array.from({ length: 5 }, (_, i) => r(`e${i}`, `v${i}`, T(0))), r('e5', 'v5', T(8000)), r('e6', 'v6', T(8000))],
      run: { kind: 'retention', now: T(8000) },
      question: 'retention.ms 5000, segment.ms 2000: five records, 8 s later two more (the first of them rolls the segment). Retention runs at that moment: what goes?',
      answer: 'Segment 0 (offsets 0–4, newest record 8 s old > 5 s) goes; the active segment 5 (offsets 5–6) stays; the log start offset becomes 5 (UnifiedLog.deleteRetentionMsBreachedSegments).',
    },
  ],
};

/** The latest-state SQL exercise. */
const LATEST_STATE: Lab = {
  id: 'latest-state',
  title: 'Latest state per key with SQL',
  summary: 'Six writes over three keys, one deleted: latest state, live keys and the history bounds.',
  steps: [
    {
      id: 'query',
      title: 'Latest state per key',
      topic: 'latest-state',
      config: { 'cleanup.policy': ['compact'] },
      writes: [r('17', 'alpha', T(0)), r('28', 'one', T(1000)), r('17', 'beta', T(2000)), r('28', null, T(3000)), r('17', 'gamma', T(4000)), r('39', 'two', T(5000))],
      run: {
        kind: 'query',
        sql: [
          'SELECT key_text, value_text, "offset" FROM latest ORDER BY key_text',
          'SELECT key_text, value_text FROM state ORDER BY key_text',
          'SELECT min("offset") AS first, max("offset") AS last, count(*) AS records FROM records',
        ],
      },
      question: '17=alpha@0, 28=one@1, 17=beta@2, 28=null@3, 17=gamma@4, 39=two@5. What is the latest state per key, which keys are live, and what history remains?',
      answer: 'Latest: 17=gamma@4, 28=null@3 (a tombstone), 39=two@5; live: 17 and 39; the history still runs from offset 0 to 5 (six records): all six are in the active segment, which the cleaner never touches (LogCleanerManager.cleanableOffsets), so the superseded ones stay until the segment rolls and a compaction runs.',
    },
  ],
};

/** Every lab, in course order. */
export const LABS: readonly Lab[] = [TEXTBOOK, TEN_KEYS, FIVE_WRITES, TIME_RETENTION, LATEST_STATE];

/** The lab of an id, or undefined. */
export function labById(id: string): Lab | undefined {
  return LABS.find((l) => l.id === id);
}
