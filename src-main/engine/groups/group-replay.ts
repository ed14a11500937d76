/**
 * The group coordinator's state rebuilt from the records of `__consumer_offsets`, fed in offset order
 * per partition, as Kafka's coordinators load it: the classic `GroupMetadataManager.loadGroupsAndOffsets`
 * and the new coordinator's `GroupMetadataManager.replay` / `OffsetMetadataManager.replay` (KIP-848).
 *
 * - The latest record per key wins; a tombstone deletes (an offset, a classic group, a KIP-848 member,
 *   its assignment, the group itself).
 * - Offset commits written inside a transaction (`TxnOffsetCommit`, a transactional batch with a
 *   producer id) stay pending until that producer's COMMIT marker in the same partition; an ABORT
 *   marker drops them (`OffsetMetadataManager.replayEndTransactionMarker`).
 * - A group with offsets but no group record is a "simple" group (standalone consumers that only store
 *   offsets; Kafka loads it as an Empty classic group without protocol type).
 *
 * Memory: one entry per group, member and committed partition; nothing per commit record.
 */
import type { ConsumerOffsetsKey, ConsumerOffsetsValue, ConsumerProtocolAssignmentData, GroupMetadataValueData, OffsetCommitValueData, StreamsSubtopology, StreamsTaskIds, TopicIdPartitions } from '../decode/internal/consumer-offsets.ts';
import { ProtocolReader } from '../decode/protocol-reader.ts';

/** Where a record of `__consumer_offsets` is: its partition folder's segment file, byte position and offset. */
export interface OffsetsRecordPlace {
  /** `__consumer_offsets` partition number. */
  offsetsPartition: number;
  /** The segment `.log` path. */
  file: string;
  /** Byte position of the record's batch in `file`. */
  position: number;
  /** The record's offset in `__consumer_offsets`. */
  offset: bigint;
}

/** A record that could not be read, named by place, with the reason. */
export interface GroupRecordProblem extends OffsetsRecordPlace {
  /** The group, when the key could be read. */
  groupId: string | null;
  reason: string;
}

/** A committed offset as the coordinator holds it (`OffsetAndMetadata`). */
export interface CommittedOffset {
  topic: string;
  partition: number;
  /** The committed offset: the next offset the group will read. */
  offset: bigint;
  /** v3+ values; null when absent or −1. */
  leaderEpoch: number | null;
  metadata: string;
  /** ms since the epoch. */
  commitTimestamp: bigint;
  /** v1 values with an expire timestamp (ms); null otherwise (−1 reads as null, as Kafka's OffsetAndMetadata.fromRecord does). */
  expireTimestamp: bigint | null;
  /** Value version of the record. */
  valueVersion: number;
  /** Where the winning commit record is. */
  place: OffsetsRecordPlace;
  /** Committed through a transaction (TxnOffsetCommit) whose COMMIT marker was read. */
  transactional: boolean;
}

/** A member of a classic group (from GroupMetadataValue). */
export interface ClassicMember {
  memberId: string;
  groupInstanceId: string | null;
  clientId: string;
  clientHost: string;
  /** ms; −1 when the record has none (v0). */
  rebalanceTimeoutMs: number;
  sessionTimeoutMs: number;
  /** Topics of the consumer-protocol subscription; null when not the consumer protocol or it does not parse. */
  subscribedTopics: string[] | null;
  /** Assigned partitions (consumer protocol); null when not decodable. */
  assignment: { topic: string; partitions: number[] }[] | null;
}

