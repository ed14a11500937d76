/**
 * Number, size, offset and time formatting for tables. Offsets and timestamps arrive as int64
 * decimal strings and stay strings (exact); only display grouping is added.
 */

/** 1234567 → "1,234,567" (also for int64 strings). */
export function group(v: number | string | bigint): string {
  const s = typeof v === 'string' ? v : String(v);
  const neg = s.startsWith('-');
  const digits = neg ? s.slice(1) : s;
  if (!/^\d+$/.test(digits)) return s;
  return (neg ? '-' : '') + digits.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

/** Bytes as "0 B", "812 B", "4.2 KiB", "256.7 MiB", "1.20 GiB". */
export function bytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let v = n / 1024;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return `${v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2)} ${units[u]}`;
}

/** A timestamp in ms (int64 string) as "2024-01-01 00:00:00.123" UTC; "—" for −1 / none. */
export function isoMs(ms: string | null | undefined): string {
  if (ms === null || ms === undefined || ms.startsWith('-')) return '—';
  const n = Number(ms);
  if (!Number.isFinite(n) || n > 8.64e15) return ms;
  return new Date(n).toISOString().replace('T', ' ').replace('Z', '');
}

/** A timestamp in ms as the full ISO-8601 string (for tooltips and copies). */
export function isoFull(ms: string | null | undefined): string {
  if (ms === null || ms === undefined || ms.startsWith('-')) return 'none (−1)';
  const n = Number(ms);
  if (!Number.isFinite(n) || n > 8.64e15) return ms;
  return new Date(n).toISOString();
}

/** "a – b" offset range, grouped. */
export function offsetRange(from: string, to: string): string {
  return from === to ? group(from) : `${group(from)} – ${group(to)}`;
}

/**
 * The offsets a partition holds, from logStartOffset to the last offset (logEndOffset − 1, both
 * inclusive, like every other range in the app): "0 – 19" for logStartOffset 0, logEndOffset 20;
 * "empty (next 20)" when logEndOffset ≤ logStartOffset.
 */
export function logOffsets(logStartOffset: string, logEndOffset: string): string {
  const last = BigInt(logEndOffset) - 1n;
  return last < BigInt(logStartOffset) ? `empty (next ${group(logEndOffset)})` : offsetRange(logStartOffset, String(last));
}

/** A percentage with one decimal: 0.3456 → "34.6 %". */
export function percent(ratio: number): string {
  return `${(ratio * 100).toFixed(ratio > 0 && ratio < 0.001 ? 2 : 1)} %`;
}

/** Plural helper: 1 record, 2 records. */
export function plural(n: number | string, one: string, many = one + 's'): string {
  return `${group(n)} ${String(n) === '1' ? one : many}`;
}

/**
 * Parses what a user typed as a timestamp: ms since the epoch, or an ISO-8601 date/time (a date
 * without zone is read as UTC). Returns ms as a decimal string, or null.
 */
export function parseTimestamp(text: string): string | null {
  const t = text.trim();
  if (/^-?\d+$/.test(t)) return String(BigInt(t));
  if (!/^\d{4}-\d{2}-\d{2}/.test(t)) return null;
  const withZone = /[zZ]|[+-]\d{2}:?\d{2}$/.test(t) ? t : t.replace(' ', 'T') + 'Z';
  const ms = Date.parse(withZone.replace(' ', 'T'));
  return Number.isFinite(ms) ? String(ms) : null;
}

/** The last path element of a folder, for labels. */
export function baseName(path: string): string {
  const parts = path.split(/[\\/]+/).filter(Boolean);
  return parts[parts.length - 1] ?? path;
}

/** `file` relative to `dir` when inside it (for tables), else the file itself. */
export function relativeTo(file: string, dir: string | null | undefined): string {
  if (dir && file.startsWith(dir + '/')) return file.slice(dir.length + 1);
  if (dir && file.startsWith(dir + '\\')) return file.slice(dir.length + 1);
  return file;
}

/** A long path shortened from the left, keeping whole trailing components: `…/data/kafka-logs`. */
export function shortPath(path: string, maxChars: number): string {
  if (path.length <= maxChars) return path;
  const parts = path.split(/(?=[\\/])/);
  let out = '';
  for (let i = parts.length - 1; i >= 0; i--) {
    if (out.length + parts[i]!.length + 1 > maxChars && out !== '') break;
    out = parts[i] + out;
  }
  return out.length > maxChars ? '…' + out.slice(out.length - maxChars + 1) : '…' + out;
}

/** A duration in ms for people: ms below 10 s, then s, min, h, days (two decimals above seconds). */
export function durationText(ms: number): string {
  const a = Math.abs(ms);
  if (a < 10_000) return `${a} ms`;
  if (a < 120_000) return `${(a / 1000).toFixed(a % 1000 === 0 ? 0 : 2)} s`;
  if (a < 7_200_000) return `${(a / 60_000).toFixed(2)} min`;
  if (a < 172_800_000) return `${(a / 3_600_000).toFixed(2)} h`;
  return `${(a / 86_400_000).toFixed(2)} days`;
}

/**
 * A batch's delete horizon (KIP-534: a v2 batch with attribute bit 6 set holds it in baseTimestamp)
 * seen from `nowMs`: "in 23.99 h" or "passed 5.00 min ago". Kafka's `Cleaner.shouldRetainRecord`
 * keeps the batch's tombstones while the horizon is after the cleaner's clock, and drops them at a
 * clean once it is not.
 */
export function horizonFromNow(horizonMs: string, nowMs: number): { passed: boolean; text: string } {
  const left = Number(horizonMs) - nowMs;
  return left > 0 ? { passed: false, text: `in ${durationText(left)}` } : { passed: true, text: left === 0 ? 'passes now' : `passed ${durationText(-left)} ago` };
}
