/**
 * What `kafka-consumer-groups.sh --describe` (ConsumerGroupCommand) would say of each loaded group, answered from the files,
 * plus what it cannot say: the records actually left to read, where each consumer will restart, and
 * whether its committed offset has expired.
 *
 * - Group state as the coordinator computes it after loading: classic groups are Empty without members
 *   and Stable with them (`GroupMetadataManager.replay(GroupMetadataKey…)`); KIP-848 consumer groups
 *   Empty / Assigning / Reconciling / Stable (`ConsumerGroup.maybeUpdateGroupState`); share groups
 *   Empty / Stable (`ShareGroup.maybeUpdateGroupState`); offset-only ("simple") groups Empty.
 * - Offset expiry at a settable `now` (`OffsetMetadataManager.cleanupExpiredOffsets` with the group's
 *   `offsetExpirationCondition()` and `OffsetExpirationConditionImpl`): a v1 value's expireTimestamp
 *   when set; otherwise `offsets.retention.minutes` counted from the commit, or for an Empty classic
 *   group from when it became Empty (currentStateTimestamp, v2+ values), never for topics the group
 *   is still subscribed to, nor for non-empty classic groups other than Stable consumer-protocol ones.
 * - `lag` = high watermark − committed offset: kafka-consumer-groups.sh's LAG (`ConsumerGroupCommand`
 *   asks ListOffsets for the latest offset with read_uncommitted, and `Partition.fetchOffsetForTimestamp`
 *   answers a client with the high watermark, not the log end offset). The high watermark is
 *   `replication-offset-checkpoint`'s, clamped to [logStartOffset, logEndOffset] as
 *   `UnifiedLog.updateHighWatermark` does (`lastFetchableOffset` in time-lookup.ts); without an entry
 *   the log end offset stands in. `recordLag` counts records (see partition-positions.ts) up to that
 *   high watermark, where a consumer's fetches end, or to the last stable offset with
 *   `isolation: 'read_committed'`.
 * - `diagnosis`: `ok`, `below-log-start`, `beyond-log-end`, `in-hole`, `partition-not-opened`,
 *   `no-commit` (a partition assigned to a member without a committed offset).
 */
import type { LongReadOptions } from '../log/log-walk.ts';
import { walkLog } from '../log/log-walk.ts';
import type { PartitionLog } from '../log/partition-log.ts';
import { loadTransactionState } from '../log/transactions.ts';
import { lastFetchableOffset } from '../log/time-lookup.ts';
import type { CommittedOffset, LoadedGroup } from './group-replay.ts';
import { offsetKey } from './group-replay.ts';
import { partitionKey, type LoadedGroups } from './groups-load.ts';
import { DEFAULT_OFFSETS_RETENTION_MS, offsetsPartitionFor } from './offsets-topic.ts';
import { KlxError } from '../errors.ts';
import { positionsIn } from './partition-positions.ts';

/** The diagnoses of a committed offset. */
export const DIAGNOSES = ['ok', 'below-log-start', 'beyond-log-end', 'in-hole', 'partition-not-opened', 'no-commit'] as const;
export type Diagnosis = (typeof DIAGNOSES)[number];

/** Isolation level of the consumers whose record lag is counted. */
export type IsolationLevel = 'read_uncommitted' | 'read_committed';

/** Options of {@link describeGroups}. */
export interface DescribeOptions extends LongReadOptions {
  /** Only this group. */
  group?: string;
  /** "Now" for expiry (ms since the epoch); default the clock. */
  now?: bigint;
  /** offsets.retention.minutes in ms; default 10080 minutes. */
  offsetsRetentionMs?: bigint;
  /** Default read_uncommitted (the consumer default): record lag up to the high watermark. */
  isolation?: IsolationLevel;
  /** Only the rows of this topic-partition (lag computed for it alone; summaries then count only those rows). */
  only?: { topic: string; partition: number };
}

