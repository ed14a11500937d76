/**
 * `meta.properties` at the root of a log directory (spec §11.6; Kafka's `MetaProperties`,
 * `PropertiesUtils`, and `java.util.Properties.load/store`).
 *
 * Format: Java properties text in ISO-8859-1: `key=value` lines (also `key: value` or `key value`),
 * `#` or `!` comment lines, backslash escapes (`\t \n \r \f \uXXXX`, `\x` → `x`) and line
 * continuation with a trailing backslash; a later duplicate key wins. Kafka writes it with
 * `Properties.store(out, "")` (PropertiesUtils.writePropertiesFile): an empty `#` line, a `#<date>` line, then the keys in hash order.
 *
 * Keys and their rules (Kafka `MetaProperties.Builder`):
 * - `version`: `0` (ZooKeeper era; the default when absent) or `1` (KRaft); anything else is an error;
 * - v0: `broker.id` optional int32; v1: `node.id` required int32;
 * - `cluster.id`: optional in v0, required in v1;
 * - `directory.id` (3.7+): optional, a 22-character base64 UUID.
 */
import { KlxError } from '../errors.ts';
import { readFileBytes, writeFileAtomic, type WriteOptions } from './fsync-write.ts';
import { parseJavaInt, splitLines } from './java-text.ts';
import { uuidToBytes } from './partition-metadata.ts';

/** One property as read, with the byte position of the line it starts on. */
export interface PropertyLine {
  key: string;
  value: string;
  /** Byte position of the (first natural) line of this property. */
  position: number;
}

function unescape(s: string): string {
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (c !== '\\') {
      out += c;
      continue;
    }
    const n = s[++i];
    if (n === undefined) break;
    if (n === 't') out += '\t';
    else if (n === 'n') out += '\n';
    else if (n === 'r') out += '\r';
    else if (n === 'f') out += '\f';
    else if (n === 'u') {
      const hex = s.slice(i + 1, i + 5);
      if (!/^[0-9a-fA-F]{4}$/.test(hex)) throw new Error(`malformed \\uxxxx encoding '\\u${hex}'`);
      out += String.fromCharCode(parseInt(hex, 16));
      i += 4;
    } else out += n;
  }
  return out;
}

const isBlank = (c: string | undefined): boolean => c === ' ' || c === '\t' || c === '\f';

/**
 * Parses Java properties text (`java.util.Properties.load(InputStream)`: ISO-8859-1).
 * @returns the properties in file order (duplicates kept; the last one is the effective value).
 * @throws KlxError `corrupt-checkpoint` for a malformed `\uXXXX` escape, with the line's byte position.
 */
export function parseJavaProperties(buf: Uint8Array, file = '<buffer>'): PropertyLine[] {
  const lines = splitLines(buf, (b) => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('latin1'));
  const out: PropertyLine[] = [];
  for (let i = 0; i < lines.length; i++) {
    const first = lines[i]!;
    let text = first.text.replace(/^[ \t\f]+/, '');
    if (text === '' || text[0] === '#' || text[0] === '!') continue;
    // Logical line: a natural line ending in an odd number of backslashes continues on the next one.
    const endsWithContinuation = (t: string): boolean => {
      let n = 0;
      for (let k = t.length - 1; k >= 0 && t[k] === '\\'; k--) n++;
      return n % 2 === 1;
    };
    while (endsWithContinuation(text)) {
      text = text.slice(0, -1);
      if (i + 1 >= lines.length) break;
      text += lines[++i]!.text.replace(/^[ \t\f]+/, '');
    }
    // Key ends at the first unescaped '=', ':' or blank.
    let k = 0;
    while (k < text.length) {
      const c = text[k]!;
      if (c === '\\') {
        k += 2;
        continue;
      }
      if (c === '=' || c === ':' || isBlank(c)) break;
      k++;
    }
    const rawKey = text.slice(0, Math.min(k, text.length));
    let v = k;
    while (v < text.length && isBlank(text[v])) v++;
    if (v < text.length && (text[v] === '=' || text[v] === ':')) {
      v++;
      while (v < text.length && isBlank(text[v])) v++;
    }
    try {
      out.push({ key: unescape(rawKey), value: unescape(text.slice(v)), position: first.position });
    } catch (err) {
      throw new KlxError('corrupt-checkpoint', (err as Error).message, { file, position: first.position });
    }
  }
  return out;
}

function escapeProp(s: string, isKey: boolean): string {
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    const code = c.charCodeAt(0);
    if (c === ' ') out += i === 0 || isKey ? '\\ ' : ' ';
    else if (c === '\t') out += '\\t';
    else if (c === '\n') out += '\\n';
    else if (c === '\r') out += '\\r';
    else if (c === '\f') out += '\\f';
    else if (c === '\\' || c === '=' || c === ':' || c === '#' || c === '!') out += `\\${c}`;
    else if (code < 0x20 || code > 0x7e) out += `\\u${code.toString(16).toUpperCase().padStart(4, '0')}`;
    else out += c;
  }
  return out;
}

