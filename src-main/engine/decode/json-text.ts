/**
 * JSON text that keeps int64 values exact: `bigint` values are written as bare JSON numbers with all
 * their digits (as Kafka's JSON converters print longs), never rounded through a double, and byte
 * arrays as base64 (as Kafka's `MessageUtil` JSON converters print `bytes` fields). Used by every
 * decoder's `text` output and by the SQL tables' JSON columns.
 */

/**
 * The JSON of a float/double that JSON has no number for: `"NaN"`, `"Infinity"`, `"-Infinity"`
 * (proto3's JSON mapping; Jackson's default `WRITE_NAN_AS_STRINGS`, under Avro's `JsonEncoder` and
 * Kafka's JSON tools), never `null` (`JSON.stringify`'s choice, which hides it among real nulls).
 * Every decoder turns non-finite numbers into these strings, so decoded JSON holds none.
 */
export function nonFinite(v: number): string {
  return v !== v ? 'NaN' : v > 0 ? 'Infinity' : '-Infinity';
}

/** A decoded float64: the number itself, or {@link nonFinite}'s string. */
export function jsonDouble(v: number): number | string {
  return v - v === 0 ? v : nonFinite(v);
}

/**
 * The number with the fewest significant digits that is the same float32 as `v` (a float32 value
 * widened to a double): `0.1` for the float32 nearest 0.1, whose double is 0.10000000149011612.
 * What Java's `Float.toString` and Python's `json_format` aim at; JavaScript has no float32 printer.
 */
export function shortestFloat32(v: number): number {
  if (v === 0 || v - v !== 0 || String(v).length <= 8) return v; // short already (21.5, -3.25, 1e+30)
  for (let p = 1; p < 9; p++) {
    const x = Number(v.toPrecision(p));
    if (Math.fround(x) === v) return x;
  }
  return v;
}

/** Base64 of bytes (standard alphabet, padded). */
export function base64Of(b: Uint8Array): string {
  let bin = '';
  for (let i = 0; i < b.length; i += 0x8000) bin += String.fromCharCode(...b.subarray(i, i + 0x8000));
  return btoa(bin);
}

/**
 * Serialises `value` to JSON text. `bigint` → bare integer digits; `Uint8Array` → base64 string;
 * `undefined` object members are omitted (as `JSON.stringify`); `indent` as `JSON.stringify`'s space.
 */
export function toJsonText(value: unknown, indent?: number): string {
  // Most decoded values hold no int64 beyond 2^53 and no bytes: JSON.stringify without a replacer
  // (V8's fast path) writes the same text. Checking is cheaper than a replacer call per member.
  if (plainJson(value, 0)) return JSON.stringify(value, null, indent);
  const marks: string[] = [];
  const text = JSON.stringify(
    value,
    function (this: Record<string, unknown>, k: string, v: unknown) {
      // A Node Buffer has turned into {type, data} by its toJSON before this runs: use the original.
      const orig = this[k];
      if (orig instanceof Uint8Array) return base64Of(orig);
      if (typeof v === 'bigint') {
        marks.push(v.toString());
        return `\u0000bigint${marks.length - 1}\u0000`;
      }
      if (v instanceof Uint8Array) return base64Of(v);
      return v;
    },
    indent,
  );
  if (marks.length === 0) return text;
  return text.replace(/"\\u0000bigint(\d+)\\u0000"/g, (_m, i: string) => marks[Number(i)]!);
}

/**
 * Whether `JSON.stringify` alone writes `v` as {@link toJsonText} does: nothing in it is a
 * `bigint`, a byte array or an object with its own `toJSON`, and it is at most 64 levels deep.
 */
function plainJson(v: unknown, depth: number): boolean {
  if (typeof v !== 'object' || v === null) return typeof v !== 'bigint';
  if (depth > 64 || v instanceof Uint8Array || typeof (v as { toJSON?: unknown }).toJSON === 'function') return false;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) if (!plainJson(v[i], depth + 1)) return false;
    return true;
  }
  const keys = Object.keys(v);
  for (let i = 0; i < keys.length; i++) if (!plainJson((v as Record<string, unknown>)[keys[i]!], depth + 1)) return false;
  return true;
}

/**
 * Parses JSON text keeping integers beyond 2^53 exact as `bigint` (integers within ±2^53 stay
 * numbers). For tests and for reading back decoded JSON.
 */
export function parseJsonExact(text: string): unknown {
  // Quote long integer literals outside strings, then revive them.
  const marked = text.replace(/("(?:[^"\\]|\\.)*")|(-?\d{16,})(?![\d.eE])/g, (m, str: string | undefined, num: string | undefined) => {
    if (str !== undefined) return str;
    const big = BigInt(num!);
    return big > 9007199254740991n || big < -9007199254740991n ? `"\\u0000big${num}"` : m;
  });
  return JSON.parse(marked, (_k, v: unknown) => (typeof v === 'string' && v.startsWith('\u0000big') ? BigInt(v.slice(4)) : v));
}
