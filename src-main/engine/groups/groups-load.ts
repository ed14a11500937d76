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
 * file, byte position, offset and reason (on their group when the key could be read).
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
  /** True when `numPartitions` is Kafka's default or inferred, not given. */
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

/** A distinct key met in a partition: its bytes, decoded key and, for offset commits, its slot. */
interface KeyEntry {
  bytes: Uint8Array;
  key: ConsumerOffsetsKey;
  slot: CommitSlot | null;
  next: KeyEntry | null;
}

/** Distinct keys by an FNV-1a hash of their bytes (no string is made per record). */
class KeyCache {
  private readonly table = new Map<number, KeyEntry>();
  size = 0;

  /** FNV-1a of `b[from, to)`. */
  static hash(b: Uint8Array, from: number, to: number): number {
    let h = 0x811c9dc5;
    for (let i = from; i < to; i++) h = Math.imul(h ^ b[i]!, 0x01000193);
    return h;
  }

  get(b: Uint8Array, h: number): KeyEntry | null {
    return this.getAt(b, 0, b.length, h);
  }

  /** The entry of the key `d[at, at + n)`. */
  getAt(d: Uint8Array, at: number, n: number, h: number): KeyEntry | null {
    for (let e = this.table.get(h) ?? null; e !== null; e = e.next) if (sameBytesAt(e.bytes, d, at, n)) return e;
    return null;
  }

  add(b: Uint8Array, h: number, key: ConsumerOffsetsKey): KeyEntry {
    let slot: CommitSlot | null = null;
    if (key.recordType === 'OffsetCommit') {
      const d = key.data as { group: string; topic: string; partition: number };
      slot = { groupId: d.group, topic: d.topic, partition: d.partition, offsetKey: offsetKey(d.topic, d.partition), commit: null, epoch: -1 };
    }
    const e: KeyEntry = { bytes: new Uint8Array(b), key, slot, next: this.table.get(h) ?? null };
    this.table.set(h, e);
    this.size++;
    return e;
  }
}

function sameBytesAt(a: Uint8Array, d: Uint8Array, at: number, n: number): boolean {
  if (a.length !== n) return false;
  for (let i = 0; i < n; i++) if (a[i] !== d[at + i]) return false;
  return true;
}

/** Bytes of a key cache before it is emptied (bounded memory on hostile data with ever-new keys). */
const KEY_CACHE_MAX = 2_000_000;

