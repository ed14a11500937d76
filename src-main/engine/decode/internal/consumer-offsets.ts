/**
 * Decoder of the records of Kafka's `__consumer_offsets` topic, the group coordinator's log.
 *
 * Every record has a key that starts with an int16 — the key "version" of the classic coordinator,
 * which the new coordinator (`org.apache.kafka.coordinator.group`, KIP-848) calls the record type —
 * and, unless it is a tombstone, a value that starts with its own int16 version. Record types as the
 * new coordinator's `GroupCoordinatorRecordSerde` defines them (schemas in
 * `group-coordinator/src/main/resources/common/message/*.json`):
 *
 * | type | key → value | group kind |
 * |---|---|---|
 * | 0, 1 | OffsetCommitKey {group, topic, partition} → OffsetCommitValue v0–4 | any |
 * | 2 | GroupMetadataKey {group} → GroupMetadataValue v0–4 | classic |
 * | 3 | ConsumerGroupMetadataKey → ConsumerGroupMetadataValue {Epoch, MetadataHash (tag 0, 4.1+)} | consumer |
 * | 4 | ConsumerGroupPartitionMetadataKey → …PartitionMetadataValue {Topics} | consumer |
 * | 5 | ConsumerGroupMemberMetadataKey {GroupId, MemberId} → …MemberMetadataValue | consumer |
 * | 6 | ConsumerGroupTargetAssignmentMetadataKey → {AssignmentEpoch, AssignmentTimestamp (tag 0, 4.3+)} | consumer |
 * | 7 | ConsumerGroupTargetAssignmentMemberKey → {TopicPartitions} | consumer |
 * | 8 | ConsumerGroupCurrentMemberAssignmentKey → {MemberEpoch, …; entries' AssignmentEpochs (tag 0, 4.3+)} | consumer |
 * | 9 | ShareGroupPartitionMetadataKey → {Topics} | share |
 * | 10 | ShareGroupMemberMetadataKey → {RackId, ClientId, …} | share |
 * | 11 | ShareGroupMetadataKey → {Epoch, MetadataHash (4.1+, not tagged)} | share |
 * | 12 | ShareGroupTargetAssignmentMetadataKey → {AssignmentEpoch, AssignmentTimestamp (tag 0, 4.3+)} | share |
 * | 13 | ShareGroupTargetAssignmentMemberKey → {TopicPartitions} | share |
 * | 14 | ShareGroupCurrentMemberAssignmentKey → {MemberEpoch, …} | share |
 * | 15 | ShareGroupStatePartitionMetadataKey → {InitializedTopics, DeletingTopics} | share |
 * | 16 | ConsumerGroupRegularExpressionKey {GroupId, RegularExpression} → {Topics, Version, Timestamp} | consumer |
 * | 17 | StreamsGroupMetadataKey → {Epoch, MetadataHash} | streams |
 * | 19 | StreamsGroupMemberMetadataKey {GroupId, MemberId} → {InstanceId, RackId, ClientId, ClientHost, RebalanceTimeoutMs, TopologyEpoch, ProcessId, UserEndpoint, ClientTags} | streams |
 * | 20 | StreamsGroupTargetAssignmentMetadataKey → {AssignmentEpoch} | streams |
 * | 21 | StreamsGroupTargetAssignmentMemberKey → {ActiveTasks, StandbyTasks, WarmupTasks} | streams |
 * | 22 | StreamsGroupCurrentMemberAssignmentKey → {MemberEpoch, PreviousMemberEpoch, State, …Tasks, …TasksPendingRevocation} | streams |
 * | 23 | StreamsGroupTopologyKey → {Epoch, Subtopologies} | streams |
 *
 * Streams group records (KIP-1071) follow the schemas of **Apache Kafka 4.1.0**, plus the tagged fields added
 * since (checked against a 4.5-SNAPSHOT tree of Aug 2026: StreamsGroupMetadataValue tags 0–3, the task sets'
 * AssignmentEpochs, AssignmentTimestamp of type 20) (the release commit
 * 13f70256db3c, "Bump version to 4.1.0": `group-coordinator/src/main/resources/common/message/
 * StreamsGroup*.json`, every value version 0, flexible). That release has no record type 18 (the
 * StreamsGroupPartitionMetadata of development builds was dropped for the MetadataHash) nor 24.
 *
 * A key of another type is reported as `Unknown` (the new coordinator skips such records on load,
 * KIP-915); its value is kept as bytes. A null value is a tombstone (the offset, group or member was
 * deleted).
 *
 * Decoded data: `{ type, recordType, data }` for keys, `{ version, data }` for values, the schema's field names
 * (PascalCase for the KIP-848 records, as their schemas spell them; {@link consumerOffsetsJsonText} prints them
 * camelCase, as Kafka's JSON converters and `kafka-dump-log.sh --offsets-decoder` do),
 * fields only for the versions that have them, int64 as `bigint`, bytes as `Uint8Array` (base64 in
 * JSON text), Uuids as `Uuid.toString()`. For a classic group with protocolType `"consumer"` the
 * members' `subscription` and `assignment` are decoded with the consumer protocol
 * (`ConsumerProtocolSubscription` v0–3, `ConsumerProtocolAssignment` v0–3, as `kafka-dump-log.sh`
 * does), else (or when they do not parse) left as bytes.
 *
 * Read as Kafka's coordinator reads them: bytes after a key's or value's last field are ignored, and
 * strings that are not valid UTF-8 read with U+FFFD in place of the bad bytes (the generated message
 * classes' `read` takes the fields only and `Readable.readString` is `new String(bytes, UTF_8)`; called by
 * `CoordinatorRecordSerde.deserialize` in Kafka 4.x, by `GroupMetadataManager.readMessageKey` /
 * `readOffsetMessageValue` / `readGroupMessageValue` in 3.x). A record the coordinator loads is thus never
 * refused here for those two reasons.
 *
 * Pure: no I/O, no Node or DOM imports. Errors: {@link DecodeError} with the byte position in the key
 * or value and the field that failed.
 */
