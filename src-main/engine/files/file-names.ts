/**
 * Names of the files and folders of a Kafka log directory (spec §1, §10.1, §10.3; Kafka's
 * `LogFileUtils`, `UnifiedLog.parseTopicPartitionName`, `LocalLog`).
 *
 * Segment files: `N.<suffix>` where N is the segment base offset in decimal, zero-padded to 20 digits
 * (offset 368769 → `00000000000000368769.log`). The base offset is the integer before the first `.`.
 * Suffixes: `.log` (batches), `.index` (offset index), `.timeindex` (time index), `.txnindex`
 * (aborted transactions), `.snapshot` (producer state at offset N). Any of these may carry a
 * transient second suffix: `.deleted` (segment removed, awaiting physical deletion), `.cleaned`
 * (incomplete cleaner/split output), `.swap` (cleaner output ready to replace old segments).
 * `.tmp` marks a partially written replacement of a checkpoint/metadata file.
 *
 * Partition folders: `<topic>-<partition>`, split at the LAST `-`; and the suffixed forms
 * `<topic>-<partition>.<uniqueId>-delete|-future|-stray`, whose part from the last `.` is removed
 * first. `uniqueId` is a random UUID printed as 32 lowercase hex digits (Kafka accepts any
 * non-blank text there: LocalLog's DeleteDirPattern). For `-delete` / `-stray` names Kafka may truncate the topic part so that the
 * whole name fits in 255 characters (LocalLog.logDirNameWithSuffixCappedLength), so the topic of such a folder can be a prefix of the real one.
 */
import { readdirSync, statSync } from 'node:fs';
import { policyOr, refusedLinkTarget, type RefusedLink, type SymlinkPolicy } from './symlinks.ts';
import { basename, join } from 'node:path';
import { KlxError } from '../errors.ts';

/** Segment data file suffix. */
export const LOG_SUFFIX = '.log';
/** Offset index suffix (spec §9.1). */
export const INDEX_SUFFIX = '.index';
/** Time index suffix (spec §9.2). */
export const TIME_INDEX_SUFFIX = '.timeindex';
/** Transaction (aborted txn) index suffix (spec §9.3). */
export const TXN_INDEX_SUFFIX = '.txnindex';
/** Producer state snapshot suffix (spec §9.4). */
export const SNAPSHOT_SUFFIX = '.snapshot';
/** Transient suffix: file of a deleted segment, awaiting physical deletion (spec §10.3). */
export const DELETED_SUFFIX = '.deleted';
/** Transient suffix: incomplete cleaner/split output (spec §10.3). */
export const CLEANED_SUFFIX = '.cleaned';
/** Transient suffix: cleaner/split output ready to be swapped in (spec §10.3). */
export const SWAP_SUFFIX = '.swap';
/** Transient suffix: partially written checkpoint/metadata replacement (spec §10.3). */
export const TMP_SUFFIX = '.tmp';

/** Log-dir level files (spec §1.1). */
export const META_PROPERTIES_FILE = 'meta.properties';
export const RECOVERY_POINT_CHECKPOINT_FILE = 'recovery-point-offset-checkpoint';
export const REPLICATION_OFFSET_CHECKPOINT_FILE = 'replication-offset-checkpoint';
export const LOG_START_OFFSET_CHECKPOINT_FILE = 'log-start-offset-checkpoint';
export const CLEANER_OFFSET_CHECKPOINT_FILE = 'cleaner-offset-checkpoint';
export const CLEAN_SHUTDOWN_FILE = '.kafka_cleanshutdown';
export const LOCK_FILE = '.lock';
/** Partition-dir level files (spec §1.2). */
export const LEADER_EPOCH_CHECKPOINT_FILE = 'leader-epoch-checkpoint';
export const PARTITION_METADATA_FILE = 'partition.metadata';
/** KRaft `__cluster_metadata-0` only: the Raft quorum state (out of scope, recognised). */
export const QUORUM_STATE_FILE = 'quorum-state';
/** KRaft bootstrap snapshot in the metadata log directory (Kafka's `BootstrapDirectory.BINARY_BOOTSTRAP_FILENAME`). */
export const BOOTSTRAP_CHECKPOINT_FILE = 'bootstrap.checkpoint';
/** Suffix of KRaft snapshot files (Kafka's `Snapshots.SUFFIX`). */
export const KRAFT_SNAPSHOT_SUFFIX = '.checkpoint';

