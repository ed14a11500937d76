/**
 * JSON-safe building blocks for the contract (`contract.ts`): every schema a method uses is made
 * from these or from plain zod strings, finite numbers, booleans, nulls, arrays and objects, so
 * that whatever a handler returns survives `JSON.stringify` / `JSON.parse` unchanged on both
 * transports (Electron IPC and the loopback HTTP bridge).
 *
 * Conventions on the wire:
 * - 64-bit integers (offsets, timestamps in ms, sizes that may pass 2^53) are decimal strings ({@link int64});
 * - byte strings are base64 ({@link base64});
 * - instants are ISO-8601 strings ({@link isoTime});
 * - counts and positions below 2^53 are plain numbers ({@link count}).
 *
 * No Node or DOM imports: shared by the main process and the renderer.
 */
import { z } from 'zod';
import { ERROR_CODES, type ErrorInfo } from './errors.ts';

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** A signed 64-bit integer as a decimal string, e.g. `"-1"`, `"9223372036854775807"`. */
export const int64 = z
  .string()
  .regex(/^-?(0|[1-9][0-9]{0,18})$/, 'expected a 64-bit integer as a decimal string')
  .refine((s) => {
    const digits = s.startsWith('-') ? s.length - 1 : s.length;
    if (digits < 19 || !/^-?[0-9]+$/.test(s)) return true; // 18 digits always fit; malformed text is reported by the regex
    const v = BigInt(s);
    return v >= INT64_MIN && v <= INT64_MAX;
  }, 'out of the 64-bit range');

/** Bytes as standard base64 (RFC 4648 §4, with padding). */
export const base64 = z.base64();

/** An instant as an ISO-8601 UTC string (`Date.prototype.toISOString()`). */
export const isoTime = z.iso.datetime();

/** A non-negative safe integer (counts, byte sizes and positions below 2^53). */
export const count = z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER);

/** An absolute or user-typed path as text; at most 4096 characters and no NUL byte. */
export const pathText = z
  .string()
  .max(4096)
  .refine((s) => !s.includes('\0'), 'a path cannot contain a NUL character');

/** Any JSON value (used for error details and job results in events). */
export const jsonValue = z.json();

/** The zod schema of {@link ErrorInfo}, the one error shape on every wire. */
export const errorInfoSchema = z.object({
  code: z.enum(ERROR_CODES),
  message: z.string(),
  file: z.string().optional(),
  position: count.optional(),
  details: z.record(z.string(), jsonValue).optional(),
}) satisfies z.ZodType<ErrorInfo>;

/**
 * What every call returns on every transport: the handler's result, or the error as an
 * {@link ErrorInfo} (never a thrown exception, so the code and position survive IPC intact).
 */
export type Envelope<T> = { ok: true; result: T } | { ok: false; error: ErrorInfo };

/** A JSON value at the type level; `undefined` is allowed in object fields (they are dropped). */
export type Json = string | number | boolean | null | Json[] | { [key: string]: Json | undefined };

/** {@link ErrorInfo} as its schema types it: `details` reduced to JSON. */
export type WireErrorInfo = z.output<typeof errorInfoSchema>;

/** A line of a JavaScript stack (`    at fn (/path/file.ts:12:5)`, `    at /path/file.js:3:1`, `    at new X (<anonymous>)`). */
const STACK_FRAME = /^\s*at\s+(?:\S.*\(.*\)|(?:file:\/\/|node:|\/|[A-Za-z]:\\)\S*:\d+(?::\d+)?|<anonymous>|native)\s*$/;

/**
 * A message without stack frames: the lines of a JavaScript stack (an error whose message carries
 * another error's `stack`) are dropped, and so is everything from a `Stack Trace:` line on (DuckDB
 * appends its native stack to internal errors). What the error says stays; where in our code it
 * happened stays in the process's log.
 */
export function withoutStack(message: string): string {
  if (!/\n/.test(message)) return message;
  const kept: string[] = [];
  for (const line of message.split('\n')) {
    if (/^\s*Stack Trace:?\s*$/i.test(line)) break;
    if (!STACK_FRAME.test(line)) kept.push(line);
  }
  return kept.join('\n').trimEnd();
}

/**
 * Makes an {@link ErrorInfo} safe for the wire: the message loses any stack frames
 * ({@link withoutStack}); `details` are round-tripped through JSON (bigints become decimal strings,
 * `undefined` fields vanish); details that cannot be serialized (cycles) are replaced by
 * `{ unserializable: true }`.
 */
export function toWireError(info: ErrorInfo): WireErrorInfo {
  const out: WireErrorInfo = { code: info.code, message: withoutStack(info.message) };
  if (info.file !== undefined) out.file = info.file;
  if (info.position !== undefined) out.position = info.position;
  if (info.details !== undefined) {
    try {
      out.details = JSON.parse(JSON.stringify(info.details, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v))) as WireErrorInfo['details'];
    } catch {
      out.details = { unserializable: true };
    }
  }
  return out;
}