import { DecodeError } from '../decode-error.ts';
import { base64Of } from '../json-text.ts';
import { ProtocolReader, type UnknownTaggedField } from '../protocol-reader.ts';
import { jacksonString } from './message-schema.ts';

// ---------------------------------------------------------------------------------------------
// Record types

/** Names of the record types (the key's int16), as the schemas name their key/value pairs. */
export const CONSUMER_OFFSETS_RECORD_TYPES: Readonly<Record<number, string>> = {
  0: 'OffsetCommit',
  1: 'OffsetCommit',
  2: 'GroupMetadata',
  3: 'ConsumerGroupMetadata',
  4: 'ConsumerGroupPartitionMetadata',
  5: 'ConsumerGroupMemberMetadata',
  6: 'ConsumerGroupTargetAssignmentMetadata',
  7: 'ConsumerGroupTargetAssignmentMember',
  8: 'ConsumerGroupCurrentMemberAssignment',
  9: 'ShareGroupPartitionMetadata',
  10: 'ShareGroupMemberMetadata',
  11: 'ShareGroupMetadata',
  12: 'ShareGroupTargetAssignmentMetadata',
  13: 'ShareGroupTargetAssignmentMember',
  14: 'ShareGroupCurrentMemberAssignment',
  15: 'ShareGroupStatePartitionMetadata',
  16: 'ConsumerGroupRegularExpression',
  17: 'StreamsGroupMetadata',
  19: 'StreamsGroupMemberMetadata',
  20: 'StreamsGroupTargetAssignmentMetadata',
  21: 'StreamsGroupTargetAssignmentMember',
  22: 'StreamsGroupCurrentMemberAssignment',
  23: 'StreamsGroupTopology',
};

/** Which kind of group a record type belongs to (offset commits belong to any kind). */
export type GroupKind = 'any' | 'classic' | 'consumer' | 'share' | 'streams' | 'unknown';

/** The group kind of a record type; see the table in the module comment. */
export function groupKindOfRecordType(type: number): GroupKind {
  if (type === 0 || type === 1) return 'any';
  if (type === 2) return 'classic';
  if ((type >= 3 && type <= 8) || type === 16) return 'consumer';
  if (type >= 9 && type <= 15) return 'share';
  if (type === 17 || (type >= 19 && type <= 23)) return 'streams';
  return 'unknown';
}

// ---------------------------------------------------------------------------------------------
// Shapes

/** Offset commit key (types 0 and 1; `OffsetCommitKey.json`). */
export interface OffsetCommitKeyData {
  group: string;
  topic: string;
  partition: number;
}

/** Decoded key. `data` holds the schema's fields with their schema names. */
export type ConsumerOffsetsKey =
  | { type: 0 | 1; recordType: 'OffsetCommit'; data: OffsetCommitKeyData }
  | { type: 2; recordType: 'GroupMetadata'; data: { group: string } }
  | { type: number; recordType: string; data: { GroupId: string; MemberId?: string; RegularExpression?: string } }
  | { type: number; recordType: 'Unknown'; data: Record<string, never> };

/** OffsetCommitValue (v0–4): fields per version as Kafka's converter prints them. */
export interface OffsetCommitValueData {
  offset: bigint;
  /** v3+ (−1 = unknown). */
  leaderEpoch?: number;
  metadata: string;
  /** ms since the epoch. */
  commitTimestamp: bigint;
  /** v1 only (ms; −1 = use the broker's retention). */
  expireTimestamp?: bigint;
  /** v4 tag 0 (Kafka 4.1+, KAFKA-19141): the topic's id as Uuid.toString; absent when the zero Uuid (its default). */
  topicId?: string;
}

/** A topic and partitions (consumer protocol). */
export interface ConsumerProtocolTopicPartition {
  topic: string;
  partitions: number[];
}

/** ConsumerProtocolSubscription as its JSON converter prints it (fields per version). */
export interface ConsumerProtocolSubscriptionData {
  topics: string[];
  userData: Uint8Array | null;
  /** v1+ */
  ownedPartitions?: ConsumerProtocolTopicPartition[];
  /** v2+ (−1 = none) */
  generationId?: number;
  /** v3+ */
  rackId?: string | null;
}

/** ConsumerProtocolAssignment as its JSON converter prints it. */
export interface ConsumerProtocolAssignmentData {
  assignedPartitions: ConsumerProtocolTopicPartition[];
  userData: Uint8Array | null;
}

/** One member of a classic group (`GroupMetadataValue.MemberMetadata`). */
export interface ClassicMemberData {
  memberId: string;
  /** v3+ */
  groupInstanceId?: string | null;
  clientId: string;
  clientHost: string;
  /** v1+ (ms) */
  rebalanceTimeout?: number;
  /** ms */
  sessionTimeout: number;
  /** Decoded for protocolType "consumer" when it parses, else the raw bytes. */
  subscription: ConsumerProtocolSubscriptionData | Uint8Array;
  assignment: ConsumerProtocolAssignmentData | Uint8Array;
}

/** GroupMetadataValue (v0–4). */
export interface GroupMetadataValueData {
  protocolType: string;
  generation: number;
  protocol: string | null;
  leader: string | null;
  /** v2+ (ms; −1 = unknown) */
  currentStateTimestamp?: bigint;
  members: ClassicMemberData[];
}

/** A KIP-848 topic-id assignment entry. */
export interface TopicIdPartitions {
  TopicId: string;
  Partitions: number[];
  /** Tag 0 of a current member assignment's entry (KIP-1251, Kafka 4.3+): the epoch each partition was assigned at; absent when null. */
  AssignmentEpochs?: number[];
}

