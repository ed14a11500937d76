import type { ErrorCode, ErrorInfo } from '../../src-shared/errors.ts';

/**
 * The one error type the engine throws. Carries a code from the shared closed set, the file and
 * byte position it concerns (when there is one), and a reason a person can act on.
 *
 * The message is built as `<file>: position <n>: <reason>` so that printing `err.message` alone
 * already names the place.
 */
export class KlxError extends Error {
  readonly code: ErrorCode;
  readonly file?: string;
  readonly position?: number;
  readonly reason: string;
  readonly details?: Record<string, unknown>;

  constructor(code: ErrorCode, reason: string, where: { file?: string; position?: number; details?: Record<string, unknown>; cause?: unknown } = {}) {
    const prefix = [where.file, where.position !== undefined ? `position ${where.position}` : undefined].filter(Boolean).join(': ');
    super(prefix ? `${prefix}: ${reason}` : reason, where.cause !== undefined ? { cause: where.cause } : undefined);
    this.name = 'KlxError';
    this.code = code;
    this.reason = reason;
    this.file = where.file;
    this.position = where.position;
    this.details = where.details;
  }

  /** The JSON-safe form used on the wire. */
  toInfo(): ErrorInfo {
    const info: ErrorInfo = { code: this.code, message: this.message };
    if (this.file !== undefined) info.file = this.file;
    if (this.position !== undefined) info.position = this.position;
    if (this.details !== undefined) info.details = this.details;
    return info;
  }
}

/** Turns anything thrown into an {@link ErrorInfo}; Node I/O errors become `io-error` / `not-found`. */
export function toErrorInfo(err: unknown): ErrorInfo {
  if (err instanceof KlxError) return err.toInfo();
  const e = err as NodeJS.ErrnoException;
  if (e && typeof e === 'object' && typeof e.code === 'string') {
    const code: ErrorCode = e.code === 'ENOENT' ? 'not-found' : 'io-error';
    return { code, message: e.message, ...(e.path ? { file: e.path } : {}) };
  }
  return { code: 'internal', message: err instanceof Error ? err.message : String(err) };
}

/**
 * The shared way to make an error name its place (issue 17, defect 10): an error thrown while
 * handling the bytes at `where` (a batch of a segment file, an index being written) comes out as a
 * KlxError naming `where.file` and, unless it names its own, `where.position`:
 * - a KlxError that names a file already is returned as it is;
 * - a KlxError without a file gets `where` (its own position wins), its reason prefixed by `what`;
 * - a RangeError or an out-of-range error of Node's Buffer (sizes taken from corrupt header fields:
 *   "Invalid typed array length", `"length" is out of range`) becomes `fallback` (default
 *   `corrupt-batch`) with `where`;
 * - anything else (a bug) is returned unchanged.
 */
export function errorAt(err: unknown, where: { file: string; position?: number }, what = '', fallback: ErrorCode = 'corrupt-batch'): unknown {
  const prefix = what ? `${what}: ` : '';
  if (err instanceof KlxError) {
    if (err.file !== undefined) return err;
    const position = err.position ?? where.position;
    return new KlxError(err.code, prefix + err.reason, { file: where.file, ...(position !== undefined ? { position } : {}), ...(err.details ? { details: err.details } : {}), cause: err });
  }
  const code = (err as NodeJS.ErrnoException | null)?.code;
  if (err instanceof RangeError || code === 'ERR_OUT_OF_RANGE' || code === 'ERR_BUFFER_OUT_OF_BOUNDS') {
    return new KlxError(fallback, `${prefix}${(err as Error).message}`, { file: where.file, ...(where.position !== undefined ? { position: where.position } : {}), cause: err });
  }
  return err;
}
