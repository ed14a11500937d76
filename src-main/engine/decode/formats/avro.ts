/**
 * Avro (Apache Avro 1.11 binary encoding) read with `avsc`: a datum written with a writer schema
 * (from the Confluent wire format's schema id, or given for a topic), and Avro object container
 * files (`Obj\x01` header, metadata map with `avro.schema`/`avro.codec`, blocks of
 * count + size + data + 16-byte sync marker; codecs null, deflate, snappy with its CRC-32 trailer).
 *
 * int64 (`long`) values stay exact: a datum is read with avsc's fast long type and, only when it
 * holds a long beyond ±2^53 (avsc refuses those: "potential precision loss"), read again with a long
 * type that returns a `bigint` for those values (every `long`, also `{"type": "long", "logicalType":
 * ...}`). Compiled types are cached per schema entry.
 *
 * The JSON a datum decodes to (the same values in `json` and in the JSON text):
 * - `float`/`double` NaN, +Infinity, −Infinity are the strings `"NaN"`, `"Infinity"`, `"-Infinity"`
 *   (JSON has no number for them; `JSON.stringify` would print `null`, which a `["null","double"]`
 *   union's null branch prints too). These are the strings Avro's Java `JsonEncoder` writes (through
 *   Jackson, whose `WRITE_NAN_AS_STRINGS` is on by default; what `kafka-avro-console-consumer`
 *   prints) and proto3's JSON mapping prints; other floats are numbers, a `float` as the shortest
 *   decimal that is the same float32 (`0.1`, not its double 0.10000000149011612; see
 *   {@link shortestFloat32}).
 * - logicalType `decimal` (on `bytes` or `fixed`): the exact decimal text in a string, with `scale`
 *   digits after the point (`decimal(10,2)` → `"12345678.90"`, `"-0.05"`), never a rounded
 *   double. (Avro's JsonEncoder prints the two's-complement bytes as a string of code points,
 *   unreadable; Avro's `DecimalConversion` gives a `BigDecimal`, this is its plain text.) A decimal
 *   whose precision/scale are invalid is read as its underlying bytes/fixed, as the spec says.
 * - logicalType `duration` (`fixed` 12): `{"months", "days", "milliseconds"}`, the spec's three
 *   little-endian unsigned ints (its JSON encoding would be 12 code points).
 * - `date`, `time-millis`, `time-micros`, `timestamp-millis`, `timestamp-micros`,
 *   `local-timestamp-millis`, `local-timestamp-micros`: the underlying int/long (days since
 *   1970-01-01, ms/µs since midnight, ms/µs since the epoch), as Avro's JSON encoding and
 *   `kafka-avro-console-consumer` print them: exact (longs beyond 2^53 too) and sortable.
 * - `uuid`: its string. Other `bytes`/`fixed`: base64 in the JSON text (see json-text.ts).
 */
import { createRequire } from 'node:module';
import { inflateRawSync } from 'node:zlib';
import avro from 'avsc';
import { asBuffer } from '../../format/bytes.ts';
import { nonFinite, shortestFloat32 } from '../json-text.ts';
// avsc's own cursor class (its public API has none); typed where used, see AvroDatumReader.
// @ts-expect-error avsc ships no types for lib/utils.js
import avscUtils from 'avsc/lib/utils.js';
import { FormatError, type Format, type FormatOutput } from '../format.ts';
import type { SchemaEntry, SchemaLookup } from '../schemas/schema-registry.ts';