/**
 * A tag-0 `AssignmentEpochs` (nullable `[]int32`, default null) of a task or partition entry, set on
 * `entry` when not null (the JSON converter prints it only then).
 */
function assignmentEpochsTag(entry: { AssignmentEpochs?: number[] }): (tag: number, r: ProtocolReader) => boolean {
  return (tag, r) => {
    if (tag !== 0) return false;
    const e = r.array('AssignmentEpochs', true, (x) => x.int32('AssignmentEpochs'), true, 4);
    if (e !== null) entry.AssignmentEpochs = e;
    return true;
  };
}

/** Decoded value: the value's version and its fields; unknown tagged fields kept raw. */
export interface ConsumerOffsetsValue<D = unknown> {
  version: number;
  data: D;
  /** Tagged fields this decoder does not know (a newer broker's additions), raw. */
  unknownTaggedFields?: UnknownTaggedField[];
}

/** A whole decoded record: key and value (null for a tombstone). */
export interface DecodedConsumerOffsetsRecord {
  key: ConsumerOffsetsKey;
  value: ConsumerOffsetsValue | null;
}

// ---------------------------------------------------------------------------------------------
// Keys

/**
 * Decodes a `__consumer_offsets` key.
 * @param key the record's key bytes
 * @returns `{ type, recordType, data }`; record types this decoder does not know give `recordType: 'Unknown'`.
 * @throws DecodeError when the bytes do not follow the key's schema (too short; bytes left over are ignored, as Kafka's CoordinatorRecordSerde does).
 */
export function decodeConsumerOffsetsKey(key: Uint8Array): ConsumerOffsetsKey {
  const r = new ProtocolReader(key);
  const type = r.int16('key version (record type)');
  let k: ConsumerOffsetsKey;
  if (type === 0 || type === 1) {
    const group = r.string('group', false);
    const topic = r.string('topic', false);
    const partition = r.int32('partition');
    k = { type, recordType: 'OffsetCommit', data: { group, topic, partition } };
  } else if (type === 2) {
    k = { type, recordType: 'GroupMetadata', data: { group: r.string('group', false) } };
  } else if (type === 3 || type === 4 || type === 6 || type === 9 || type === 11 || type === 12 || type === 15 || type === 17 || type === 20 || type === 23) {
    k = { type, recordType: CONSUMER_OFFSETS_RECORD_TYPES[type]!, data: { GroupId: r.string('GroupId', false) } };
  } else if (type === 5 || type === 7 || type === 8 || type === 10 || type === 13 || type === 14 || type === 19 || type === 21 || type === 22) {
    const GroupId = r.string('GroupId', false);
    const MemberId = r.string('MemberId', false);
    k = { type, recordType: CONSUMER_OFFSETS_RECORD_TYPES[type]!, data: { GroupId, MemberId } };
  } else if (type === 16) {
    const GroupId = r.string('GroupId', false);
    const RegularExpression = r.string('RegularExpression', false);
    k = { type, recordType: 'ConsumerGroupRegularExpression', data: { GroupId, RegularExpression } };
  } else {
    return { type, recordType: 'Unknown', data: {} };
  }
  // bytes after the last field are ignored, as Kafka's coordinator ignores them (see the module comment)
  return k;
}

/** The group id a key names (every known record type has one); null for `Unknown`. */
export function groupIdOfKey(k: ConsumerOffsetsKey): string | null {
  const d = k.data as { group?: string; GroupId?: string };
  return d.group ?? d.GroupId ?? null;
}

// ---------------------------------------------------------------------------------------------
// Values

/**
 * Decodes an OffsetCommitValue (versions 0–4; v4 is flexible).
 * @throws DecodeError for another version or bytes that do not follow the schema.
 */
export function decodeOffsetCommitValue(value: Uint8Array): ConsumerOffsetsValue<OffsetCommitValueData> {
  const r = new ProtocolReader(value);
  const version = r.int16('value version');
  if (version < 0 || version > 4) throw new DecodeError(0, `OffsetCommitValue version ${version} is not one of 0–4`);
  const flexible = version >= 4;
  const offset = r.int64('offset');
  // members in schema order (offset, leaderEpoch, metadata, commitTimestamp, expireTimestamp, topicId): the JSON text follows it
  const leaderEpoch = version >= 3 ? r.int32('leaderEpoch') : undefined;
  const data: OffsetCommitValueData = leaderEpoch === undefined ? { offset, metadata: '', commitTimestamp: 0n } : { offset, leaderEpoch, metadata: '', commitTimestamp: 0n };
  data.metadata = r.string('metadata', flexible);
  data.commitTimestamp = r.int64('commitTimestamp');
  if (version === 1) data.expireTimestamp = r.int64('expireTimestamp');
  const out: ConsumerOffsetsValue<OffsetCommitValueData> = { version, data };
  if (flexible) {
    withUnknown(out, r.taggedFields('OffsetCommitValue', (tag, tr) => {
      if (tag !== 0) return false;
      const id = tr.uuid('topicId');
      if (id !== 'AAAAAAAAAAAAAAAAAAAAAA') data.topicId = id;
      return true;
    }));
  }
  return out;
}

/** A plain `Uint8Array` copy (never a view pinning the segment's buffer, never a Node Buffer). */
function copyOf(b: Uint8Array): Uint8Array;
function copyOf(b: Uint8Array | null): Uint8Array | null;
function copyOf(b: Uint8Array | null): Uint8Array | null {
  return b === null ? null : new Uint8Array(b);
}