/** One row: a group's committed offset (or an assigned partition without one). Offsets are int64. */
export interface GroupOffsetRow {
  group: string;
  topic: string;
  partition: number;
  /** Null for `no-commit`. */
  committedOffset: bigint | null;
  leaderEpoch: number | null;
  metadata: string | null;
  /** ms */
  commitTimestamp: bigint | null;
  /** ms: the v1 value's own expire timestamp, when set. */
  expireTimestamp: bigint | null;
  /** When the coordinator would expire it (ms), or null while it cannot (group active, subscribed, …: OffsetMetadataManager.cleanupExpiredOffsets). */
  expiresAt: bigint | null;
  /** Expired at `now`: the coordinator would have deleted it (OffsetExpirationConditionImpl; the consumer then resets per auto.offset.reset). */
  expired: boolean;
  /** Committed through a transaction (TxnOffsetCommit). */
  transactional: boolean;
  logStartOffset: bigint | null;
  logEndOffset: bigint | null;
  /** As a broker loads it (UnifiedLog.updateHighWatermark): replication-offset-checkpoint's entry clamped to [logStartOffset, logEndOffset]; null without an entry. */
  highWatermark: bigint | null;
  /** At most the high watermark (UnifiedLog.lastStableOffset). */
  lastStableOffset: bigint | null;
  /** highWatermark (logEndOffset when unknown) − committedOffset, kafka-consumer-groups.sh's LAG; null when unknown. */
  lag: bigint | null;
  /** Records left to read (see the module comment); null when the partition is not opened or the offset is out of range. */
  recordLag: number | null;
  /** Where the consumer continues: the first offset holding a record it returns at or after the committed one (CompletedFetch.nextFetchedRecord). */
  nextOffset: bigint | null;
  diagnosis: Diagnosis;
  /** A sentence saying why, and what a consumer does about it (the texts name the Kafka classes). */
  detail: string;
  /** The member the partition is assigned to (classic: assignment; KIP-848: current assignment). */
  consumerId: string | null;
  host: string | null;
  clientId: string | null;
  /** Where the commit record is in `__consumer_offsets`. */
  commitRecord: { offsetsPartition: number; file: string; position: number; offset: bigint } | null;
}

/** One group of the list. */
export interface GroupSummary {
  group: string;
  type: LoadedGroup['type'];
  /** Classic groups: the protocol type ("consumer", "connect", …); else null. */
  protocolType: string | null;
  /** Classic: protocol (assignor) name; KIP-848: the server assignor of the first member. */
  protocol: string | null;
  state: string;
  /** Classic generation or KIP-848 group epoch. */
  generation: number | null;
  members: number;
  topics: string[];
  /** Sum of the rows' lag where known and positive. */
  totalLag: bigint;
  totalRecordLag: number;
  partitions: number;
  expiredOffsets: number;
  /** `__consumer_offsets` partition the group belongs to (by its id's hash). */
  offsetsPartition: number;
  /** That partition's folder is not among the opened ones (what is listed may be incomplete). */
  offsetsPartitionMissing: boolean;
  /** Problems of records of this group (file, position, offset, reason). */
  problems: { file: string; position: number; offset: bigint; reason: string }[];
  /**
   * The record of the group's `__consumer_offsets` partition at which a broker's group coordinator fails to
   * load that partition (a key or value it cannot deserialize, which need not be this group's), with
   * {@link loadFailureText}'s sentence; null when the partition loads. While it fails, no coordinator
   * serves this group (nor any group of that partition): what is listed is this tool's reading of the
   * records it could read (CoordinatorLoaderImpl).
   */
  offsetsPartitionLoadFailure: { file: string; position: number; offset: bigint; reason: string; text: string } | null;
  pendingTransactionalProducers: string[];
}

/**
 * What a broker does with a `__consumer_offsets` partition holding a record its coordinator cannot
 * deserialize: `a broker would fail to load __consumer_offsets-7: the record at offset 12 does not
 * deserialize (…); the group coordinator stops loading there (CoordinatorLoaderImpl; 3.x
 * GroupMetadataManager.loadGroupsAndOffsets), so no group of that partition is served`.
 */
