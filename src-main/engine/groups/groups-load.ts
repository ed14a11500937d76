/**
 * Loads the consumer groups of opened log directories from every `__consumer_offsets` partition among
 * them, as Kafka's group coordinator loads a partition when it becomes its leader
 * (`GroupMetadataManager.loadGroupsAndOffsets`; the new coordinator's `CoordinatorLoaderImpl` feeding
 * `GroupCoordinatorShard.replay`): every record in offset order, transaction markers applied, the
 * latest record per key winning (see group-replay.ts).
 *
 * Opened folders may hold several replicas of a partition (a support bundle with one folder per
 * broker): for `__consumer_offsets` and for data partitions, the replica with the highest log end
 * offset is used (the others are named in {@link LoadedGroups.replicasIgnored}).
 *
 * Bad input never stops the load: damaged bytes, a key or value that does not decode are listed with
 * file, byte position, offset and reason (on their group when the key could be read). A key or value
 * that does not decode (or a record without a key) is where a broker's coordinator fails to load the whole
 * partition (CoordinatorLoaderImpl): the first one per partition is kept in `store.loadFailures`, and the
 * groups of that partition say so (group-offsets.ts).
 */
import { DecodeError } from '../decode/decode-error.ts';
import { decodeConsumerOffsetsKey, decodeConsumerOffsetsValue, groupIdOfKey, type ConsumerOffsetsKey } from '../decode/internal/consumer-offsets.ts';
import { KlxError } from '../errors.ts';
import { CONTROL_ABORT, CONTROL_COMMIT } from '../format/control.ts';
import { decompress } from '../format/compression.ts';
import { decodeV2Records } from '../format/record-batch.ts';
import { V2_HEADER_SIZE, type BatchHeader as KafkaBatchHeader, type KafkaRecord } from '../format/types.ts';
import { Pacer, recordsOf, walkLog, type LongReadOptions } from '../log/log-walk.ts';
import type { PartitionLog } from '../log/partition-log.ts';
import { GroupStore, offsetKey, type CommitSlot } from './group-replay.ts';
import { DEFAULT_OFFSETS_TOPIC_PARTITIONS, OFFSETS_TOPIC, offsetsPartitionFor } from './offsets-topic.ts';

/** Options of {@link loadGroups}. */
export interface LoadGroupsOptions extends LongReadOptions {
  /** offsets.topic.num.partitions; default: 50 (Kafka's default), or more when a higher partition is opened. */
  offsetsTopicPartitions?: number;
}

/** What is known of `__consumer_offsets` in the opened folders. */
export interface OffsetsTopicLayout {
  /** offsets.topic.num.partitions used to place groups. */
  numPartitions: number;
  /** True when `numPartitions` is Kafka's default (50, GroupCoordinatorConfig) or inferred, not given. */
  numPartitionsAssumed: boolean;
  /** Partitions whose folder was opened (ascending). */
  present: number[];
  /** Partitions of [0, numPartitions) without a folder among the opened ones (ascending). */
  absent: number[];
}

/** Result of {@link loadGroups}. */
export interface LoadedGroups {
  store: GroupStore;
  offsetsTopic: OffsetsTopicLayout;
  /** The `__consumer_offsets` partitions read, by partition number. */
  offsetsLogs: Map<number, PartitionLog>;
  /** The data partitions opened, by `topic\u0000partition` (one replica each). */
  partitions: Map<string, PartitionLog>;
  /** Partition folders not used because another replica of the same partition has a higher log end offset. */
  replicasIgnored: string[];
  /** Bytes of `__consumer_offsets` segments read. */
  bytesRead: number;
}

/** Key of a data partition in {@link LoadedGroups.partitions}. */
export function partitionKey(topic: string, partition: number): string {
  return `${topic}\u0000${partition}`;
}

/**
 * The one replica per partition of `logs`: highest log end offset wins (ties: the first given).
 * Only `normal` partition folders (not `-delete`/`-future`/`-stray`).
 */
export function choosePartitions(logs: readonly PartitionLog[]): { chosen: Map<string, PartitionLog>; ignored: string[] } {
  const chosen = new Map<string, PartitionLog>();
  const ignored: string[] = [];
  for (const log of logs) {
    if (log.kind !== 'normal') continue;
    const k = partitionKey(log.topic, log.partition);
    const prev = chosen.get(k);
    if (!prev) chosen.set(k, log);
    else if (log.logEndOffset > prev.logEndOffset) {
      ignored.push(prev.dir);
      chosen.set(k, log);
    } else ignored.push(log.dir);
  }
  return { chosen, ignored };
}