function withUnknown(out: ConsumerOffsetsValue, unknown: UnknownTaggedField[]): void {
  if (unknown.length > 0) out.unknownTaggedFields = [...(out.unknownTaggedFields ?? []), ...unknown.map((u) => ({ tag: u.tag, data: copyOf(u.data) }))];
}

function consumerTopicPartitions(r: ProtocolReader, what: string): ConsumerProtocolTopicPartition[] {
  return r.array(what, false, (rr) => ({ topic: rr.string(`${what} topic`, false), partitions: rr.array(`${what} partitions`, false, (x) => x.int32(`${what} partition`), false, 4)! }), false, 6)!;
}

/** Highest ConsumerProtocolSubscription / Assignment version this decoder knows. */
const CONSUMER_PROTOCOL_MAX_VERSION = 3;

/**
 * Decodes a consumer-protocol subscription (`ConsumerProtocolSubscription.json`, v0–3). A higher
 * version is read as v3, as the Java client's `ConsumerProtocol.deserializeSubscription` does.
 * @returns the fields and the version read from the bytes.
 * @throws DecodeError for a negative version or bytes that do not follow the schema.
 */
export function decodeConsumerProtocolSubscription(bytes: Uint8Array): { version: number; data: ConsumerProtocolSubscriptionData } {
  const r = new ProtocolReader(bytes);
  const version = r.int16('subscription version');
  if (version < 0) throw new DecodeError(0, `subscription version ${version} is negative`);
  const v = Math.min(version, CONSUMER_PROTOCOL_MAX_VERSION);
  const topics = r.array('topics', false, (rr) => rr.string('topic', false), false, 2)!;
  const data: ConsumerProtocolSubscriptionData = { topics, userData: copyOf(r.bytes('userData', false)) };
  if (v >= 1) data.ownedPartitions = consumerTopicPartitions(r, 'ownedPartitions');
  if (v >= 2) data.generationId = r.int32('generationId');
  if (v >= 3) data.rackId = r.string('rackId', false, true);
  if (version <= CONSUMER_PROTOCOL_MAX_VERSION) r.end(`subscription v${version}`);
  return { version, data };
}

/**
 * Decodes a consumer-protocol assignment (`ConsumerProtocolAssignment.json`; every version has the
 * same fields). @throws DecodeError.
 */
export function decodeConsumerProtocolAssignment(bytes: Uint8Array): { version: number; data: ConsumerProtocolAssignmentData } {
  const r = new ProtocolReader(bytes);
  const version = r.int16('assignment version');
  if (version < 0) throw new DecodeError(0, `assignment version ${version} is negative`);
  const assignedPartitions = consumerTopicPartitions(r, 'assignedPartitions');
  const userData = copyOf(r.bytes('userData', false));
  if (version <= CONSUMER_PROTOCOL_MAX_VERSION) r.end(`assignment v${version}`);
  return { version, data: { assignedPartitions, userData } };
}

/**
 * Decodes a GroupMetadataValue (versions 0–4; v4 is flexible). For protocolType "consumer", member
 * subscriptions and assignments are decoded with the consumer protocol when they parse (as
 * `kafka-dump-log.sh --offsets-decoder` does), else left as bytes.
 * @throws DecodeError for another version or bytes that do not follow the schema.
 */
export function decodeGroupMetadataValue(value: Uint8Array): ConsumerOffsetsValue<GroupMetadataValueData> {
  const r = new ProtocolReader(value);
  const version = r.int16('value version');
  if (version < 0 || version > 4) throw new DecodeError(0, `GroupMetadataValue version ${version} is not one of 0–4`);
  const flexible = version >= 4;
  const protocolType = r.string('protocolType', flexible);
  const generation = r.int32('generation');
  const protocol = r.string('protocol', flexible, true);
  const leader = r.string('leader', flexible, true);
  // members in schema order (currentStateTimestamp before members): the JSON text follows it
  const currentStateTimestamp = version >= 2 ? r.int64('currentStateTimestamp') : undefined;
  const data: GroupMetadataValueData =
    currentStateTimestamp === undefined ? { protocolType, generation, protocol, leader, members: [] } : { protocolType, generation, protocol, leader, currentStateTimestamp, members: [] };
  const out: ConsumerOffsetsValue<GroupMetadataValueData> = { version, data };
  const unknown: UnknownTaggedField[] = [];
  data.members = r.array('members', flexible, (rr) => {
    const memberId = rr.string('memberId', flexible);
    const m: Partial<ClassicMemberData> = { memberId };
    if (version >= 3) m.groupInstanceId = rr.string('groupInstanceId', flexible, true);
    m.clientId = rr.string('clientId', flexible);
    m.clientHost = rr.string('clientHost', flexible);
    if (version >= 1) m.rebalanceTimeout = rr.int32('rebalanceTimeout');
    m.sessionTimeout = rr.int32('sessionTimeout');
    const sub = rr.bytes('subscription', flexible);
    const asg = rr.bytes('assignment', flexible);
    if (sub === null) throw new DecodeError(rr.pos, 'subscription: null where bytes are required');
    if (asg === null) throw new DecodeError(rr.pos, 'assignment: null where bytes are required');
    m.subscription = copyOf(sub);
    m.assignment = copyOf(asg);
    if (protocolType === 'consumer') {
      try {
        m.subscription = decodeConsumerProtocolSubscription(sub).data;
      } catch {
        // not a consumer-protocol subscription: kept as bytes, as kafka-dump-log.sh does
      }
      try {
        m.assignment = decodeConsumerProtocolAssignment(asg).data;
      } catch {
        // e.g. an empty assignment during a rebalance: kept as bytes
      }
    }
    if (flexible) unknown.push(...rr.taggedFields('member'));
    return m as ClassicMemberData;
  }, false, flexible ? 10 : 18)!;
  if (flexible) unknown.push(...r.taggedFields('GroupMetadataValue'));
  withUnknown(out, unknown);
  return out;
}

