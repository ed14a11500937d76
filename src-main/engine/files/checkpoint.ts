/**
 * Checkpoint files (spec §11.1, §11.4; Kafka's `CheckpointFile`, `OffsetCheckpointFile`,
 * `LeaderEpochCheckpointFile`).
 *
 * Format: UTF-8 text, one item per line, `\n` line endings:
 *
 *     0                      <- version (always 0)
 *     3                      <- number of entry lines
 *     orders 0 1523          <- offset checkpoints: topic SP partition SP offset
 *     ...                       leader-epoch-checkpoint: epoch SP startOffset
 *
 * Reading follows `CheckpointFile.CheckpointReadBuffer`: an empty file, or one holding only the
 * version line, has no entries; otherwise the version must be 0, the count a decimal int32, every
 * following line must split on whitespace runs into exactly the expected number of fields, and the
 * number of lines must equal the count. Lines may end with `\n`, `\r\n` or `\r` (Java `readLine`).
 * Any violation is a {@link KlxError} `corrupt-checkpoint` carrying the file and the byte position of
 * the offending line (for a count mismatch: the count line).
 *
 * Writing follows `CheckpointFile.write`: `<name>.tmp`, write, fsync, rename over `<name>`, fsync the
 * directory (see `fsync-write.ts`); one space between fields, every line ends with `\n`.
 *
 * The four log-dir offset checkpoints share this format: `recovery-point-offset-checkpoint`
 * (offset below which data is flushed), `replication-offset-checkpoint` (high watermark),
 * `log-start-offset-checkpoint` (only partitions whose log start is above their first segment's base
 * offset) and `cleaner-offset-checkpoint` (first offset not yet cleaned, compacted partitions only).
 *
 * The other small state files live in their own modules and are re-exported here:
 * `partition-metadata.ts` (§11.5), `meta-properties.ts` (§11.6), `clean-shutdown.ts` (§11.3).
 */
import { KlxError } from '../errors.ts';
import { readFileBytes, writeFileAtomic, type WriteOptions } from './fsync-write.ts';
import { INT32_MAX, INT32_MIN, INT64_MAX, INT64_MIN, JAVA_WHITESPACES, parseJavaInt, parseJavaLong, quoteLineBytes, splitLines, type TextLine } from './java-text.ts';

export * from './partition-metadata.ts';
export * from './meta-properties.ts';
export * from './clean-shutdown.ts';
export { parseJavaInt, parseJavaLong, quoteLineBytes, splitLines, type TextLine } from './java-text.ts';

/** The only checkpoint version Kafka reads and writes (OffsetCheckpointFile, LeaderEpochCheckpointFile: CURRENT_VERSION). */
export const CHECKPOINT_VERSION = 0;

/**
 * What an entry parser says of a line whose field count is right but one of whose numbers Java's
 * `Integer.parseInt`/`Long.parseLong` refuses: Kafka's formatters then throw a
 * NumberFormatException, which is not the IOException `CheckpointFile.CheckpointReadBuffer.read`
 * throws for every other malformed line (see `details.kind` of {@link parseCheckpoint}'s errors).
 */
export const NUMBER_FORMAT = Symbol('number-format');

/**
 * Parses the checkpoint framing (version line, count line, entry lines) and each entry line, as
 * Kafka's `CheckpointFile.CheckpointReadBuffer.read` does.
 * @param parseEntry turns the whitespace-split fields of a line into an entry, returns undefined
 *   when the line is malformed (wrong field count: Kafka's `Optional.empty()`), or
 *   {@link NUMBER_FORMAT} when a number field does not parse.
 * @param file used in errors.
 * @throws KlxError `corrupt-checkpoint` (version ≠ 0, malformed line, count mismatch) with the byte
 *   position of the offending line, the line quoted with its control and non-UTF-8 bytes escaped
 *   ({@link quoteLineBytes}), and `details.kind`: `number-format` when Kafka would throw a
 *   NumberFormatException for that entry line, else `malformed` (an IOException in Kafka).
 */
