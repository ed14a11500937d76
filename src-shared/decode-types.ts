/**
 * Wire types of the `decode.*` domain (issue 11): the formats main's decode layer knows, one
 * record's key and value decoded with a chosen format (or `auto`), and the per-topic, per-side
 * format choices of an opened folder.
 *
 * JSON-safe by construction (see `wire.ts`): decoded values travel as JSON TEXT made by main with
 * int64 values exact (a long of 2^63−1 keeps all its digits; never `JSON.parse` it into numbers to
 * show it), bytes as base64. No Node or DOM imports.
 */
import { z } from 'zod';
import { base64, count, int64 } from './wire.ts';

/** The format choice meaning "detect it per record" (the default for every topic and side). */
export const AUTO_FORMAT = 'auto';

/** A format name as the decode layer registers it (`auto`, `string`, `long`, `avro`, `confluent`, `consumer-offsets`, ...). */
export const formatName = z.string().regex(/^[a-z0-9][a-z0-9._-]{0,63}$/, 'not a format name');

/** Which part of a record: its key or its value. */
export const decodeSide = z.enum(['key', 'value']);

/** One format of the registry, as menus list it. */
export const formatInfo = z.object({
  /** Stable name used in choices, `klx fetch --value-format NAME` and SQL's `*_format` columns. */
  name: formatName,
  /** Short title, e.g. `"Avro (Confluent framing)"`. */
  title: z.string(),
  /** True for formats that only fit the topics they claim by name (`__consumer_offsets`, `_schemas`, ...). */
  topicOnly: z.boolean(),
});

/**
 * Schema files a user gave for a topic's keys or values (kept with the choices): `files[0]` is the
 * schema (`.avsc` Avro, `.proto` Protobuf, `.json` JSON Schema, by its name), the others what it
 * imports (by file name). At most 1 MiB of text in all (checked by main).
 */
export const userSchema = z.object({
  files: z.array(z.object({ name: z.string().min(1).max(255), text: z.string().max(1 << 20) })).min(1).max(32),
});

/** Per topic, the format chosen for keys and values (an absent side means `auto`) and the schema files given for them. */
export const formatChoices = z.record(
  z.string().max(249),
  z.object({ key: formatName.optional(), value: formatName.optional(), keySchema: userSchema.optional(), valueSchema: userSchema.optional() }),
);

/**
 * Kinds of decode failure (the decode layer's `DecodeErrorCode`): `too-large` (over the 1 MiB cap,
 * not decoded), `truncated`, `unknown-schema`, `message-index`, `invalid-utf8`, `schema` (the schema
 * itself does not compile), `invalid`.
 */
export const decodeErrorCode = z.enum(['too-large', 'truncated', 'unknown-schema', 'message-index', 'invalid-utf8', 'schema', 'invalid']);

/** A record's key or value as main decoded it. */
export const decodedPart = z.object({
  /** The choice in force (`auto` or a format name): the request's, else the topic's persisted one. */
  choice: formatName,
  /** The format that read the bytes (auto's pick, or the chosen one). */
  format: z.string(),
  /** Why this format, e.g. `"Avro (Confluent framing): Confluent framing, schema id 7 found in _schemas-0 of /data"`. */
  reason: z.string(),
  /** The key/value is null (a keyless record's key, a tombstone's value). */
  isNull: z.boolean(),
  /** Size of the bytes. */
  size: count,
  /** The decoded value as pretty-printed JSON text (2 spaces, int64 exact, bytes as base64); null when nothing decoded. */
  json: z.string().nullable(),
  /** The one-line text the records table shows (cut at 512 characters); null when nothing decoded. */
  text: z.string().nullable(),
  /** Confluent framing: the schema id the bytes name (also when it is unknown), and the subject/version of that schema. */
  schemaId: z.number().int().nullable(),
  subject: z.string().nullable(),
  version: z.number().int().nullable(),
  /** Why the bytes did not decode (`"unknown schema id 12"`, `"Avro: read past the end at byte 31 of 30"`, `"too large"`), or null. */
  error: z.string().nullable(),
  errorCode: decodeErrorCode.nullable(),
  /** Byte position inside the key/value where the error was found. */
  errorPosition: count.nullable(),
  /** When decoding failed: the raw bytes (at most the 1 MiB decode cap), so the caller can still show them. */
  bytes: base64.nullable(),
});

/** `decode.record`'s answer. */
export const decodedRecord = z.object({
  offset: int64,
  topic: z.string(),
  partition: z.number().int(),
  key: decodedPart,
  value: decodedPart,
});

/** `decode.choices` / `decode.setChoice`'s answer. */
export const choicesOfFolder = z.object({
  /** The opened folder the choices belong to (real path). */
  root: z.string(),
  choices: formatChoices,
});

export type FormatInfo = z.infer<typeof formatInfo>;
export type DecodeSide = z.infer<typeof decodeSide>;
export type FormatChoicesWire = z.infer<typeof formatChoices>;
export type UserSchemaWire = z.infer<typeof userSchema>;
export type DecodeErrorCodeWire = z.infer<typeof decodeErrorCode>;
export type DecodedPart = z.infer<typeof decodedPart>;
export type DecodedRecordWire = z.infer<typeof decodedRecord>;
export type ChoicesOfFolder = z.infer<typeof choicesOfFolder>;