/**
 * Loads the groups of every `__consumer_offsets` partition in `logs`.
 * @param logs every opened partition (data partitions are kept for lag, not read here)
 * @throws KlxError `cancelled` when the signal aborts; never for bad records (listed instead).
 */
export async function loadGroups(logs: readonly PartitionLog[], opts: LoadGroupsOptions = {}): Promise<LoadedGroups> {
  const { chosen, ignored } = choosePartitions(logs);
  const offsetsLogs = [...chosen.values()].filter((l) => l.topic === OFFSETS_TOPIC).sort((a, b) => a.partition - b.partition);
  const present = offsetsLogs.map((l) => l.partition);
  let numPartitions = opts.offsetsTopicPartitions ?? DEFAULT_OFFSETS_TOPIC_PARTITIONS;
  let assumed = opts.offsetsTopicPartitions === undefined;
  if (assumed && present.length > 0 && present[present.length - 1]! >= numPartitions) numPartitions = present[present.length - 1]! + 1;
  if (!Number.isInteger(numPartitions) || numPartitions < 1) throw new KlxError('invalid-argument', `offsets.topic.num.partitions must be a positive integer, got ${numPartitions}`);
  const have = new Set(present);
  const absent: number[] = [];
  for (let p = 0; p < numPartitions; p++) if (!have.has(p)) absent.push(p);

  const store = new GroupStore();
  const total = offsetsLogs.reduce((s, l) => s + l.logSize, 0);
  const pacer = new Pacer({ signal: opts.signal, onProgress: opts.onProgress, phase: 'load consumer groups from __consumer_offsets', total });
  let bytesRead = 0;
  for (const log of offsetsLogs) {
    bytesRead += await replayPartition(log, store, pacer);
    store.endPartition(log.partition);
  }
  pacer.finish();
  const partitions = new Map<string, PartitionLog>();
  for (const [k, l] of chosen) if (l.topic !== OFFSETS_TOPIC) partitions.set(k, l);
  return { store, offsetsTopic: { numPartitions, numPartitionsAssumed: assumed, present, absent }, offsetsLogs: new Map(offsetsLogs.map((l) => [l.partition, l])), partitions, replicasIgnored: ignored, bytesRead };
}

/**
 * The distinct keys met in a partition, without an object per key: their bytes in one growing arena,
 * found by an FNV-1a hash through chained int32 arrays; per key its {@link CommitSlot} (offset
 * commits) and its decoded key (decoded when first needed). A group commits the same keys over and
 * over, so after the first round every record is found here without decoding its key.
 */
class KeyTable {
  size = 0;
  private heads = new Int32Array(4096).fill(-1);
  private nexts = new Int32Array(4096);
  private hashes = new Int32Array(4096);
  private starts = new Int32Array(4096);
  private lens = new Int32Array(4096);
  private arena = new Uint8Array(1 << 18);
  /** The arena read four bytes at a time (see {@link isAt}). */
  private arenaView = new DataView(this.arena.buffer);
  private used = 0;
  /** Slot of key i (offset commits), else null. */
  readonly slots: (CommitSlot | null)[] = [];
  /** Decoded key i, once needed. */
  readonly keys: (ConsumerOffsetsKey | null)[] = [];

  /** FNV-1a of `b[from, to)`. */
  static hash(b: Uint8Array, from: number, to: number): number {
    let h = 0x811c9dc5;
    for (let i = from; i < to; i++) h = Math.imul(h ^ b[i]!, 0x01000193);
    return h;
  }

  /**
   * True when key `i` is the bytes `d[at, at + n)`. The replay first tries the key after the one last
   * met: a group's commit requests list the same partitions in the same order, round after round.
   */
  is(i: number, d: Uint8Array, at: number, n: number): boolean {
    if (i >= this.size || this.lens[i] !== n) return false;
    const arena = this.arena;
    const s = this.starts[i]!;
    for (let j = 0; j < n; j++) if (arena[s + j] !== d[at + j]) return false;
    return true;
  }