export function parseCheckpoint<T>(buf: Uint8Array, file: string, parseEntry: (fields: string[]) => T | undefined | typeof NUMBER_FORMAT): T[] {
  const lines = splitLines(buf);
  if (lines.length === 0) return [];
  const bytesOf = (line: TextLine): Uint8Array => {
    let end = line.position;
    while (end < buf.length && buf[end] !== 0x0a && buf[end] !== 0x0d) end++;
    return buf.subarray(line.position, end);
  };
  const bad = (line: TextLine, reason: string, kind: 'malformed' | 'number-format' = 'malformed'): KlxError =>
    new KlxError('corrupt-checkpoint', reason, { file, position: line.position, details: { line: line.text, kind } });
  const versionLine = lines[0]!;
  const version = parseJavaInt(versionLine.text);
  if (version === undefined) throw bad(versionLine, `malformed version line ${quoteLineBytes(bytesOf(versionLine))}`);
  if (version !== CHECKPOINT_VERSION) throw bad(versionLine, `unrecognised checkpoint version ${version}, expected ${CHECKPOINT_VERSION}`);
  if (lines.length === 1) return [];
  const countLine = lines[1]!;
  const expected = parseJavaInt(countLine.text);
  if (expected === undefined) throw bad(countLine, `malformed entry count line ${quoteLineBytes(bytesOf(countLine))}`);
  const out: T[] = [];
  for (let i = 2; i < lines.length; i++) {
    const line = lines[i]!;
    // Java: WHITESPACES_PATTERN.split(line) with "\\s+" (a leading blank gives an empty first field).
    const fields = line.text.split(JAVA_WHITESPACES);
    while (fields.length > 0 && fields[fields.length - 1] === '') fields.pop();
    const entry = parseEntry(fields);
    if (entry === NUMBER_FORMAT) throw bad(line, `malformed line ${quoteLineBytes(bytesOf(line))} (a number that does not parse)`, 'number-format');
    if (entry === undefined) throw bad(line, `malformed line ${quoteLineBytes(bytesOf(line))}`);
    out.push(entry);
  }
  if (out.length !== expected) throw bad(countLine, `expected ${expected} entries but found ${out.length}`);
  return out;
}

/** Formats the checkpoint framing around already formatted entry lines. */
export function formatCheckpoint(lines: readonly string[]): string {
  return `${CHECKPOINT_VERSION}\n${lines.length}\n${lines.map((l) => `${l}\n`).join('')}`;
}

// ---------------------------------------------------------------------------------------------
// Offset checkpoints (recovery point, high watermark, log start, cleaner)

/** One entry of an offset checkpoint. */
export interface OffsetCheckpointEntry {
  topic: string;
  /** Partition number (int32). */
  partition: number;
  /** A logical offset (int64). */
  offset: bigint;
}

/**
 * Parses an offset checkpoint file's bytes (spec §11.1; Kafka `OffsetCheckpointFile.Formatter`:
 * exactly 3 fields, partition `Integer.parseInt`, offset `Long.parseLong`). A line with a leading blank
 * and two fields (` 0 5`) is topic "" as Kafka reads it (the `\s+` split keeps a leading empty field).
 * @returns the entries in file order (`[]` for an empty file).
 * @throws KlxError `corrupt-checkpoint` with `file` and the byte `position` of the bad line.
 */
export function parseOffsetCheckpoint(buf: Uint8Array, file = '<buffer>'): OffsetCheckpointEntry[] {
  return parseCheckpoint(buf, file, (f) => {
    // " 0 5" splits into "", "0", "5": Kafka reads topic "" (no partition has that name, so no broker uses the entry).
    if (f.length !== 3) return undefined;
    const partition = parseJavaInt(f[1]!);
    const offset = parseJavaLong(f[2]!);
    if (partition === undefined || offset === undefined) return NUMBER_FORMAT;
    return { topic: f[0]!, partition, offset };
  });
}

/**
 * Reads an offset checkpoint file (`recovery-point-offset-checkpoint`, `replication-offset-checkpoint`,
 * `log-start-offset-checkpoint`, `cleaner-offset-checkpoint`).
 * @throws KlxError `not-found` when the file is missing (Kafka would create it empty), `io-error`,
 *   `corrupt-checkpoint` (see {@link parseOffsetCheckpoint}).
 */
export function readOffsetCheckpoint(path: string): OffsetCheckpointEntry[] {
  return parseOffsetCheckpoint(readFileBytes(path), path);
}

/**
 * Formats an offset checkpoint: `0\n<count>\n` then `topic partition offset\n` per entry.
 * A topic "" is written as Kafka reads it back (` 0 5`, see {@link parseOffsetCheckpoint}), so a
 * file holding such a line keeps it when another partition's line is updated.
 * @throws KlxError `invalid-argument` for a topic that contains whitespace, a partition outside int32,
 *   or an offset outside int64.
 */
