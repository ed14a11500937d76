/**
 * Avro (Apache Avro 1.11 binary encoding) read with `avsc`: a datum written with a writer schema
 * (from the Confluent wire format's schema id, or given for a topic), and Avro object container
 * files (`Obj\x01` header, metadata map with `avro.schema`/`avro.codec`, blocks of
 * count + size + data + 16-byte sync marker; codecs null, deflate, snappy with its CRC-32 trailer).
 *
 * int64 (`long`) values stay exact: a datum is read with avsc's fast long type and, only when it
 * holds a long beyond ±2^53 (avsc refuses those: "potential precision loss"), read again with a long
 * type that returns a `bigint` for those values. Compiled types are cached per schema entry.
 */
import { createRequire } from 'node:module';
import { inflateRawSync } from 'node:zlib';
import avro from 'avsc';
import { asBuffer } from '../../format/bytes.ts';
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
      const seen = new Set<SchemaEntry>();
      const addRefs = (x: SchemaEntry) => {
        for (const r of x.references) {
          const dep = schemas?.bySubject(r.subject, r.version);
          if (!dep) throw new Error(`reference ${r.name} (${r.subject} v${r.version}) is not in any schema source`);
          if (seen.has(dep)) continue;
          seen.add(dep);
          addRefs(dep);
          avro.Type.forSchema(parseSchemaText(dep) as avro.Schema, { registry, wrapUnions: 'auto' });
        }
      };
      addRefs(e);
      return avro.Type.forSchema(parseSchemaText(e) as avro.Schema, { registry, wrapUnions: 'auto' });
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
