/**
 * A small interpreter of Kafka message schemas: field tables written in this project's own compact
 * form (name, type, versions, nullable versions, tagged versions and tag, default) read over
 * {@link ProtocolReader} and printed as Kafka's generated `*JsonConverter.write(message, version)`
 * prints them (Kafka's `generator` module: `JsonConverterGenerator`, `FieldSpec`).
 *
 * What the interpreter follows from Kafka's generated classes:
 * - a field exists in a version when the version is in its `versions` (a field that only gives
 *   `taggedVersions` exists in those);
 * - in flexible versions strings, bytes and arrays use compact lengths and every struct ends with a
 *   tagged-field section; a field whose `taggedVersions` contain the version is read from that section;
 * - JSON keys are the field name with its first letter lower-cased, in schema order; a tagged field
 *   is printed only when its value differs from its default (`generateNonDefaultValueCheck`);
 *   int8/int16/int32/uint16 print as JSON integers, int64/uint32 as integers with all digits
 *   (`bigint` here), uuid as `Uuid.toString()` (base64url), bytes as base64, float64 as Java's
 *   `Double.toString` (Jackson `DoubleNode`), strings with Jackson's escapes;
 * - tags that the version does not define are kept (Kafka keeps them in `unknownTaggedFields` and its
 *   JSON does not print them); here they are returned in `unknownTaggedFields` with their path.
 *
 * Pure: no I/O, no Node imports. Errors are {@link DecodeError} with the byte position.
 */
import { DecodeError } from '../decode-error.ts';
import { base64Of } from '../json-text.ts';
import { ProtocolReader } from '../protocol-reader.ts';

/** A version range, inclusive; `[n, Infinity]` for Kafka's `"n+"`. */
export type Versions = readonly [number, number];

/** Scalar field types of Kafka's message schemas. */
export type ScalarType = 'bool' | 'int8' | 'int16' | 'uint16' | 'int32' | 'uint32' | 'int64' | 'float64' | 'string' | 'bytes' | 'uuid';

/** A field type: a scalar, an array of a type, or a struct with its own fields. */
export type FieldType = ScalarType | { readonly array: FieldType } | { readonly struct: readonly Field[] };

/** One field of a message schema (Kafka's `FieldSpec`, the parts that decide the bytes and the JSON). */
export interface Field {
  /** Kafka's field name (PascalCase); the JSON key is this with its first letter lower-cased. */
  readonly name: string;
  readonly type: FieldType;
  /** Versions the field exists in. */
  readonly versions: Versions;
  /** Versions in which it may be null (strings, bytes, arrays, structs). */
  readonly nullable?: Versions;
  /** Versions in which it is a tagged field, and its tag. */
  readonly tagged?: Versions;
  readonly tag?: number;
  /** Default value (only consulted for tagged fields: printed when different). `null` for `"null"`. */
  readonly default?: number | bigint | boolean | string | null;
}

/** A message schema: versions Kafka defined, the first flexible version, and the fields. */
export interface MessageSchema {
  readonly name: string;
  readonly valid: Versions;
  /** First flexible version, or `null` when no version is flexible (`"none"`). */
  readonly flexibleFrom: number | null;
  readonly fields: readonly Field[];
}

/** A tagged field the schema does not define for the version read: where, its tag and raw bytes. */
export interface UnknownTag {
  /** JSON path of the struct that carried it, `""` for the top level, e.g. `"endPoints[0]"`. */
  path: string;
  tag: number;
  data: Uint8Array;
}

/** A decoded message: the JSON-ready data (schema order, tagged defaults omitted) and unknown tags. */
export interface DecodedMessage {
  data: Record<string, unknown>;
  unknownTaggedFields: UnknownTag[];
}

/** Parses Kafka's version text: `"0"`, `"0-2"`, `"1+"`. */
export function versions(text: string): Versions {
  const plus = /^(\d+)\+$/.exec(text);
  if (plus) return [Number(plus[1]), Infinity];
  const range = /^(\d+)(?:-(\d+))?$/.exec(text);
  if (!range) throw new Error(`bad versions text ${text}`);
  return [Number(range[1]), Number(range[2] ?? range[1])];
}

/** Options of {@link field}: nullable and tagged versions (version text), tag, default. */
export interface FieldOptions {
  nullable?: string;
  tagged?: string;
  tag?: number;
  default?: number | bigint | boolean | string | null;
}

/**
 * Builds a {@link Field}. `type` is a scalar name, `"[]int32"`-style array text, or a FieldType.
 * `versionText` may be omitted (`undefined`) for a tagged field, which then exists in its tagged versions.
 */
export function field(name: string, type: ScalarType | `[]${ScalarType}` | FieldType, versionText?: string, opts: FieldOptions = {}): Field {
  const t: FieldType = typeof type === 'string' && type.startsWith('[]') ? { array: type.slice(2) as ScalarType } : (type as FieldType);
  const tagged = opts.tagged !== undefined ? versions(opts.tagged) : undefined;
  const v = versionText !== undefined ? versions(versionText) : tagged;
  if (!v) throw new Error(`field ${name}: no versions`);
  return {
    name,
    type: t,
    versions: v,
    ...(opts.nullable !== undefined ? { nullable: versions(opts.nullable) } : {}),
    ...(tagged ? { tagged, tag: opts.tag } : {}),
    ...(opts.default !== undefined ? { default: opts.default } : {}),
  };
}

