/**
 * Protobuf messages in the Confluent wire format, read with `protobufjs`: after the magic byte
 * and the 4-byte schema id come the message indexes (a zig-zag varint count, then that many
 * zig-zag varints: the path from the schema file's top-level messages through nested ones; the
 * single byte 0 stands for [0], the first message), then the message.
 *
 * Schemas are `.proto` text compiled with protobufjs's parser (field names kept as written), with
 * their imports: referenced subjects/versions (Schema Registry's `references`, matched by import
 * path) and Google's well-known types bundled with protobufjs. Compiled roots are cached per
 * schema entry. Output is the proto3 JSON mapping (int64 as decimal strings, enums by name, bytes
 * as base64, float/double NaN, +Infinity, −Infinity as the strings "NaN", "Infinity", "-Infinity",
 * a `float` as the shortest number that is the same float32: 0.1, not 0.10000000149011612),
 * as Confluent's and Google's JSON printers write it (`JsonFormat`, `json_format.MessageToDict`).
 */
import protobuf from 'protobufjs';
import { FormatError } from '../format.ts';
import type { SchemaEntry, SchemaLookup } from '../schemas/schema-registry.ts';
import { shortestFloat32 } from '../json-text.ts';
import { describe } from './avro.ts';

/** A compiled .proto file: its top-level messages in declaration order (message index 0, 1, …). */
export interface ProtoFile {
  root: protobuf.Root;
  messages: protobuf.Type[];
}

/** Compiled files, kept on the entry itself (a symbol-keyed property: cheaper than a WeakMap per record). */
const COMPILED = Symbol('proto file');
const compiled = {
  get: (e: SchemaEntry): ProtoFile | FormatError | undefined => (e as unknown as Record<symbol, ProtoFile | FormatError | undefined>)[COMPILED],
  set: (e: SchemaEntry, v: ProtoFile | FormatError): void => {
    (e as unknown as Record<symbol, ProtoFile | FormatError>)[COMPILED] = v;
  },
};

/** Fractional seconds as the proto3 JSON mapping prints them: 0, 3, 6 or 9 digits. */
function fraction(nanos: number): string {
  if (!nanos) return '';
  const t = String(Math.abs(nanos)).padStart(9, '0');
  return `.${t.endsWith('000000') ? t.slice(0, 3) : t.endsWith('000') ? t.slice(0, 6) : t}`;
}

type Wrapped = { toObject(m: protobuf.Message, o?: protobuf.IConversionOptions, d?: number): Record<string, unknown>; fromObject(o: Record<string, unknown>, d?: number): protobuf.Message };
type WellKnown = { seconds?: { toString(): string } | number; nanos?: number };

// google.protobuf.Timestamp and Duration in their proto3 JSON forms ("2024-01-01T00:00:00Z", "1.5s"),
// as Google's and Confluent's JSON printers write them (protobufjs's own mapping is {seconds, nanos}).
const wrappers = protobuf.wrappers as Record<string, Wrapped>;
wrappers['.google.protobuf.Timestamp'] ??= {
  fromObject(this: Wrapped, o, d) {
    return this.fromObject(o, d);
  },
  toObject(this: Wrapped, m, o, d) {
    if (!o?.json) return this.toObject(m, o, d);
    const t = m as unknown as WellKnown;
    const ms = Number(String(t.seconds ?? 0)) * 1000;
    const iso = new Date(ms).toISOString().replace(/\.000Z$/, '');
    return `${iso}${fraction(t.nanos ?? 0)}Z` as unknown as Record<string, unknown>;
  },
};
wrappers['.google.protobuf.Duration'] ??= {
  fromObject(this: Wrapped, o, d) {
    return this.fromObject(o, d);
  },
  toObject(this: Wrapped, m, o, d) {
    if (!o?.json) return this.toObject(m, o, d);
    const t = m as unknown as WellKnown;
    const sec = String(t.seconds ?? 0);
    const neg = sec.startsWith('-') || (t.nanos ?? 0) < 0;
    return `${neg && !sec.startsWith('-') ? '-' : ''}${sec}${fraction(t.nanos ?? 0)}s` as unknown as Record<string, unknown>;
  },
};
const PARSE = { keepCase: true, alternateCommentMode: true };

function typesIn(ns: protobuf.NamespaceBase): protobuf.Type[] {
  return ns.nestedArray.filter((x): x is protobuf.Type => x instanceof protobuf.Type);
}

