/**
 * The Confluent Schema Registry wire format (`KafkaAvroSerializer`, `KafkaProtobufSerializer`,
 * `KafkaJsonSchemaSerializer`): magic byte 0, the schema id as a big-endian int32, then the body —
 * an Avro datum, Protobuf message indexes + message, or JSON text — read with the schema that id
 * has in the session's schema sources (the offline registry rebuilt from `_schemas` topics, user
 * files). JSON Schema bodies are validated with `ajv` when the schema compiles; a value that does
 * not validate keeps its JSON and gets the validation error beside it.
 */
import Ajv from 'ajv';
import { DecodeError } from '../decode-error.ts';
import { FormatError, isNotedOutput, NotedOutput, type DecodeContext, type Format, type FormatOutput, type PreparedReader } from '../format.ts';
import type { SchemaEntry } from '../schemas/schema-registry.ts';
import { asBuffer } from '../../format/bytes.ts';
import { AvroDatumReader, avroDatumEnd, avroDecodeFailed, avroTypesOf, describe } from './avro.ts';
import { parseJsonBytes } from './json.ts';
import { messageTypeAt, protoFileOf, readProtoMessage } from './protobuf.ts';

/** Where an ArrayBuffer keeps the Buffer over all of it (see {@link wholeBufferOf}). */
const WHOLE = Symbol('whole buffer');

/**
 * A Buffer over the whole ArrayBuffer under `b` (no copy), made once and kept on that ArrayBuffer
 * (the two refer to each other only: collected together).
 */
function wholeBufferOf(b: Uint8Array): Buffer {
  const ab = b.buffer as ArrayBuffer & { [WHOLE]?: Buffer };
  return (ab[WHOLE] ??= Buffer.from(ab));
}

/** The schema id of Confluent-framed bytes, or null when they are not framed. */
export function confluentSchemaId(b: Uint8Array): number | null {
  if (b.byteLength < 5 || b[0] !== 0) return null;
  return ((b[1]! << 24) >>> 0) + (b[2]! << 16) + (b[3]! << 8) + b[4]!;
}

/** The detection of each known schema, made once (auto asks for every record). */
const detections = new Map<SchemaEntry, { confidence: number; reason: string }>();

const TYPE_NAME = { AVRO: 'Avro', PROTOBUF: 'Protobuf', JSON: 'JSON Schema' } as const;

function sourceText(e: SchemaEntry): string {
  return e.source;
}

type Validator = ((v: unknown) => boolean) & { errors?: { instancePath?: string; message?: string }[] | null };
const validators = new WeakMap<SchemaEntry, Validator | string>();
let ajv: Ajv | null = null;

function validatorOf(e: SchemaEntry, ctx: DecodeContext): Validator | string {
  const had = validators.get(e);
  if (had !== undefined) return had;
  let v: Validator | string;
  try {
    ajv ??= new Ajv({ strict: false, allErrors: false, validateSchema: false });
    for (const r of e.references) {
      const dep = ctx.schemas?.bySubject(r.subject, r.version);
      if (dep && !ajv.getSchema(r.name)) ajv.addSchema(JSON.parse(dep.schema) as object, r.name);
    }
    const schema = JSON.parse(e.schema) as Record<string, unknown>;
    const { $id: _ignored, ...rest } = schema;
    v = ajv.compile(rest) as Validator;
  } catch (err) {
    v = `JSON Schema ${describe(e)} not used for validation: ${err instanceof Error ? err.message : String(err)}`;
  }
  validators.set(e, v);
  return v;
}

/** Confluent-framed Avro / Protobuf / JSON Schema, by the schema the id names. */
export const confluentFormat: Format = {
  name: 'confluent',
  title: 'Confluent Schema Registry framing',
  detectKey: confluentSchemaId,
  detect(b, ctx) {
    const id = confluentSchemaId(b);
    if (id === null || id === 0) return null;
    const e = ctx.schemas?.byId(id);
    if (e) {
      let d = detections.get(e);
      if (!d) detections.set(e, (d = { confidence: 0.95, reason: `Confluent framing, schema id ${id} (${TYPE_NAME[e.schemaType]}, ${e.subject} v${e.version}${e.deleted ? ', soft-deleted' : ''}) found in ${sourceText(e)}` }));
      return d;
    }
    const given = ctx.schemas?.forTopic(ctx.topic, ctx.side);
    if (given) return { confidence: 0.9, reason: `Confluent framing, schema id ${id} is in no schema source; read with the ${given.source}` };
    return { confidence: 0.45, reason: `magic byte 0 and schema id ${id}: Confluent framing` };
  },
  prepare(id, ctx) {
    const e = schemaOf(id, ctx);
    if (!e) return null;
    try {
      return bodyReader(e, id, ctx);
    } catch {
      return null; // the schema does not compile: the generic decode says so per record
    }
  },
  decode(b, ctx): FormatOutput {
    const id = confluentSchemaId(b);
    if (id === null) throw new FormatError(b.byteLength < 5 ? 'truncated' : 'invalid', b.byteLength < 5 ? b.byteLength : 0, b.byteLength < 5 ? `Confluent framing: needs 5 bytes (magic 0 + schema id), got ${b.byteLength}` : `Confluent framing: magic byte is ${b[0]}, not 0`);
    try {
      const e = schemaOf(id, ctx);
      if (!e) {
        const none = !ctx.schemas || ctx.schemas.all().length === 0;
        throw new FormatError('unknown-schema', 1, `unknown schema id ${id}${none ? ' (no schema has an id: no _schemas topic in the opened folders, and no schema file or registry export gives ids: give a schema file for this topic (Schemas in the records header), or klx fetch --schemas ID=FILE)' : ''}`);
      }
      const reader = bodyReader(e, id, ctx);
      const json = reader.read(b);
      return isNotedOutput(json) ? json.out : { json, ...reader.meta };
    } catch (err) {
      throw withSchemaId(err, id);
    }
  },
};

