/**
 * `partition.metadata` in a partition folder, Kafka ≥ 2.8 (spec §11.5; Kafka's `PartitionMetadataFile`,
 * `PartitionMetadata`, `PartitionMetadataReadBuffer`).
 *
 * Format: exactly two lines, `key: value`, `\n` between them and no newline after the second:
 *
 *     version: 0
 *     topic_id: 3kmNQ1cFR7ee0vxuXdx9Lw
 *
 * `topic_id` is the topic's 16-byte UUID as URL-safe base64 without padding (22 characters,
 * Kafka `Uuid.toString`). Reading follows Kafka: each line is split on `:` followed by whitespace and
 * must give exactly two parts; key names are not checked; the version must be 0; the id must decode
 * to 16 bytes and must not be the zero UUID. `__cluster_metadata` uses the reserved id
 * `AAAAAAAAAAAAAAAAAAAAAQ` (Kafka `Uuid.METADATA_TOPIC_ID`). Written via `.tmp` + rename.
 */
import { KlxError } from '../errors.ts';
import { readFileBytes, writeFileAtomic, type WriteOptions } from './fsync-write.ts';
import { parseJavaInt, splitLines } from './java-text.ts';

/** The only `partition.metadata` version. */
export const PARTITION_METADATA_VERSION = 0;
/** Kafka `Uuid.ZERO_UUID` printed: never a valid topic id. */
export const ZERO_UUID = 'AAAAAAAAAAAAAAAAAAAAAA';
/** Kafka `Uuid.METADATA_TOPIC_ID`, the topic id of `__cluster_metadata`. */
export const METADATA_TOPIC_ID = 'AAAAAAAAAAAAAAAAAAAAAQ';

/** Decoded `partition.metadata`. */
export interface PartitionMetadata {
  version: number;
  /** Topic id as Kafka prints it (22-character URL-safe base64 without padding: Uuid.toString). */
  topicId: string;
}

/**
 * Decodes a topic id (Kafka `Uuid.fromString`): 22 URL-safe base64 characters (24 with `==` padding).
 * @returns the 16 bytes, or undefined when `s` is not a UUID in that form.
 */
export function uuidToBytes(s: string): Uint8Array | undefined {
  if (!/^[A-Za-z0-9_-]{22}(==)?$/.test(s)) return undefined;
  const bytes = Buffer.from(s.slice(0, 22), 'base64url');
  return bytes.length === 16 ? new Uint8Array(bytes) : undefined;
}

/**
 * Prints 16 bytes as a Kafka `Uuid` (URL-safe base64, no padding, 22 characters).
 * @throws KlxError `invalid-argument` when `bytes` is not 16 bytes long.
 */
export function uuidFromBytes(bytes: Uint8Array): string {
  if (bytes.length !== 16) throw new KlxError('invalid-argument', `a UUID has 16 bytes, not ${bytes.length}`);
  return Buffer.from(bytes).toString('base64url');
}

/** Java `line.split(":\\s+")` (trailing empty parts dropped). */
function splitColon(line: string): string[] {
  const parts = line.split(/:[ \t\n\x0B\f\r]+/);
  while (parts.length > 0 && parts[parts.length - 1] === '') parts.pop();
  return parts;
}

/**
 * Parses the bytes of a `partition.metadata` file.
 * @throws KlxError `corrupt-checkpoint` with `file` and the byte `position` of the bad line
 *   (missing line, malformed line, version ≠ 0, invalid or zero topic id).
 */
export function parsePartitionMetadata(buf: Uint8Array, file = '<buffer>'): PartitionMetadata {
  const lines = splitLines(buf);
  const end = buf.length;
  const versionLine = lines[0];
  if (!versionLine) throw new KlxError('corrupt-checkpoint', 'empty partition metadata file', { file, position: 0 });
  const v = splitColon(versionLine.text);
  if (v.length !== 2) throw new KlxError('corrupt-checkpoint', `malformed line '${versionLine.text}'`, { file, position: versionLine.position });
  const version = parseJavaInt(v[1]!);
  if (version === undefined) throw new KlxError('corrupt-checkpoint', `malformed version '${v[1]}'`, { file, position: versionLine.position });
  if (version !== PARTITION_METADATA_VERSION) throw new KlxError('corrupt-checkpoint', `unrecognised partition metadata version ${version}`, { file, position: versionLine.position });
  const idLine = lines[1];
  if (!idLine) throw new KlxError('corrupt-checkpoint', 'missing topic_id line', { file, position: end });
  const t = splitColon(idLine.text);
  if (t.length !== 2) throw new KlxError('corrupt-checkpoint', `malformed line '${idLine.text}'`, { file, position: idLine.position });
  const topicId = t[1]!;
  if (!uuidToBytes(topicId)) throw new KlxError('corrupt-checkpoint', `'${topicId}' is not a base64 topic id`, { file, position: idLine.position });
  if (topicId.slice(0, 22) === ZERO_UUID) throw new KlxError('corrupt-checkpoint', 'invalid topic id (the zero UUID)', { file, position: idLine.position });
  return { version, topicId: topicId.slice(0, 22) };
}

/**
 * Reads `partition.metadata`.
 * @throws KlxError `not-found`, `io-error`, `corrupt-checkpoint`.
 */
export function readPartitionMetadata(path: string): PartitionMetadata {
  return parsePartitionMetadata(readFileBytes(path), path);
}

/**
 * Formats `partition.metadata` as Kafka does: `version: 0\ntopic_id: <id>` (no final newline).
 * @throws KlxError `invalid-argument` for an id that is not a 22-character base64 UUID, or the zero UUID.
 */
export function formatPartitionMetadata(topicId: string): string {
  if (!uuidToBytes(topicId) || topicId.length !== 22) throw new KlxError('invalid-argument', `'${topicId}' is not a 22-character base64 topic id`);
  if (topicId === ZERO_UUID) throw new KlxError('invalid-argument', 'the zero UUID is not a valid topic id');
  return `version: ${PARTITION_METADATA_VERSION}\ntopic_id: ${topicId}`;
}

/**
 * Writes `partition.metadata` atomically and durably (`.tmp`, fsync, rename, fsync dir).
 * @throws KlxError `invalid-argument`, `io-error`; or what `opts.fault` throws.
 */
export function writePartitionMetadata(path: string, topicId: string, opts: WriteOptions = {}): void {
  writeFileAtomic(path, formatPartitionMetadata(topicId), opts);
}