export function loadFailureText(offsetsPartition: number, p: { offset: bigint; reason: string }): string {
  return (
    `a broker would fail to load __consumer_offsets-${offsetsPartition}: the record at offset ${p.offset} does not deserialize (${p.reason}); ` +
    'the group coordinator stops loading there (CoordinatorLoaderImpl rethrows what GroupCoordinatorRecordSerde throws, skipping only unknown record types; 3.x GroupMetadataManager.loadGroupsAndOffsets fails likewise), ' +
    'so no group of that partition is served until the record is removed'
  );
}

/** A member of a group, for the members table. */
export interface GroupMemberRow {
  group: string;
  memberId: string;
  groupInstanceId: string | null;
  clientId: string;
  host: string;
  /** Classic: session timeout; KIP-848 classic-protocol members: theirs; else null. */
  sessionTimeoutMs: number | null;
  rebalanceTimeoutMs: number | null;
  /** KIP-848 member epoch; null for classic members. */
  memberEpoch: number | null;
  subscribedTopics: string[] | null;
  /** Assigned partitions as `topic-partition`. */
  assignment: string[];
}

/** Result of {@link describeGroups}. */
export interface GroupsDescription {
  groups: GroupSummary[];
  offsets: GroupOffsetRow[];
  members: GroupMemberRow[];
  now: bigint;
  offsetsRetentionMs: bigint;
  isolation: IsolationLevel;
}

/** The group state text, as kafka-consumer-groups.sh prints it (ConsumerGroupCommand, GroupState.toString). */
export function groupState(g: LoadedGroup): string {
  if (g.type === 'classic') return g.classic!.members.length === 0 ? 'Empty' : 'Stable';
  if (g.type === 'consumer') {
    const m = g.modern!;
    if (m.members.size === 0) return 'Empty';
    if (m.groupEpoch > m.assignmentEpoch) return 'Assigning';
    for (const mm of m.members.values()) if (!(mm.state === 0 && mm.memberEpoch === m.assignmentEpoch)) return 'Reconciling';
    return 'Stable';
  }
  if (g.type === 'share') return g.modern!.members.size === 0 ? 'Empty' : 'Stable';
  if (g.type === 'streams') {
    // StreamsGroup.maybeUpdateGroupState (Apache Kafka 4.1.0). Whether the topology's topics exist
    // (`configuredTopology().isReady()`) is the cluster's metadata, not in __consumer_offsets: a group
    // with a topology is taken as ready.
    const sg = g.streams!;
    if (sg.members.size === 0) return 'Empty';
    if (sg.topology === null) return 'NotReady';
    if (sg.groupEpoch > sg.assignmentEpoch) return 'Assigning';
    for (const mm of sg.members.values()) if (!(mm.state === 0 && mm.memberEpoch === sg.assignmentEpoch)) return 'Reconciling';
    return 'Stable';
  }
  return 'Empty';
}

/** Topic ids → names from the opened partitions' partition.metadata and the groups' own records. */
function topicNames(loaded: LoadedGroups): Map<string, string> {
  const names = new Map<string, string>();
  for (const l of loaded.partitions.values()) if (l.topicId) names.set(l.topicId, l.topic);
  for (const g of loaded.store.groups.values()) {
    if (!g.modern) continue;
    for (const [id, t] of g.modern.topics) names.set(id, t.name);
    for (const t of g.modern.initializedTopics) names.set(t.topicId, t.topicName);
  }
  return names;
}

/** The subscribed topics as the coordinator's `Group.isSubscribedToTopic` sees them; null = "all" (cannot tell). */
function subscribedTopics(g: LoadedGroup): Set<string> | null {
  if (g.type === 'classic') {
    const c = g.classic!;
    if (c.protocolType !== 'consumer') return new Set();
    if (c.members.length === 0) return new Set();
    if (c.protocol === null) return null;
    const s = new Set<string>();
    for (const m of c.members) {
      if (m.subscribedTopics === null) return null;
      for (const t of m.subscribedTopics) s.add(t);
    }
    return s;
  }
  if (g.type === 'consumer' || g.type === 'share') {
    const s = new Set<string>();
    for (const m of g.modern!.members.values()) for (const t of m.subscribedTopicNames) s.add(t);
    for (const ts of g.modern!.regexTopics.values()) for (const t of ts) s.add(t);
    return s;
  }
  if (g.type === 'streams') {
    // StreamsGroup.isSubscribedToTopic (Kafka 4.1.0): nothing while Empty or without a topology, else
    // the subtopologies' source and repartition source topics (a topology is taken as ready, see groupState).
    const state = groupState(g);
    if (state === 'Empty' || state === 'NotReady') return new Set();
    return new Set([...streamsSourceTopics(g).values()].flat());
  }
  return new Set();
}

