/**
 * The decode layer's core: what a format is, the registry of formats, and one entry point
 * ({@link decodeBytes}) that every part of the product (records table, inspector, search, SQL,
 * exports, `klx fetch`/`klx dump`, the bridge) calls to turn a record's key or value into JSON.
 *
 * A format reads one key or one value (`Uint8Array`) in a given {@link DecodeContext} (topic, side,
 * the record's key when decoding its value, the schemas known to the session) and either returns
 * what it read or throws {@link DecodeError} / {@link FormatError} with the byte position and a
 * reason. The layer catches that and returns a {@link Decoded} whose `error` says why (never a crash,
 * never a silent fallback to another format when the user chose one).
 *
 * `auto` (the default per topic and side) asks every format how sure it is
 * ({@link Format.detect}), tries them from the most to the least confident, keeps the first that
 * decodes, and says why in `reason` ("Confluent framing, schema id 7 found in _schemas-0 of this
 * folder"). Formats that belong to a topic (Kafka's internal topics, `_schemas`, Connect's topics)
 * claim it by name with confidence 1.
 *
 * Cost: a format decodes only the bytes it is given, with no I/O; schemas are looked up in memory
 * ({@link SchemaLookup}) and compiled once. Values above {@link DecodeContext.maxBytes} (default
 * 1 MiB, the inspector's cap) are not decoded: `error = 'too large'`.
 * Pure: no Electron imports; Node's `Buffer` only where a library needs it.
 */
import { DecodeError } from './decode-error.ts';
import { toJsonText } from './json-text.ts';
import type { SchemaLookup } from './schemas/schema-registry.ts';

/** Which part of a record is decoded. */
export type Side = 'key' | 'value';

/** The decoder's cap on a key or value, in bytes (the inspector's 1 MiB preview cap). */
export const DEFAULT_MAX_DECODE_BYTES = 1 << 20;

/** The format choice meaning "detect it per record" (the default). */
export const AUTO = 'auto';

/**
 * Kinds of decode failure (the `errorCode` of a {@link Decoded}):
 * - `too-large` the bytes exceed the cap (not decoded);
 * - `truncated` the bytes end before the format's structure does;
 * - `unknown-schema` a Confluent-framed value names a schema id no schema source has;
 * - `message-index` a Protobuf message index that the schema does not have;
 * - `invalid-utf8` text that is not UTF-8;
 * - `schema` the schema itself does not compile (Avro/Protobuf/JSON Schema text, references);
 * - `invalid` anything else the format rejects (wrong magic, wrong length, bad JSON, …).
 */
export type DecodeErrorCode = 'too-large' | 'truncated' | 'unknown-schema' | 'message-index' | 'invalid-utf8' | 'schema' | 'invalid';

/** A {@link DecodeError} with a kind, thrown by formats of this layer. */
export class FormatError extends DecodeError {
  /**
   * @param code the kind of failure
   * @param position byte offset inside the key/value where it was found
   * @param reason what was expected and found, e.g. `"unknown schema id 12"`
   */
  constructor(
    readonly code: DecodeErrorCode,
    position: number,
    reason: string,
    /** The schema id the bytes named (Confluent framing), when known before the failure. */
    readonly schemaId?: number,
  ) {
    super(position, reason);
    this.name = 'FormatError';
  }
}

/** What the layer knows around the bytes it decodes. */
export interface DecodeContext {
  /** The record's topic (formats of internal topics claim theirs by this name). */
  topic: string;
  /** Whether the bytes are the key or the value. */
  side: Side;
  /** The record's key, when decoding its value (internal topics pick the value schema by the key). */
  key?: Uint8Array | null;
  /** Schemas known to the session (offline registry, user files); null when there are none. */
  schemas?: SchemaLookup | null;
  /** Bytes above which nothing is decoded (`too-large`); default {@link DEFAULT_MAX_DECODE_BYTES}. */
  maxBytes?: number;
  /** The control record type id (Kafka's `ControlRecordType`) when the record is a control record. */
  controlType?: number;
}

/** How sure a format is that bytes are its own, and why (shown as auto's explanation). */
export interface Detection {
  /** 0 (barely) to 1 (certain: the topic is the format's own, or a schema id was found). */
  confidence: number;
  /** One sentence, e.g. `"Confluent framing, schema id 7 found in _schemas-0"`. */
  reason: string;
}