/** Reads a flexible (v0, compact) KIP-848 value: `fields` reads the body, tagged fields follow. */
function flexibleValue<D>(value: Uint8Array, name: string, fields: (r: ProtocolReader) => D, tagged?: (tag: number, r: ProtocolReader, data: D) => boolean): ConsumerOffsetsValue<D> {
  const r = new ProtocolReader(value);
  const version = r.int16('value version');
  if (version !== 0) throw new DecodeError(0, `${name} version ${version} is not 0 (the only version this decoder knows)`);
  const data = fields(r);
  const out: ConsumerOffsetsValue<D> = { version, data };
  withUnknown(out, r.taggedFields(name, tagged ? (tag, sub) => tagged(tag, sub, data) : undefined));
  return out;
}

const cstr = (r: ProtocolReader, what: string) => r.string(what, true);
const cstrNull = (r: ProtocolReader, what: string) => r.string(what, true, true);
const cstrings = (r: ProtocolReader, what: string) => r.array(what, true, (x) => cstr(x, what), false, 1)!;
const cint32s = (r: ProtocolReader, what: string) => r.array(what, true, (x) => x.int32(what), false, 4)!;

/** `withEpochs`: the entry knows tag 0 AssignmentEpochs (ConsumerGroupCurrentMemberAssignmentValue only). */
function topicIdPartitions(r: ProtocolReader, what: string, withEpochs = false): TopicIdPartitions[] {
  return r.array(what, true, (x) => {
    const TopicId = x.uuid(`${what} TopicId`);
    const Partitions = cint32s(x, `${what} Partitions`);
    const entry: TopicIdPartitions = { TopicId, Partitions };
    x.taggedFields(what, withEpochs ? assignmentEpochsTag(entry) : undefined);
    return entry;
  }, false, 18)!;
}

function topicMetadata(r: ProtocolReader) {
  return r.array('Topics', true, (x) => {
    const TopicId = x.uuid('TopicId');
    const TopicName = cstr(x, 'TopicName');
    const NumPartitions = x.int32('NumPartitions');
    const PartitionMetadata = x.array('PartitionMetadata', true, (p) => {
      const Partition = p.int32('Partition');
      const Racks = cstrings(p, 'Racks');
      p.taggedFields('PartitionMetadata');
      return { Partition, Racks };
    }, false, 6)!;
    x.taggedFields('TopicMetadata');
    return { TopicId, TopicName, NumPartitions, PartitionMetadata };
  }, false, 23)!;
}

/** A target assignment metadata value: AssignmentEpoch, and tag 0 AssignmentTimestamp (ms, default 0; KIP-1263, Kafka 4.3+) when not 0. */
function epochValue(value: Uint8Array, name: string, field: 'AssignmentEpoch') {
  return flexibleValue<Record<string, unknown>>(value, name, (r) => ({ [field]: r.int32(field) }), (tag, r, d) => {
    if (tag !== 0) return false;
    const t = r.int64('AssignmentTimestamp');
    if (t !== 0n) d.AssignmentTimestamp = t;
    return true;
  });
}

/** A Kafka Streams task set: the subtopology and its partitions (`TaskIds`, Kafka 4.1.0). */
export interface StreamsTaskIds {
  SubtopologyId: string;
  Partitions: number[];
  /** Tag 0 of a current member assignment's task set (Kafka 4.2+): absent when null. */
  AssignmentEpochs?: number[];
}

/** A changelog or repartition topic of a subtopology (`TopicInfo`, Kafka 4.1.0). */
export interface StreamsTopicInfo {
  Name: string;
  Partitions: number;
  ReplicationFactor: number;
  TopicConfigs: { key: string; value: string }[];
}

/** One subtopology of StreamsGroupTopologyValue (Kafka 4.1.0). */
export interface StreamsSubtopology {
  SubtopologyId: string;
  SourceTopics: string[];
  SourceTopicRegex: string[];
  StateChangelogTopics: StreamsTopicInfo[];
  RepartitionSinkTopics: string[];
  RepartitionSourceTopics: StreamsTopicInfo[];
  /** Indexes into SourceTopics / SourceTopicRegex / RepartitionSourceTopics. */
  CopartitionGroups: { SourceTopics: number[]; SourceTopicRegex: number[]; RepartitionSourceTopics: number[] }[];
}

/** `withEpochs`: the entry knows tag 0 AssignmentEpochs (StreamsGroupCurrentMemberAssignmentValue only, Kafka 4.2+). */
function streamsTaskIds(r: ProtocolReader, what: string, withEpochs = false): StreamsTaskIds[] {
  return r.array(what, true, (x) => {
    const SubtopologyId = cstr(x, `${what} SubtopologyId`);
    const Partitions = cint32s(x, `${what} Partitions`);
    const entry: StreamsTaskIds = { SubtopologyId, Partitions };
    x.taggedFields(`${what} TaskIds`, withEpochs ? assignmentEpochsTag(entry) : undefined);
    return entry;
  }, false, 3)!;
}

function streamsTopicInfos(r: ProtocolReader, what: string): StreamsTopicInfo[] {
  return r.array(what, true, (x) => {
    const Name = cstr(x, `${what} Name`);
    const Partitions = x.int32(`${what} Partitions`);
    const ReplicationFactor = x.int16(`${what} ReplicationFactor`);
    const TopicConfigs = x.array(`${what} TopicConfigs`, true, (c) => {
      const key = cstr(c, 'TopicConfig key');
      const value = cstr(c, 'TopicConfig value');
      c.taggedFields('TopicConfig');
      return { key, value };
    }, false, 3)!;
    x.taggedFields(`${what} TopicInfo`);
    return { Name, Partitions, ReplicationFactor, TopicConfigs };
  }, false, 9)!;
}