/**
 * When the coordinator would expire `o` (ms), or null when it never would in the group's present state
 * (`Group.offsetExpirationCondition()` absent, or the group subscribes to the topic).
 */
export function expiryOf(g: LoadedGroup, o: CommittedOffset, retentionMs: bigint, subscribed: Set<string> | null = subscribedTopics(g)): bigint | null {
  let base: bigint | null;
  if (g.type === 'classic' && g.classic!.protocolType !== '') {
    const c = g.classic!;
    if (c.members.length === 0) base = c.currentStateTimestamp ?? o.commitTimestamp;
    else if (c.protocolType === 'consumer' && subscribed !== null) base = o.commitTimestamp;
    else return null;
  } else if (g.type === 'share') return null;
  else base = o.commitTimestamp; // simple groups, KIP-848 consumer groups and streams groups (StreamsGroup.offsetExpirationCondition: the commit timestamp)
  // isSubscribedToTopic: unknown subscriptions count as subscribed for consumer-protocol groups
  const isConsumerProtocol = g.type === 'consumer' || (g.type === 'classic' && g.classic!.protocolType === 'consumer');
  if (subscribed === null ? isConsumerProtocol : subscribed.has(o.topic)) return null;
  // OffsetMetadataManager.cleanupExpiredOffsets (Kafka 4.x): a partition with a pending transactional
  // commit keeps its offset; the others expire. (The classic coordinator of 3.x did not hold them back.)
  if (g.pendingTransactionalPartitions.has(offsetKey(o.topic, o.partition))) return null;
  return o.expireTimestamp ?? base + retentionMs;
}

/** Facts of an opened partition, loaded once per describe. */
interface PartitionFacts {
  log: PartitionLog;
  logStart: bigint;
  logEnd: bigint;
  hw: bigint | null;
  /** Where a consumer's fetches and a reset to latest end (read_uncommitted: Partition.fetchOffsetForTimestamp): the loaded high watermark, or the log end offset when unknown. */
  fetchEnd: bigint;
  /** 'high watermark' or 'log end offset' (no replication-offset-checkpoint entry), for the texts. */
  fetchEndName: string;
  /** The last stable offset, at most `fetchEnd` (UnifiedLog.lastStableOffset: min(first unstable offset, high watermark)). */
  lso: bigint;
  aborted: Awaited<ReturnType<typeof loadTransactionState>>['abortedTxns'];
}

/**
 * Describes the loaded groups: summaries, offset rows with lag and diagnosis, members.
 * @throws KlxError `cancelled`; `not-found` when `opts.group` is not a loaded group (the message
 *   names the `__consumer_offsets` partition it would be in, and whether that folder was opened).
 */
