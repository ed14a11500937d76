/**
 * Formats for the values Kafka's own serializers write (`org.apache.kafka.common.serialization`):
 * `StringSerializer` (UTF-8), `ShortSerializer`/`IntegerSerializer`/`LongSerializer` (big-endian
 * two's complement, 2/4/8 bytes), `FloatSerializer`/`DoubleSerializer` (big-endian IEEE 754),
 * `UUIDSerializer` (the UUID's 36-character text; the 16-byte binary form is read too),
 * `BooleanSerializer` (one byte, 1 or 0), and raw bytes shown as hex or base64.
 *
 * A long beyond ±2^53 is returned as a `bigint` (exact in JSON text). A wrong length is a
 * {@link FormatError} (`invalid`): "long: needs 8 bytes, got 5".
 */
import { FormatError, type Detection, type Format, type FormatOutput } from '../format.ts';
import { base64Of, jsonDouble, nonFinite, shortestFloat32 } from '../json-text.ts';
import { utf8Text, invalidUtf8At } from '../utf8.ts';

function dv(b: Uint8Array): DataView {
  return new DataView(b.buffer, b.byteOffset, b.byteLength);
}

function exactly(name: string, n: number, b: Uint8Array): void {
  if (b.byteLength !== n) throw new FormatError(b.byteLength < n ? 'truncated' : 'invalid', Math.min(b.byteLength, n), `${name}: needs exactly ${n} bytes, got ${b.byteLength}`);
}

/** The bytes as lowercase hex without separators. */
export function hexOf(b: Uint8Array): string {
  let s = '';
  for (let i = 0; i < b.length; i++) s += (b[i]! < 16 ? '0' : '') + b[i]!.toString(16);
  return s;
}

/** True when every character of valid UTF-8 `b` is printable (no C0/C1 controls but tab, CR, LF). */
function printable(b: Uint8Array): boolean {
  for (let i = 0; i < b.length; i++) {
    const c = b[i]!;
    if (c < 0x20 && c !== 9 && c !== 10 && c !== 13) return false;
    if (c === 0x7f) return false;
  }
  return invalidUtf8At(b) < 0;
}

/** An int64 as a number when within ±2^53, else a bigint. */
export function exactLong(v: bigint): number | bigint {
  return v >= -9007199254740991n && v <= 9007199254740991n ? Number(v) : v;
}

// Detections are constants (auto asks every format for every record it is not sure of).
const PRINTABLE: Detection = { confidence: 0.6, reason: 'printable UTF-8 text' };

export const stringFormat: Format = {
  name: 'string',
  title: 'String (UTF-8)',
  detect(b): Detection | null {
    return b.byteLength > 0 && printable(b) ? PRINTABLE : null;
  },
  decode(b): FormatOutput {
    const s = utf8Text(b);
    return { json: s, display: s };
  },
};

function fixed(name: string, title: string, size: number, confidence: number, read: (v: DataView) => number | bigint | boolean | string, what: string): Format {
  const sized: Detection = { confidence, reason: `${size} byte${size === 1 ? '' : 's'}: ${what}` };
  return {
    name,
    title,
    detect(b) {
      return b.byteLength === size ? sized : null;
    },
    decode(b) {
      exactly(name, size, b);
      const v = read(dv(b));
      return { json: v, display: String(v) };
    },
  };
}

export const shortFormat = fixed('short', 'Short (int16, big-endian)', 2, 0.25, (v) => v.getInt16(0), "a big-endian int16 as Kafka's ShortSerializer writes");
export const intFormat = fixed('int', 'Integer (int32, big-endian)', 4, 0.3, (v) => v.getInt32(0), "a big-endian int32 as Kafka's IntegerSerializer writes");
export const longFormat = fixed('long', 'Long (int64, big-endian)', 8, 0.3, (v) => exactLong(v.getBigInt64(0)), "a big-endian int64 as Kafka's LongSerializer writes");
// NaN/±Infinity as "NaN"/"Infinity"/"-Infinity" (json-text.ts nonFinite); a float as its shortest
// float32 form (0.1, as Java's Float.toString prints what FloatDeserializer returns).
function float32Json(v: DataView): number | string {
  const x = v.getFloat32(0);
  return x - x === 0 ? shortestFloat32(x) : nonFinite(x);
}
export const floatFormat = fixed('float', 'Float (IEEE 754, 32-bit)', 4, 0.1, float32Json, "a big-endian float as Kafka's FloatSerializer writes");
export const doubleFormat = fixed('double', 'Double (IEEE 754, 64-bit)', 8, 0.1, (v) => jsonDouble(v.getFloat64(0)), "a big-endian double as Kafka's DoubleSerializer writes");

const ONE_BYTE_BOOLEAN: Detection = { confidence: 0.3, reason: "one byte 0 or 1, as Kafka's BooleanSerializer writes" };

export const booleanFormat: Format = {
  name: 'boolean',
  title: 'Boolean (1 byte)',
  detect(b) {
    return b.byteLength === 1 && (b[0] === 0 || b[0] === 1) ? ONE_BYTE_BOOLEAN : null;
  },
  decode(b) {
    exactly('boolean', 1, b);
    if (b[0] !== 0 && b[0] !== 1) throw new FormatError('invalid', 0, `boolean: byte 0x${b[0]!.toString(16)} is neither 0 nor 1`);
    return { json: b[0] === 1, display: b[0] === 1 ? 'true' : 'false' };
  },
};

const UUID_TEXT = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

function uuidOfBinary(b: Uint8Array): string {
  const h = hexOf(b);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

// UUIDSerializer.serialize writes UUID.toString() as UTF-8: 36 characters
const UUID_36: Detection = { confidence: 0.75, reason: "a 36-character UUID, as Kafka's UUIDSerializer writes" };
const UUID_16: Detection = { confidence: 0.2, reason: '16 bytes: a binary UUID' };

export const uuidFormat: Format = {
  name: 'uuid',
  title: 'UUID (text or 16 bytes)',
  detect(b) {
    if (b.byteLength === 36 && UUID_TEXT.test(String.fromCharCode(...b))) return UUID_36;
    if (b.byteLength === 16) return UUID_16;
    return null;
  },
  decode(b) {
    if (b.byteLength === 16) {
      const s = uuidOfBinary(b);
      return { json: s, display: s };
    }
    if (b.byteLength !== 36) throw new FormatError('invalid', 0, `uuid: needs 36 bytes of text or 16 bytes, got ${b.byteLength}`);
    const s = utf8Text(b);
    if (!UUID_TEXT.test(s)) throw new FormatError('invalid', 0, `uuid: ${JSON.stringify(s)} is not a UUID`);
    return { json: s.toLowerCase(), display: s.toLowerCase() };
  },
};

const NOTHING_ELSE: Detection = { confidence: 0.01, reason: 'no other format recognised these bytes' };

export const hexFormat: Format = {
  name: 'hex',
  title: 'Bytes (hex)',
  detect() {
    return NOTHING_ELSE;
  },
  decode(b) {
    const h = hexOf(b);
    return { json: h, display: h };
  },
};

export const base64Format: Format = {
  name: 'base64',
  title: 'Bytes (base64)',
  detect() {
    return null;
  },
  decode(b) {
    const s = base64Of(b);
    return { json: s, display: s };
  },
};

/** The primitive formats, in auto's tie-break order. */
export const PRIMITIVE_FORMATS: Format[] = [uuidFormat, stringFormat, longFormat, intFormat, shortFormat, booleanFormat, doubleFormat, floatFormat, base64Format, hexFormat];
