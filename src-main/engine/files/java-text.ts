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