/** The kind of a segment-level file, from its main suffix. */
export type SegmentFileKind = 'log' | 'index' | 'timeindex' | 'txnindex' | 'snapshot';
/** A transient second suffix (spec §10.3), without the dot. */
export type TransientSuffix = 'deleted' | 'cleaned' | 'swap' | 'tmp';

const KIND_BY_SUFFIX: Record<string, SegmentFileKind> = { log: 'log', index: 'index', timeindex: 'timeindex', txnindex: 'txnindex', snapshot: 'snapshot' };
const TRANSIENT: ReadonlySet<string> = new Set(['deleted', 'cleaned', 'swap', 'tmp']);
const INT64_MAX = 9223372036854775807n;
const INT32_MAX = 2147483647;

/**
 * The 20-digit, zero-padded decimal prefix for a base offset (Kafka `LogFileUtils.filenamePrefixFromOffset`).
 * @param offset a logical offset, 0 ≤ offset ≤ 2^63−1.
 * @throws KlxError `invalid-argument` for a negative or out-of-range offset.
 */
export function filenamePrefixFromOffset(offset: bigint): string {
  if (offset < 0n || offset > INT64_MAX) throw new KlxError('invalid-argument', `offset ${offset} is not a valid base offset (0..2^63-1)`);
  return offset.toString().padStart(20, '0');
}

/**
 * The name of a segment file: `filenamePrefixFromOffset(offset) + suffix`
 * (e.g. `segmentFileName(368769n, '.log')` = `00000000000000368769.log`).
 * @param suffix a suffix with its leading dot, possibly compound (`.log.deleted`).
 * @throws KlxError `invalid-argument` for a negative or out-of-range offset.
 */
export function segmentFileName(offset: bigint, suffix: string): string {
  return filenamePrefixFromOffset(offset) + suffix;
}

/**
 * The base offset encoded in a segment file name: the integer before the first `.`
 * (Kafka `LogFileUtils.offsetFromFileName`). Accepts any decimal prefix, not only 20 digits.
 * @returns the offset as a bigint.
 * @throws KlxError `invalid-argument` when the part before the first `.` is not a decimal int64.
 */
export function offsetFromFileName(name: string): bigint {
  const dot = name.indexOf('.');
  const prefix = dot < 0 ? name : name.slice(0, dot);
  if (!/^[0-9]+$/.test(prefix) || BigInt(prefix) > INT64_MAX) {
    throw new KlxError('invalid-argument', `'${name}' does not start with a decimal offset`, { details: { name } });
  }
  return BigInt(prefix);
}

/** A segment-level file name, parsed. */
export interface SegmentFileName {
  /** The offset in the name (segment base offset; for `.snapshot`, the snapshot offset). */
  baseOffset: bigint;
  kind: SegmentFileKind;
  /** The transient second suffix, if any (`00..0.log.deleted` → `'deleted'`). */
  transient?: TransientSuffix;
  /** True when the offset prefix has exactly the 20 digits Kafka writes (LogFileUtils.filenamePrefixFromOffset). */
  canonical: boolean;
}

/**
 * Parses a segment-level file name: `<offset>.<log|index|timeindex|txnindex|snapshot>[.<deleted|cleaned|swap|tmp>]`.
 * @returns the parsed name, or null when `name` is not such a file (checkpoints, `partition.metadata`, junk...).
 */
