/**
 * JSON values (UTF-8 JSON text, as Kafka's `JsonSerializer` of Connect, Schema Registry's `_schemas`
 * topic and most applications write them) and MessagePack (read with `msgpackr`).
 * Integers beyond ±2^53 stay exact (`bigint`).
 */
import { Unpackr } from 'msgpackr';
import { FormatError, type Detection, type Format, type FormatOutput } from '../format.ts';
import { jsonDouble, parseJsonExact } from '../json-text.ts';
import { utf8Text } from '../utf8.ts';
import { exactLong } from './primitives.ts';

function firstNonSpace(b: Uint8Array): number {
  for (let i = 0; i < b.length; i++) {
    const c = b[i]!;
    if (c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) return c;
  }
  return -1;
}

/**
 * Parses UTF-8 JSON text.
 * @throws FormatError `invalid-utf8`, or `invalid` with the character position JSON.parse names.
 */
export function parseJsonBytes(b: Uint8Array): unknown {
  const text = utf8Text(b);
  try {
    return parseJsonExact(text);
  } catch {
    try {
      JSON.parse(text);
    } catch (e) {
      const msg = e instanceof Error ? e.message : String(e);
      const m = /position (\d+)/.exec(msg);
      const at = m ? Number(m[1]) : 0;
      throw new FormatError(/end of JSON|Unterminated/i.test(msg) ? 'truncated' : 'invalid', at, `JSON: ${msg}`);
    }
    throw new FormatError('invalid', 0, 'JSON: cannot be parsed');
  }
}

/** Schema Registry's storage topic (`kafkastore.topic`, default `_schemas`). */
export const SCHEMAS_TOPIC = /^_schemas(?:[-_.].*)?$/;
/** Kafka Connect's configs/offsets/status topics (`config.storage.topic`, …), e.g. `docker-connect-offsets`. */
export const CONNECT_TOPIC = /connect.*[-_.](?:configs?|offsets?|status)$/i;

/** Whether a topic's keys or values are JSON by its name (Schema Registry's and Connect's storage topics). */
function topicClaim(topic: string, side: 'key' | 'value'): Detection | null {
  if (SCHEMAS_TOPIC.test(topic)) return { confidence: 1, reason: `${topic} is Schema Registry's storage topic: JSON ${side}s` };
  // Connect's configs and status topics have string keys (`connector-x`, `status-task-x-0`); offsets keys are JSON.
  if (CONNECT_TOPIC.test(topic) && (side === 'value' || /offsets?$/i.test(topic))) return { confidence: 1, reason: `${topic} is a Kafka Connect storage topic: JSON ${side}s` };
  return null;
}

/** {@link topicClaim} per side and topic, made once (auto asks for every record it is not sure of). */
const TOPIC_CLAIMS = { key: new Map<string, Detection | null>(), value: new Map<string, Detection | null>() };
const STARTS_OBJECT: Detection = { confidence: 0.8, reason: 'starts with {: JSON text' };
const STARTS_ARRAY: Detection = { confidence: 0.8, reason: 'starts with [: JSON text' };
const QUOTED: Detection = { confidence: 0.65, reason: 'a quoted JSON string' };

export const jsonFormat: Format = {
  name: 'json',
  title: 'JSON',
  detect(b, ctx) {
    const claims = TOPIC_CLAIMS[ctx.side];
    let claim = claims.get(ctx.topic);
    if (claim === undefined) claims.set(ctx.topic, (claim = topicClaim(ctx.topic, ctx.side)));
    if (claim) return claim;
    const c = firstNonSpace(b);
    if (c === 0x7b) return STARTS_OBJECT;
    if (c === 0x5b) return STARTS_ARRAY;
    if (c === 0x22) return QUOTED;
    return null;
  },
  decode(b): FormatOutput {
    return { json: parseJsonBytes(b) };
  },
};

const unpackr = new Unpackr({ useRecords: false, mapsAsObjects: true, int64AsType: 'bigint' });

/** msgpackr's value as decoded JSON: int64 exact, maps as objects, dates as ISO text, NaN/±Infinity as strings (json-text.ts nonFinite). */
function normalise(v: unknown): unknown {
  if (typeof v === 'bigint') return exactLong(v);
  if (typeof v === 'number') return jsonDouble(v);
  if (Array.isArray(v)) return v.map(normalise);
  if (v instanceof Uint8Array || v === null || typeof v !== 'object') return v;
  if (v instanceof Map) {
    const o: Record<string, unknown> = {};
    for (const [k, x] of v) o[String(k)] = normalise(x);
    return o;
  }
  if (v instanceof Date) return v.toISOString();
  const o: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) o[k] = normalise(x);
  return o;
}

export const msgpackFormat: Format = {
  name: 'msgpack',
  title: 'MessagePack',
  detect(b) {
    const c = b[0];
    if (c === undefined || b.byteLength < 2) return null;
    // fixmap, fixarray, map16/32, array16/32: a container at the top, as MessagePack encoders write records.
    if ((c >= 0x80 && c <= 0x9f) || c === 0xdc || c === 0xdd || c === 0xde || c === 0xdf) return { confidence: 0.5, reason: `first byte 0x${c.toString(16)} is a MessagePack map/array` };
    return null;
  },
  decode(b): FormatOutput {
    const buf = Buffer.from(b.buffer, b.byteOffset, b.byteLength);
    try {
      return { json: normalise(unpackr.unpack(buf)) };
    } catch (e) {
      const msg = e instanceof Error ? e.message : String(e);
      if (/end of buffer not reached/.test(msg)) throw new FormatError('invalid', 0, 'MessagePack: bytes left over after the first value');
      if (/Unexpected end/.test(msg)) throw new FormatError('truncated', b.byteLength, `MessagePack: read past the end of the ${b.byteLength} bytes`);
      throw new FormatError('invalid', 0, `MessagePack: ${msg}`);
    }
  },
};