/** A member of a KIP-848 consumer group or of a share group. */
export interface ModernMember {
  memberId: string;
  instanceId: string | null;
  rackId: string | null;
  clientId: string;
  clientHost: string;
  subscribedTopicNames: string[];
  subscribedTopicRegex: string | null;
  serverAssignor: string | null;
  rebalanceTimeoutMs: number;
  /** Member epoch (−1 after a CurrentMemberAssignment tombstone: the member left). */
  memberEpoch: number;
  previousMemberEpoch: number;
  /** `MemberState`: 0 STABLE, 1 UNREVOKED_PARTITIONS, 2 UNRELEASED_PARTITIONS, 127 UNKNOWN. */
  state: number;
  assigned: TopicIdPartitions[];
  pendingRevocation: TopicIdPartitions[];
  targetAssignment: TopicIdPartitions[] | null;
  /** Consumers using the classic protocol inside a consumer group: their session timeout. */
  classicSessionTimeoutMs: number | null;
}

/** Active, standby and warm-up tasks of a Kafka Streams member (`TasksTuple`). */
export interface StreamsTasks {
  active: StreamsTaskIds[];
  standby: StreamsTaskIds[];
  warmup: StreamsTaskIds[];
}

/** A member of a streams group (KIP-1071; `StreamsGroupMember` of Apache Kafka 4.1.0). */
export interface StreamsMember {
  memberId: string;
  instanceId: string | null;
  rackId: string | null;
  clientId: string;
  clientHost: string;
  rebalanceTimeoutMs: number;
  topologyEpoch: number;
  processId: string;
  userEndpoint: { host: string; port: number } | null;
  clientTags: { key: string; value: string }[];
  /** Member epoch (−1 after a CurrentMemberAssignment tombstone: the member left). */
  memberEpoch: number;
  previousMemberEpoch: number;
  /** `MemberState`: 0 STABLE, 1 UNREVOKED_TASKS, 2 UNRELEASED_TASKS, 127 UNKNOWN. */
  state: number;
  assigned: StreamsTasks;
  pendingRevocation: StreamsTasks;
  targetAssignment: StreamsTasks | null;
}

/** The state of a streams group as the coordinator's `StreamsGroup` holds it (Apache Kafka 4.1.0). */
export interface StreamsGroupState {
  groupEpoch: number;
  /** Hash of the metadata of every topic of the group (KIP-1101). */
  metadataHash: bigint;
  /** Target assignment epoch; −1 when none. */
  assignmentEpoch: number;
  /** The topology (StreamsGroupTopology), or null before the first one or after its tombstone. */
  topology: { epoch: number; subtopologies: StreamsSubtopology[] } | null;
  members: Map<string, StreamsMember>;
}

/** The kinds of groups; `simple` groups only have offsets. */
export type GroupType = 'classic' | 'consumer' | 'share' | 'streams' | 'simple';

/** One group as loaded. */
export interface LoadedGroup {
  groupId: string;
  type: GroupType;
  /** The `__consumer_offsets` partition(s) its records were read from (one unless the layout is odd). */
  offsetsPartitions: Set<number>;
  classic: {
    protocolType: string;
    generation: number;
    protocol: string | null;
    leader: string | null;
    /** ms; null when −1 or a v0/v1 value. */
    currentStateTimestamp: bigint | null;
    members: ClassicMember[];
    valueVersion: number;
    place: OffsetsRecordPlace;
  } | null;
  modern: {
    groupEpoch: number;
    assignmentEpoch: number;
    members: Map<string, ModernMember>;
    /** TopicId → name/partitions from the PartitionMetadata record. */
    topics: Map<string, { name: string; numPartitions: number }>;
    /** Regular expression → resolved topics (ConsumerGroupRegularExpression). */
    regexTopics: Map<string, string[]>;
    /** Share groups: topics whose share-group state is initialized. */
    initializedTopics: { topicId: string; topicName: string; partitions: number[] }[];
  } | null;
  /** Streams groups (KIP-1071). */
  streams: StreamsGroupState | null;
  /** Committed offsets by `topic\u0000partition`. */
  offsets: Map<string, CommittedOffset>;
  /** Transactional offset commits without their marker yet (producer ids). */
  pendingTransactionalProducers: Set<string>;
  /**
   * The `topic\u0000partition` keys those pending commits are for: their offsets do not expire while
   * pending (`OffsetMetadataManager.hasPendingTransactionalOffsets`, Kafka 4.x coordinator).
   */
  pendingTransactionalPartitions: Set<string>;
  /** Records of this group that could not be read. */
  problems: GroupRecordProblem[];
}