export function formatOffsetCheckpoint(entries: readonly OffsetCheckpointEntry[]): string {
  return formatCheckpoint(
    entries.map((e, i) => {
      if (/\s/.test(e.topic)) throw new KlxError('invalid-argument', `checkpoint entry ${i}: topic '${e.topic}' contains whitespace`);
      if (!Number.isInteger(e.partition) || e.partition < INT32_MIN || e.partition > INT32_MAX) throw new KlxError('invalid-argument', `checkpoint entry ${i}: partition ${e.partition} is not an int32`);
      if (e.offset < INT64_MIN || e.offset > INT64_MAX) throw new KlxError('invalid-argument', `checkpoint entry ${i}: offset ${e.offset} is not an int64`);
      return `${e.topic} ${e.partition} ${e.offset}`;
    }),
  );
}

/**
 * Writes an offset checkpoint atomically and durably (`<path>.tmp`, write, fsync, rename, fsync dir).
 * @throws KlxError `invalid-argument` (see {@link formatOffsetCheckpoint}), `io-error`; or what `opts.fault` throws.
 */
export function writeOffsetCheckpoint(path: string, entries: readonly OffsetCheckpointEntry[], opts: WriteOptions = {}): void {
  writeFileAtomic(path, formatOffsetCheckpoint(entries), opts);
}

/** The map key of a partition: `<topic>-<partition>` (the partition folder name). */
export function topicPartitionKey(topic: string, partition: number): string {
  return `${topic}-${partition}`;
}

/**
 * Offset checkpoint entries as a map keyed by {@link topicPartitionKey}; a later duplicate wins
 * (as when Kafka loads the entries into a map).
 */
export function offsetCheckpointMap(entries: readonly OffsetCheckpointEntry[]): Map<string, bigint> {
  const m = new Map<string, bigint>();
  for (const e of entries) m.set(topicPartitionKey(e.topic, e.partition), e.offset);
  return m;
}

// ---------------------------------------------------------------------------------------------
// leader-epoch-checkpoint

/** One entry of a `leader-epoch-checkpoint` (Kafka `EpochEntry`). */
export interface LeaderEpochEntry {
  /** Leader epoch (int32). */
  epoch: number;
  /** First offset written with this epoch (int64). */
  startOffset: bigint;
}

/** Kafka's name for {@link LeaderEpochEntry}. */
export type EpochEntry = LeaderEpochEntry;

/**
 * Parses a `leader-epoch-checkpoint` (spec §11.4; Kafka `LeaderEpochCheckpointFile.Formatter`:
 * exactly 2 fields `epoch startOffset`). Order is kept as in the file (Kafka writes it ascending).
 * @throws KlxError `corrupt-checkpoint` with `file` and the byte `position` of the bad line.
 */
export function parseLeaderEpochCheckpoint(buf: Uint8Array, file = '<buffer>'): LeaderEpochEntry[] {
  return parseCheckpoint(buf, file, (f) => {
    if (f.length !== 2) return undefined;
    const epoch = parseJavaInt(f[0]!);
    const startOffset = parseJavaLong(f[1]!);
    return epoch === undefined || startOffset === undefined ? NUMBER_FORMAT : { epoch, startOffset };
  });
}

/**
 * Reads a `leader-epoch-checkpoint`.
 * @throws KlxError `not-found`, `io-error`, `corrupt-checkpoint`.
 */
export function readLeaderEpochCheckpoint(path: string): LeaderEpochEntry[] {
  return parseLeaderEpochCheckpoint(readFileBytes(path), path);
}

/**
 * Formats a `leader-epoch-checkpoint`: `0\n<count>\n` then `epoch startOffset\n` per entry.
 * @throws KlxError `invalid-argument` for an epoch outside int32 or an offset outside int64.
 */
export function formatLeaderEpochCheckpoint(entries: readonly LeaderEpochEntry[]): string {
  return formatCheckpoint(
    entries.map((e, i) => {
      if (!Number.isInteger(e.epoch) || e.epoch < INT32_MIN || e.epoch > INT32_MAX) throw new KlxError('invalid-argument', `epoch entry ${i}: epoch ${e.epoch} is not an int32`);
      if (e.startOffset < INT64_MIN || e.startOffset > INT64_MAX) throw new KlxError('invalid-argument', `epoch entry ${i}: offset ${e.startOffset} is not an int64`);
      return `${e.epoch} ${e.startOffset}`;
    }),
  );
}

/**
 * Writes a `leader-epoch-checkpoint` atomically and durably.
 * @throws KlxError `invalid-argument`, `io-error`; or what `opts.fault` throws.
 */
export function writeLeaderEpochCheckpoint(path: string, entries: readonly LeaderEpochEntry[], opts: WriteOptions = {}): void {
  writeFileAtomic(path, formatLeaderEpochCheckpoint(entries), opts);
}