/** A long type returning numbers within ±2^53 and `bigint` beyond (exact). */
const exactLong = avro.types.LongType.__with({
  fromBuffer(buf: Buffer): number | bigint {
    const lo = buf.readUInt32LE(0);
    const hi = buf.readInt32LE(4);
    if (hi >= -0x200000 && hi < 0x200000) return hi * 4294967296 + lo;
    return buf.readBigInt64LE(0);
  },
  toBuffer(v: number | bigint): Buffer {
    const b = Buffer.alloc(8);
    b.writeBigInt64LE(BigInt(v));
    return b;
  },
  fromJSON: (v: unknown) => (typeof v === 'string' ? BigInt(v) : v),
  toJSON: (v: number | bigint) => (typeof v === 'bigint' ? v.toString() : v),
  isValid: (v: unknown) => typeof v === 'bigint' || (typeof v === 'number' && Number.isInteger(v)),
  compare: (a: number | bigint, b: number | bigint) => (a < b ? -1 : a > b ? 1 : 0),
});


/** avsc's cursor, as the types' `_read` see it. */
interface FloatTap {
  readDouble(): number;
  readFloat(): number;
}

/** `double` read as a number, or the string `"NaN"` / `"Infinity"` / `"-Infinity"` (see the module comment). */
class JsonDoubleType extends avro.types.DoubleType {
  _read(tap: FloatTap): number | string {
    const v = tap.readDouble();
    return v - v === 0 ? v : nonFinite(v);
  }
}

/** `float` read as its shortest number ({@link shortestFloat32}), or the string `"NaN"` / `"Infinity"` / `"-Infinity"`. */
class JsonFloatType extends avro.types.FloatType {
  _read(tap: FloatTap): number | string {
    const v = tap.readFloat();
    return v - v === 0 ? shortestFloat32(v) : nonFinite(v);
  }
}

/**
 * The exact decimal text of a two's-complement big-endian unscaled value with `scale` digits
 * after the point (Avro's `decimal`, as Java's `BigDecimal.toPlainString`).
 */