/** An offset-commit key resolved once: its group id, topic, partition and the entry it updates. */
export interface CommitSlot {
  groupId: string;
  topic: string;
  partition: number;
  /** The entry last updated, valid while {@link epoch} equals the store's. */
  commit: PackedCommit | null;
  epoch: number;
}

const TWO32 = 4294967296n;

/**
 * A committed offset kept by the fast path: int64 fields as two signed int32 halves (small integers
 * for V8: nothing is boxed per record) and the place of its record
 * as plain fields (one object per committed partition, nothing per commit record), made bigint and
 * {@link OffsetsRecordPlace} when read.
 */
export class PackedCommit implements CommittedOffset {
  offHi = 0;
  offLo = 0;
  tsHi = 0;
  tsLo = 0;
  leaderEpoch: number | null = null;
  metadata = '';
  expireTimestamp: bigint | null = null;
  valueVersion = 0;
  readonly transactional = false;
  /** `__consumer_offsets` partition of the record. */
  placePartition = 0;
  /** Segment `.log` of the record. */
  placeFile = '';
  /** Byte position of the record's batch. */
  placePosition = 0;
  /** The batch's base offset (shared by the batch's records) as two signed int32 halves. */
  placeBaseHi = 0;
  placeBaseLo = 0;
  /** The record's offset delta in its batch. */
  placeDelta = 0;
  constructor(
    readonly topic: string,
    readonly partition: number,
  ) {}
  get offset(): bigint {
    return BigInt(this.offHi) * TWO32 + BigInt(this.offLo >>> 0);
  }
  get commitTimestamp(): bigint {
    return BigInt(this.tsHi) * TWO32 + BigInt(this.tsLo >>> 0);
  }
  /** Where the winning commit record is (a new object on each read). */
  get place(): OffsetsRecordPlace {
    return { offsetsPartition: this.placePartition, file: this.placeFile, position: this.placePosition, offset: BigInt(this.placeBaseHi) * TWO32 + BigInt(this.placeBaseLo >>> 0) + BigInt(this.placeDelta) };
  }
}

/** Key of an offset in {@link LoadedGroup.offsets}. */
export function offsetKey(topic: string, partition: number): string {
  return `${topic}\u0000${partition}`;
}

/** Pending transactional offset commits of one producer in one `__consumer_offsets` partition. */
type PendingTxn = Map<string, { groupId: string; topic: string; partition: number; commit: CommittedOffset | null }>;

/**
 * The state being rebuilt. Feed every record of a `__consumer_offsets` partition in offset order with
 * {@link apply}, transaction markers with {@link onMarker}, records that did not decode with
 * {@link problem}; call {@link endPartition} after each partition.
 */
export class GroupStore {
  readonly groups = new Map<string, LoadedGroup>();
  /** Problems of records whose group is unknown (the key did not decode). */
  readonly problems: GroupRecordProblem[] = [];
  /**
   * Per `__consumer_offsets` partition, the first record a broker's group coordinator cannot deserialize
   * (a key or value that does not decode, a record without a key; not an unknown record type, which it
   * skips). Kafka's loader stops there and the partition fails to load (CoordinatorLoaderImpl rethrows
   * anything but UnknownRecordTypeException; 3.x GroupMetadataManager.loadGroupsAndOffsets likewise fails on
   * e.g. readOffsetMessageValue's IllegalStateException for an unknown value version): no group of that
   * partition is served. Filled by {@link loadFailure}.
   */
  readonly loadFailures = new Map<number, GroupRecordProblem>();
  /** Records applied, tombstones among them, records skipped (unknown types). */
  readonly counts = { records: 0, tombstones: 0, offsetCommits: 0, skipped: 0, transactionalCommits: 0, abortedCommits: 0 };
  private pending = new Map<string, PendingTxn>();
  /**
   * Bumped whenever an offset entry may have been removed or replaced (invalidates {@link CommitSlot}
   * caches: a slot's `commit` is its key's entry while the slot's `epoch` equals this). Read-only outside.
   */
  epoch = 0;