export async function describeGroups(loaded: LoadedGroups, opts: DescribeOptions = {}): Promise<GroupsDescription> {
  const now = opts.now ?? BigInt(Date.now());
  const retention = opts.offsetsRetentionMs ?? BigInt(DEFAULT_OFFSETS_RETENTION_MS);
  const isolation = opts.isolation ?? 'read_uncommitted';
  const names = topicNames(loaded);
  let groups = [...loaded.store.groups.values()].sort((a, b) => (a.groupId < b.groupId ? -1 : a.groupId > b.groupId ? 1 : 0));
  if (opts.group !== undefined) {
    groups = groups.filter((g) => g.groupId === opts.group);
    if (groups.length === 0) throw new KlxError('not-found', missingGroupReason(loaded, opts.group));
  }

  const rows: GroupOffsetRow[] = [];
  const members: GroupMemberRow[] = [];
  const owner = new Map<string, { consumerId: string; host: string; clientId: string }>();
  for (const g of groups) {
    const subscribed = subscribedTopics(g);
    owner.clear();
    for (const m of membersOf(g, names)) {
      members.push(m);
      for (const tp of m.assignment) owner.set(`${g.groupId}\u0000${tp}`, { consumerId: m.memberId, host: m.host, clientId: m.clientId });
    }
    const seen = new Set<string>();
    for (const o of g.offsets.values()) {
      seen.add(offsetKey(o.topic, o.partition));
      const expiresAt = expiryOf(g, o, retention, subscribed);
      const own = owner.get(`${g.groupId}\u0000${o.topic}-${o.partition}`);
      rows.push({
        group: g.groupId,
        topic: o.topic,
        partition: o.partition,
        committedOffset: o.offset,
        leaderEpoch: o.leaderEpoch,
        metadata: o.metadata,
        commitTimestamp: o.commitTimestamp,
        expireTimestamp: o.expireTimestamp,
        expiresAt,
        expired: expiresAt !== null && now >= expiresAt,
        transactional: o.transactional,
        logStartOffset: null,
        logEndOffset: null,
        highWatermark: null,
        lastStableOffset: null,
        lag: null,
        recordLag: null,
        nextOffset: null,
        diagnosis: 'partition-not-opened',
        detail: '',
        consumerId: own?.consumerId ?? null,
        host: own?.host ?? null,
        clientId: own?.clientId ?? null,
        commitRecord: { offsetsPartition: o.place.offsetsPartition, file: o.place.file, position: o.place.position, offset: o.place.offset },
      });
    }
    // partitions assigned to a member without a committed offset (share groups keep no offsets here)
    for (const m of g.type === 'share' ? [] : members.filter((x) => x.group === g.groupId)) {
      for (const tp of m.assignment) {
        const cut = tp.lastIndexOf('-');
        const topic = tp.slice(0, cut);
        const partition = Number(tp.slice(cut + 1));
        if (seen.has(offsetKey(topic, partition))) continue;
        seen.add(offsetKey(topic, partition));
        rows.push({
          group: g.groupId, topic, partition, committedOffset: null, leaderEpoch: null, metadata: null, commitTimestamp: null, expireTimestamp: null, expiresAt: null, expired: false, transactional: false,
          logStartOffset: null, logEndOffset: null, highWatermark: null, lastStableOffset: null, lag: null, recordLag: null, nextOffset: null,
          diagnosis: 'no-commit', detail: '', consumerId: m.memberId, host: m.host, clientId: m.clientId, commitRecord: null,
        });
      }
    }
  }

  if (opts.only) {
    const { topic, partition } = opts.only;
    for (let i = rows.length - 1; i >= 0; i--) if (rows[i]!.topic !== topic || rows[i]!.partition !== partition) rows.splice(i, 1);
  }
  // Partition facts and positions: one walk per partition for all groups' offsets.
  const byPartition = new Map<string, GroupOffsetRow[]>();
  for (const r of rows) {
    const k = partitionKey(r.topic, r.partition);
    let list = byPartition.get(k);
    if (!list) byPartition.set(k, (list = []));
    list.push(r);
  }
  for (const [k, list] of byPartition) {
    const log = loaded.partitions.get(k);
    if (!log) {
      for (const r of list) {
        if (r.diagnosis === 'no-commit') r.detail = `assigned to ${r.consumerId} but no offset is committed: the consumer starts per auto.offset.reset; the partition's folder is not among the opened ones`;
        else r.detail = `the folder ${r.topic}-${r.partition} is not among the opened ones: lag and position unknown`;
      }
      continue;
    }
    const facts = await partitionFacts(log, opts);
    const end = isolation === 'read_committed' ? facts.lso : facts.fetchEnd;
    const asked = list.filter((r) => r.committedOffset !== null && r.committedOffset >= facts.logStart && r.committedOffset <= facts.logEnd).map((r) => r.committedOffset!);
    if (list.some((r) => r.committedOffset !== null && r.committedOffset < facts.logStart)) asked.push(facts.logStart);
    const clamp = (o: bigint) => (o > end ? end : o);
    const positions = await positionsIn(log, asked.map(clamp), end, facts.aborted, opts);
    for (const r of list) {
      r.logStartOffset = facts.logStart;
      r.logEndOffset = facts.logEnd;
      r.highWatermark = facts.hw;
      r.lastStableOffset = facts.lso;
      const c = r.committedOffset;
      if (c === null) {
        r.detail = `assigned to ${r.consumerId} but no offset is committed: the consumer starts per auto.offset.reset (earliest: ${facts.logStart}, latest: ${facts.fetchEnd}, the ${facts.fetchEndName})`;
        continue;
      }
      r.lag = facts.fetchEnd - c;
      // kafka-consumer-groups.sh prints LOG-END-OFFSET − CURRENT-OFFSET raw (ConsumerGroupCommand.getLag); a negative one is explained.
      const negativeLag = r.lag < 0n ? `${negativeLagText(r.lag, c, facts)}; ` : '';
      if (c < facts.logStart) {
        r.diagnosis = 'below-log-start';
        r.recordLag = positions.get(clamp(facts.logStart))?.recordLag ?? null;
        r.nextOffset = facts.logStart;
        r.detail = belowLogStartDetail(facts, c);
      } else if (c > facts.logEnd) {
        r.diagnosis = 'beyond-log-end';
        r.detail = `committed offset ${c} is beyond the log end offset ${facts.logEnd} (an unclean leader election, a restored backup or a truncated log): the consumer gets OFFSET_OUT_OF_RANGE and resets per auto.offset.reset (earliest: ${facts.logStart}, latest: ${facts.fetchEnd}, the ${facts.fetchEndName})`;
      } else {
        const p = positions.get(clamp(c))!;
        r.recordLag = p.recordLag;
        r.nextOffset = c > end ? c : p.nextOffset;
        if (c >= facts.fetchEnd || p.atRecord || c >= end) {
          r.diagnosis = 'ok';
          r.detail = c === facts.logEnd ? 'caught up: the committed offset is the log end offset' : c >= facts.fetchEnd ? `caught up: the committed offset is at or past the high watermark ${facts.fetchEnd}, where a consumer's fetches end (records up to the log end offset ${facts.logEnd} are not yet replicated to every in-sync replica)` : r.nextOffset === c ? `the consumer continues at ${c}` : `the consumer continues at ${c}; the next record it returns is at ${r.nextOffset} (control records or aborted data before it)`;
        } else {
          r.diagnosis = 'in-hole';
          r.detail = `no record at ${c} (compacted away, or a gap in the offsets): legitimate, the consumer continues at ${r.nextOffset}`;
        }
      }
      r.detail = negativeLag + r.detail;
    }
  }

  const summaries = groups.map((g) => summarize(g, loaded, rows.filter((r) => r.group === g.groupId), members.filter((m) => m.group === g.groupId)));
  return { groups: summaries, offsets: rows, members, now, offsetsRetentionMs: retention, isolation };
}

