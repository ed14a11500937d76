/**
 * Small helpers that read text the way Kafka's Java code does (`BufferedReader.readLine`,
 * `Integer.parseInt`, `Long.parseLong`, the `\s+` pattern), shared by the checkpoint and metadata
 * file modules.
 */

/** Java's `\s+`: runs of ASCII blanks only. */
export const JAVA_WHITESPACES = /[ \t\n\x0B\f\r]+/;
/** Integer ranges of Java `int` and `long`. */
export const INT32_MIN = -2147483648;
export const INT32_MAX = 2147483647;
export const INT64_MIN = -9223372036854775808n;
export const INT64_MAX = 9223372036854775807n;

/** One line of a text file with its byte position. */
export interface TextLine {
  /** The line without its terminator. */
  text: string;
  /** Byte position of the line's first byte in the file. */
  position: number;
}

/**
 * Splits bytes into lines like Java's `BufferedReader.readLine`: terminators `\n`, `\r\n` or `\r`;
 * a final line without terminator is a line; an empty final segment after a terminator is not.
 * @param decode how a line's bytes become text (default UTF-8).
 */
export function splitLines(buf: Uint8Array, decode: (bytes: Uint8Array) => string = (b) => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('utf8')): TextLine[] {
  const out: TextLine[] = [];
  let start = 0;
  let i = 0;
  while (i < buf.length) {
    const c = buf[i];
    if (c === 0x0a || c === 0x0d) {
      out.push({ text: decode(buf.subarray(start, i)), position: start });
      i += c === 0x0d && buf[i + 1] === 0x0a ? 2 : 1;
      start = i;
    } else i++;
  }
  if (start < buf.length) out.push({ text: decode(buf.subarray(start)), position: start });
  return out;
}

/** Java `Integer.parseInt` on ASCII text: optional sign, decimal digits, int32 range; else undefined. */
export function parseJavaInt(s: string): number | undefined {
  if (!/^[+-]?[0-9]+$/.test(s)) return undefined;
  const n = Number(s);
  return Number.isInteger(n) && n >= INT32_MIN && n <= INT32_MAX ? (Object.is(n, -0) ? 0 : n) : undefined;
}

/** Java `Long.parseLong` on ASCII text: optional sign, decimal digits, int64 range; else undefined. */
export function parseJavaLong(s: string): bigint | undefined {
  if (!/^[+-]?[0-9]+$/.test(s)) return undefined;
  const n = BigInt(s);
  return n >= INT64_MIN && n <= INT64_MAX ? n : undefined;
}

/**
 * A line of a text file quoted for a terminal or a log, JSON-style: printable ASCII and well-formed
 * printable UTF-8 as they are, `\\` and `'` escaped, `\t` `\r` `\n`, other C0/C1 controls and DEL as
 * `\u00XX`, and every byte that is not part of well-formed UTF-8 as `\xNN` (so a garbage file's
 * NUL or 0xFF byte reads `\u0000` / `\xff`, never a raw control character or U+FFFD).
 * @param bytes the line's bytes (no terminator).
 * @returns the quoted text between single quotes, e.g. `'\xff\u0000garbage'`.
 */
export function quoteLineBytes(bytes: Uint8Array): string {
  let out = '';
  let i = 0;
  const hex = (n: number, w: number) => n.toString(16).padStart(w, '0');
  while (i < bytes.length) {
    const c = bytes[i]!;
    if (c < 0x80) {
      if (c === 0x5c) out += '\\\\';
      else if (c === 0x27) out += "\\'";
      else if (c === 0x09) out += '\\t';
      else if (c === 0x0a) out += '\\n';
      else if (c === 0x0d) out += '\\r';
      else if (c < 0x20 || c === 0x7f) out += `\\u${hex(c, 4)}`;
      else out += String.fromCharCode(c);
      i++;
      continue;
    }
    // A well-formed UTF-8 sequence (RFC 3629: no overlong forms, no surrogates, at most U+10FFFF).
    const len = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
    let ok = len > 0 && i + len <= bytes.length;
    for (let k = 1; ok && k < len; k++) ok = (bytes[i + k]! & 0xc0) === 0x80;
    if (ok) {
      const cp = Buffer.from(bytes.subarray(i, i + len)).toString('utf8').codePointAt(0)!;
      const overlong = (len === 3 && cp < 0x800) || (len === 4 && cp < 0x10000);
      if (!overlong && cp <= 0x10ffff && !(cp >= 0xd800 && cp <= 0xdfff) && cp !== 0xfffd) {
        out += cp >= 0x80 && cp <= 0x9f ? `\\u${hex(cp, 4)}` : String.fromCodePoint(cp);
        i += len;
        continue;
      }
    }
    out += `\\x${hex(c, 2)}`;
    i++;
  }
  return `'${out}'`;
}