/** What a format's `decode` returns. */
export interface FormatOutput {
  /**
   * The decoded value: plain JSON-like data; int64 beyond ±2^53 as `bigint`, bytes as `Uint8Array`
   * (base64 in the JSON text). Never a non-finite number: float/double NaN, +Infinity, −Infinity
   * are the strings `"NaN"`, `"Infinity"`, `"-Infinity"` (proto3's JSON mapping; Avro's
   * JsonEncoder through Jackson), so they are not `null`; an Avro `decimal` is its exact decimal
   * text in a string (see formats/avro.ts for every Avro logical type).
   */
  json: unknown;
  /** One-line display text when it is not the JSON text (a string format shows the string itself). */
  display?: string;
  /** Confluent framing: the schema id, and the subject/version the schema source gives it. */
  schemaId?: number;
  subject?: string;
  version?: number;
  /** A problem found after a value was decoded (e.g. bytes left over): kept beside the JSON. */
  error?: string;
  errorCode?: DecodeErrorCode;
}

/** One decodable format. */
export interface Format {
  /** Stable name used in choices, the CLI (`--value-format NAME`) and SQL's `*_format` columns. */
  readonly name: string;
  /** A short title for menus, e.g. `"Avro (Confluent framing)"`. */
  readonly title: string;
  /**
   * How sure the format is that `bytes` are its own, or null when they cannot be. Cheap: looks at
   * the topic and a few bytes; the layer decodes afterwards.
   */
  detect(bytes: Uint8Array, ctx: DecodeContext): Detection | null;
  /**
   * Optional: a number that decides {@link detect}'s answer for `bytes` within one decoder (the same
   * schemas and topic side): Confluent framing's schema id. A decoder that was sure of this format
   * for a record skips `detect` for the next ones with the same number (auto's hot path).
   * null when the bytes are not the format's.
   */
  detectKey?(bytes: Uint8Array): number | null;
  /**
   * Optional, beside {@link detectKey}: a reader specialised for the bytes whose detect key is `key`
   * (Confluent framing: the schema that id names, looked up and compiled once, not per record), or
   * null when there is none (e.g. an unknown id: the generic {@link decode} then says why). The
   * reader's `read` and `meta` answer, and it throws, what {@link decode} would for those bytes in a
   * context of the same topic side and schemas. It is valid while the schema sources do not change (a decoder keeps it
   * per topic side with `SchemaRegistry.generation`).
   */
  prepare?(key: number, ctx: DecodeContext): PreparedReader | null;
  /** Decodes `bytes`. @throws DecodeError / FormatError with the position and reason. */
  decode(bytes: Uint8Array, ctx: DecodeContext): FormatOutput;
  /** What a null key/value (a tombstone) shows as; default JSON `null`. */
  decodeNull?(ctx: DecodeContext): FormatOutput;
  /** Set on formats only `auto` or an explicit choice should use for a topic they claim by name. */
  readonly topicOnly?: boolean;
}

/**
 * What a {@link Decoded} says beside its JSON: {@link FormatOutput} without `json`. A prepared reader
 * shares one for every record it reads (its schema id, subject and version), so a decoded record
 * costs one object, not two.
 */
export type FormatMeta = Omit<FormatOutput, 'json'>;

/**
 * A JSON value with the problem a prepared reader found after decoding it (e.g. bytes left after an
 * Avro datum, a JSON Schema that does not validate): what {@link PreparedReader.read} returns then,
 * instead of the bare JSON.
 */
export class NotedOutput {
  constructor(readonly out: FormatOutput) {}
}

/**
 * Whether `x` (what a {@link PreparedReader.read} returned) is a {@link NotedOutput}. The hot paths ask
 * this once per record: `x instanceof NotedOutput` measured ~40 ns per call on avsc's record objects
 * (V8 walks their prototype chain through its generic path: 1 M Avro values 0.17 → 0.22 CPU s), this
 * test a few ns. Exact: a decoded value's `constructor` is its own class (avsc's record class,
 * Object, Array) or a field of that name holding decoded data, never this class.
 */
