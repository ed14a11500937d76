/**
 * Strict UTF-8 decoding with the byte position of the first invalid sequence (as `TextDecoder`
 * with `fatal: true`, which does not say where). Used by the string and JSON formats.
 */
import { FormatError } from './format.ts';

const strict = new TextDecoder('utf-8', { fatal: true });

/**
 * The position of the first byte that does not start a valid UTF-8 sequence (overlong forms,
 * surrogates and code points above U+10FFFF are invalid, as WHATWG's decoder says), or -1.
 */
export function invalidUtf8At(b: Uint8Array): number {
  let i = 0;
  const n = b.length;
  while (i < n) {
    const c = b[i]!;
    if (c < 0x80) {
      i++;
      continue;
    }
    let need: number;
    let lo = 0x80;
    let hi = 0xbf;
    if (c >= 0xc2 && c <= 0xdf) need = 1;
    else if (c >= 0xe0 && c <= 0xef) {
      need = 2;
      if (c === 0xe0) lo = 0xa0;
      if (c === 0xed) hi = 0x9f;
    } else if (c >= 0xf0 && c <= 0xf4) {
      need = 3;
      if (c === 0xf0) lo = 0x90;
      if (c === 0xf4) hi = 0x8f;
    } else return i;
    if (i + need >= n) return i;
    const b1 = b[i + 1]!;
    if (b1 < lo || b1 > hi) return i;
    for (let k = 2; k <= need; k++) {
      const x = b[i + k]!;
      if (x < 0x80 || x > 0xbf) return i;
    }
    i += need + 1;
  }
  return -1;
}

/**
 * The bytes as a string.
 * @throws FormatError `invalid-utf8` at the first byte that is not UTF-8.
 */
export function utf8Text(b: Uint8Array): string {
  try {
    return strict.decode(b);
  } catch {
    const at = invalidUtf8At(b);
    throw new FormatError('invalid-utf8', at < 0 ? 0 : at, `invalid UTF-8 at byte ${at < 0 ? 0 : at} (0x${(b[at < 0 ? 0 : at] ?? 0).toString(16).padStart(2, '0')})`);
  }
}
