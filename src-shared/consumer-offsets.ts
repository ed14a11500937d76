/**
 * Decoder of the records of Kafka's `__consumer_offsets` topic (the group coordinator's log), so the
 * inspector can show what a support engineer needs: which group committed which offset, and who was
 * in a group. Follows Kafka's message schemas (`OffsetCommitKey.json`, `OffsetCommitValue.json`,
 * `GroupMetadataKey.json`, `GroupMetadataValue.json`; `GroupMetadataManager` of the classic group
 * coordinator) and, for member subscriptions and assignments of `protocolType = "consumer"`, the
 * consumer protocol (`ConsumerProtocolSubscription.json`, `ConsumerProtocolAssignment.json`).
 *
 * Key (int16 version, then):
 * - v0, v1 — offset commit: group (string), topic (string), partition (int32);
 * - v2 — group metadata: group (string);
 * - others — records of the newer group coordinator (KIP-848 and later): reported, not decoded.
 *
 * Offset commit value (int16 version, then): offset int64; leaderEpoch int32 (v3+); metadata
 * string; commitTimestamp int64; expireTimestamp int64 (v1 only). v4 is the first "flexible"
 * version (compact strings, tagged fields).
 *
 * Group metadata value: protocolType string; generation int32; protocol nullable string; leader
 * nullable string; currentStateTimestamp int64 (v2+); members array of {memberId; groupInstanceId
 * nullable (v3+); clientId; clientHost; rebalanceTimeout int32 (v1+); sessionTimeout int32;
 * subscription bytes; assignment bytes}. v4 is flexible.
 *
 * A null value is a tombstone (the offset or group was deleted). Strings are UTF-8 with an int16
 * length (−1 = null); in flexible versions an unsigned varint length + 1 (0 = null). int64 values are
 * returned as decimal strings. Pure: no Node or DOM imports.
 */

/** A decoding failure: where in the bytes and why. */
export class ConsumerOffsetsDecodeError extends Error {
  constructor(
    readonly position: number,
    readonly reason: string,
  ) {
    super(`byte ${position}: ${reason}`);
    this.name = 'ConsumerOffsetsDecodeError';
  }
}

/** A decoded key. */
export type ConsumerOffsetsKey =
  | { type: 'offset-commit'; version: number; group: string; topic: string; partition: number }
  | { type: 'group-metadata'; version: number; group: string }
  | { type: 'other'; version: number };

/** A decoded offset-commit value. */
export interface OffsetCommitValue {
  type: 'offset-commit';
  version: number;
  offset: string;
  /** v3+; −1 when unknown. Null before v3. */
  leaderEpoch: number | null;
  metadata: string;
  /** ms since the epoch. */
  commitTimestamp: string;
  /** v1 only (ms); null otherwise. */
  expireTimestamp: string | null;
}

/** A topic and partitions, as in a subscription's owned partitions or an assignment. */
export interface TopicPartitions {
  topic: string;
  partitions: number[];
}

/** A consumer's subscription (consumer protocol), when the member bytes decode as one. */
export interface ConsumerSubscription {
  version: number;
  topics: string[];
  /** Base64, or null. */
  userData: string | null;
  ownedPartitions: TopicPartitions[];
  generationId: number | null;
  rackId: string | null;
}

/** A consumer's assignment (consumer protocol). */
export interface ConsumerAssignment {
  version: number;
  assignedPartitions: TopicPartitions[];
  userData: string | null;
}

/** One member of a group. `subscription` / `assignment` are decoded for consumer groups, else base64. */
export interface GroupMember {
  memberId: string;
  groupInstanceId: string | null;
  clientId: string;
  clientHost: string;
  /** v1+; null before. */
  rebalanceTimeout: number | null;
  sessionTimeout: number;
  subscription: ConsumerSubscription | { base64: string };
  assignment: ConsumerAssignment | { base64: string };
}

/** A decoded group-metadata value. */
export interface GroupMetadataValue {
  type: 'group-metadata';
  version: number;
  protocolType: string;
  generation: number;
  protocol: string | null;
  leader: string | null;
  /** v2+ (ms); null before. */
  currentStateTimestamp: string | null;
  members: GroupMember[];
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** A cursor over big-endian Kafka protocol fields. */
class Reader {
  pos = 0;
  private readonly dv: DataView;

  constructor(private readonly b: Uint8Array) {
    this.dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
  }