/**
 * Why LAG is negative: the committed offset `c` is past the offset `ListOffsets` latest returns a
 * client (the high watermark, or the log end offset when the folder has no replication-offset-checkpoint
 * entry: Partition.fetchOffsetForTimestamp), which kafka-consumer-groups.sh prints as LOG-END-OFFSET
 * and subtracts (ConsumerGroupCommand.getLag).
 */
function negativeLagText(lag: bigint, c: bigint, f: PartitionFacts): string {
  const past = c > f.logEnd ? `also past this replica's log end offset ${f.logEnd}` : f.hw !== null && f.logEnd > f.hw ? `within this replica's log (log end offset ${f.logEnd}), in records not yet known to be replicated` : null;
  return `LAG ${lag} is negative: the committed offset ${c} is ${-lag} past the ${f.fetchEndName} ${f.fetchEnd} that ListOffsets latest answers (LOG-END-OFFSET; kafka-consumer-groups.sh prints LOG-END-OFFSET − CURRENT-OFFSET as it is, ConsumerGroupCommand.getLag)${past ? `, ${past}` : ''}; the group counts it as 0`;
}

async function partitionFacts(log: PartitionLog, opts: LongReadOptions): Promise<PartitionFacts> {
  const txn = await loadTransactionState(log, { signal: opts.signal });
  const limit = await lastFetchableOffset(log, 'read_uncommitted', opts);
  const fetchEnd = limit.offset;
  const lso = txn.lastStableOffset < fetchEnd ? txn.lastStableOffset : fetchEnd;
  return { log, logStart: log.logStartOffset, logEnd: log.logEndOffset, hw: limit.kind === 'high-watermark' ? fetchEnd : null, fetchEnd, fetchEndName: limit.kind === 'high-watermark' ? 'high watermark' : 'log end offset', lso, aborted: txn.abortedTxns };
}