  /**
   * {@link is} for bytes that `dv` also views (`abs`: the position of `d[at]` in `dv`): compared four
   * bytes at a time.
   */
  isAt(i: number, dv: DataView, abs: number, d: Uint8Array, at: number, n: number): boolean {
    if (i >= this.size || this.lens[i] !== n) return false;
    const av = this.arenaView;
    const s = this.starts[i]!;
    let j = 0;
    for (; j + 4 <= n; j += 4) if (av.getInt32(s + j) !== dv.getInt32(abs + j)) return false;
    const arena = this.arena;
    for (; j < n; j++) if (arena[s + j] !== d[at + j]) return false;
    return true;
  }

  /** Index of the key `d[at, at + n)` with hash `h`, or −1. */
  find(d: Uint8Array, at: number, n: number, h: number): number {
    const arena = this.arena;
    for (let i = this.heads[h & (this.heads.length - 1)]!; i >= 0; i = this.nexts[i]!) {
      if (this.hashes[i] !== h || this.lens[i] !== n) continue;
      const s = this.starts[i]!;
      let j = 0;
      while (j < n && arena[s + j] === d[at + j]) j++;
      if (j === n) return i;
    }
    return -1;
  }

  /** Adds the key `d[at, at + n)` (not present) with its slot; returns its index. */
  add(d: Uint8Array, at: number, n: number, h: number, slot: CommitSlot | null, key: ConsumerOffsetsKey | null): number {
    const i = this.size++;
    if (i === this.nexts.length) this.grow();
    if (this.used + n > this.arena.length) {
      const a = new Uint8Array(Math.max(this.arena.length * 2, this.used + n));
      a.set(this.arena.subarray(0, this.used));
      this.arena = a;
      this.arenaView = new DataView(a.buffer);
    }
    const arena = this.arena;
    for (let j = 0; j < n; j++) arena[this.used + j] = d[at + j]!;
    this.starts[i] = this.used;
    this.lens[i] = n;
    this.used += n;
    this.hashes[i] = h;
    const b = h & (this.heads.length - 1);
    this.nexts[i] = this.heads[b]!;
    this.heads[b] = i;
    this.slots.push(slot);
    this.keys.push(key);
    return i;
  }

  /** A copy of key i's bytes. */
  bytes(i: number): Uint8Array {
    return this.arena.slice(this.starts[i]!, this.starts[i]! + this.lens[i]!);
  }

  private grow(): void {
    const cap = this.nexts.length * 2;
    const widen = (a: Int32Array<ArrayBuffer>): Int32Array<ArrayBuffer> => {
      const w = new Int32Array(cap);
      w.set(a);
      return w;
    };
    this.nexts = widen(this.nexts);
    this.hashes = widen(this.hashes);
    this.starts = widen(this.starts);
    this.lens = widen(this.lens);
    this.heads = new Int32Array(cap).fill(-1);
    for (let i = 0; i < this.size - 1; i++) {
      const b = this.hashes[i]! & (cap - 1);
      this.nexts[i] = this.heads[b]!;
      this.heads[b] = i;
    }
  }
}

/** Bytes of a key cache before it is emptied (bounded memory on hostile data with ever-new keys). */
const KEY_CACHE_MAX = 2_000_000;

/** Feeds one `__consumer_offsets` partition to the store; returns the bytes walked. */
async function replayPartition(log: PartitionLog, store: GroupStore, pacer: Pacer): Promise<number> {
  const p = log.partition;
  const logStart = log.logStartOffset;
  let bytes = 0;
  const ctx: ReplayContext = { store, p, keys: new KeyTable(), lastKey: -1, dv: null, lastGroupAt: -1, lastGroupLen: 0, lastGroupBuf: null, lastGroup: '', lastTopicAt: -1, lastTopicLen: 0, lastTopicBuf: null, lastTopic: '' };
  // Nothing of an entry is kept past it (keys are copied into the key table): read windows are reused.
  for (const e of walkLog(log, { reuseWindows: true })) {
    if (e.type === 'segment') continue;
    if (e.type !== 'batch') {
      // zero-filled tails (preallocated or crashed) are what a broker truncates on recovery (LogSegment.recover): not a problem of the groups
      if (!e.zeros) store.problem({ offsetsPartition: p, file: e.file, position: e.position, offset: -1n, groupId: null, reason: `${e.size} bytes that are not a record batch: ${e.reason}` });
      continue;
    }
    const h = e.header;
    bytes += h.size;
    await pacer.step(h.size);
    if (h.lastOffset < logStart) continue;
    const file = e.segment.files.log;
    if (h.crcValid === false) {
      store.problem({ offsetsPartition: p, file, position: h.position, offset: h.baseOffset, groupId: null, reason: `CRC-32C mismatch (stored ${h.crc}): the batch is corrupt; its records are not applied` });
      continue;
    }
    if (!h.isControl && h.magic === 2 && h.baseOffset >= logStart && scanRecordsArea(ctx, e, file)) continue;
    let records: KafkaRecord[];
    try {
      records = recordsOf(e);
    } catch (err) {
      const k = err instanceof KlxError ? err : null;
      store.problem({ offsetsPartition: p, file, position: h.position, offset: h.baseOffset, groupId: null, reason: k?.reason ?? String(err) });
      continue;
    }
    if (h.isControl) {
      const t = records[0]?.control?.typeId;
      if (h.producerId >= 0n && (t === CONTROL_COMMIT || t === CONTROL_ABORT)) store.onMarker(p, h.producerId, t === CONTROL_COMMIT);
      continue;
    }
    const producerId = h.magic === 2 && h.isTransactional && h.producerId >= 0n ? h.producerId : null;
    for (const r of records) {
      if (r.offset < logStart) continue;
      applyRecord(ctx, r.key, r.value, r.offset, file, h.position, producerId);
    }
  }
  return bytes;
}