  private need(n: number, what: string): void {
    if (this.pos + n > this.b.byteLength) throw new ConsumerOffsetsDecodeError(this.pos, `${what}: needs ${n} bytes, ${this.b.byteLength - this.pos} left`);
  }

  int16(what: string): number {
    this.need(2, what);
    const v = this.dv.getInt16(this.pos);
    this.pos += 2;
    return v;
  }

  int32(what: string): number {
    this.need(4, what);
    const v = this.dv.getInt32(this.pos);
    this.pos += 4;
    return v;
  }

  int64(what: string): string {
    this.need(8, what);
    const v = this.dv.getBigInt64(this.pos);
    this.pos += 8;
    return v.toString();
  }

  uvarint(what: string): number {
    let v = 0;
    for (let shift = 0; shift <= 28; shift += 7) {
      this.need(1, what);
      const byte = this.b[this.pos++]!;
      v += (byte & 0x7f) * 2 ** shift;
      if ((byte & 0x80) === 0) return v;
    }
    throw new ConsumerOffsetsDecodeError(this.pos, `${what}: unsigned varint longer than 5 bytes`);
  }

  private text(n: number, what: string): string {
    this.need(n, what);
    const at = this.pos;
    try {
      const s = utf8.decode(this.b.subarray(at, at + n));
      this.pos += n;
      return s;
    } catch {
      throw new ConsumerOffsetsDecodeError(at, `${what}: not UTF-8`);
    }
  }

  /** A string (nullable when allowed): int16 length, or compact (uvarint length + 1) in flexible versions. */
  string(what: string, flexible: boolean, nullable = false): string | null {
    const at = this.pos;
    const n = flexible ? this.uvarint(what) - 1 : this.int16(what);
    if (n < 0) {
      if (nullable) return null;
      throw new ConsumerOffsetsDecodeError(at, `${what}: null where a string is required`);
    }
    return this.text(n, what);
  }

  str(what: string, flexible: boolean): string {
    return this.string(what, flexible, false) as string;
  }

  /** Bytes: int32 length (−1 null), or compact in flexible versions. */
  bytes(what: string, flexible: boolean): Uint8Array | null {
    const n = flexible ? this.uvarint(what) - 1 : this.int32(what);
    if (n < 0) return null;
    this.need(n, what);
    const v = this.b.subarray(this.pos, this.pos + n);
    this.pos += n;
    return v;
  }

  /** An array length: int32 (−1 null), or compact in flexible versions. */
  arrayLength(what: string, flexible: boolean): number {
    const at = this.pos;
    const n = flexible ? this.uvarint(what) - 1 : this.int32(what);
    if (n > this.b.byteLength) throw new ConsumerOffsetsDecodeError(at, `${what}: array of ${n} entries cannot fit in ${this.b.byteLength} bytes`);
    return n;
  }

  /** Skips a flexible version's tagged fields. */
  taggedFields(what: string): void {
    const n = this.uvarint(`${what} tagged fields`);
    for (let i = 0; i < n; i++) {
      this.uvarint(`${what} tag`);
      const size = this.uvarint(`${what} tag size`);
      this.need(size, `${what} tag data`);
      this.pos += size;
    }
  }