/** Feeds one `__consumer_offsets` partition to the store; returns the bytes walked. */
async function replayPartition(log: PartitionLog, store: GroupStore, pacer: Pacer): Promise<number> {
  const p = log.partition;
  const logStart = log.logStartOffset;
  let bytes = 0;
  const ctx: ReplayContext = { store, p, keys: new KeyCache(), dv: null };
  for (const e of walkLog(log)) {
    if (e.type === 'segment') continue;
    if (e.type !== 'batch') {
      // zero-filled tails (preallocated or crashed) are what a broker truncates on recovery: not a problem of the groups
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
  /** One decoded key per distinct key bytes: a group commits the same keys over and over. */
  keys: KeyCache;
  /** A DataView over the last buffer read from. */
  dv: DataView | null;
}

/** The cache entry of a key (decoded on first sight), or null when it does not decode (reported). */
function entryOf(ctx: ReplayContext, keyBytes: Uint8Array, hash: number, recordOffset: bigint, file: string, position: number): KeyEntry | null {
  const hit = ctx.keys.get(keyBytes, hash);
  if (hit !== null) return hit;
  let key: ConsumerOffsetsKey;
  try {
    key = decodeConsumerOffsetsKey(keyBytes);
  } catch (err) {
    ctx.store.problem({ offsetsPartition: ctx.p, file, position, offset: recordOffset, groupId: null, reason: `key: ${reasonOf(err)}` });
    return null;
  }
  if (ctx.keys.size >= KEY_CACHE_MAX) ctx.keys = new KeyCache();
  return ctx.keys.add(keyBytes, hash, key);
}

/** Applies one record (any type) to the store. */
function applyRecord(ctx: ReplayContext, keyBytes: Uint8Array | null, valueBytes: Uint8Array | null, recordOffset: bigint, file: string, position: number, producerId: bigint | null): void {
  const store = ctx.store;
  if (keyBytes === null) {
    store.problem({ offsetsPartition: ctx.p, file, position, offset: recordOffset, groupId: null, reason: 'record without a key (every __consumer_offsets record has one)' });
    return;
  }
  const entry = entryOf(ctx, keyBytes, KeyCache.hash(keyBytes, 0, keyBytes.length), recordOffset, file, position);
  if (entry === null) return;
  const key = entry.key;
  const place = { offsetsPartition: ctx.p, file, position, offset: recordOffset };
  if (key.recordType === 'Unknown') {
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
    store.problem({ ...place, groupId: groupIdOfKey(key), reason: `value of ${key.recordType} (record type ${key.type}): ${reasonOf(err)}` });
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
 * needed) once, with the framing checks of Kafka's `DefaultRecord.readFrom`, without making an
 * object per record; offset commits with a cached key and a v0–v3 value are applied in place,
 * anything else through {@link applyRecord}.
 * @returns false when the batch cannot be decompressed (the caller takes the checked path, which reports it).
 */
function scanRecordsArea(ctx: ReplayContext, e: { header: KafkaBatchHeader; bytes: Buffer }, file: string): boolean {
  const h = e.header;
  const count = h.recordCount;
  if (count < 0) return false;
  let d: Uint8Array = e.bytes.subarray(V2_HEADER_SIZE, h.size);
  if (h.compression !== 'none') {
    try {
      d = decompress(h.compression, d, 2);
    } catch {
      return false;
    }
  }
  const len = d.length;
  const store = ctx.store;
  const producerId = h.isTransactional && h.producerId >= 0n ? h.producerId : null;
  const base = h.baseOffset;
  const position = h.position;
  let dv = ctx.dv;
  if (dv === null || dv.buffer !== d.buffer) dv = ctx.dv = new DataView(d.buffer);
  const at0 = d.byteOffset;
  let pos = 0;
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

    if (keyLen >= 0 && producerId === null && valueLen >= 2) {
      const hash = KeyCache.hash(d, keyAt, keyAt + keyLen);
      const entry = ctx.keys.getAt(d, keyAt, keyLen, hash);
      // fast path: a plain offset commit with a non-flexible value (v0–v3)
      if (entry !== null && entry.slot !== null && d[valueAt] === 0 && d[valueAt + 1]! <= 3) {
        const v = readCommitValue(dv, d, at0 + valueAt, valueAt, valueLen);
        if (v !== null) {
          store.putCommitFast(entry.slot, v.offHi, v.offLo, v.leaderEpoch, v.metadata, v.tsHi, v.tsLo, v.expireTimestamp, d[valueAt + 1]!, file, position, base, offsetDelta, ctx.p);
          continue;
        }
      }
    }
    applyRecord(ctx, keyLen < 0 ? null : d.subarray(keyAt, keyAt + keyLen), valueLen < 0 ? null : d.subarray(valueAt, valueAt + valueLen), base + BigInt(offsetDelta), file, position, producerId);
  }
  if (pos !== len) return framingFailed(ctx, e, file, count);
  return true;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });
/** Reused result of {@link readCommitValue} (one per call site, never kept). */
const commitScratch = { offHi: 0, offLo: 0, leaderEpoch: -1, metadata: '', tsHi: 0, tsLo: 0, expireTimestamp: null as bigint | null };

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

/**
 * Reads an OffsetCommitValue v0–v3 (not flexible) exactly from `d[from, from + n)` (`abs` is that
 * position in `dv`'s buffer): null when the bytes do not match the version (the caller then takes the
 * checked decoder, which names the problem).
 */
function readCommitValue(dv: DataView, d: Uint8Array, abs: number, from: number, n: number): typeof commitScratch | null {
  const version = d[from + 1]!;
  let pos = 2;
  if (pos + 8 > n) return null;
  const offHi = dv.getInt32(abs + pos);
  const offLo = dv.getUint32(abs + pos + 4);
  pos += 8;
  let leaderEpoch = -1;
  if (version >= 3) {
    if (pos + 4 > n) return null;
    leaderEpoch = dv.getInt32(abs + pos);
    pos += 4;
  }
  if (pos + 2 > n) return null;
  const mlen = dv.getInt16(abs + pos);
  pos += 2;
  if (mlen < 0 || pos + mlen > n) return null;
  let metadata = '';
  if (mlen > 0) {
    try {
      metadata = utf8.decode(d.subarray(from + pos, from + pos + mlen));
    } catch {
      return null;
    }
    pos += mlen;
  }
  if (pos + 8 > n) return null;
  const tsHi = dv.getInt32(abs + pos);
  const tsLo = dv.getUint32(abs + pos + 4);
  pos += 8;
  let expireTimestamp: bigint | null = null;
  if (version === 1) {
    if (pos + 8 > n) return null;
    const e = dv.getBigInt64(abs + pos);
    pos += 8;
    expireTimestamp = e === -1n ? null : e;
  }
  if (pos !== n) return null;
  commitScratch.offHi = offHi;
  commitScratch.offLo = offLo;
  commitScratch.leaderEpoch = leaderEpoch;
  commitScratch.metadata = metadata;
  commitScratch.tsHi = tsHi;
  commitScratch.tsLo = tsLo;
  commitScratch.expireTimestamp = expireTimestamp;
  return commitScratch;
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