export function isNotedOutput(x: unknown): x is NotedOutput {
  return typeof x === 'object' && x !== null && (x as { constructor?: unknown }).constructor === NotedOutput;
}

/**
 * What {@link Format.prepare} returns: reads one key or value of the detect key it was made for.
 * `read` returns the decoded JSON (or a {@link NotedOutput} when it found a problem after it), whose
 * schema id/subject/version are `meta`'s; it throws DecodeError / FormatError as {@link Format.decode}
 * does. Together they answer what `decode` would.
 */
export interface PreparedReader {
  readonly meta: FormatMeta;
  read(bytes: Uint8Array): unknown;
}

/** What a failed decode says: the reason, its kind, the byte position, and the schema id the bytes named. */
interface Failure {
  error: string;
  errorCode: DecodeErrorCode;
  errorPosition?: number;
  schemaId?: number;
}

/**
 * A decoded key or value: the format that read it, the JSON, texts computed on first use, the
 * schema used, and either nothing wrong or an error (then `json` is undefined unless the format
 * decoded a value and found a problem after it).
 *
 * Kept small (five fields: the hot paths make one per record): what is said beside the JSON lives in
 * `meta`, the format's {@link FormatMeta} (shared by every record a prepared reader reads) or, when
 * nothing was decoded, the {@link Failure}.
 */
export class Decoded {
  private jsonTextCache: string | undefined;
  constructor(
    /** The format used (auto's pick, or the chosen one). */
    readonly format: string,
    /** Why this format: auto's explanation, or `"chosen for <topic> <side>"`. */
    readonly reason: string,
    /** The decoded value (see {@link FormatOutput.json}); undefined when nothing was decoded. */
    readonly json: unknown,
    /** What the format said beside the JSON (decoded), or why nothing was decoded (failed). */
    private readonly meta: FormatMeta | Failure,
    /** Whether a value was decoded (possibly with a problem noted in `error`). */
    readonly ok: boolean,
  ) {}

  /** A decoded value: the format's output. */
  static of(format: string, reason: string, out: FormatOutput): Decoded {
    return new Decoded(format, reason, out.json, out, true);
  }

  /** Nothing decoded: why (`"unknown schema id 12"`, `"too large"`), its kind, where, and the schema id the bytes named. */
  static failed(format: string, reason: string, error: string, errorCode: DecodeErrorCode, errorPosition?: number, schemaId?: number): Decoded {
    return new Decoded(format, reason, undefined, { error, errorCode, errorPosition, schemaId }, false);
  }

  /** What went wrong, e.g. `"unknown schema id 12"`, `"too large"`; undefined when it decoded. */
  get error(): string | undefined {
    return this.meta.error;
  }

  get errorCode(): DecodeErrorCode | undefined {
    return this.meta.errorCode;
  }

  /** Byte position inside the key/value where the error was found (failures only). */
  get errorPosition(): number | undefined {
    return this.ok ? undefined : (this.meta as Failure).errorPosition;
  }

  /** The Confluent schema id (also when decoding with it failed, e.g. `unknown schema id 12`). */
  get schemaId(): number | undefined {
    return this.meta.schemaId;
  }

  get subject(): string | undefined {
    return this.ok ? (this.meta as FormatMeta).subject : undefined;
  }

  get version(): number | undefined {
    return this.ok ? (this.meta as FormatMeta).version : undefined;
  }

  /** Compact JSON text with int64 exact and bytes as base64; null when nothing was decoded. */
  get jsonText(): string | null {
    if (!this.ok) return null;
    return (this.jsonTextCache ??= toJsonText(this.json));
  }

  /** One-line display text: the string itself for text formats, else the compact JSON text. */
  get text(): string | null {
    if (!this.ok) return null;
    return (this.meta as FormatMeta).display ?? this.jsonText;
  }
}

/** Formats by name, in the order `auto` breaks ties (earlier first). */
export class FormatRegistry {
  private readonly byName = new Map<string, Format>();
  /** {@link all}'s answer, made once per change (auto asks for it per record). */
  private list: Format[] | null = null;

  /** @param formats formats to register, in tie-break order */
  constructor(formats: Iterable<Format> = []) {
    for (const f of formats) this.register(f);
  }