/** The top-level messages of a file's package, in declaration order (full names). */
function declaredMessages(text: string): string[] {
  const parsed = protobuf.parse(text, new protobuf.Root(), PARSE);
  let ns: protobuf.NamespaceBase = parsed.root;
  if (parsed.package) ns = parsed.root.lookup(parsed.package) as protobuf.NamespaceBase;
  return typesIn(ns).map((t) => t.fullName);
}

/**
 * Compiles a Protobuf schema entry with its imports.
 * @throws FormatError `schema` when the text, an import or a reference does not compile.
 */
export function protoFileOf(e: SchemaEntry, schemas: SchemaLookup | null | undefined): ProtoFile {
  const had = compiled.get(e);
  if (had instanceof FormatError) throw had;
  if (had) return had;
  try {
    const root = new protobuf.Root();
    const done = new Set<string>();
    const load = (x: SchemaEntry, path: string) => {
      if (done.has(path)) return;
      done.add(path);
      const parsed = protobuf.parse(x.schema, root, PARSE);
      for (const imp of [...(parsed.imports ?? []), ...(parsed.weakImports ?? [])]) {
        if (done.has(imp)) continue;
        const ref = x.references.find((r) => r.name === imp);
        if (ref) {
          const dep = schemas?.bySubject(ref.subject, ref.version);
          if (!dep) throw new Error(`import "${imp}" (${ref.subject} v${ref.version}) is not in any schema source`);
          load(dep, imp);
          continue;
        }
        const common = protobuf.common.get(imp);
        if (common) {
          done.add(imp);
          root.addJSON(common.nested ?? {});
          continue;
        }
        const bySubject = schemas?.bySubject(imp, 'latest');
        if (bySubject) {
          load(bySubject, imp);
          continue;
        }
        throw new Error(`import "${imp}" has no reference and is not a well-known type`);
      }
    };
    load(e, `\u0000${e.subject}`);
    root.resolveAll();
    const messages = declaredMessages(e.schema).map((n) => root.lookupType(n));
    const file = { root, messages };
    compiled.set(e, file);
    return file;
  } catch (err) {
    const fe = new FormatError('schema', 0, `Protobuf schema ${describe(e)} does not compile: ${err instanceof Error ? err.message : String(err)}`);
    compiled.set(e, fe);
    throw fe;
  }
}

function zigzag(b: Uint8Array, at: { pos: number }): number {
  let v = 0;
  let shift = 0;
  for (;;) {
    if (at.pos >= b.length) throw new FormatError('truncated', at.pos, `Protobuf: message index varint cut at byte ${at.pos}`);
    const c = b[at.pos++]!;
    v += (c & 0x7f) * 2 ** shift;
    if ((c & 0x80) === 0) break;
    shift += 7;
    if (shift > 28) throw new FormatError('invalid', at.pos, 'Protobuf: message index varint longer than 5 bytes');
  }
  return v % 2 === 0 ? v / 2 : -(v + 1) / 2;
}

/**
 * Reads the message indexes at `start` and returns the message type and where the message begins.
 * @throws FormatError `message-index` when an index is not in the schema ("message index 3 out of range").
 */
export function messageTypeAt(file: ProtoFile, e: SchemaEntry, b: Uint8Array, start: number): { type: protobuf.Type; path: number[]; at: number } {
  // The usual case, the first message ([0] written as the single byte 0): one answer per file and start.
  if (b[start] === 0 && file.messages.length > 0 && start < b.length) {
    const first = (file as ProtoFile & { [FIRST]?: { type: protobuf.Type; path: number[]; at: number } })[FIRST];
    if (first && first.at === start + 1) return first;
    const made = { type: file.messages[0]!, path: [0], at: start + 1 };
    (file as ProtoFile & { [FIRST]?: typeof made })[FIRST] = made;
    return made;
  }
  const cur = { pos: start };
  const count = zigzag(b, cur);
  const path: number[] = [];
  if (count === 0) path.push(0);
  else {
    if (count < 0 || count > 64) throw new FormatError('message-index', start, `Protobuf: message index count ${count} is not valid`);
    for (let i = 0; i < count; i++) path.push(zigzag(b, cur));
  }
  let list = file.messages;
  let type: protobuf.Type | undefined;
  for (let i = 0; i < path.length; i++) {
    const ix = path[i]!;
    type = list[ix];
    if (!type) {
      const where = i === 0 ? `the ${list.length} top-level messages of ${describe(e)}` : `the ${list.length} messages nested in ${path.slice(0, i).join('.')}`;
      throw new FormatError('message-index', start, `Protobuf: message index ${ix} out of range (${where})`);
    }
    if (i + 1 < path.length) list = typesIn(type); // nested types only when an index follows
  }
  return { type: type!, path, at: cur.pos };
}