/** What the replay of one partition carries from record to record. */
interface ReplayContext {
  store: GroupStore;
  /** The `__consumer_offsets` partition. */
  p: number;
  /** The distinct keys of the partition: a group commits the same keys over and over. */
  keys: KeyTable;
  /** Index of the key of the last record met (−1: none). */
  lastKey: number;
  /** A DataView over the last buffer read from. */
  dv: DataView | null;
  /** The last group id and topic read from key bytes, with where their bytes were: records of one commit request share them. */
  lastGroupBuf: Uint8Array | null;
  lastGroupAt: number;
  lastGroupLen: number;
  lastGroup: string;
  lastTopicBuf: Uint8Array | null;
  lastTopicAt: number;
  lastTopicLen: number;
  lastTopic: string;
}

/** Index in the key table of the key `d[at, at + n)` (added on first sight), or −1 when it does not decode (reported). */
function keyIndexOf(ctx: ReplayContext, d: Uint8Array, at: number, n: number, hash: number, batchBase: bigint, offsetDelta: number, file: string, position: number): number {
  const hit = ctx.keys.find(d, at, n, hash);
  if (hit >= 0) return hit;
  if (ctx.keys.size >= KEY_CACHE_MAX) {
    ctx.keys = new KeyTable();
    ctx.lastKey = -1;
  }
  const slot = commitSlotOf(ctx, d, at, n);
  if (slot !== null) return ctx.keys.add(d, at, n, hash, slot, null);
  let key: ConsumerOffsetsKey;
  try {
    key = decodeConsumerOffsetsKey(d.subarray(at, at + n));
  } catch (err) {
    ctx.store.loadFailure({ offsetsPartition: ctx.p, file, position, offset: batchBase + BigInt(offsetDelta), groupId: null, reason: `key: ${reasonOf(err)}` });
    return -1;
  }
  let s: CommitSlot | null = null;
  if (key.recordType === 'OffsetCommit') {
    const k = key.data as { group: string; topic: string; partition: number };
    s = { groupId: k.group, topic: k.topic, partition: k.partition, commit: null, epoch: -1 };
  }
  return ctx.keys.add(d, at, n, hash, s, key);
}

/** The decoded key of table entry `i` (decoded from its bytes when first needed; it decoded once already). */
function decodedKey(ctx: ReplayContext, i: number): ConsumerOffsetsKey {
  let k: ConsumerOffsetsKey | null | undefined = ctx.keys.keys[i];
  if (k === null || k === undefined) {
    const s = ctx.keys.slots[i];
    k = s ? ({ type: ctx.keys.bytes(i)[1]!, recordType: 'OffsetCommit', data: { group: s.groupId, topic: s.topic, partition: s.partition } } as ConsumerOffsetsKey) : decodeConsumerOffsetsKey(ctx.keys.bytes(i));
    ctx.keys.keys[i] = k;
  }
  return k;
}

/**
 * An OffsetCommitKey v0/v1 (`int16 version, string group, string topic, int32 partition`, exactly)
 * read in place, with the group id and topic strings of the previous key reused when their bytes are
 * the same; null when the bytes are not one (the checked decoder then names the problem).
 */