export function parseSegmentFileName(name: string): SegmentFileName | null {
  const m = /^([0-9]+)\.([a-z]+)(?:\.([a-z]+))?$/.exec(name);
  if (!m) return null;
  const kind = KIND_BY_SUFFIX[m[2]!];
  if (!kind) return null;
  if (m[3] !== undefined && !TRANSIENT.has(m[3])) return null;
  const baseOffset = BigInt(m[1]!);
  if (baseOffset > INT64_MAX) return null;
  const parsed: SegmentFileName = { baseOffset, kind, canonical: m[1]!.length === 20 };
  if (m[3] !== undefined) parsed.transient = m[3] as TransientSuffix;
  return parsed;
}

/** The kind of a partition folder (spec §1.1). */
export type PartitionDirKind = 'normal' | 'delete' | 'future' | 'stray';

/** A partition folder name, parsed. */
export interface PartitionDirName {
  topic: string;
  /** Partition number, 0 ≤ partition ≤ 2^31−1. */
  partition: number;
  kind: PartitionDirKind;
  /** The unique id of a `-delete`/`-future`/`-stray` folder (normally 32 hex digits). */
  uniqueId?: string;
}

const TOPIC_RE = /^[a-zA-Z0-9._-]+$/;
const SUFFIXED_RE = /^(\S+)-(\S+)\.(\S+)-(delete|future|stray)$/;

/**
 * Parses a partition folder name (spec §1.2; Kafka `UnifiedLog.parseTopicPartitionName`).
 *
 * `orders-0` → `{topic: 'orders', partition: 0, kind: 'normal'}`;
 * `my-topic-3.0123456789abcdef0123456789abcdef-delete` → `{topic: 'my-topic', partition: 3, kind: 'delete', uniqueId: '0123…'}`.
 *
 * Stricter than Kafka: the partition must be plain decimal digits (no sign) within int32, and the
 * topic must be a legal topic name (`[a-zA-Z0-9._-]+`, not `.` or `..`, at most 249 characters for a
 * `normal`/`future` folder). Kafka's `LocalLog.parseTopicPartitionName` reads the partition with
 * `Integer.parseInt` (so `orders-+3` is partition 3) and does not check the topic name; it throws
 * only where {@link kafkaTopicPartitionOf} returns null.
 * @returns the parsed name, or null when `name` is not a partition folder (`remote-log-index-cache`, `lost+found`...).
 */
export function parsePartitionDirName(name: string): PartitionDirName | null {
  if (!name.includes('-')) return null;
  let kind: PartitionDirKind = 'normal';
  let uniqueId: string | undefined;
  let base = name;
  const sfx = /-(delete|future|stray)$/.exec(name);
  if (sfx) {
    const m = SUFFIXED_RE.exec(name);
    if (!m) return null; // Kafka: "is not in the form of topic-partition or topic-partition.uniqueId-delete"
    kind = sfx[1] as PartitionDirKind;
    const dot = name.lastIndexOf('.');
    base = name.slice(0, dot);
    uniqueId = name.slice(dot + 1, name.length - sfx[0].length);
  }
  const dash = base.lastIndexOf('-');
  if (dash <= 0) return null;
  const topic = base.slice(0, dash);
  const partStr = base.slice(dash + 1);
  if (!/^[0-9]{1,10}$/.test(partStr)) return null;
  const partition = Number(partStr);
  if (partition > INT32_MAX) return null;
  if (!TOPIC_RE.test(topic) || topic === '.' || topic === '..') return null;
  if ((kind === 'normal' || kind === 'future') && topic.length > 249) return null;
  const parsed: PartitionDirName = { topic, partition, kind };
  if (uniqueId !== undefined) parsed.uniqueId = uniqueId;
  return parsed;
}

/**
 * The topic and partition Kafka reads from a folder name, or null where it throws (the broker does not
 * start): Kafka's `LocalLog.parseTopicPartitionName` (4.x; `Log`/`UnifiedLog.parseTopicPartitionName`
 * before, same rule): a name with a `-`, a suffixed name matching its `-delete`/`-future`/`-stray`
 * pattern (the part from its last `.` removed), split at the last `-` into a non-empty topic (not
 * checked further) and a partition `Integer.parseInt` accepts (an optional sign, decimal digits, int32).
 * @returns `{topic, partition}` as a broker would load it, or null.
 */