/** An array-of-structs type. */
export function structArray(fields: readonly Field[]): FieldType {
  return { array: { struct: fields } };
}

/** A struct type. */
export function struct(fields: readonly Field[]): FieldType {
  return { struct: fields };
}

/** Builds a {@link MessageSchema}. `flexible` is Kafka's `flexibleVersions` text (`"0+"`, `"none"`). */
export function message(name: string, valid: string, flexible: string, fields: readonly Field[]): MessageSchema {
  return { name, valid: versions(valid), flexibleFrom: flexible === 'none' ? null : versions(flexible)[0], fields };
}

const inRange = (v: Versions | undefined, version: number): boolean => v !== undefined && version >= v[0] && version <= v[1];

/** The JSON key Kafka's converters use for a field (`FieldSpec.camelCaseName`). */
export function jsonName(f: Field): string {
  return f.name.charAt(0).toLowerCase() + f.name.slice(1);
}

const ZERO_UUID = 'AAAAAAAAAAAAAAAAAAAAAA';

function defaultOf(f: Field): unknown {
  if (f.default !== undefined) return f.type === 'int64' && typeof f.default === 'number' ? BigInt(f.default) : f.default;
  const t = f.type;
  if (typeof t === 'object') return 'array' in t ? [] : {};
  switch (t) {
    case 'bool':
      return false;
    case 'int64':
      return 0n;
    case 'string':
      return '';
    case 'uuid':
      return ZERO_UUID;
    case 'bytes':
      return new Uint8Array(0);
    default:
      return 0;
  }
}

/** Kafka's `FieldSpec.generateNonDefaultValueCheck` (used by JsonConverterGenerator): whether a tagged field's value is printed. */
function differsFromDefault(f: Field, value: unknown): boolean {
  const d = defaultOf(f);
  if (d === null) return value !== null;
  if (value === null) return true;
  if (Array.isArray(value)) return value.length !== 0;
  if (value instanceof Uint8Array) return value.length !== 0;
  if (typeof value === 'object') return true;
  return value !== d;
}

/** Smallest number of bytes an element of `t` can take, so hostile array counts are refused early. */
function minBytes(t: FieldType): number {
  if (typeof t === 'object') return 1;
  switch (t) {
    case 'int16':
    case 'uint16':
      return 2;
    case 'int32':
    case 'uint32':
      return 4;
    case 'int64':
    case 'float64':
      return 8;
    case 'uuid':
      return 16;
    default:
      return 1;
  }
}

function readValue(r: ProtocolReader, t: FieldType, nullable: boolean, version: number, flexible: boolean, path: string, unknown: UnknownTag[]): unknown {
  if (typeof t === 'object') {
    if ('array' in t) {
      const el = t.array;
      return r.array(path, flexible, (rr, i) => readValue(rr, el, false, version, flexible, `${path}[${i}]`, unknown), nullable, minBytes(el));
    }
    if (!nullable) return readStruct(r, t.struct, version, flexible, path, unknown);
    // A nullable struct starts with an int8 marker, -1 for null (Kafka's generated readers).
    const at = r.pos;
    const marker = r.int8(path);
    if (marker < 0) return null;
    if (marker !== 1) throw new DecodeError(at, `${path}: struct marker ${marker} is neither -1 nor 1`);
    return readStruct(r, t.struct, version, flexible, path, unknown);
  }
  switch (t) {
    case 'bool':
      return r.bool(path);
    case 'int8':
      return r.int8(path);
    case 'int16':
      return r.int16(path);
    case 'uint16':
      return r.uint16(path);
    case 'int32':
      return r.int32(path);
    case 'uint32':
      return BigInt(r.uint32(path));
    case 'int64':
      return r.int64(path);
    case 'float64':
      return r.float64(path);
    case 'uuid':
      return r.uuid(path);
    case 'string':
      return nullable ? r.string(path, flexible, true) : r.string(path, flexible, false);
    case 'bytes': {
      const at = r.pos;
      const b = r.bytes(path, flexible);
      if (b === null && !nullable) throw new DecodeError(at, `${path}: null where bytes are required`);
      return b === null ? null : b.slice();
    }
  }
}