function commitSlotOf(ctx: ReplayContext, d: Uint8Array, at: number, n: number): CommitSlot | null {
  if (n < 10 || d[at] !== 0 || (d[at + 1] !== 0 && d[at + 1] !== 1)) return null;
  const gl = (d[at + 2]! << 8) | d[at + 3]!;
  if (gl > 0x7fff || 4 + gl + 2 > n) return null;
  const tAt = at + 4 + gl;
  const tl = (d[tAt]! << 8) | d[tAt + 1]!;
  if (tl > 0x7fff || 4 + gl + 2 + tl + 4 !== n) return null;
  let group: string;
  let topic: string;
  try {
    if (ctx.lastGroupBuf !== null && ctx.lastGroupLen === gl && sameBytes(ctx.lastGroupBuf, ctx.lastGroupAt, d, at + 4, gl)) group = ctx.lastGroup;
    else {
      group = utf8.decode(d.subarray(at + 4, at + 4 + gl));
      ctx.lastGroupBuf = d;
      ctx.lastGroupAt = at + 4;
      ctx.lastGroupLen = gl;
      ctx.lastGroup = group;
    }
    if (ctx.lastTopicBuf !== null && ctx.lastTopicLen === tl && sameBytes(ctx.lastTopicBuf, ctx.lastTopicAt, d, tAt + 2, tl)) topic = ctx.lastTopic;
    else {
      topic = utf8.decode(d.subarray(tAt + 2, tAt + 2 + tl));
      ctx.lastTopicBuf = d;
      ctx.lastTopicAt = tAt + 2;
      ctx.lastTopicLen = tl;
      ctx.lastTopic = topic;
    }
  } catch {
    return null;
  }
  const pAt = tAt + 2 + tl;
  const partition = (d[pAt]! << 24) | (d[pAt + 1]! << 16) | (d[pAt + 2]! << 8) | d[pAt + 3]!;
  return { groupId: group, topic, partition, commit: null, epoch: -1 };
}

function sameBytes(a: Uint8Array, aAt: number, b: Uint8Array, bAt: number, n: number): boolean {
  for (let i = 0; i < n; i++) if (a[aAt + i] !== b[bAt + i]) return false;
  return true;
}

/** Applies one record (any type) to the store. */
function applyRecord(ctx: ReplayContext, keyBytes: Uint8Array | null, valueBytes: Uint8Array | null, recordOffset: bigint, file: string, position: number, producerId: bigint | null): void {
  const store = ctx.store;
  if (keyBytes === null) {
    store.loadFailure({ offsetsPartition: ctx.p, file, position, offset: recordOffset, groupId: null, reason: 'record without a key (every __consumer_offsets record has one)' });
    return;
  }
  const i = keyIndexOf(ctx, keyBytes, 0, keyBytes.length, KeyTable.hash(keyBytes, 0, keyBytes.length), recordOffset, 0, file, position);
  if (i < 0) return;
  applyKeyed(ctx, decodedKey(ctx, i), valueBytes, recordOffset, file, position, producerId);
}

/** Applies one record whose key decoded. */
function applyKeyed(ctx: ReplayContext, key: ConsumerOffsetsKey, valueBytes: Uint8Array | null, recordOffset: bigint, file: string, position: number, producerId: bigint | null): void {
  const store = ctx.store;
  const place = { offsetsPartition: ctx.p, file, position, offset: recordOffset };
  if (key.recordType === 'Unknown') {
    // Kafka skips it: CoordinatorLoaderImpl catches UnknownRecordTypeException (the classic
    // GroupMetadataManager.loadGroupsAndOffsets ignored an unknown key version likewise).
    store.problem({ ...place, groupId: null, reason: `key version (record type) ${key.type} is not one this tool or Kafka's coordinators know; the record is skipped, as Kafka's coordinator skips unknown record types` });
    store.apply(key, null, place, null);
    return;
  }
  if (valueBytes === null) {
    store.apply(key, null, place, producerId);
    return;
  }
  let value;
  try {
    value = decodeConsumerOffsetsValue(key.type, valueBytes);
  } catch (err) {
    store.loadFailure({ ...place, groupId: groupIdOfKey(key), reason: `value of ${key.recordType} (record type ${key.type}): ${reasonOf(err)}` });
    return;
  }
  store.apply(key, value, place, producerId);
}