export function decimalText(b: Uint8Array, scale: number): string {
  let v = 0n;
  for (let i = 0; i < b.length; i++) v = (v << 8n) | BigInt(b[i]!);
  if (b.length > 0 && b[0]! & 0x80) v -= 1n << BigInt(8 * b.length);
  const neg = v < 0n;
  let digits = (neg ? -v : v).toString();
  if (scale > 0) {
    digits = digits.padStart(scale + 1, '0');
    digits = `${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
  }
  return neg ? `-${digits}` : digits;
}

type LogicalSchema = { type: unknown; logicalType?: string; precision?: unknown; scale?: unknown; size?: unknown };

/** logicalType `decimal` on `bytes`/`fixed`: its exact text. Invalid precision/scale: the constructor throws and avsc reads the underlying type. */
class AvroDecimalType extends avro.types.LogicalType {
  private readonly scale: number;
  constructor(schema: avro.Schema, opts?: unknown) {
    super(schema, opts);
    const { precision, scale = 0, type, size } = schema as LogicalSchema;
    if (typeof precision !== 'number' || !Number.isInteger(precision) || precision < 1) throw new Error('decimal: precision must be a positive integer');
    if (typeof scale !== 'number' || !Number.isInteger(scale) || scale < 0 || scale > precision) throw new Error('decimal: scale must be an integer 0..precision');
    if (type === 'fixed' && typeof size === 'number' && precision > Math.floor(Math.log10(2) * (8 * size - 1))) throw new Error('decimal: precision too large for the fixed size');
    this.scale = scale;
  }
  protected override _fromValue(b: Buffer): string {
    return decimalText(b, this.scale);
  }
  protected override _toValue(v: unknown): Buffer | undefined {
    if (typeof v !== 'string' || !/^-?\d+(\.\d+)?$/.test(v)) return undefined;
    const [int, frac = ''] = v.replace('-', '').split('.');
    if (frac.length !== this.scale) return undefined;
    const n = v.startsWith('-') ? -BigInt(int! + frac) : BigInt(int! + frac);
    let bytes = 1;
    while (n >= 1n << BigInt(8 * bytes - 1) || n < -(1n << BigInt(8 * bytes - 1))) bytes++;
    const out = Buffer.alloc(bytes);
    let u = n < 0n ? (1n << BigInt(8 * bytes)) + n : n;
    for (let i = bytes - 1; i >= 0; i--, u >>= 8n) out[i] = Number(u & 0xffn);
    return out;
  }
  protected override _resolve(type: avro.Type): ((v: unknown) => unknown) | undefined {
    return type instanceof AvroDecimalType && type.scale === this.scale ? (v) => v : undefined;
  }
}

/** logicalType `duration` (`fixed` 12): `{months, days, milliseconds}`. Another size: the underlying fixed. */
class AvroDurationType extends avro.types.LogicalType {
  constructor(schema: avro.Schema, opts?: unknown) {
    super(schema, opts);
    const { type, size } = schema as LogicalSchema;
    if (type !== 'fixed' || size !== 12) throw new Error('duration: a fixed of size 12');
  }
  protected override _fromValue(b: Buffer): { months: number; days: number; milliseconds: number } {
    return { months: b.readUInt32LE(0), days: b.readUInt32LE(4), milliseconds: b.readUInt32LE(8) };
  }
  protected override _toValue(v: unknown): Buffer | undefined {
    const d = v as { months?: unknown; days?: unknown; milliseconds?: unknown } | null;
    if (typeof d !== 'object' || d === null) return undefined;
    const out = Buffer.alloc(12);
    out.writeUInt32LE(Number(d.months), 0);
    out.writeUInt32LE(Number(d.days), 4);
    out.writeUInt32LE(Number(d.milliseconds), 8);
    return out;
  }
}

const LOGICAL_TYPES = { decimal: AvroDecimalType, duration: AvroDurationType };

/** The primitive a schema names (`"double"` or `{"type": "double", ...}`), else undefined. */
function primitiveOf(schema: unknown): unknown {
  return typeof schema === 'string' ? schema : typeof schema === 'object' && schema !== null && !Array.isArray(schema) ? (schema as { type?: unknown }).type : undefined;
}

/** The two compiled forms of one Avro schema. */
export interface AvroTypes {
  fast: avro.Type;
  exact: avro.Type;
}

/** Compiled types, kept on the entry itself (a symbol-keyed property: cheaper than a WeakMap per record). */
const COMPILED = Symbol('avro types');
const compiled = {
  get: (e: SchemaEntry): AvroTypes | FormatError | undefined => (e as unknown as Record<symbol, AvroTypes | FormatError | undefined>)[COMPILED],
  set: (e: SchemaEntry, v: AvroTypes | FormatError): void => {
    (e as unknown as Record<symbol, AvroTypes | FormatError>)[COMPILED] = v;
  },
};

function parseSchemaText(e: SchemaEntry): unknown {
  try {
    return JSON.parse(e.schema);
  } catch {
    // A bare primitive name ("string") is valid Avro schema text too.
    return e.schema.trim();
  }
}

/**
 * Compiles an Avro schema entry and the named types its references define (each referenced
 * subject/version first, into the same avsc registry, as Schema Registry resolves them).
 * @throws FormatError `schema` when the text or a reference does not compile.
 */
export function avroTypesOf(e: SchemaEntry, schemas: SchemaLookup | null | undefined): AvroTypes {
  const had = compiled.get(e);
  if (had instanceof FormatError) throw had;
  if (had) return had;
  try {
    const build = (longType?: avro.Type): avro.Type => {
      const registry: Record<string, avro.Type> = longType ? { long: longType } : {};
      const double = new JsonDoubleType();
      const float = new JsonFloatType();
      // Every double/float (also {"type": "double"}) reads non-finite values as strings; every long
      // (also {"type": "long", "logicalType": ...}) with the exact long type when one is given.
      const typeHook = (schema: unknown): avro.Type | undefined => {
        const t = primitiveOf(schema);
        return t === 'double' ? double : t === 'float' ? float : t === 'long' && longType ? longType : undefined;
      };
      const opts = { registry, wrapUnions: 'auto' as const, logicalTypes: LOGICAL_TYPES, typeHook };
      const seen = new Set<SchemaEntry>();
      const addRefs = (x: SchemaEntry) => {
        for (const r of x.references) {
          const dep = schemas?.bySubject(r.subject, r.version);
          if (!dep) throw new Error(`reference ${r.name} (${r.subject} v${r.version}) is not in any schema source`);
          if (seen.has(dep)) continue;
          seen.add(dep);
          addRefs(dep);
          avro.Type.forSchema(parseSchemaText(dep) as avro.Schema, opts);
        }
      };
      addRefs(e);
      return avro.Type.forSchema(parseSchemaText(e) as avro.Schema, opts);
    };
    const types = { fast: build(), exact: build(exactLong) };
    compiled.set(e, types);
    return types;
  } catch (err) {
    const fe = new FormatError('schema', 0, `Avro schema ${describe(e)} does not compile: ${err instanceof Error ? err.message : String(err)}`);
    compiled.set(e, fe);
    throw fe;
  }
}

/** `id 7 (orders-value v1)` or `orders-value v1` for an entry. */
export function describe(e: SchemaEntry): string {
  return e.id > 0 ? `id ${e.id} (${e.subject} v${e.version})` : `${e.subject} v${e.version}`;
}

/** What {@link readAvroDatum} read: one object reused by every call (valid until the next call). */
export interface AvroRead {
  value: unknown;
  /** Where the datum ends inside `b`. */
  end: number;
  /** When bytes are left after the datum: a note saying how many; else undefined. */
  leftover: string | undefined;
}
const READ: AvroRead = { value: undefined, end: 0, leftover: undefined };

/** avsc's cursor over a Buffer (`lib/utils.js` `Tap`): where a type's `_read` reads from. */
interface AvscTap {
  buf: Buffer;
  pos: number;
}
type TapReadable = avro.Type & { _read?: (tap: AvscTap) => unknown };
const AvscTapClass = (avscUtils as { Tap?: new (buf: Buffer, pos: number) => AvscTap }).Tap ?? null;
const NO_BYTES = Buffer.alloc(0);

/**
 * Reads datums of one compiled type with one avsc `Tap` kept for every datum. avsc's public
 * `type.decode(buf, pos)` makes a Tap and a `{ value, offset }` per datum; called from a layer
 * whose call sites see several formats, V8 does not inline it and both become real allocations.
 * This reads the same bytes with the same generated reader (`type._read(tap)`, what `decode`
 * calls) and keeps where it stopped in {@link end}; where avsc lacks that API (another avsc
 * version) it falls back to `decode`. Not reentrant: one datum at a time (decoding is synchronous).
 */
export class AvroDatumReader {
  /** Where the last datum ended inside its buffer; above `buf.length`: it read past the end. */
  end = 0;
  private readonly tap: AvscTap | null;
  constructor(private readonly type: avro.Type) {
    this.tap = AvscTapClass && typeof (type as TapReadable)._read === 'function' ? new AvscTapClass(NO_BYTES, 0) : null;
  }

  /**
   * The datum at `buf[start..]` (whatever avsc's reader throws goes through, as with `decode`).
   * Check {@link end} against `buf.length` after it.
   */
  read(buf: Buffer, start: number): unknown {
    const tap = this.tap;
    if (tap === null) {
      const r = this.type.decode(buf, start);
      this.end = r.offset < 0 ? buf.length + 1 : r.offset;
      return r.value;
    }
    tap.buf = buf;
    tap.pos = start;
    const v = (this.type as TapReadable)._read!(tap);
    this.end = tap.pos;
    tap.buf = NO_BYTES; // not keeping the caller's buffer (a view of a whole segment chunk) alive
    return v;
  }
}

/**
 * What avsc's `types.fast.decode(buf, start)` failed with, handled: a long beyond ±2^53 (avsc's
 * "potential precision loss") is read again with the exact long type; anything else is the datum's fault.
 * @returns avsc's `{ value, offset }` of the exact read
 * @throws FormatError `invalid` with avsc's message
 */
export function avroDecodeFailed(types: AvroTypes, buf: Buffer, start: number, err: unknown): { value: unknown; offset: number } {
  if (!(err instanceof Error && /precision loss/.test(err.message))) throw new FormatError('invalid', start, `Avro: ${err instanceof Error ? err.message : String(err)}`);
  return types.exact.decode(buf, start);
}

/**
 * What an Avro read of `b[start..]` that did not end exactly at the end of `b` means (avsc's
 * `offset`: negative, or beyond the end for an {@link AvroDatumReader}, when it read past the end).
 * @returns the note on bytes left after the datum
 * @throws FormatError `truncated` when the datum needs more bytes than there are.
 */
export function avroDatumEnd(b: Uint8Array, start: number, offset: number): string {
  if (offset < 0 || offset > b.byteLength) throw new FormatError('truncated', b.byteLength, `Avro: read past the end of the ${b.byteLength - start}-byte datum (bytes ${start}–${b.byteLength - 1})`);
  return `Avro: ${b.byteLength - offset} bytes left after the datum (it ends at byte ${offset} of ${b.byteLength})`;
}

/**
 * Reads one Avro datum from `b[start..]`. The result is one object reused by every call (no
 * allocation per datum beyond avsc's own): read its fields before the next call.
 * @param start where the datum starts inside `b` (5 after Confluent framing), for error positions
 * @throws FormatError `truncated` when the datum needs more bytes than there are.
 */
export function readAvroDatum(types: AvroTypes, b: Uint8Array, start: number): AvroRead {
  const buf = asBuffer(b);
  let r: { value: unknown; offset: number };
  try {
    r = types.fast.decode(buf, start);
  } catch (err) {
    r = avroDecodeFailed(types, buf, start, err);
  }
  READ.value = r.value;
  READ.end = r.offset;
  READ.leftover = r.offset === b.byteLength ? undefined : avroDatumEnd(b, start, r.offset);
  return READ;
}

/** Plain Avro datum with the schema given for the topic's key or value (no framing). */
export const avroFormat: Format = {
  name: 'avro',
  title: 'Avro (plain datum, schema given for the topic)',
  detect(b, ctx) {
    const e = ctx.schemas?.forTopic(ctx.topic, ctx.side);
    if (!e || e.schemaType !== 'AVRO') return null;
    if (b[0] === 0 && b.byteLength >= 5 && ctx.schemas?.byId(new DataView(b.buffer, b.byteOffset, b.byteLength).getUint32(1))) return null;
    return { confidence: 0.7, reason: `plain Avro datum with the schema given for ${ctx.topic} ${ctx.side}s (${e.source})` };
  },
  decode(b, ctx): FormatOutput {
    const e = ctx.schemas?.forTopic(ctx.topic, ctx.side);
    if (!e || e.schemaType !== 'AVRO') throw new FormatError('schema', 0, `no Avro schema given for ${ctx.topic} ${ctx.side}s (give ${ctx.topic}-${ctx.side}.avsc, or --schemas ${ctx.topic}-${ctx.side}=FILE, or a schema file in the schema settings)`);
    const { value, leftover } = readAvroDatum(avroTypesOf(e, ctx.schemas), b, 0);
    return { json: value, subject: e.subject, version: e.version, ...(leftover ? { error: leftover, errorCode: 'invalid' as const } : {}) };
  },
};

const HEADER = avro.Type.forSchema({
  type: 'record',
  name: 'org.apache.avro.file.Header',
  fields: [
    { name: 'magic', type: { type: 'fixed', name: 'Magic', size: 4 } },
    { name: 'meta', type: { type: 'map', values: 'bytes' } },
    { name: 'sync', type: { type: 'fixed', name: 'Sync', size: 16 } },
  ],
});
const LONG = avro.Type.forSchema('long');

let snappyLib: { uncompressSync(b: Buffer): Buffer | string } | null = null;
function snappy(): { uncompressSync(b: Buffer): Buffer | string } {
  return (snappyLib ??= createRequire(import.meta.url)('snappy') as { uncompressSync(b: Buffer): Buffer | string });
}

/** The records of an Avro object container file, with its writer schema and codec. */
export function readAvroContainer(b: Uint8Array): { schema: unknown; codec: string; records: unknown[] } {
  const buf = Buffer.from(b.buffer, b.byteOffset, b.byteLength);
  const h = HEADER.decode(buf, 0) as { value: { magic: Buffer; meta: Record<string, Buffer>; sync: Buffer }; offset: number };
  if (h.offset < 0) throw new FormatError('truncated', b.byteLength, `Avro container: the header needs more than the ${b.byteLength} bytes`);
  const { meta, sync } = h.value;
  if (!h.value.magic.equals(Buffer.from('Obj\u0001', 'latin1'))) throw new FormatError('invalid', 0, 'Avro container: no Obj\\x01 magic');
  const schemaText = meta['avro.schema']?.toString('utf8');
  if (!schemaText) throw new FormatError('schema', 4, 'Avro container: no avro.schema in the header');
  const codec = meta['avro.codec']?.toString('utf8') ?? 'null';
  const entry: SchemaEntry = { id: 0, subject: 'container file', version: 0, schemaType: 'AVRO', schema: schemaText, references: [], deleted: false, source: 'the file header' };
  const types = avroTypesOf(entry, null);
  const records: unknown[] = [];
  let pos = h.offset;
  while (pos < buf.length) {
    const c = LONG.decode(buf, pos);
    if (c.offset < 0) throw new FormatError('truncated', pos, `Avro container: block count cut at byte ${pos}`);
    const s = LONG.decode(buf, c.offset);
    if (s.offset < 0) throw new FormatError('truncated', c.offset, `Avro container: block size cut at byte ${c.offset}`);
    const count = c.value as number;
    const size = s.value as number;
    const dataAt = s.offset;
    if (dataAt + size + 16 > buf.length) throw new FormatError('truncated', buf.length, `Avro container: block at byte ${pos} needs ${size + 16} bytes, ${buf.length - dataAt} left`);
    let data = buf.subarray(dataAt, dataAt + size);
    if (codec === 'deflate') data = inflateRawSync(data);
    else if (codec === 'snappy') {
      const raw = snappy().uncompressSync(data.subarray(0, data.length - 4));
      data = typeof raw === 'string' ? Buffer.from(raw, 'latin1') : raw;
    } else if (codec !== 'null') throw new FormatError('invalid', 4, `Avro container: codec ${codec} is not supported (null, deflate, snappy are)`);
    if (!buf.subarray(dataAt + size, dataAt + size + 16).equals(sync)) throw new FormatError('invalid', dataAt + size, `Avro container: sync marker expected at byte ${dataAt + size}`);
    let at = 0;
    for (let i = 0; i < count; i++) {
      const r = readAvroDatum(types, data, at);
      records.push(r.value);
      at = r.end;
    }
    pos = dataAt + size + 16;
  }
  return { schema: JSON.parse(schemaText), codec, records };
}

/** An Avro object container file held in a key or value. */
export const avroContainerFormat: Format = {
  name: 'avro-file',
  title: 'Avro container file',
  detect(b) {
    return b.byteLength >= 4 && b[0] === 0x4f && b[1] === 0x62 && b[2] === 0x6a && b[3] === 1 ? { confidence: 0.95, reason: 'starts with Obj\\x01: an Avro object container file' } : null;
  },
  decode(b): FormatOutput {
    return { json: readAvroContainer(b) };
  },
};
