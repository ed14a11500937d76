/**
 * Wire types of the `groups.*` API (consumer groups loaded from `__consumer_offsets`, issue 12):
 * the group list, a group's offsets with the `kafka-consumer-groups.sh --describe` columns plus
 * record lag, next offset, diagnosis and expiry, its members, and a partition's commit history.
 * int64 values travel as decimal strings. No Node or DOM imports.
 */
import { z } from 'zod';
import { count, int64, pathText } from './wire.ts';

/** The diagnoses of a committed offset (engine `engine/groups/group-offsets.ts`). */
export const GROUP_DIAGNOSES = ['ok', 'below-log-start', 'beyond-log-end', 'in-hole', 'partition-not-opened', 'no-commit'] as const;
export const groupDiagnosis = z.enum(GROUP_DIAGNOSES);
export type GroupDiagnosis = z.infer<typeof groupDiagnosis>;

/** What each diagnosis means for the consumer, in one sentence. */
export const GROUP_DIAGNOSIS_TEXT: Readonly<Record<GroupDiagnosis, string>> = {
  ok: 'A record (or the log end) is at the committed offset: the consumer continues there.',
  'below-log-start': 'The committed offset was deleted by retention or DeleteRecords: the consumer resets per auto.offset.reset.',
  'beyond-log-end': 'The committed offset is past the log end (unclean leader election, restored backup): the consumer resets per auto.offset.reset.',
  'in-hole': 'No record at the committed offset (compacted away, or a gap): legitimate, the consumer continues at the next offset holding a record.',
  'partition-not-opened': 'The partition folder is not among the opened ones: lag and position unknown.',
  'no-commit': 'Assigned to a member but nothing committed: the consumer starts per auto.offset.reset.',
};

export const groupType = z.enum(['classic', 'consumer', 'share', 'streams', 'simple']);
export const isolationLevel = z.enum(['read_uncommitted', 'read_committed']);

/** A record of `__consumer_offsets` that could not be read. */
export const groupProblem = z.object({ file: z.string(), position: count, offset: int64, reason: z.string() });

/** One group of the list. */
export const groupSummary = z.object({
  group: z.string(),
  type: groupType,
  protocolType: z.string().nullable(),
  protocol: z.string().nullable(),
  state: z.string(),
  generation: z.number().int().nullable(),
  members: count,
  topics: z.array(z.string()),
  /** Σ positive lag of the non-expired offsets. */
  totalLag: int64,
  totalRecordLag: count,
  partitions: count,
  expiredOffsets: count,
  offsetsPartition: count,
  offsetsPartitionMissing: z.boolean(),
  problems: z.array(groupProblem),
  /** The record at which a broker's coordinator fails to load the group's __consumer_offsets partition (CoordinatorLoaderImpl), with the sentence saying so; null when it loads. */
  offsetsPartitionLoadFailure: groupProblem.extend({ text: z.string() }).nullable(),
  pendingTransactionalProducers: z.array(z.string()),
});

/** One row of a group's offsets. */
export const groupOffsetRow = z.object({
  group: z.string(),
  topic: z.string(),
  partition: count,
  committedOffset: int64.nullable(),
  leaderEpoch: z.number().int().nullable(),
  metadata: z.string().nullable(),
  commitTimestamp: int64.nullable(),
  expireTimestamp: int64.nullable(),
  expiresAt: int64.nullable(),
  expired: z.boolean(),
  transactional: z.boolean(),
  logStartOffset: int64.nullable(),
  logEndOffset: int64.nullable(),
  highWatermark: int64.nullable(),
  lastStableOffset: int64.nullable(),
  lag: int64.nullable(),
  recordLag: count.nullable(),
  nextOffset: int64.nullable(),
  diagnosis: groupDiagnosis,
  detail: z.string(),
  consumerId: z.string().nullable(),
  host: z.string().nullable(),
  clientId: z.string().nullable(),
  /** The partition folder, when opened (for links to its records). */
  dir: z.string().nullable(),
});

/** A member of a group. */
export const groupMemberRow = z.object({
  memberId: z.string(),
  groupInstanceId: z.string().nullable(),
  clientId: z.string(),
  host: z.string(),
  sessionTimeoutMs: z.number().int().nullable(),
  rebalanceTimeoutMs: z.number().int().nullable(),
  memberEpoch: z.number().int().nullable(),
  subscribedTopics: z.array(z.string()).nullable(),
  assignment: z.array(z.string()),
});

/** The `__consumer_offsets` layout found. */
export const offsetsTopicLayout = z.object({
  numPartitions: count,
  numPartitionsAssumed: z.boolean(),
  present: z.array(count),
  absent: z.array(count),
});

/** Options shared by the groups requests. */
export const groupsOptions = {
  /** An opened folder (or a folder inside one). */
  path: pathText,
  /** "Now" for offset expiry, ms since the epoch (default: the clock). */
  now: int64.optional(),
  isolation: isolationLevel.default('read_uncommitted'),
  /** offsets.topic.num.partitions (default 50). */
  offsetsPartitions: z.number().int().min(1).max(100_000).optional(),
  /** offsets.retention.minutes (default 10080). */
  retentionMinutes: z.number().int().min(0).max(1e9).optional(),
};

/** Result of `groups.list`. */
export const groupsListResult = z.object({
  root: z.string(),
  groups: z.array(groupSummary),
  offsetsTopic: offsetsTopicLayout,
  /** Records whose group is unknown (the key did not decode), damaged batches. */
  problems: z.array(groupProblem),
  now: int64,
  offsetsRetentionMs: int64,
  isolation: isolationLevel,
  /** `__consumer_offsets` records read. */
  records: count,
  elapsedMs: z.number(),
});

/** Result of `groups.describe`. */
export const groupDescribeResult = z.object({
  summary: groupSummary,
  offsets: z.array(groupOffsetRow),
  members: z.array(groupMemberRow),
});

/** One point of a commit history. */
export const commitPoint = z.object({
  recordOffset: int64,
  timestamp: int64,
  committedOffset: int64.nullable(),
  transaction: z.enum(['none', 'committed', 'aborted', 'pending']),
});

/** Result of `groups.history`. */
export const commitHistoryResult = z.object({
  group: z.string(),
  topic: z.string(),
  partition: count,
  offsetsPartition: count,
  points: z.array(commitPoint),
  total: count,
  thinned: z.boolean(),
  logStartOffset: int64.nullable(),
  logEndOffset: int64.nullable(),
});

/** Committed offsets of every group in one partition (for the hole map's marks). */
export const partitionCommitsResult = z.object({
  commits: z.array(z.object({ group: z.string(), committedOffset: int64, diagnosis: groupDiagnosis, expired: z.boolean() })),
});

export type GroupSummary = z.infer<typeof groupSummary>;
export type GroupOffsetRow = z.infer<typeof groupOffsetRow>;
export type GroupMemberRow = z.infer<typeof groupMemberRow>;
export type GroupsListResult = z.infer<typeof groupsListResult>;
export type GroupDescribeResult = z.infer<typeof groupDescribeResult>;
export type CommitHistoryResult = z.infer<typeof commitHistoryResult>;
export type PartitionCommitsResult = z.infer<typeof partitionCommitsResult>;