  /** The group, created (as `simple` until a group record says otherwise) when absent. */
  group(groupId: string, offsetsPartition: number): LoadedGroup {
    let g = this.groups.get(groupId);
    if (!g) {
      g = { groupId, type: 'simple', offsetsPartitions: new Set(), classic: null, modern: null, streams: null, offsets: new Map(), pendingTransactionalProducers: new Set(), pendingTransactionalPartitions: new Set(), problems: [] };
      this.groups.set(groupId, g);
    }
    g.offsetsPartitions.add(offsetsPartition);
    return g;
  }

  /** Records a problem (on its group when known). */
  problem(p: GroupRecordProblem): void {
    if (p.groupId !== null) this.group(p.groupId, p.offsetsPartition).problems.push(p);
    else this.problems.push(p);
  }

  /**
   * Records a problem with a record Kafka's coordinator cannot deserialize: as {@link problem}, and the
   * first one of its partition in {@link loadFailures} (CoordinatorLoaderImpl fails the load there).
   */
  loadFailure(p: GroupRecordProblem): void {
    this.problem(p);
    if (!this.loadFailures.has(p.offsetsPartition)) this.loadFailures.set(p.offsetsPartition, p);
  }

  /**
   * Applies one decoded record.
   * @param producerId the batch's producer id when the batch is transactional, else null.
   */
  apply(key: ConsumerOffsetsKey, value: ConsumerOffsetsValue | null, place: OffsetsRecordPlace, producerId: bigint | null): void {
    this.counts.records++;
    if (value === null) this.counts.tombstones++;
    switch (key.recordType) {
      case 'OffsetCommit':
        this.applyOffsetCommit(key, value, place, producerId);
        return;
      case 'GroupMetadata':
        this.applyGroupMetadata((key.data as { group: string }).group, value as ConsumerOffsetsValue<GroupMetadataValueData> | null, place);
        return;
      case 'Unknown':
        this.counts.skipped++;
        return;
      default:
        this.applyModern(key, value, place);
    }
  }

  private applyOffsetCommit(key: ConsumerOffsetsKey, value: ConsumerOffsetsValue | null, place: OffsetsRecordPlace, producerId: bigint | null): void {
    const k = key.data as { group: string; topic: string; partition: number };
    this.counts.offsetCommits++;
    let commit: CommittedOffset | null = null;
    if (value !== null) {
      const v = value.data as OffsetCommitValueData;
      commit = {
        topic: k.topic,
        partition: k.partition,
        offset: v.offset,
        leaderEpoch: v.leaderEpoch === undefined || v.leaderEpoch < 0 ? null : v.leaderEpoch,
        metadata: v.metadata,
        commitTimestamp: v.commitTimestamp,
        expireTimestamp: v.expireTimestamp === undefined || v.expireTimestamp === -1n ? null : v.expireTimestamp,
        valueVersion: value.version,
        place,
        transactional: producerId !== null,
      };
    }
    if (producerId !== null) {
      const pk = `${place.offsetsPartition}/${producerId}`;
      let txn = this.pending.get(pk);
      if (!txn) this.pending.set(pk, (txn = new Map()));
      txn.set(`${k.group}\u0000${offsetKey(k.topic, k.partition)}`, { groupId: k.group, topic: k.topic, partition: k.partition, commit });
      const pg = this.group(k.group, place.offsetsPartition);
      pg.pendingTransactionalProducers.add(String(producerId));
      pg.pendingTransactionalPartitions.add(offsetKey(k.topic, k.partition));
      return;
    }
    this.putOffset(k.group, k.topic, k.partition, commit, place.offsetsPartition);
  }