/** The schema `id` names, or (an id no source knows) the schema the user gave for this topic side (see user-schemas.ts). */
function schemaOf(id: number, ctx: DecodeContext): SchemaEntry | undefined {
  return ctx.schemas?.byId(id) ?? ctx.schemas?.forTopic(ctx.topic, ctx.side);
}

/** A decode failure of framed bytes, carrying the schema id they named. */
function withSchemaId(err: unknown, id: number): unknown {
  if (err instanceof FormatError) return new FormatError(err.code, err.position, err.reason, id);
  if (err instanceof DecodeError) return new FormatError('invalid', err.position, err.reason, id);
  return err;
}

/**
 * Reads the body after the 5-byte framing with schema `e` (compiled here, once per call: a caller
 * that decodes many records keeps the reader, see `prepare`). Its failures carry the schema id.
 * @throws FormatError `schema` when the schema does not compile.
 */
function bodyReader(e: SchemaEntry, id: number, ctx: DecodeContext): PreparedReader {
  const { subject, version } = e;
  const meta = { schemaId: id, subject, version };
  const fail = (err: unknown): never => {
    throw withSchemaId(err, id);
  };
  if (e.schemaType === 'AVRO') {
    // avsc called right here (not through readAvroDatum), with one Tap for every datum: the fewer
    // calls and allocations between a caller's loop and avsc's generated reader, the better.
    const types = avroTypesOf(e, ctx.schemas);
    const datum = new AvroDatumReader(types.fast);
    return {
      meta,
      read(b) {
        if (!Buffer.isBuffer(b)) {
          // A Uint8Array view (what the engine's records hold): read it inside one Buffer over its
          // whole ArrayBuffer, made once per ArrayBuffer, rather than a Buffer made per value.
          // Kept only when the datum ends exactly at the value's end (then avsc read nothing outside
          // it: its cursor only moves forward); anything else (bytes left, cut short, a long beyond
          // ±2^53, a throw) is read again below over the value alone, so results and errors are
          // what they always were.
          const stop = b.byteOffset + b.byteLength;
          try {
            const v = datum.read(wholeBufferOf(b), b.byteOffset + 5);
            if (datum.end === stop) return v;
          } catch {
            // read again below
          }
        }
        const buf = asBuffer(b);
        let value: unknown;
        let end: number;
        try {
          value = datum.read(buf, 5);
          end = datum.end;
        } catch (err) {
          try {
            const r = avroDecodeFailed(types, buf, 5, err);
            value = r.value;
            end = r.offset;
          } catch (err2) {
            return fail(err2);
          }
        }
        if (end === buf.length) return value;
        let leftover: string;
        try {
          leftover = avroDatumEnd(b, 5, end);
        } catch (err) {
          return fail(err);
        }
        return new NotedOutput({ json: value, ...meta, error: leftover, errorCode: 'invalid' });
      },
    };
  }
  if (e.schemaType === 'PROTOBUF') {
    const file = protoFileOf(e, ctx.schemas);
    return {
      meta,
      read(b) {
        try {
          const { type, at } = messageTypeAt(file, e, b, 5);
          return readProtoMessage(type, b, at);
        } catch (err) {
          return fail(err);
        }
      },
    };
  }
  const v = validatorOf(e, ctx);
  return {
    meta,
    read(b) {
      let json;
      try {
        json = parseJsonBytes(b.subarray(5));
      } catch (err) {
        return fail(err);
      }
      if (typeof v === 'string' || v(json)) return json;
      const first = v.errors?.[0];
      return new NotedOutput({ json, ...meta, error: `JSON Schema: ${first?.instancePath || '/'} ${first?.message ?? 'does not validate'}`, errorCode: 'invalid' });
    },
  };
}