export function kafkaTopicPartitionOf(name: string): { topic: string; partition: number } | null {
  if (!name.includes('-')) return null;
  let base = name;
  if (/-(delete|future|stray)$/.test(name)) {
    if (!SUFFIXED_RE.test(name)) return null;
    base = name.slice(0, name.lastIndexOf('.'));
  }
  const dash = base.lastIndexOf('-');
  const topic = base.slice(0, dash);
  const partStr = base.slice(dash + 1);
  if (!topic || !/^[+-]?[0-9]+$/.test(partStr)) return null;
  const partition = Number(partStr);
  if (partition > INT32_MAX || partition < -INT32_MAX - 1) return null;
  return { topic, partition: partition === 0 ? 0 : partition };
}

/**
 * The folder name of a partition (spec §1.2): `<topic>-<partition>`, or with a suffix
 * `<topic>-<partition>.<uniqueId>-<kind>`.
 * @throws KlxError `invalid-argument` for an illegal topic, a partition outside 0..2^31−1, or a
 *   suffixed kind without a uniqueId.
 */
export function partitionDirName(topic: string, partition: number, kind: PartitionDirKind = 'normal', uniqueId?: string): string {
  if (!TOPIC_RE.test(topic) || topic === '.' || topic === '..') throw new KlxError('invalid-argument', `'${topic}' is not a legal topic name`);
  if (!Number.isInteger(partition) || partition < 0 || partition > INT32_MAX) throw new KlxError('invalid-argument', `${partition} is not a valid partition number`);
  const plain = `${topic}-${partition}`;
  if (kind === 'normal') return plain;
  if (!uniqueId || /[\s.]/.test(uniqueId)) throw new KlxError('invalid-argument', `a ${kind} folder needs a uniqueId without blanks or dots`);
  return `${plain}.${uniqueId}-${kind}`;
}

// ---------------------------------------------------------------------------------------------
// Partition folder listing

/** A file in a listing: its name and size in bytes. */
export interface ListedFile {
  name: string;
  /** Size in bytes. */
  size: number;
}

/** Input of {@link classifyPartitionFiles}: one directory entry. */
export interface DirEntryInfo extends ListedFile {
  /** True for a sub-directory (never expected in a partition folder). */
  isDirectory?: boolean;
}

/** The files of one segment that has a `.log` (spec §10.1). */
export interface SegmentFileSet {
  baseOffset: bigint;
  log: ListedFile;
  index?: ListedFile;
  timeindex?: ListedFile;
  txnindex?: ListedFile;
}

/** A segment-level file with its parsed name. */
export interface ClassifiedFile extends ListedFile {
  baseOffset: bigint;
  kind: SegmentFileKind;
}

/** A transient file (`.deleted`, `.cleaned`, `.swap`, `.tmp`, spec §10.3). */
export interface TransientFile extends ListedFile {
  suffix: TransientSuffix;
  /** For segment-level files: the offset and kind under the transient suffix. Absent for `leader-epoch-checkpoint.tmp` etc. */
  baseOffset?: bigint;
  kind?: SegmentFileKind;
}

/** What a partition folder holds, by role. */
export interface PartitionListing {
  /** Segments that have a `.log`, ascending by base offset, with their index files. */
  segments: SegmentFileSet[];
  /** `.index` / `.timeindex` / `.txnindex` files with no `.log` of the same base offset (Kafka deletes them at load: LogLoader.loadSegmentFiles). */
  orphanIndexes: ClassifiedFile[];
  /** Producer state snapshots, ascending by offset. */
  snapshots: ClassifiedFile[];
  /** Leftover `.deleted` / `.cleaned` / `.swap` / `.tmp` files, in name order. */
  transient: TransientFile[];
  /** KRaft snapshots (`<endOffset>-<epoch>.checkpoint`, record batches like a segment), ascending by end offset then epoch. */
  kraftSnapshots: KRaftSnapshotFile[];
  /** Known non-segment files: `leader-epoch-checkpoint`, `partition.metadata`, `quorum-state`. */
  metadata: ListedFile[];
  /** Files that are none of the above, in name order. */
  unknown: ListedFile[];
  /** Sub-directories (never expected), in name order. */
  directories: string[];
  /** Symbolic links the open's policy refused (`symlinks.ts`): left out of every list above, never read. */
  refusedLinks: RefusedLink[];
}