  /**
   * The fast path of a non-transactional offset commit (the bulk of `__consumer_offsets`): the
   * {@link PackedCommit} of the slot's key, which the caller updates in place (every field of it,
   * and {@link counts}); found through the slot without a map lookup while no entry was removed or
   * replaced since (`epoch`), else looked up (and created) once. Nothing is allocated per record.
   * A slot belongs to one partition's replay (its key table), so the first look-up puts the
   * partition in the group's {@link LoadedGroup.offsetsPartitions}.
   */
  packedCommitOf(slot: CommitSlot, offsetsPartition: number): PackedCommit {
    let c = slot.commit;
    if (c === null || slot.epoch !== this.epoch) {
      const g = this.group(slot.groupId, offsetsPartition);
      const k = offsetKey(slot.topic, slot.partition);
      const o = g.offsets.get(k);
      if (o instanceof PackedCommit) c = o;
      else {
        c = new PackedCommit(slot.topic, slot.partition);
        g.offsets.set(k, c);
      }
      slot.commit = c;
      slot.epoch = this.epoch;
    }
    return c;
  }

  private putOffset(groupId: string, topic: string, partition: number, commit: CommittedOffset | null, offsetsPartition: number): void {
    this.epoch++;
    const g = this.groups.get(groupId);
    if (commit === null) {
      if (!g) return;
      g.offsets.delete(offsetKey(topic, partition));
      this.maybeDrop(g);
      return;
    }
    this.group(groupId, offsetsPartition).offsets.set(offsetKey(topic, partition), commit);
  }

  /** A group left with nothing (no record, no offset, no problem) is gone, as after its deletion. */
  private maybeDrop(g: LoadedGroup): void {
    this.epoch++;
    if (g.classic === null && g.modern === null && g.streams === null && g.offsets.size === 0 && g.problems.length === 0 && g.pendingTransactionalProducers.size === 0) this.groups.delete(g.groupId);
  }

  /**
   * A COMMIT or ABORT marker of `producerId` in `offsetsPartition`: its pending offset commits are
   * applied (COMMIT) or dropped (ABORT).
   */
  onMarker(offsetsPartition: number, producerId: bigint, committed: boolean): void {
    const pk = `${offsetsPartition}/${producerId}`;
    const txn = this.pending.get(pk);
    if (!txn) return;
    this.pending.delete(pk);
    for (const { groupId, topic, partition, commit } of txn.values()) {
      const g = this.groups.get(groupId);
      g?.pendingTransactionalProducers.delete(String(producerId));
      if (g) this.refreshPendingPartitions(g);
      if (committed) {
        this.counts.transactionalCommits++;
        this.putOffset(groupId, topic, partition, commit, offsetsPartition);
      } else {
        this.counts.abortedCommits++;
        if (g) this.maybeDrop(g);
      }
    }
  }

  /** Recomputes a group's pending partitions from the transactions still open (another producer may hold the same partition). */
  private refreshPendingPartitions(g: LoadedGroup): void {
    g.pendingTransactionalPartitions.clear();
    for (const txn of this.pending.values()) for (const e of txn.values()) if (e.groupId === g.groupId) g.pendingTransactionalPartitions.add(offsetKey(e.topic, e.partition));
  }

  /** After the last record of a partition: transactions still open stay pending (listed on their groups). */
  endPartition(_offsetsPartition: number): void {
    // pending entries stay; their groups carry the producer ids
  }