/** Zig-zag varint at `pos` of `d` (≤ 5 bytes, before `end`); −2^31 marks bytes that are not one. Sets {@link varEnd}. */
let varEnd = 0;
function varintAt(d: Uint8Array, pos: number, end: number): number {
  let v = 0;
  for (let shift = 0; shift <= 28; shift += 7) {
    if (pos >= end) return -2147483648;
    const b = d[pos++]!;
    v |= (b & 0x7f) << shift;
    if ((b & 0x80) === 0) {
      varEnd = pos;
      return (v >>> 1) ^ -(v & 1);
    }
  }
  return -2147483648;
}

/** Position after the varlong at `pos`, or −1. */
function skipVarlong(d: Uint8Array, pos: number, end: number): number {
  for (let i = 0; i < 10; i++) {
    if (pos >= end) return -1;
    if ((d[pos++]! & 0x80) === 0) return pos;
  }
  return -1;
}

/**
 * The fast path of a v2 data batch with a valid CRC: walks its records area (decompressed when
 * needed; else read in place in the batch's bytes) once, with the framing checks of Kafka's
 * `DefaultRecord.readFrom`, without making an object per record. An offset commit with a key met
 * before in this partition and a v0–v3 value that reads exactly is written into its
 * {@link PackedCommit} right here; anything else goes through {@link applyKeyed} / {@link applyRecord}.
 * @returns false when the batch cannot be decompressed (the caller takes the checked path, which reports it).
 */
function scanRecordsArea(ctx: ReplayContext, e: { header: KafkaBatchHeader; bytes: Buffer }, file: string): boolean {
  const h = e.header;
  const count = h.recordCount;
  if (count < 0) return false;
  // the records area is d[pos, len)
  let d: Uint8Array = e.bytes;
  let pos = V2_HEADER_SIZE;
  let len = h.size;
  if (h.compression !== 'none') {
    try {
      d = decompress(h.compression, e.bytes.subarray(V2_HEADER_SIZE, h.size), 2);
    } catch {
      return false;
    }
    pos = 0;
    len = d.length;
  }
  const store = ctx.store;
  const counts = store.counts;
  const p = ctx.p;
  const producerId = h.isTransactional && h.producerId >= 0n ? h.producerId : null;
  const base = h.baseOffset;
  const baseHi = Number(BigInt.asIntN(32, base >> 32n));
  const baseLo = Number(BigInt.asIntN(32, base));
  const position = h.position;
  let dv = ctx.dv;
  if (dv === null || dv.buffer !== d.buffer) dv = ctx.dv = new DataView(d.buffer);
  const at0 = d.byteOffset;
  for (let i = 0; i < count; i++) {
    // framing, with the checks of DefaultRecord.readFrom
    const length = varintAt(d, pos, len);
    const start = varEnd;
    const end = start + length;
    if (length < 0 || end > len) return framingFailed(ctx, e, file, i);
    pos = skipVarlong(d, start + 1, end);
    if (pos < 0) return framingFailed(ctx, e, file, i);
    const offsetDelta = varintAt(d, pos, end);
    if (offsetDelta === -2147483648) return framingFailed(ctx, e, file, i);
    const keyLen = varintAt(d, varEnd, end);
    const keyAt = varEnd;
    if (keyLen < -1 || keyAt + Math.max(0, keyLen) > end) return framingFailed(ctx, e, file, i);
    const valueLen = varintAt(d, keyAt + Math.max(0, keyLen), end);
    const valueAt = varEnd;
    if (valueLen < -1 || valueAt + Math.max(0, valueLen) > end) return framingFailed(ctx, e, file, i);
    pos = valueAt + Math.max(0, valueLen);
    const headers = varintAt(d, pos, end);
    if (headers < 0) return framingFailed(ctx, e, file, i);
    pos = varEnd;
    for (let k = 0; k < headers; k++) {
      const kl = varintAt(d, pos, end);
      if (kl < 0) return framingFailed(ctx, e, file, i);
      const vl = varintAt(d, varEnd + kl, end);
      if (vl < -1) return framingFailed(ctx, e, file, i);
      pos = varEnd + Math.max(0, vl);
    }
    if (pos !== end) return framingFailed(ctx, e, file, i);

    if (keyLen < 0) {
      applyRecord(ctx, null, null, base + BigInt(offsetDelta), file, position, producerId);
      continue;
    }
    const guess = ctx.lastKey + 1;
    const ki = ctx.keys.isAt(guess, dv, at0 + keyAt, d, keyAt, keyLen) ? guess : keyIndexOf(ctx, d, keyAt, keyLen, KeyTable.hash(d, keyAt, keyAt + keyLen), base, offsetDelta, file, position);
    if (ki < 0) continue;
    ctx.lastKey = ki;
    const slot = ctx.keys.slots[ki]!;
    // fast path: a plain offset commit with a non-flexible value (v0–v3) whose bytes are exactly one
    if (slot !== null && producerId === null && valueLen >= 2 && d[valueAt] === 0) {
      const version = d[valueAt + 1]!;
      // v0/v2: version, offset, metadata, commitTimestamp; v1: + expireTimestamp; v3: + leaderEpoch after the offset
      const metaAt = valueAt + (version === 3 ? 14 : 10);
      const fixed = version === 1 ? 28 : version === 3 ? 24 : 20;
      if (version <= 3 && valueLen >= fixed) {
        const mlen = (d[metaAt]! << 8) | d[metaAt + 1]!;
        if (mlen < 0x8000 && valueLen === fixed + mlen) {
          let metadata = '';
          let ok = true;
          if (mlen > 0) {
            try {
              metadata = utf8.decode(d.subarray(metaAt + 2, metaAt + 2 + mlen));
            } catch {
              ok = false;
            }
          }
          if (ok) {
            const abs = at0 + valueAt;
            const tsAt = abs + (fixed - 8 - (version === 1 ? 8 : 0)) + mlen;
            let c = slot.commit;
            if (c === null || slot.epoch !== store.epoch) c = store.packedCommitOf(slot, p);
            counts.records++;
            counts.offsetCommits++;
            c.offHi = dv.getInt32(abs + 2);
            c.offLo = dv.getInt32(abs + 6);
            c.leaderEpoch = version === 3 ? nonNegativeOrNull(dv.getInt32(abs + 10)) : null;
            c.metadata = metadata;
            c.tsHi = dv.getInt32(tsAt);
            c.tsLo = dv.getInt32(tsAt + 4);
            c.expireTimestamp = version === 1 ? expireOf(dv.getBigInt64(tsAt + 8)) : null;
            c.valueVersion = version;
            c.placePartition = p;
            c.placeFile = file;
            c.placePosition = position;
            c.placeBaseHi = baseHi;
            c.placeBaseLo = baseLo;
            c.placeDelta = offsetDelta;
            continue;
          }
        }
      }
    }
    applyKeyed(ctx, decodedKey(ctx, ki), valueLen < 0 ? null : d.subarray(valueAt, valueAt + valueLen), base + BigInt(offsetDelta), file, position, producerId);
  }
  if (pos !== len) return framingFailed(ctx, e, file, count);
  return true;
}