  /** Adds (or replaces, keeping its place) a format. */
  register(format: Format): void {
    this.byName.set(format.name, format);
    this.list = null;
  }

  /** The format named `name`, or undefined. */
  get(name: string): Format | undefined {
    return this.byName.get(name);
  }

  /** Every format, in registration order (one array shared by the callers: do not change it). */
  all(): readonly Format[] {
    return (this.list ??= [...this.byName.values()]);
  }

  /** `auto` plus every format's name. */
  names(): string[] {
    return [AUTO, ...this.byName.keys()];
  }
}

/** The {@link Decoded} of a format that threw `e` (a FormatError's kind and position, a DecodeError's position). */
export function decodeFailure(format: string, reason: string, e: unknown): Decoded {
  if (e instanceof FormatError) return Decoded.failed(format, reason, e.reason, e.code, e.position, e.schemaId);
  if (e instanceof DecodeError) return Decoded.failed(format, reason, e.reason, /past the end|needs \d+ bytes/.test(e.reason) ? 'truncated' : 'invalid', e.position);
  return Decoded.failed(format, reason, e instanceof Error ? e.message : String(e), 'invalid');
}

function run(format: Format, bytes: Uint8Array | null, ctx: DecodeContext, reason: string): Decoded {
  try {
    const out = bytes === null ? (format.decodeNull?.(ctx) ?? { json: null }) : format.decode(bytes, ctx);
    return Decoded.of(format.name, reason, out);
  } catch (e) {
    return decodeFailure(format.name, reason, e);
  }
}

/**
 * Decodes one key or value with the format `choice` (a format name or {@link AUTO}).
 *
 * - Null bytes: the format's tombstone text (auto: the topic's own format when one claims it, else `null`).
 * - Above `ctx.maxBytes`: not decoded, `error = 'too large'`, `errorCode = 'too-large'`.
 * - A named format decodes or fails with its error (no fallback).
 * - `auto`: formats ordered by {@link Format.detect} confidence (ties by registration order) are
 *   tried until one decodes; `reason` is the winner's detection reason, plus what was rejected before it.
 *   When only the raw-bytes fallback would be left, the most confident candidate's error is returned
 *   (e.g. `unknown schema id 12` rather than hex without a word).
 *
 * @throws FormatError `invalid` only when `choice` names no registered format.
 */
export function decodeBytes(registry: FormatRegistry, bytes: Uint8Array | null, ctx: DecodeContext, choice: string = AUTO): Decoded {
  if (choice !== AUTO) {
    const format = registry.get(choice);
    if (!format) throw new FormatError('invalid', 0, `no format named ${JSON.stringify(choice)} (formats: ${registry.names().join(', ')})`);
    return decodeWith(format, bytes, ctx, chosenReason(format, ctx));
  }
  if (bytes === null) {
    for (const f of registry.all()) {
      if (!f.topicOnly) continue;
      const d = f.detect(new Uint8Array(0), ctx);
      if (d && d.confidence >= 1) return run(f, null, ctx, `${f.title}: ${d.reason}`);
    }
    return Decoded.of('null', 'null: no bytes (a tombstone when it is the value)', { json: null });
  }
  if (bytes.byteLength > (ctx.maxBytes ?? DEFAULT_MAX_DECODE_BYTES)) return tooLarge('bytes', 'auto: not inspected', bytes, ctx);
  // Candidates from the most to the least confident, ties in registration order (an insertion
  // sort: there are a few, and auto runs this for every record it is not sure of). The two lists
  // are kept for the next call (no formats' decode calls this again; a nested call would get its own).
  const own = candidatesBusy;
  const fs: Format[] = own ? [] : candidateFormats;
  const ds: Detection[] = own ? [] : candidateDetections;
  candidatesBusy = true;
  try {
    let n = 0;
    for (const f of registry.all()) {
      const d = f.detect(bytes, ctx);
      if (!d) continue;
      let j = n++;
      for (; j > 0 && ds[j - 1]!.confidence < d.confidence; j--) {
        fs[j] = fs[j - 1]!;
        ds[j] = ds[j - 1]!;
      }
      fs[j] = f;
      ds[j] = d;
    }
    let rejected: string[] | null = null;
    let first: Decoded | null = null;
    for (let c = 0; c < n; c++) {
      const f = fs[c]!;
      const d = ds[c]!;
      // Only the raw-bytes fallback is left: the best candidate's error says more than hex does.
      if (first && d.confidence < 0.05) return first;
      const reason = rejected ? `${f.title}: ${d.reason} (not ${rejected.join('; not ')})` : titled(f, d);
      const r = run(f, bytes, ctx, reason);
      // A format that claims the topic or found its schema is the answer even when it fails: its error is the news.
      if (r.ok || d.confidence >= 0.9) return r;
      first ??= r;
      (rejected ??= []).push(`${f.name}: ${r.error}`);
    }
    return first ?? Decoded.of('bytes', 'no format recognised these bytes', { json: bytes });
  } finally {
    if (!own) candidatesBusy = false;
  }
}