/** "Which segments took those offsets and when, if the files tell." */
function belowLogStartDetail(f: PartitionFacts, committed: bigint): string {
  const first = f.log.segments[0];
  const parts = [`committed offset ${committed} is below the log start offset ${f.logStart}: offsets ${committed}–${f.logStart - 1n} were deleted`];
  if (first) {
    let when = '';
    for (const e of walkLog(f.log)) {
      if (e.type === 'batch') {
        when = `, its first batch written at ${new Date(Number(e.header.maxTimestamp)).toISOString()}`;
        break;
      }
      if (e.type !== 'segment') break;
    }
    parts.push(`the oldest remaining segment is ${first.files.log.split(/[\\/]/).pop()} (base offset ${first.baseOffset}${when})`);
    if (f.logStart > first.baseOffset) parts.push(`log-start-offset-checkpoint says ${f.logStart}, above that segment's base: DeleteRecords or retention moved the log start`);
    else parts.push('older segments were deleted by retention (retention.ms / retention.bytes) or DeleteRecords');
  }
  // A reset asks ListOffsets earliest/latest (Fetcher → OffsetsRequestManager); latest answers a consumer's last fetchable offset (Partition.fetchOffsetForTimestamp).
  parts.push(`the consumer gets OFFSET_OUT_OF_RANGE and resets per auto.offset.reset (earliest: ${f.logStart}, latest: ${f.fetchEnd}, the ${f.fetchEndName})`);
  return parts.join('; ');
}

function membersOf(g: LoadedGroup, names: Map<string, string>): GroupMemberRow[] {
  if (g.classic && g.type === 'classic') {
    return g.classic.members.map((m) => ({
      group: g.groupId,
      memberId: m.memberId,
      groupInstanceId: m.groupInstanceId,
      clientId: m.clientId,
      host: m.clientHost,
      sessionTimeoutMs: m.sessionTimeoutMs,
      rebalanceTimeoutMs: m.rebalanceTimeoutMs < 0 ? null : m.rebalanceTimeoutMs,
      memberEpoch: null,
      subscribedTopics: m.subscribedTopics,
      assignment: (m.assignment ?? []).flatMap((a) => a.partitions.map((p) => `${a.topic}-${p}`)),
    }));
  }
  if (g.modern && (g.type === 'consumer' || g.type === 'share')) {
    return [...g.modern.members.values()].map((m) => ({
      group: g.groupId,
      memberId: m.memberId,
      groupInstanceId: m.instanceId,
      clientId: m.clientId,
      host: m.clientHost,
      sessionTimeoutMs: m.classicSessionTimeoutMs,
      rebalanceTimeoutMs: m.rebalanceTimeoutMs < 0 ? null : m.rebalanceTimeoutMs,
      memberEpoch: m.memberEpoch,
      subscribedTopics: m.subscribedTopicNames,
      assignment: m.assigned.flatMap((a) => a.Partitions.map((p) => `${names.get(a.TopicId) ?? a.TopicId}-${p}`)),
    }));
  }
  if (g.streams && g.type === 'streams') {
    const sources = streamsSourceTopics(g);
    return [...g.streams.members.values()].map((m) => ({
      group: g.groupId,
      memberId: m.memberId,
      groupInstanceId: m.instanceId,
      clientId: m.clientId,
      host: m.clientHost,
      sessionTimeoutMs: null,
      rebalanceTimeoutMs: m.rebalanceTimeoutMs < 0 ? null : m.rebalanceTimeoutMs,
      memberEpoch: m.memberEpoch,
      subscribedTopics: [...new Set([...sources.values()].flat())].sort(),
      assignment: m.assigned.active.flatMap((t) => (sources.get(t.SubtopologyId) ?? []).flatMap((topic) => t.Partitions.map((p) => `${topic}-${p}`))),
    }));
  }
  return [];
}