const cint16s = (r: ProtocolReader, what: string) => r.array(what, true, (x) => x.int16(what), false, 2)!;

/**
 * Decodes the value of a record of type `type` (the key's int16).
 * @returns `{ version, data }`; for unknown types, `data` is `{ bytes }` (the value undecoded).
 * @throws DecodeError for an unknown value version or bytes that do not follow the schema.
 */
export function decodeConsumerOffsetsValue(type: number, value: Uint8Array): ConsumerOffsetsValue {
  switch (type) {
    case 0:
    case 1:
      return decodeOffsetCommitValue(value);
    case 2:
      return decodeGroupMetadataValue(value);
    case 3:
      // MetadataHash: tag 0, default 0, Kafka 4.1+ (KIP-1101); kept only when not its default, as the JSON converter prints it
      return flexibleValue<Record<string, unknown>>(value, 'ConsumerGroupMetadataValue', (r) => ({ Epoch: r.int32('Epoch') }), (tag, r, d) => {
        if (tag !== 0) return false;
        const h = r.int64('MetadataHash');
        if (h !== 0n) d.MetadataHash = h;
        return true;
      });
    case 4:
      return flexibleValue(value, 'ConsumerGroupPartitionMetadataValue', (r) => ({ Topics: topicMetadata(r) }));
    case 5:
      return flexibleValue(
        value,
        'ConsumerGroupMemberMetadataValue',
        (r) => {
          const d: Record<string, unknown> = {
            InstanceId: cstrNull(r, 'InstanceId'),
            RackId: cstrNull(r, 'RackId'),
            ClientId: cstr(r, 'ClientId'),
            ClientHost: cstr(r, 'ClientHost'),
            SubscribedTopicNames: cstrings(r, 'SubscribedTopicNames'),
            SubscribedTopicRegex: cstrNull(r, 'SubscribedTopicRegex'),
            RebalanceTimeoutMs: r.int32('RebalanceTimeoutMs'),
            ServerAssignor: cstrNull(r, 'ServerAssignor'),
          };
          return d;
        },
        (tag, r, d) => {
          if (tag !== 0) return false;
          // ClassicMemberMetadata (nullable struct): a null is written as the "absent" marker −1 byte.
          const present = r.int8('ClassicMemberMetadata present');
          if (present < 0) {
            d.ClassicMemberMetadata = null;
            return true;
          }
          const SessionTimeoutMs = r.int32('SessionTimeoutMs');
          const SupportedProtocols = r.array('SupportedProtocols', true, (x) => {
            const Name = cstr(x, 'Name');
            const Metadata = x.bytes('Metadata', true);
            if (Metadata === null) throw new DecodeError(x.pos, 'Metadata: null where bytes are required');
            x.taggedFields('ClassicProtocol');
            return { Name, Metadata: copyOf(Metadata) };
          }, false, 3)!;
          r.taggedFields('ClassicMemberMetadata');
          d.ClassicMemberMetadata = { SessionTimeoutMs, SupportedProtocols };
          return true;
        },
      );
    case 6:
      return epochValue(value, 'ConsumerGroupTargetAssignmentMetadataValue', 'AssignmentEpoch');
    case 7:
      return flexibleValue(value, 'ConsumerGroupTargetAssignmentMemberValue', (r) => ({ TopicPartitions: topicIdPartitions(r, 'TopicPartitions') }));
    case 8:
      return flexibleValue(value, 'ConsumerGroupCurrentMemberAssignmentValue', (r) => ({
        MemberEpoch: r.int32('MemberEpoch'),
        PreviousMemberEpoch: r.int32('PreviousMemberEpoch'),
        State: r.int8('State'),
        AssignedPartitions: topicIdPartitions(r, 'AssignedPartitions', true),
        PartitionsPendingRevocation: topicIdPartitions(r, 'PartitionsPendingRevocation', true),
      }));
    case 9:
      return flexibleValue(value, 'ShareGroupPartitionMetadataValue', (r) => ({ Topics: topicMetadata(r) }));
    case 10:
      return flexibleValue(value, 'ShareGroupMemberMetadataValue', (r) => ({
        RackId: cstrNull(r, 'RackId'),
        ClientId: cstr(r, 'ClientId'),
        ClientHost: cstr(r, 'ClientHost'),
        SubscribedTopicNames: cstrings(r, 'SubscribedTopicNames'),
      }));
    case 11:
      // Kafka 4.1+ (KIP-1101): MetadataHash is a plain field; the 4.0 preview layout (Epoch only) does not decode, as Kafka 4.1+ does not read it
      return flexibleValue(value, 'ShareGroupMetadataValue', (r) => ({ Epoch: r.int32('Epoch'), MetadataHash: r.int64('MetadataHash') }));
    case 12:
      return epochValue(value, 'ShareGroupTargetAssignmentMetadataValue', 'AssignmentEpoch');
    case 13:
      return flexibleValue(value, 'ShareGroupTargetAssignmentMemberValue', (r) => ({ TopicPartitions: topicIdPartitions(r, 'TopicPartitions') }));
    case 14:
      return flexibleValue(value, 'ShareGroupCurrentMemberAssignmentValue', (r) => ({
        MemberEpoch: r.int32('MemberEpoch'),
        PreviousMemberEpoch: r.int32('PreviousMemberEpoch'),
        State: r.int8('State'),
        AssignedPartitions: topicIdPartitions(r, 'AssignedPartitions'),
      }));
    case 15:
      return flexibleValue(value, 'ShareGroupStatePartitionMetadataValue', (r) => ({
        InitializedTopics: r.array('InitializedTopics', true, (x) => {
          const TopicId = x.uuid('TopicId');
          const TopicName = cstr(x, 'TopicName');
          const Partitions = cint32s(x, 'Partitions');
          x.taggedFields('TopicPartitionsInfo');
          return { TopicId, TopicName, Partitions };
        }, false, 19)!,
        DeletingTopics: r.array('DeletingTopics', true, (x) => {
          const TopicId = x.uuid('TopicId');
          const TopicName = cstr(x, 'TopicName');
          x.taggedFields('TopicInfo');
          return { TopicId, TopicName };
        }, false, 18)!,
      }));
    case 16:
      return flexibleValue(value, 'ConsumerGroupRegularExpressionValue', (r) => ({
        Topics: cstrings(r, 'Topics'),
        Version: r.int64('Version'),
        Timestamp: r.int64('Timestamp'),
      }));
    // Streams groups (KIP-1071), as Apache Kafka 4.1.0 writes them (see the module comment).
    case 17:
      // tags: 0 ValidatedTopologyEpoch and 1 LastAssignmentConfigs (Kafka 4.2+), 2 StoredDescriptionTopologyEpoch and
      // 3 FailedDescriptionTopologyEpoch (4.4+, KAFKA-20621); each kept only when not its default (−1, null), as the JSON converter prints them
      return flexibleValue<Record<string, unknown>>(value, 'StreamsGroupMetadataValue', (r) => ({ Epoch: r.int32('Epoch'), MetadataHash: r.int64('MetadataHash') }), (tag, r, d) => {
        const epochTags = ['ValidatedTopologyEpoch', undefined, 'StoredDescriptionTopologyEpoch', 'FailedDescriptionTopologyEpoch'];
        if (tag === 1) {
          const cfg = r.array('LastAssignmentConfigs', true, (x) => {
            const Key = cstr(x, 'LastAssignmentConfig Key');
            const Value = cstr(x, 'LastAssignmentConfig Value');
            x.taggedFields('LastAssignmentConfig');
            return { Key, Value };
          }, true, 3);
          if (cfg !== null) d.LastAssignmentConfigs = cfg;
          return true;
        }
        const name = epochTags[tag];
        if (name === undefined) return false;
        const e = r.int32(name);
        if (e !== -1) d[name] = e;
        return true;
      });
    case 19:
      return flexibleValue(value, 'StreamsGroupMemberMetadataValue', (r) => {
        const InstanceId = cstrNull(r, 'InstanceId');
        const RackId = cstrNull(r, 'RackId');
        const ClientId = cstr(r, 'ClientId');
        const ClientHost = cstr(r, 'ClientHost');
        const RebalanceTimeoutMs = r.int32('RebalanceTimeoutMs');
        const TopologyEpoch = r.int32('TopologyEpoch');
        const ProcessId = cstr(r, 'ProcessId');
        // a nullable struct: one byte, −1 for null, else 1 and the struct
        let UserEndpoint: { Host: string; Port: number } | null = null;
        if (r.int8('UserEndpoint present') >= 0) {
          const Host = cstr(r, 'UserEndpoint Host');
          const Port = r.uint16('UserEndpoint Port');
          r.taggedFields('Endpoint');
          UserEndpoint = { Host, Port };
        }
        const ClientTags = r.array('ClientTags', true, (x) => {
          const Key = cstr(x, 'ClientTags Key');
          const Value = cstr(x, 'ClientTags Value');
          x.taggedFields('KeyValue');
          return { Key, Value };
        }, false, 3)!;
        return { InstanceId, RackId, ClientId, ClientHost, RebalanceTimeoutMs, TopologyEpoch, ProcessId, UserEndpoint, ClientTags };
      });
    case 20:
      return epochValue(value, 'StreamsGroupTargetAssignmentMetadataValue', 'AssignmentEpoch');
    case 21:
      return flexibleValue(value, 'StreamsGroupTargetAssignmentMemberValue', (r) => ({
        ActiveTasks: streamsTaskIds(r, 'ActiveTasks'),
        StandbyTasks: streamsTaskIds(r, 'StandbyTasks'),
        WarmupTasks: streamsTaskIds(r, 'WarmupTasks'),
      }));
    case 22:
      return flexibleValue(value, 'StreamsGroupCurrentMemberAssignmentValue', (r) => ({
        MemberEpoch: r.int32('MemberEpoch'),
        PreviousMemberEpoch: r.int32('PreviousMemberEpoch'),
        State: r.int8('State'),
        ActiveTasks: streamsTaskIds(r, 'ActiveTasks', true),
        StandbyTasks: streamsTaskIds(r, 'StandbyTasks', true),
        WarmupTasks: streamsTaskIds(r, 'WarmupTasks', true),
        ActiveTasksPendingRevocation: streamsTaskIds(r, 'ActiveTasksPendingRevocation', true),
        StandbyTasksPendingRevocation: streamsTaskIds(r, 'StandbyTasksPendingRevocation', true),
        WarmupTasksPendingRevocation: streamsTaskIds(r, 'WarmupTasksPendingRevocation', true),
      }));
    case 23:
      return flexibleValue(value, 'StreamsGroupTopologyValue', (r) => ({
        Epoch: r.int32('Epoch'),
        Subtopologies: r.array('Subtopologies', true, (x): StreamsSubtopology => {
          const SubtopologyId = cstr(x, 'SubtopologyId');
          const SourceTopics = cstrings(x, 'SourceTopics');
          const SourceTopicRegex = cstrings(x, 'SourceTopicRegex');
          const StateChangelogTopics = streamsTopicInfos(x, 'StateChangelogTopics');
          const RepartitionSinkTopics = cstrings(x, 'RepartitionSinkTopics');
          const RepartitionSourceTopics = streamsTopicInfos(x, 'RepartitionSourceTopics');
          const CopartitionGroups = x.array('CopartitionGroups', true, (c) => {
            const g = { SourceTopics: cint16s(c, 'CopartitionGroups SourceTopics'), SourceTopicRegex: cint16s(c, 'CopartitionGroups SourceTopicRegex'), RepartitionSourceTopics: cint16s(c, 'CopartitionGroups RepartitionSourceTopics') };
            c.taggedFields('CopartitionGroup');
            return g;
          }, false, 4)!;
          x.taggedFields('Subtopology');
          return { SubtopologyId, SourceTopics, SourceTopicRegex, StateChangelogTopics, RepartitionSinkTopics, RepartitionSourceTopics, CopartitionGroups };
        }, false, 8)!,
      }));
    default: {
      const r = new ProtocolReader(value);
      const version = r.int16('value version');
      return { version, data: { bytes: copyOf(value.subarray(2)) } };
    }
  }
}