function readStruct(r: ProtocolReader, fields: readonly Field[], version: number, flexible: boolean, path: string, unknown: UnknownTag[]): Record<string, unknown> {
  const values = new Map<Field, unknown>();
  const prefix = path === '' ? '' : `${path}.`;
  const taggedHere: Field[] = [];
  for (const f of fields) {
    if (!inRange(f.versions, version)) continue;
    if (flexible && inRange(f.tagged, version)) {
      taggedHere.push(f);
      continue;
    }
    values.set(f, readValue(r, f.type, inRange(f.nullable, version), version, flexible, prefix + jsonName(f), unknown));
  }
  if (flexible) {
    const extra = r.taggedFields(path === '' ? '(top level)' : path, (tag, sub) => {
      const f = taggedHere.find((x) => x.tag === tag);
      if (!f) return false;
      values.set(f, readValue(sub, f.type, inRange(f.nullable, version), version, flexible, prefix + jsonName(f), unknown));
      return true;
    });
    for (const u of extra) unknown.push({ path, tag: u.tag, data: u.data.slice() });
  }
  const out: Record<string, unknown> = {};
  for (const f of fields) {
    if (!values.has(f)) continue;
    const v = values.get(f);
    if (taggedHere.includes(f) && !differsFromDefault(f, v)) continue;
    out[jsonName(f)] = v;
  }
  return out;
}

/**
 * Reads one message body of `schema` at `version` from `r` (the version itself is read by the caller,
 * as the frame of each topic puts it elsewhere). Does not require the reader to be at its end.
 * @throws DecodeError when the version is not one Kafka defined, or the bytes do not match.
 */
export function readMessage(r: ProtocolReader, schema: MessageSchema, version: number): DecodedMessage {
  if (!inRange(schema.valid, version)) throw new DecodeError(r.pos, `Can't read version ${version} of ${schema.name} (versions ${schema.valid[0]}–${schema.valid[1]})`);
  const unknown: UnknownTag[] = [];
  const flexible = schema.flexibleFrom !== null && version >= schema.flexibleFrom;
  const data = readStruct(r, schema.fields, version, flexible, '', unknown);
  return { data, unknownTaggedFields: unknown };
}

// ---- JSON text as Kafka (Jackson) prints it ----------------------------------------------------

const HEX = '0123456789ABCDEF';

/** A JSON string literal with Jackson's escapes (`\b \t \n \f \r`, other controls as `\u00XX`, upper-case hex). */
export function jacksonString(s: string): string {
  let out = '"';
  let from = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x20 && c !== 0x22 && c !== 0x5c) continue;
    out += s.slice(from, i);
    from = i + 1;
    switch (c) {
      case 0x22:
        out += '\\"';
        break;
      case 0x5c:
        out += '\\\\';
        break;
      case 0x08:
        out += '\\b';
        break;
      case 0x09:
        out += '\\t';
        break;
      case 0x0a:
        out += '\\n';
        break;
      case 0x0c:
        out += '\\f';
        break;
      case 0x0d:
        out += '\\r';
        break;
      default:
        out += `\\u00${HEX[c >> 4]}${HEX[c & 15]}`;
    }
  }
  return out + s.slice(from) + '"';
}

/**
 * Java's `Double.toString(d)` (what Jackson writes for a `DoubleNode`): shortest digits that round-trip,
 * plain decimal with at least one fractional digit for 10^-3 ≤ |d| < 10^7 (`1048576.0`), else
 * `d.dddE±n` (`1.0E7`, `1.5E-4`). NaN and infinities as Jackson quotes them by default.
 */
export function javaDoubleText(d: number): string {
  if (Number.isNaN(d)) return '"NaN"';
  if (d === Infinity) return '"Infinity"';
  if (d === -Infinity) return '"-Infinity"';
  if (d === 0) return Object.is(d, -0) ? '-0.0' : '0.0';
  const sign = d < 0 ? '-' : '';
  const [mant, expText] = Math.abs(d).toExponential().split('e') as [string, string];
  const digits = mant.replace('.', '');
  const exp = Number(expText);
  const abs = Math.abs(d);
  if (abs >= 1e-3 && abs < 1e7) {
    if (exp >= 0) {
      const intPart = digits.slice(0, exp + 1).padEnd(exp + 1, '0');
      const frac = digits.slice(exp + 1);
      return `${sign}${intPart}.${frac === '' ? '0' : frac}`;
    }
    return `${sign}0.${'0'.repeat(-exp - 1)}${digits}`;
  }
  const frac = digits.slice(1);
  return `${sign}${digits[0]}.${frac === '' ? '0' : frac}E${exp}`;
}

function valueText(t: FieldType, v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (typeof t === 'object') {
    if ('array' in t) return `[${(v as unknown[]).map((e) => valueText(t.array, e)).join(',')}]`;
    return structText(t.struct, v as Record<string, unknown>);
  }
  switch (t) {
    case 'float64':
      return javaDoubleText(v as number);
    case 'string':
    case 'uuid':
      return jacksonString(v as string);
    case 'bytes':
      return `"${base64Of(v as Uint8Array)}"`;
    default:
      return String(v);
  }
}

function structText(fields: readonly Field[], obj: Record<string, unknown>): string {
  const parts: string[] = [];
  for (const f of fields) {
    const k = jsonName(f);
    if (!Object.prototype.hasOwnProperty.call(obj, k)) continue;
    parts.push(`${jacksonString(k)}:${valueText(f.type, obj[k])}`);
  }
  return `{${parts.join(',')}}`;
}

/** The JSON text Kafka's `*JsonConverter.write` prints (Jackson's compact `toString`) for decoded data. */
export function messageJsonText(schema: MessageSchema, data: Record<string, unknown>): string {
  return structText(schema.fields, data);
}