const KNOWN_PARTITION_FILES: ReadonlySet<string> = new Set([LEADER_EPOCH_CHECKPOINT_FILE, PARTITION_METADATA_FILE, QUORUM_STATE_FILE]);
/** KRaft metadata snapshot: `<20-digit end offset>-<10-digit epoch>.checkpoint`. */
const KRAFT_SNAPSHOT_RE = /^([0-9]{20})-([0-9]{10})\.checkpoint$/;

/** A KRaft snapshot file of a `__cluster_metadata` partition, with the snapshot id from its name. */
export interface KRaftSnapshotFile extends ListedFile {
  /** The snapshot's end offset: every record below it is in the snapshot (Kafka's `OffsetAndEpoch.offset`). */
  endOffset: bigint;
  /** The leader epoch of the record at endOffset − 1 (Kafka's `OffsetAndEpoch.epoch`). */
  epoch: number;
}

/**
 * Parses a KRaft snapshot name, `<20-digit end offset>-<10-digit epoch>.checkpoint` (Kafka's
 * `Snapshots.parse`; the broker's text checkpoint files such as `leader-epoch-checkpoint` or
 * `recovery-point-offset-checkpoint` never match).
 * @returns the snapshot id, or null when `name` is not one.
 */
export function parseKRaftSnapshotName(name: string): { endOffset: bigint; epoch: number } | null {
  const m = KRAFT_SNAPSHOT_RE.exec(name);
  if (!m) return null;
  const endOffset = BigInt(m[1]!);
  const epoch = Number(m[2]!);
  if (endOffset > INT64_MAX || epoch > 0x7fffffff) return null;
  return { endOffset, epoch };
}