/** Where a file keeps its answer for message index [0] (see {@link messageTypeAt}). */
const FIRST = Symbol('first message');

const TO_JSON: protobuf.IConversionOptions = { longs: String, enums: String, bytes: String, json: true };

/** Where a message type keeps whether it (or a message it holds) has `float` fields. */
const HAS_FLOAT = Symbol('has float fields');

/** Whether `type` or any message type its fields hold has a `float` field (cached on the type). */
function hasFloat(type: protobuf.Type, seen = new Set<protobuf.Type>()): boolean {
  const had = (type as unknown as Record<symbol, boolean | undefined>)[HAS_FLOAT];
  if (had !== undefined) return had;
  if (seen.has(type)) return false;
  seen.add(type);
  let found = false;
  for (const f of type.fieldsArray) {
    if (f.type === 'float' || (f.resolvedType instanceof protobuf.Type && hasFloat(f.resolvedType, seen))) found = true;
  }
  (type as unknown as Record<symbol, boolean>)[HAS_FLOAT] = found;
  return found;
}

/** {@link hasFloat} of the last type read (one identity check per message instead of a property lookup on the type). */
let lastType: protobuf.Type | null = null;
let lastHasFloat = false;

/**
 * Rewrites the `float` numbers of a proto3 JSON object of `type` (protobufjs widens a float32 to
 * its double, 0.10000000149011612) as their shortest form ({@link shortestFloat32}: 0.1), as
 * Google's printers (`JsonFormat`, `json_format`) print floats. In place.
 */
function shortenFloats(type: protobuf.Type, o: Record<string, unknown>): void {
  for (const f of type.fieldsArray) {
    const v = o[f.name];
    if (v === undefined || v === null) continue;
    const sub = f.resolvedType instanceof protobuf.Type && hasFloat(f.resolvedType) ? f.resolvedType : null;
    if (f.type !== 'float' && sub === null) continue;
    const one = (x: unknown): unknown => (typeof x === 'number' ? shortestFloat32(x) : sub && typeof x === 'object' && x !== null ? (shortenFloats(sub, x as Record<string, unknown>), x) : x);
    if (Array.isArray(v)) for (let i = 0; i < v.length; i++) v[i] = one(v[i]);
    else if (f.map && typeof v === 'object') for (const k of Object.keys(v)) (v as Record<string, unknown>)[k] = one((v as Record<string, unknown>)[k]);
    else o[f.name] = one(v);
  }
}

/**
 * Decodes a Protobuf message of `type` from `b[at..]` to its proto3 JSON object (a `float` as its
 * shortest number, see {@link shortenFloats}; NaN and ±Infinity as "NaN", "Infinity", "-Infinity").
 * @throws FormatError `truncated` / `invalid` with the byte position protobufjs stopped at.
 */
export function readProtoMessage(type: protobuf.Type, b: Uint8Array, at: number): Record<string, unknown> {
  // A reader over all of `b` set at `at`: protobufjs reads to the reader's end either way, and no
  // view of `b[at..]` is made per message (a Buffer's subarray is a FastBuffer: ~6 % of a 6-field
  // message's decode). A failure is read again below over that view, so its error and positions
  // are what they always were.
  try {
    const whole = protobuf.Reader.create(b);
    whole.pos = at;
    const o = type.toObject(type.decode(whole), TO_JSON);
    if (type !== lastType) {
      lastHasFloat = hasFloat(type);
      lastType = type;
    }
    if (lastHasFloat) shortenFloats(type, o);
    return o;
  } catch {
    // read again below for the error
  }
  const reader = protobuf.Reader.create(b.subarray(at));
  try {
    const o = type.toObject(type.decode(reader), TO_JSON);
    if (hasFloat(type)) shortenFloats(type, o);
    return o;
  } catch (err) {
    const msg = err instanceof Error ? err.message : String(err);
    const m = /index out of range: (\d+) \+ (\d+) > (\d+)/.exec(msg);
    if (m) throw new FormatError('truncated', at + Number(m[1]), `Protobuf: read past the end at byte ${at + Number(m[1]) + Number(m[2])} of ${b.byteLength} (${type.name})`);
    throw new FormatError('invalid', at + reader.pos, `Protobuf: ${msg} (${type.name})`);
  }
}