/**
 * Decodes a whole `__consumer_offsets` record.
 * @param key the key bytes (a record of this topic always has one)
 * @param value the value bytes, or null for a tombstone
 * @throws DecodeError (position inside the key or the value, which the reason names) when either does not decode.
 */
export function decodeConsumerOffsetsRecord(key: Uint8Array | null, value: Uint8Array | null): DecodedConsumerOffsetsRecord {
  if (key === null) throw new DecodeError(0, 'key: a __consumer_offsets record always has a key');
  const k = decodeConsumerOffsetsKey(key);
  if (value === null) return { key: k, value: null };
  try {
    return { key: k, value: decodeConsumerOffsetsValue(k.type, value) };
  } catch (err) {
    if (err instanceof DecodeError) throw new DecodeError(err.position, `value: ${err.reason}`);
    throw err;
  }
}

// ---------------------------------------------------------------------------------------------
// JSON text as Kafka prints it

/**
 * Decoded key or value data (or any part of it) as the JSON text Kafka's generated `*JsonConverter.write`
 * gives (what `kafka-dump-log.sh --offsets-decoder` prints after `"data":`, DumpLogSegments.OffsetsMessageParser):
 * member names camelCase (JsonConverterGenerator writes `FieldSpec.camelCaseName`: the schema name with its
 * first letter lower-cased, `MemberEpoch` → `memberEpoch`), strings with Jackson's escapes, int64 with all
 * digits, bytes as base64, members in the order decoded (the schema's). `undefined` members are left out.
 */