  private applyGroupMetadata(groupId: string, value: ConsumerOffsetsValue<GroupMetadataValueData> | null, place: OffsetsRecordPlace): void {
    if (value === null) {
      const g = this.groups.get(groupId);
      if (!g) return;
      g.classic = null;
      if (g.type === 'classic') g.type = 'simple';
      this.maybeDrop(g);
      return;
    }
    const g = this.group(groupId, place.offsetsPartition);
    const v = value.data;
    const consumer = v.protocolType === 'consumer';
    g.classic = {
      protocolType: v.protocolType,
      generation: v.generation,
      protocol: v.protocol,
      leader: v.leader,
      currentStateTimestamp: v.currentStateTimestamp === undefined || v.currentStateTimestamp === -1n ? null : v.currentStateTimestamp,
      valueVersion: value.version,
      place,
      members: v.members.map((m) => ({
        memberId: m.memberId,
        groupInstanceId: m.groupInstanceId ?? null,
        clientId: m.clientId,
        clientHost: m.clientHost,
        rebalanceTimeoutMs: m.rebalanceTimeout ?? -1,
        sessionTimeoutMs: m.sessionTimeout,
        subscribedTopics: consumer ? subscriptionTopicsV0(m.subscription) : null,
        assignment: consumer && !(m.assignment instanceof Uint8Array) ? (m.assignment as ConsumerProtocolAssignmentData).assignedPartitions : null,
      })),
    };
    if (g.type === 'simple') g.type = 'classic';
  }

  /**
   * A streams group record (types 17, 19–23), replayed as Apache Kafka 4.1.0's
   * `GroupMetadataManager.replay(StreamsGroup…Key, …Value)` does: a value creates the group when
   * absent; a tombstone of a group (or member) that does not exist is ignored; the metadata tombstone
   * deletes the group; a current-assignment tombstone leaves the member with epoch −1 and no tasks.
   */
  private applyStreams(key: ConsumerOffsetsKey, value: ConsumerOffsetsValue | null, place: OffsetsRecordPlace): void {
    const kd = key.data as { GroupId: string; MemberId?: string };
    const existing = this.groups.get(kd.GroupId);
    if (value === null && (!existing || existing.streams === null)) return;
    const g = existing ?? this.group(kd.GroupId, place.offsetsPartition);
    g.offsetsPartitions.add(place.offsetsPartition);
    if (g.streams === null) g.streams = { groupEpoch: 0, metadataHash: 0n, assignmentEpoch: -1, topology: null, members: new Map() };
    g.type = 'streams';
    const sg = g.streams;
    const d = (value?.data ?? null) as Record<string, unknown> | null;
    const member = (create: boolean): StreamsMember | null => {
      const id = kd.MemberId!;
      let mm = sg.members.get(id);
      if (!mm && create) {
        // an uninitialized member (StreamsGroup.getOrCreateUninitializedMember: empty fields)
        mm = { memberId: id, instanceId: null, rackId: null, clientId: '', clientHost: '', rebalanceTimeoutMs: -1, topologyEpoch: 0, processId: '', userEndpoint: null, clientTags: [], memberEpoch: 0, previousMemberEpoch: 0, state: 0, assigned: NO_TASKS, pendingRevocation: NO_TASKS, targetAssignment: null };
        sg.members.set(id, mm);
      }
      return mm ?? null;
    };
    switch (key.type) {
      case 17: // StreamsGroupMetadata
        if (d === null) {
          g.streams = null;
          g.type = g.classic ? 'classic' : 'simple';
          this.maybeDrop(g);
        } else {
          sg.groupEpoch = d.Epoch as number;
          sg.metadataHash = d.MetadataHash as bigint;
        }
        return;
      case 19: {
        // StreamsGroupMemberMetadata
        if (d === null) {
          sg.members.delete(kd.MemberId!);
          return;
        }
        const mm = member(true)!;
        const ep = d.UserEndpoint as { Host: string; Port: number } | null;
        mm.instanceId = d.InstanceId as string | null;
        mm.rackId = d.RackId as string | null;
        mm.clientId = d.ClientId as string;
        mm.clientHost = d.ClientHost as string;
        mm.rebalanceTimeoutMs = d.RebalanceTimeoutMs as number;
        mm.topologyEpoch = d.TopologyEpoch as number;
        mm.processId = d.ProcessId as string;
        mm.userEndpoint = ep ? { host: ep.Host, port: ep.Port } : null;
        mm.clientTags = (d.ClientTags as { Key: string; Value: string }[]).map((t) => ({ key: t.Key, value: t.Value }));
        return;
      }
      case 20: // StreamsGroupTargetAssignmentMetadata
        sg.assignmentEpoch = d === null ? -1 : (d.AssignmentEpoch as number);
        return;
      case 21: // StreamsGroupTargetAssignmentMember
        if (d === null) {
          const mm = member(false);
          if (mm) mm.targetAssignment = null;
        } else member(true)!.targetAssignment = tasksOf(d);
        return;
      case 22: {
        // StreamsGroupCurrentMemberAssignment
        if (d === null) {
          const mm = member(false);
          if (mm) {
            mm.memberEpoch = -1;
            mm.previousMemberEpoch = -1;
            mm.assigned = NO_TASKS;
            mm.pendingRevocation = NO_TASKS;
          }
          return;
        }
        const mm = member(true)!;
        mm.memberEpoch = d.MemberEpoch as number;
        mm.previousMemberEpoch = d.PreviousMemberEpoch as number;
        mm.state = d.State as number;
        mm.assigned = tasksOf(d);
        mm.pendingRevocation = tasksOf(d, 'PendingRevocation');
        return;
      }
      case 23: // StreamsGroupTopology
        sg.topology = d === null ? null : { epoch: d.Epoch as number, subtopologies: d.Subtopologies as StreamsSubtopology[] };
        return;
      default:
        return;
    }
  }