  get remaining(): number {
    return this.b.byteLength - this.pos;
  }
}

function toBase64(b: Uint8Array | null): string | null {
  if (b === null) return null;
  let bin = '';
  for (let i = 0; i < b.length; i += 0x8000) bin += String.fromCharCode(...b.subarray(i, i + 0x8000));
  return btoa(bin);
}

/**
 * Decodes a `__consumer_offsets` key.
 * @throws ConsumerOffsetsDecodeError with the byte position when the bytes do not follow the schema.
 */
export function decodeConsumerOffsetsKey(key: Uint8Array): ConsumerOffsetsKey {
  const r = new Reader(key);
  const version = r.int16('key version');
  if (version === 0 || version === 1) {
    const group = r.str('group', false);
    const topic = r.str('topic', false);
    const partition = r.int32('partition');
    return { type: 'offset-commit', version, group, topic, partition };
  }
  if (version === 2) return { type: 'group-metadata', version, group: r.str('group', false) };
  return { type: 'other', version };
}

/**
 * Decodes an offset-commit value (versions 0–4).
 * @throws ConsumerOffsetsDecodeError for an unknown version or bytes that do not follow the schema.
 */
export function decodeOffsetCommitValue(value: Uint8Array): OffsetCommitValue {
  const r = new Reader(value);
  const version = r.int16('value version');
  if (version < 0 || version > 4) throw new ConsumerOffsetsDecodeError(0, `offset commit value version ${version} is not one of 0–4`);
  const flexible = version >= 4;
  const offset = r.int64('offset');
  const leaderEpoch = version >= 3 ? r.int32('leaderEpoch') : null;
  const metadata = r.str('metadata', flexible);
  const commitTimestamp = r.int64('commitTimestamp');
  const expireTimestamp = version === 1 ? r.int64('expireTimestamp') : null;
  if (flexible) r.taggedFields('value');
  return { type: 'offset-commit', version, offset, leaderEpoch, metadata, commitTimestamp, expireTimestamp };
}

function topicPartitions(r: Reader, what: string): TopicPartitions[] {
  const n = r.arrayLength(what, false);
  const out: TopicPartitions[] = [];
  for (let i = 0; i < n; i++) {
    const topic = r.str(`${what} topic`, false);
    const m = r.arrayLength(`${what} partitions`, false);
    const partitions: number[] = [];
    for (let k = 0; k < m; k++) partitions.push(r.int32(`${what} partition`));
    out.push({ topic, partitions });
  }
  return out;
}

/**
 * Decodes a consumer-protocol subscription (versions 0–3; later versions are read as 3, as the
 * Java client does). @throws ConsumerOffsetsDecodeError.
 */
export function decodeConsumerSubscription(bytes: Uint8Array): ConsumerSubscription {
  const r = new Reader(bytes);
  const version = r.int16('subscription version');
  if (version < 0) throw new ConsumerOffsetsDecodeError(0, `subscription version ${version} is negative`);
  const n = r.arrayLength('topics', false);
  const topics: string[] = [];
  for (let i = 0; i < n; i++) topics.push(r.str('topic', false));
  const userData = toBase64(r.bytes('userData', false));
  const ownedPartitions = version >= 1 ? topicPartitions(r, 'ownedPartitions') : [];
  const generationId = version >= 2 ? r.int32('generationId') : null;
  const rackId = version >= 3 ? r.string('rackId', false, true) : null;
  return { version, topics, userData, ownedPartitions, generationId, rackId };
}

/** Decodes a consumer-protocol assignment (all versions share the layout). @throws ConsumerOffsetsDecodeError. */
export function decodeConsumerAssignment(bytes: Uint8Array): ConsumerAssignment {
  const r = new Reader(bytes);
  const version = r.int16('assignment version');
  if (version < 0) throw new ConsumerOffsetsDecodeError(0, `assignment version ${version} is negative`);
  const assignedPartitions = topicPartitions(r, 'assignedPartitions');
  const userData = r.remaining > 0 ? toBase64(r.bytes('userData', false)) : null;
  return { version, assignedPartitions, userData };
}

/**
 * Decodes a group-metadata value (versions 0–4). Member subscriptions and assignments are decoded
 * when the group's protocolType is "consumer" and they parse; otherwise kept as base64.
 * @throws ConsumerOffsetsDecodeError for an unknown version or bytes that do not follow the schema.
 */
export function decodeGroupMetadataValue(value: Uint8Array): GroupMetadataValue {
  const r = new Reader(value);
  const version = r.int16('value version');
  if (version < 0 || version > 4) throw new ConsumerOffsetsDecodeError(0, `group metadata value version ${version} is not one of 0–4`);
  const flexible = version >= 4;
  const protocolType = r.str('protocolType', flexible);
  const generation = r.int32('generation');
  const protocol = r.string('protocol', flexible, true);
  const leader = r.string('leader', flexible, true);
  const currentStateTimestamp = version >= 2 ? r.int64('currentStateTimestamp') : null;
  const count = r.arrayLength('members', flexible);
  const members: GroupMember[] = [];
  for (let i = 0; i < Math.max(0, count); i++) {
    const memberId = r.str('memberId', flexible);
    const groupInstanceId = version >= 3 ? r.string('groupInstanceId', flexible, true) : null;
    const clientId = r.str('clientId', flexible);
    const clientHost = r.str('clientHost', flexible);
    const rebalanceTimeout = version >= 1 ? r.int32('rebalanceTimeout') : null;
    const sessionTimeout = r.int32('sessionTimeout');
    const sub = r.bytes('subscription', flexible) ?? new Uint8Array(0);
    const asg = r.bytes('assignment', flexible) ?? new Uint8Array(0);
    if (flexible) r.taggedFields('member');
    let subscription: GroupMember['subscription'] = { base64: toBase64(sub)! };
    let assignment: GroupMember['assignment'] = { base64: toBase64(asg)! };
    if (protocolType === 'consumer') {
      try {
        subscription = decodeConsumerSubscription(sub);
      } catch {
        // not a consumer-protocol subscription: kept as bytes
      }
      try {
        if (asg.length > 0) assignment = decodeConsumerAssignment(asg);
      } catch {
        // kept as bytes
      }
    }
    members.push({ memberId, groupInstanceId, clientId, clientHost, rebalanceTimeout, sessionTimeout, subscription, assignment });
  }
  if (flexible) r.taggedFields('value');
  return { type: 'group-metadata', version, protocolType, generation, protocol, leader, currentStateTimestamp, members };
}

/** A whole record of `__consumer_offsets`: its key and (unless a tombstone) its value, or why it does not decode. */
export interface DecodedConsumerOffsetsRecord {
  key: ConsumerOffsetsKey;
  /** Null for a tombstone (deleted offset or group). */
  value: OffsetCommitValue | GroupMetadataValue | null;
  /** For `other` keys: the value is left undecoded. */
  note?: string;
}

/**
 * Decodes a record of `__consumer_offsets`.
 * @throws ConsumerOffsetsDecodeError naming the byte position and the field that failed.
 */
export function decodeConsumerOffsetsRecord(key: Uint8Array | null, value: Uint8Array | null): DecodedConsumerOffsetsRecord {
  if (key === null) throw new ConsumerOffsetsDecodeError(0, 'a __consumer_offsets record always has a key');
  const k = decodeConsumerOffsetsKey(key);
  if (value === null) return { key: k, value: null };
  if (k.type === 'offset-commit') return { key: k, value: decodeOffsetCommitValue(value) };
  if (k.type === 'group-metadata') return { key: k, value: decodeGroupMetadataValue(value) };
  return { key: k, value: null, note: `key version ${k.version} is a record of the newer group coordinator (KIP-848); its value is not decoded here` };
}

/** A one-line summary of a key for tables, e.g. `offset commit · my-group · orders-3`; null when it does not decode. */
export function summarizeConsumerOffsetsKey(key: Uint8Array | null): { text: string; key: ConsumerOffsetsKey } | null {
  if (key === null) return null;
  try {
    const k = decodeConsumerOffsetsKey(key);
    const text = k.type === 'offset-commit' ? `offset commit · ${k.group} · ${k.topic}-${k.partition}` : k.type === 'group-metadata' ? `group metadata · ${k.group}` : `key v${k.version} (newer coordinator)`;
    return { text, key: k };
  } catch {
    return null;
  }
}

/**
 * A one-line summary of a value for tables (`offset 42 · epoch 3 · v3`, `consumer · gen 5 · range ·
 * 2 members · v3`), given its decoded key; null when it does not decode (e.g. only part of it is at hand).
 */
export function summarizeConsumerOffsetsValue(key: ConsumerOffsetsKey, value: Uint8Array | null): string | null {
  if (value === null) return key.type === 'other' ? '(not decoded)' : 'tombstone (deleted)';
  try {
    if (key.type === 'offset-commit') {
      const v = decodeOffsetCommitValue(value);
      return `offset ${v.offset}${v.leaderEpoch !== null && v.leaderEpoch >= 0 ? ` · epoch ${v.leaderEpoch}` : ''}${v.metadata ? ` · "${v.metadata}"` : ''} · v${v.version}`;
    }
    if (key.type === 'group-metadata') {
      const g = decodeGroupMetadataValue(value);
      return `${g.protocolType || '(no type)'} · gen ${g.generation} · ${g.protocol ?? 'no protocol'} · ${g.members.length} member${g.members.length === 1 ? '' : 's'} · v${g.version}`;
    }
    return null;
  } catch {
    return null;
  }
}

/** A one-line summary of a whole record for tables; null when it does not decode. */
export function summarizeConsumerOffsetsRecord(key: Uint8Array | null, value: Uint8Array | null): { key: string; value: string } | null {
  const k = summarizeConsumerOffsetsKey(key);
  if (!k) return null;
  const v = summarizeConsumerOffsetsValue(k.key, value);
  return v === null ? null : { key: k.text, value: v };
}