export function consumerOffsetsJsonText(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'string') return jacksonString(v);
  if (typeof v === 'bigint' || typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (v instanceof Uint8Array) return `"${base64Of(v)}"`;
  if (Array.isArray(v)) return `[${v.map(consumerOffsetsJsonText).join(',')}]`;
  const parts: string[] = [];
  for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
    if (x === undefined) continue;
    parts.push(`${jacksonString(k.charAt(0).toLowerCase() + k.slice(1))}:${consumerOffsetsJsonText(x)}`);
  }
  return `{${parts.join(',')}}`;
}

/**
 * A value's payload text: `{"version":"V","data":{…}}` as dump-log prints it, or `<DELETE>` for a tombstone.
 * Tagged fields this decoder does not know are not printed, as Kafka's JsonConverter prints only the fields
 * its schema knows (they stay in the decoded value's `unknownTaggedFields`).
 */
export function consumerOffsetsValueText(v: ConsumerOffsetsValue | null): string {
  if (v === null) return '<DELETE>';
  return `{"version":"${v.version}","data":${consumerOffsetsJsonText(v.data)}}`;
}

// ---------------------------------------------------------------------------------------------
// One-line summaries (for tables)

/** A one-line text of a key, e.g. `OffsetCommit · my-group · orders-3`. @throws DecodeError */
export function summarizeConsumerOffsetsKey(k: ConsumerOffsetsKey): string {
  if (k.recordType === 'OffsetCommit') {
    const d = k.data as OffsetCommitKeyData;
    return `OffsetCommit · ${d.group} · ${d.topic}-${d.partition}`;
  }
  if (k.recordType === 'Unknown') return `record type ${k.type} (unknown)`;
  const d = k.data as { group?: string; GroupId?: string; MemberId?: string; RegularExpression?: string };
  const extra = d.MemberId !== undefined ? ` · member ${d.MemberId}` : d.RegularExpression !== undefined ? ` · /${d.RegularExpression}/` : '';
  return `${k.recordType} · ${d.group ?? d.GroupId}${extra}`;
}

/** A one-line text of a decoded value (`offset 42 · epoch 3 · v3`; `tombstone` for null). */
export function summarizeConsumerOffsetsValue(k: ConsumerOffsetsKey, v: ConsumerOffsetsValue | null): string {
  if (v === null) return 'tombstone (deleted)';
  if (k.recordType === 'OffsetCommit') {
    const d = v.data as OffsetCommitValueData;
    const epoch = d.leaderEpoch !== undefined && d.leaderEpoch >= 0 ? ` · epoch ${d.leaderEpoch}` : '';
    return `offset ${d.offset}${epoch}${d.metadata ? ` · "${d.metadata}"` : ''} · v${v.version}`;
  }
  if (k.recordType === 'GroupMetadata') {
    const g = v.data as GroupMetadataValueData;
    return `${g.protocolType || '(no type)'} · gen ${g.generation} · ${g.protocol ?? 'no protocol'} · ${g.members.length} member${g.members.length === 1 ? '' : 's'} · v${v.version}`;
  }
  const d = v.data as Record<string, unknown>;
  const parts: string[] = [];
  for (const f of ['Epoch', 'AssignmentEpoch', 'MemberEpoch', 'ClientId', 'ClientHost']) if (d[f] !== undefined) parts.push(`${f} ${String(d[f])}`);
  return `${parts.length > 0 ? `${parts.join(' · ')} · ` : ''}v${v.version}`;
}