/** A leader epoch as the coordinator keeps it: −1 (or any negative) is none. */
function nonNegativeOrNull(epoch: number): number | null {
  return epoch < 0 ? null : epoch;
}

/** An OffsetCommitValue v1 expireTimestamp as Kafka's OffsetAndMetadata.fromRecord reads it: −1 is none. */
function expireOf(ts: bigint): bigint | null {
  return ts === -1n ? null : ts;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * A records area that does not frame (only a producer bug can write one under a valid CRC): the
 * records before it were applied; the checked decoder names the problem. Returns true (handled).
 */
function framingFailed(ctx: ReplayContext, e: { header: KafkaBatchHeader; bytes: Buffer }, file: string, index: number): boolean {
  let reason = `record ${index} does not frame`;
  try {
    decodeV2Records(e.header, e.bytes);
  } catch (err) {
    reason = err instanceof KlxError ? err.reason : String(err);
  }
  ctx.store.problem({ offsetsPartition: ctx.p, file, position: e.header.position, offset: e.header.baseOffset, groupId: null, reason: `${reason} (records after it in the batch not applied)` });
  return true;
}

function reasonOf(err: unknown): string {
  if (err instanceof DecodeError) return `byte ${err.position}: ${err.reason}`;
  if (err instanceof KlxError) return err.reason;
  return String(err);
}


/** Where `groupId` lives, and whether that partition is among the opened ones. */
export function offsetsPartitionOf(loaded: LoadedGroups, groupId: string): { partition: number; opened: boolean } {
  const partition = offsetsPartitionFor(groupId, loaded.offsetsTopic.numPartitions);
  return { partition, opened: loaded.offsetsTopic.present.includes(partition) };
}