/**
 * The topics each subtopology of a streams group's topology reads (source and repartition source
 * topics): active task `(subtopology, p)` reads partition p of each (Kafka Streams' task ids, as the
 * coordinator's `StreamsGroup` and `kafka-streams-groups.sh --describe --members` relate them).
 */
function streamsSourceTopics(g: LoadedGroup): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const s of g.streams?.topology?.subtopologies ?? []) out.set(s.SubtopologyId, [...s.SourceTopics, ...s.RepartitionSourceTopics.map((t) => t.Name)]);
  return out;
}

function summarize(g: LoadedGroup, loaded: LoadedGroups, rows: GroupOffsetRow[], members: GroupMemberRow[]): GroupSummary {
  const topics = [...new Set(rows.map((r) => r.topic))].sort();
  let totalLag = 0n;
  let totalRecordLag = 0;
  for (const r of rows) {
    if (r.lag !== null && r.lag > 0n && !r.expired) totalLag += r.lag;
    if (r.recordLag !== null && !r.expired) totalRecordLag += r.recordLag;
  }
  const firstPartition = [...g.offsetsPartitions][0] ?? 0;
  const home = loaded.offsetsTopic.numPartitions > 0 ? kafkaHome(g.groupId, loaded) : firstPartition;
  const modernAssignor = g.modern ? ([...g.modern.members.values()][0]?.serverAssignor ?? null) : null;
  return {
    group: g.groupId,
    type: g.type,
    protocolType: g.classic?.protocolType ?? null,
    protocol: g.type === 'classic' ? (g.classic?.protocol ?? null) : modernAssignor,
    state: groupState(g),
    generation: g.type === 'classic' ? g.classic!.generation : g.type === 'streams' && g.streams ? g.streams.groupEpoch : g.modern ? g.modern.groupEpoch : null,
    members: members.length,
    topics,
    totalLag,
    totalRecordLag,
    partitions: rows.length,
    expiredOffsets: rows.filter((r) => r.expired).length,
    offsetsPartition: home,
    offsetsPartitionMissing: loaded.offsetsTopic.absent.includes(home),
    problems: g.problems.map((p) => ({ file: p.file, position: p.position, offset: p.offset, reason: p.reason })),
    offsetsPartitionLoadFailure: loadFailureOf(loaded, home),
    pendingTransactionalProducers: [...g.pendingTransactionalProducers],
  };
}

function loadFailureOf(loaded: LoadedGroups, offsetsPartition: number): GroupSummary['offsetsPartitionLoadFailure'] {
  const p = loaded.store.loadFailures.get(offsetsPartition);
  return p ? { file: p.file, position: p.position, offset: p.offset, reason: p.reason, text: loadFailureText(offsetsPartition, p) } : null;
}

/** Why a group is not listed: where it would live, and whether that partition was opened. */
export function missingGroupReason(loaded: LoadedGroups, groupId: string): string {
  const home = offsetsPartitionFor(groupId, loaded.offsetsTopic.numPartitions);
  const n = `${loaded.offsetsTopic.numPartitions}${loaded.offsetsTopic.numPartitionsAssumed ? ' (assumed: Kafka\'s default offsets.topic.num.partitions; give the real one if it differs)' : ''}`;
  if (loaded.offsetsTopic.absent.includes(home)) {
    return `group "${groupId}" is not listed: it lives in __consumer_offsets-${home} (abs(hashCode) % ${n}), whose folder is not among the opened ones`;
  }
  return `group "${groupId}" has no records in __consumer_offsets-${home} (abs(hashCode) % ${n}), which was opened: the group does not exist there, or was deleted`;
}

function kafkaHome(groupId: string, loaded: LoadedGroups): number {
  return offsetsPartitionFor(groupId, loaded.offsetsTopic.numPartitions);
}