/** Java `Date.toString()` in UTC: `Wed Jun 11 00:53:30 UTC 2025`. */
export function javaDateString(d: Date): string {
  const days = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
  const months = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
  const p = (n: number): string => String(n).padStart(2, '0');
  return `${days[d.getUTCDay()]} ${months[d.getUTCMonth()]} ${p(d.getUTCDate())} ${p(d.getUTCHours())}:${p(d.getUTCMinutes())}:${p(d.getUTCSeconds())} UTC ${d.getUTCFullYear()}`;
}

/**
 * Formats properties as `Properties.store(out, "")` does: `#\n#<date>\n` then `key=value\n` lines,
 * escaped (non-ASCII as `\uXXXX`, so the result is pure ASCII).
 * @param date the date written in the second comment line (default now).
 */
export function formatJavaProperties(entries: readonly (readonly [string, string])[], date: Date = new Date()): string {
  return `#\n#${javaDateString(date)}\n${entries.map(([k, v]) => `${escapeProp(k, true)}=${escapeProp(v, false)}\n`).join('')}`;
}

/** Decoded `meta.properties`. */
export interface MetaProperties {
  /** 0 (ZooKeeper era) or 1 (KRaft). */
  version: 0 | 1;
  /** v0: `broker.id`, when present. */
  brokerId?: number;
  /** v1: `node.id`. */
  nodeId?: number;
  clusterId?: string;
  /** 22-character base64 UUID (Kafka ≥ 3.7). */
  directoryId?: string;
  /** Every property as read (the effective value of each key). */
  properties: Record<string, string>;
}

/**
 * Parses the bytes of `meta.properties` and validates them as Kafka's `MetaProperties.Builder` does.
 * @throws KlxError `corrupt-checkpoint` with `file` and the byte `position` of the offending property
 *   (or 0 when a required key is missing): unknown version, non-int32 id, missing `node.id` /
 *   `cluster.id` in v1, invalid `directory.id`.
 */
export function parseMetaProperties(buf: Uint8Array, file = '<buffer>'): MetaProperties {
  const lines = parseJavaProperties(buf, file);
  const props: Record<string, string> = {};
  const where: Record<string, number> = {};
  for (const l of lines) {
    props[l.key] = l.value;
    where[l.key] = l.position;
  }
  const fail = (reason: string, key?: string): KlxError => new KlxError('corrupt-checkpoint', reason, { file, position: key !== undefined ? (where[key] ?? 0) : 0 });
  const has = (k: string): boolean => Object.prototype.hasOwnProperty.call(props, k);
  const versionText = has('version') ? props.version! : '0';
  if (versionText !== '0' && versionText !== '1') throw fail(`unknown meta.properties version '${versionText}'`, 'version');
  const version = versionText === '1' ? 1 : 0;
  const intProp = (k: string): number => {
    const n = parseJavaInt(props[k]!);
    if (n === undefined) throw fail(`${k} '${props[k]}' is not an int32`, k);
    return n;
  };
  const mp: MetaProperties = { version, properties: props };
  if (version === 0) {
    if (has('broker.id')) mp.brokerId = intProp('broker.id');
  } else {
    if (!has('node.id')) throw fail('node.id was not found (required in version 1)');
    mp.nodeId = intProp('node.id');
    if (!has('cluster.id')) throw fail('cluster.id was not found (required in version 1)');
  }
  if (has('cluster.id')) mp.clusterId = props['cluster.id'];
  if (has('directory.id')) {
    if (!uuidToBytes(props['directory.id']!)) throw fail(`directory.id '${props['directory.id']}' is not a base64 UUID`, 'directory.id');
    mp.directoryId = props['directory.id'];
  }
  return mp;
}

/**
 * Reads `meta.properties`.
 * @throws KlxError `not-found`, `io-error`, `corrupt-checkpoint`.
 */
export function readMetaProperties(path: string): MetaProperties {
  return parseMetaProperties(readFileBytes(path), path);
}

/**
 * Formats `meta.properties` for `mp` (the typed fields; `properties` is ignored): `version`, then
 * `broker.id` (v0) or `node.id` (v1), `cluster.id`, `directory.id` when set.
 * @throws KlxError `invalid-argument` when v1 lacks `nodeId` or `clusterId`.
 */
export function formatMetaProperties(mp: Omit<MetaProperties, 'properties'>, date?: Date): string {
  const entries: [string, string][] = [['version', String(mp.version)]];
  if (mp.version === 0) {
    if (mp.brokerId !== undefined) entries.push(['broker.id', String(mp.brokerId)]);
  } else {
    if (mp.nodeId === undefined || mp.clusterId === undefined) throw new KlxError('invalid-argument', 'meta.properties version 1 needs node.id and cluster.id');
    entries.push(['node.id', String(mp.nodeId)]);
  }
  if (mp.clusterId !== undefined) entries.push(['cluster.id', mp.clusterId]);
  if (mp.directoryId !== undefined) entries.push(['directory.id', mp.directoryId]);
  return formatJavaProperties(entries, date);
}

/**
 * Writes `meta.properties` atomically and durably.
 * @throws KlxError `invalid-argument`, `io-error`; or what `opts.fault` throws.
 */
export function writeMetaProperties(path: string, mp: Omit<MetaProperties, 'properties'>, opts: WriteOptions & { date?: Date } = {}): void {
  writeFileAtomic(path, formatMetaProperties(mp, opts.date), opts);
}