  private applyModern(key: ConsumerOffsetsKey, value: ConsumerOffsetsValue | null, place: OffsetsRecordPlace): void {
    const kd = key.data as { GroupId: string; MemberId?: string; RegularExpression?: string };
    const type = key.type;
    const kind: GroupType = type >= 9 && type <= 15 ? 'share' : type >= 17 ? 'streams' : 'consumer';
    if (kind === 'streams') {
      this.applyStreams(key, value, place);
      return;
    }
    const existing = this.groups.get(kd.GroupId);
    if (value === null && (!existing || existing.modern === null)) return; // tombstone of a group that does not exist: ignored, as Kafka's GroupMetadataManager.replay does (GroupIdNotFoundException caught)
    const g = existing ?? this.group(kd.GroupId, place.offsetsPartition);
    g.offsetsPartitions.add(place.offsetsPartition);
    if (g.modern === null) g.modern = { groupEpoch: 0, assignmentEpoch: -1, members: new Map(), topics: new Map(), regexTopics: new Map(), initializedTopics: [] };
    g.type = kind;
    const m = g.modern;
    const d = (value?.data ?? null) as Record<string, unknown> | null;
    const member = (create: boolean): ModernMember | null => {
      const id = kd.MemberId!;
      let mm = m.members.get(id);
      if (!mm && create) {
        mm = { memberId: id, instanceId: null, rackId: null, clientId: '', clientHost: '', subscribedTopicNames: [], subscribedTopicRegex: null, serverAssignor: null, rebalanceTimeoutMs: -1, memberEpoch: 0, previousMemberEpoch: 0, state: 0, assigned: [], pendingRevocation: [], targetAssignment: null, classicSessionTimeoutMs: null };
        m.members.set(id, mm);
      }
      return mm ?? null;
    };
    switch (type) {
      case 3: // ConsumerGroupMetadata
      case 11: // ShareGroupMetadata
        if (d === null) {
          g.modern = null;
          g.type = g.classic ? 'classic' : 'simple';
          this.maybeDrop(g);
        } else m.groupEpoch = d.Epoch as number;
        return;
      case 4: // ConsumerGroupPartitionMetadata
      case 9: // ShareGroupPartitionMetadata
        m.topics.clear();
        if (d !== null) for (const t of d.Topics as { TopicId: string; TopicName: string; NumPartitions: number }[]) m.topics.set(t.TopicId, { name: t.TopicName, numPartitions: t.NumPartitions });
        return;
      case 5: // ConsumerGroupMemberMetadata
      case 10: {
        // ShareGroupMemberMetadata
        if (d === null) {
          m.members.delete(kd.MemberId!);
          return;
        }
        const mm = member(true)!;
        mm.instanceId = (d.InstanceId as string | null | undefined) ?? null;
        mm.rackId = (d.RackId as string | null) ?? null;
        mm.clientId = d.ClientId as string;
        mm.clientHost = d.ClientHost as string;
        mm.subscribedTopicNames = d.SubscribedTopicNames as string[];
        mm.subscribedTopicRegex = (d.SubscribedTopicRegex as string | null | undefined) ?? null;
        mm.serverAssignor = (d.ServerAssignor as string | null | undefined) ?? null;
        mm.rebalanceTimeoutMs = (d.RebalanceTimeoutMs as number | undefined) ?? -1;
        const cm = d.ClassicMemberMetadata as { SessionTimeoutMs: number } | null | undefined;
        mm.classicSessionTimeoutMs = cm ? cm.SessionTimeoutMs : null;
        return;
      }
      case 6: // TargetAssignmentMetadata
      case 12:
        m.assignmentEpoch = d === null ? -1 : (d.AssignmentEpoch as number);
        return;
      case 7: // TargetAssignmentMember
      case 13: {
        if (d === null) {
          const mm = member(false);
          if (mm) mm.targetAssignment = null;
          return;
        }
        member(true)!.targetAssignment = d.TopicPartitions as TopicIdPartitions[];
        return;
      }
      case 8: // CurrentMemberAssignment
      case 14: {
        if (d === null) {
          const mm = member(false);
          if (mm) {
            mm.memberEpoch = -1;
            mm.previousMemberEpoch = -1;
            mm.assigned = [];
            mm.pendingRevocation = [];
          }
          return;
        }
        const mm = member(true)!;
        mm.memberEpoch = d.MemberEpoch as number;
        mm.previousMemberEpoch = d.PreviousMemberEpoch as number;
        mm.state = d.State as number;
        mm.assigned = d.AssignedPartitions as TopicIdPartitions[];
        mm.pendingRevocation = (d.PartitionsPendingRevocation as TopicIdPartitions[] | undefined) ?? [];
        return;
      }
      case 15: // ShareGroupStatePartitionMetadata
        m.initializedTopics = d === null ? [] : (d.InitializedTopics as { TopicId: string; TopicName: string; Partitions: number[] }[]).map((t) => ({ topicId: t.TopicId, topicName: t.TopicName, partitions: t.Partitions }));
        return;
      case 16: // ConsumerGroupRegularExpression
        if (d === null) m.regexTopics.delete(kd.RegularExpression!);
        else m.regexTopics.set(kd.RegularExpression!, d.Topics as string[]);
        return;
      default:
        return;
    }
  }
}

/** The tasks of a value's three task lists (`TasksTuple.fromTargetAssignmentRecord` and the member's). */
function tasksOf(d: Record<string, unknown>, suffix = ''): StreamsTasks {
  return { active: d[`ActiveTasks${suffix}`] as StreamsTaskIds[], standby: d[`StandbyTasks${suffix}`] as StreamsTaskIds[], warmup: d[`WarmupTasks${suffix}`] as StreamsTaskIds[] };
}

const NO_TASKS: StreamsTasks = Object.freeze({ active: [], standby: [], warmup: [] }) as StreamsTasks;

/**
 * The topics of a consumer-protocol subscription read with its v0 prefix, as the coordinator's
 * `ClassicGroup.computeSubscribedTopics` does; null when it does not parse.
 */
function subscriptionTopicsV0(sub: unknown): string[] | null {
  if (sub instanceof Uint8Array) {
    try {
      const r = new ProtocolReader(sub);
      r.int16('version');
      return r.array('topics', false, (x) => x.string('topic', false), false, 2)!;
    } catch {
      return null;
    }
  }
  return (sub as { topics: string[] }).topics;
}
