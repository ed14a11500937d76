/**
 * One rule for every command-line option that takes a point in time (`klx offset-for-time
 * --timestamp`, `--now` of `groups` / `retention` / `compact`, `klx append --timestamp`):
 *
 * - an integer is milliseconds since the epoch (1970-01-01T00:00:00Z);
 * - an ISO-8601 date-time `YYYY-MM-DDTHH:mm[:ss[.SSS]]` with a zone (`Z`, `+HH`, `+HHMM`, `+HH:MM`,
 *   or `-`) is that instant;
 * - the same WITHOUT a zone is read as UTC, as Kafka's own tools read it: `Utils.getDateTime`
 *   (clients, org.apache.kafka.common.utils.Utils; what `kafka-consumer-groups.sh --reset-offsets
 *   --to-datetime` parses with, ConsumerGroupCommand) appends `Z` to a date-time whose time part has
 *   no `+`, `-` or `Z`, then parses `yyyy-MM-dd'T'HH:mm:ss.SSSXXX`;
 * - a date alone `YYYY-MM-DD` is 00:00:00.000 UTC of that day (Kafka's `Utils.getDateTime` refuses a
 *   timestamp without `T`; this tool reads it under the same UTC rule).
 *
 * Never the machine's local time zone (JavaScript's `Date.parse` reads a zoneless date-time as local
 * time but a date alone as UTC: that is what this module replaces). Commands echo the instant in UTC.
 */
import { InvalidArgumentError } from 'commander';

/** The forms, for `--help` texts. */
export const TIME_FORMS_HELP = 'ms since the epoch, or an ISO-8601 date-time (2024-05-01T10:00:00Z, 2024-05-01T12:00+02:00) or date (2024-05-01); without a zone it is UTC, as Kafka\'s tools read it (Utils.getDateTime)';

const ISO = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,3}))?)?(Z|[+-]\d{2}(?::?\d{2})?)?)?$/;

/**
 * Parses a point in time (see the module comment) into ms since the epoch.
 * @param flag the option's name, for the error (`--timestamp`).
 * @throws InvalidArgumentError (commander: exit 2) naming the flag and the value: not a form above,
 *   a field out of range (month 13, 25:00, Feb 30), before the epoch, or beyond int64.
 */
export function parseInstant(v: string, flag: string): bigint {
  const text = v.trim();
  const bad = (why: string) => new InvalidArgumentError(`${flag} ${why}: must be ${TIME_FORMS_HELP}; got "${v}"`);
  if (/^\d+$/.test(text)) {
    const n = BigInt(text);
    if (n > 9223372036854775807n) throw bad('does not fit an int64');
    return n;
  }
  const m = ISO.exec(text);
  if (!m) throw bad('is not a time');
  const [, y, mo, d, h = '00', mi = '00', s = '00', frac = '0', zone = 'Z'] = m;
  const ms = Number(frac.padEnd(3, '0'));
  const fields = [Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s)] as const;
  const utc = Date.UTC(fields[0], fields[1], fields[2], fields[3], fields[4], fields[5], ms);
  const back = new Date(utc);
  if (back.getUTCFullYear() !== fields[0] || back.getUTCMonth() !== fields[1] || back.getUTCDate() !== fields[2] || back.getUTCHours() !== fields[3] || back.getUTCMinutes() !== fields[4] || back.getUTCSeconds() !== fields[5]) {
    throw bad('has a field out of range');
  }
  let offsetMin = 0;
  if (zone !== 'Z') {
    const z = /^([+-])(\d{2}):?(\d{2})?$/.exec(zone)!;
    const hh = Number(z[2]);
    const mm = Number(z[3] ?? '0');
    if (hh > 18 || mm > 59) throw bad('has a zone out of range');
    offsetMin = (z[1] === '-' ? -1 : 1) * (hh * 60 + mm);
  }
  const at = utc - offsetMin * 60_000;
  if (at < 0) throw bad('is before 1970-01-01T00:00:00Z');
  return BigInt(at);
}

/** `2024-05-01T10:00:00.000Z` for ms since the epoch (empty text outside JavaScript's date range). */
export function instantUtc(ms: bigint | number): string {
  const n = Number(ms);
  return n >= 0 && n < 8.64e15 ? new Date(n).toISOString() : '';
}