/** {@link decodeBytes}'s candidate lists, reused by every call that is not nested in another (entries past a call's count are stale). */
const candidateFormats: Format[] = [];
const candidateDetections: Detection[] = [];
let candidatesBusy = false;

/** `<title>: <reason>` of a detection, made once per detection object (formats return constants where they can). */
const TITLED = new WeakMap<Detection, { title: string; text: string }>();
function titled(f: Format, d: Detection): string {
  const had = TITLED.get(d);
  if (had !== undefined && had.title === f.title) return had.text;
  const text = `${f.title}: ${d.reason}`;
  TITLED.set(d, { title: f.title, text });
  return text;
}

/** auto's explanation of a format chosen by the user. */
export function chosenReason(format: Format, ctx: DecodeContext): string {
  return `${format.title}: chosen for ${ctx.side}s of ${ctx.topic}`;
}

/**
 * Decodes with a reader {@link Format.prepare} made (the caller checked the cap and the detect key);
 * failures become the result's error, as in {@link decodeWith}.
 */
export function decodePrepared(format: string, reader: PreparedReader, bytes: Uint8Array, reason: string): Decoded {
  try {
    const json = reader.read(bytes);
    if (isNotedOutput(json)) return Decoded.of(format, reason, json.out);
    return new Decoded(format, reason, json, reader.meta, true);
  } catch (e) {
    return decodeFailure(format, reason, e);
  }
}

/** Decodes with one format (the cap applies; failures become the result's error). */
export function decodeWith(format: Format, bytes: Uint8Array | null, ctx: DecodeContext, reason: string): Decoded {
  if (bytes !== null && bytes.byteLength > (ctx.maxBytes ?? DEFAULT_MAX_DECODE_BYTES)) return tooLarge(format.name, reason, bytes, ctx);
  return run(format, bytes, ctx, reason);
}

function tooLarge(format: string, reason: string, bytes: Uint8Array, ctx: DecodeContext): Decoded {
  const cap = ctx.maxBytes ?? DEFAULT_MAX_DECODE_BYTES;
  return Decoded.failed(format, `${reason}; ${bytes.byteLength} bytes exceed the ${cap}-byte decode cap`, 'too large', 'too-large', cap);
}

/**
 * Per topic, the format chosen for keys and values (absent = {@link AUTO}) and the schema files the
 * user gave for them (`keySchema` / `valueSchema`, see {@link UserSchema}).
 */
export type FormatChoices = Record<string, TopicChoice>;

/** The choices of one topic. */
export interface TopicChoice {
  key?: string;
  value?: string;
  keySchema?: UserSchema;
  valueSchema?: UserSchema;
}

/**
 * Schema files a user gave for a topic's keys or values (kept with the choices, so they are read
 * once when loaded, never from their original place again): `files[0]` is the schema (`.avsc` Avro,
 * `.proto` Protobuf, `.json` JSON Schema, by the name's extension), the others are what it imports
 * (`.proto` imports by file name, Avro named types, JSON Schema `$ref`s by file name).
 */
export interface UserSchema {
  files: { name: string; text: string }[];
}

/** The choice for `topic`'s `side` in `choices` ({@link AUTO} when none). */
export function choiceFor(choices: FormatChoices | null | undefined, topic: string, side: Side): string {
  return choices?.[topic]?.[side] ?? AUTO;
}