function byOffset(a: { baseOffset: bigint; name: string }, b: { baseOffset: bigint; name: string }): number {
  return a.baseOffset < b.baseOffset ? -1 : a.baseOffset > b.baseOffset ? 1 : a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

/**
 * Sorts the entries of a partition folder by role (spec §1.2, §10.3, §10.4 pass 3 for orphans).
 * Pure: works on a listing, touches no file.
 * @returns the classified listing; every entry lands in exactly one bucket.
 */
export function classifyPartitionFiles(entries: Iterable<DirEntryInfo>): PartitionListing {
  const out: PartitionListing = { segments: [], orphanIndexes: [], snapshots: [], transient: [], kraftSnapshots: [], metadata: [], unknown: [], directories: [], refusedLinks: [] };
  const bySeg = new Map<bigint, Partial<Record<SegmentFileKind, ListedFile>>>();
  const indexFiles: ClassifiedFile[] = [];
  for (const e of entries) {
    if (e.isDirectory) {
      out.directories.push(e.name);
      continue;
    }
    const file: ListedFile = { name: e.name, size: e.size };
    const seg = parseSegmentFileName(e.name);
    if (seg?.transient) {
      out.transient.push({ ...file, suffix: seg.transient, baseOffset: seg.baseOffset, kind: seg.kind });
    } else if (seg) {
      const cf: ClassifiedFile = { ...file, baseOffset: seg.baseOffset, kind: seg.kind };
      if (seg.kind === 'snapshot') out.snapshots.push(cf);
      else if (seg.kind === 'log') {
        const slot = bySeg.get(seg.baseOffset) ?? {};
        if (slot.log) out.unknown.push(file); // same offset spelled twice (e.g. 5.log and 000..05.log)
        else slot.log = file;
        bySeg.set(seg.baseOffset, slot);
      } else indexFiles.push(cf);
    } else if (e.name.endsWith(TMP_SUFFIX) && e.name.length > TMP_SUFFIX.length) {
      out.transient.push({ ...file, suffix: 'tmp' });
    } else if (KNOWN_PARTITION_FILES.has(e.name)) {
      out.metadata.push(file);
    } else if (parseKRaftSnapshotName(e.name)) {
      out.kraftSnapshots.push({ ...file, ...parseKRaftSnapshotName(e.name)! });
    } else {
      out.unknown.push(file);
    }
  }
  for (const f of indexFiles) {
    const slot = bySeg.get(f.baseOffset);
    const kind = f.kind as 'index' | 'timeindex' | 'txnindex';
    if (!slot?.log) out.orphanIndexes.push(f);
    else if (slot[kind]) out.unknown.push({ name: f.name, size: f.size });
    else slot[kind] = { name: f.name, size: f.size };
  }
  for (const [baseOffset, slot] of bySeg) {
    const s: SegmentFileSet = { baseOffset, log: slot.log! };
    if (slot.index) s.index = slot.index;
    if (slot.timeindex) s.timeindex = slot.timeindex;
    if (slot.txnindex) s.txnindex = slot.txnindex;
    out.segments.push(s);
  }
  out.segments.sort((a, b) => (a.baseOffset < b.baseOffset ? -1 : a.baseOffset > b.baseOffset ? 1 : 0));
  out.orphanIndexes.sort(byOffset);
  out.snapshots.sort(byOffset);
  const byName = (a: { name: string }, b: { name: string }): number => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
  out.transient.sort(byName);
  out.metadata.sort(byName);
  out.kraftSnapshots.sort((a, b) => (a.endOffset < b.endOffset ? -1 : a.endOffset > b.endOffset ? 1 : a.epoch - b.epoch));
  out.unknown.sort(byName);
  out.directories.sort();
  return out;
}

/**
 * Lists a partition folder on disk and classifies it with {@link classifyPartitionFiles}.
 * Sizes come from `stat`; a symlink is followed only when `symlinks` allows it (default: links that
 * stay inside `dir`), otherwise it is left out and listed in `refusedLinks`.
 * @throws KlxError `not-found` if the folder does not exist, `io-error` if it cannot be read.
 */
export function listPartitionDir(dir: string, symlinks?: SymlinkPolicy): PartitionListing {
  const policy = policyOr(symlinks, dir);
  const refused: RefusedLink[] = [];
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    throw new KlxError(e.code === 'ENOENT' ? 'not-found' : 'io-error', `cannot list partition folder: ${e.message}`, { file: dir, cause: err });
  }
  const entries: DirEntryInfo[] = [];
  for (const name of names) {
    const target = refusedLinkTarget(join(dir, name), policy);
    if (target !== null) {
      refused.push({ link: join(dir, name), target });
      continue;
    }
    try {
      const st = statSync(join(dir, name));
      entries.push({ name, size: st.size, isDirectory: st.isDirectory() });
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      if (e.code === 'ENOENT') continue; // removed while listing (e.g. a .deleted file)
      throw new KlxError('io-error', `cannot stat: ${e.message}`, { file: join(dir, name), cause: err });
    }
  }
  const listing = classifyPartitionFiles(entries);
  listing.refusedLinks = refused.sort((a, b) => (a.link < b.link ? -1 : a.link > b.link ? 1 : 0));
  // The indexes of a .log that is a refused link are not orphans: a broker follows the link and keeps them
  // (LogLoader.loadSegmentFiles deletes an index only when its .log does not exist). They stay unread with it.
  const refusedNames = new Set(refused.map((r) => basename(r.link)));
  listing.orphanIndexes = listing.orphanIndexes.filter((o) => !refusedNames.has(segmentFileName(o.baseOffset, '.log')));
  return listing;
}
