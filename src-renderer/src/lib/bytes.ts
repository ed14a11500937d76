/**
 * Byte helpers for the renderer: base64 ↔ bytes, UTF-8 detection, one-line previews and hex dumps
 * (`xxd` layout: offset, 16 bytes in hex, printable ASCII).
 */

/** Decodes standard base64 to bytes. */
export function fromBase64(b64: string): Uint8Array {
  const bin = atob(b64);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

/** Encodes bytes as standard base64 (chunked, so large values do not overflow the call stack). */
export function toBase64(bytes: Uint8Array): string {
  let bin = '';
  for (let i = 0; i < bytes.length; i += 0x8000) bin += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(bin);
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });
const lenientUtf8 = new TextDecoder('utf-8');

/**
 * The bytes as text when they are valid UTF-8 without control characters other than tab/newline
 * (a cut multi-byte character at the end of a preview is tolerated); null otherwise.
 * @param truncated the bytes are the first part of a longer value.
 */
export function asText(bytes: Uint8Array, truncated = false): string | null {
  let text: string;
  try {
    text = strictUtf8.decode(bytes);
  } catch {
    if (!truncated) return null;
    // A preview may cut a character in two: retry without its last 3 bytes.
    try {
      text = strictUtf8.decode(bytes.subarray(0, Math.max(0, bytes.length - 3)));
    } catch {
      return null;
    }
  }
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/.test(text)) return null;
  return text;
}

/** UTF-8 decoding that never fails (replacement characters for bad bytes). */
export function lenientText(bytes: Uint8Array): string {
  return lenientUtf8.decode(bytes);
}

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

/** `0a 1b ff …` of at most `max` bytes. */
export function hexBytes(bytes: Uint8Array, max = bytes.length): string {
  const n = Math.min(max, bytes.length);
  const parts = new Array<string>(n);
  for (let i = 0; i < n; i++) parts[i] = HEX[bytes[i]!]!;
  return parts.join(' ') + (bytes.length > n ? ' …' : '');
}

/** A hex dump: `00000000  xx xx … xx  |ascii…|` lines of `perLine` bytes (8 or 16), offsets counted from `start`. */
export function hexDump(bytes: Uint8Array, start = 0, perLine = 16): string {
  const lines: string[] = [];
  const half = perLine / 2 - 1;
  for (let at = 0; at < bytes.length; at += perLine) {
    const row = bytes.subarray(at, at + perLine);
    let hex = '';
    let ascii = '';
    for (let i = 0; i < perLine; i++) {
      if (i < row.length) {
        const b = row[i]!;
        hex += HEX[b] + ' ';
        ascii += b >= 0x20 && b < 0x7f ? String.fromCharCode(b) : '.';
      } else hex += '   ';
      if (i === half) hex += ' ';
    }
    lines.push(`${(start + at).toString(16).padStart(8, '0')}  ${hex} |${ascii}|`);
  }
  return lines.join('\n');
}

/** A one-line preview of a key or value: text (newlines shown as ⏎) or hex, and whether it is binary. */
export function previewText(bytes: Uint8Array, totalSize: number, maxChars = 300): { text: string; binary: boolean } {
  const truncated = totalSize > bytes.length;
  const t = asText(bytes, truncated);
  if (t !== null) {
    const one = t.replace(/\r?\n/g, ' ⏎ ').replace(/\t/g, ' ');
    return { text: one.length > maxChars ? one.slice(0, maxChars) + '…' : one + (truncated ? '…' : ''), binary: false };
  }
  return { text: hexBytes(bytes, 48), binary: true };
}
