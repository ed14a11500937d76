/**
 * Clean-shutdown marker `.kafka_cleanshutdown` at the root of a log directory (spec §11.3, §10.4;
 * Kafka's `CleanShutdownFileHandler`).
 *
 * Presence means the broker closed every log cleanly (indexes trimmed, final time-index entries
 * written), so loading skips recovery; the broker deletes the file as soon as it starts loading (`LogManager.loadLogs`, KAFKA-10471).
 * Content: JSON `{"version":0,"brokerEpoch":42}` (Kafka ≥ 3.7), or an empty file (older brokers).
 * A content that cannot be read does not make the marker absent: Kafka only tests for existence to
 * decide recovery, and treats an unreadable broker epoch as unknown.
 */
import { join } from 'node:path';
import { KlxError } from '../errors.ts';
import { CLEAN_SHUTDOWN_FILE } from './file-names.ts';
import { readFileBytes, writeFileAtomic, type WriteOptions } from './fsync-write.ts';

/** The marker as found in a log directory. */
export type CleanShutdownMarker =
  | { present: false }
  | {
      present: true;
      /** File size in bytes (0 for older brokers). */
      size: number;
      /** `version` of the JSON content, when readable. */
      version?: number;
      /** `brokerEpoch` of the JSON content, when readable (int64). */
      brokerEpoch?: bigint;
      /** Why the content could not be read (non-empty, not the expected JSON). */
      problem?: string;
    };

/**
 * Interprets the bytes of a `.kafka_cleanshutdown` file.
 * Never throws: unreadable content is reported in `problem`.
 */
export function parseCleanShutdown(buf: Uint8Array): CleanShutdownMarker & { present: true } {
  const text = Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength).toString('utf8');
  if (text.trim() === '') return { present: true, size: buf.length };
  let obj: unknown;
  try {
    obj = JSON.parse(text);
  } catch (err) {
    return { present: true, size: buf.length, problem: `not JSON: ${(err as Error).message}` };
  }
  if (!obj || typeof obj !== 'object' || Array.isArray(obj)) return { present: true, size: buf.length, problem: 'JSON content is not an object' };
  const out: CleanShutdownMarker & { present: true } = { present: true, size: buf.length };
  const v = (obj as Record<string, unknown>).version;
  if (typeof v === 'number' && Number.isInteger(v)) out.version = v;
  // brokerEpoch is an int64: take its digits from the text so that values above 2^53 stay exact.
  const m = /"brokerEpoch"\s*:\s*(-?[0-9]+)/.exec(text);
  if (m) out.brokerEpoch = BigInt(m[1]!);
  else if ('brokerEpoch' in (obj as object)) out.problem = 'brokerEpoch is not an integer';
  return out;
}

/**
 * Looks for `.kafka_cleanshutdown` in a log directory.
 * @param logDir the log directory (one entry of `log.dirs`).
 * @throws KlxError `io-error` when the file exists but cannot be read.
 */
export function readCleanShutdown(logDir: string): CleanShutdownMarker {
  const path = join(logDir, CLEAN_SHUTDOWN_FILE);
  try {
    return parseCleanShutdown(readFileBytes(path));
  } catch (err) {
    if (err instanceof KlxError && err.code === 'not-found') return { present: false };
    throw err;
  }
}

/** Formats the marker content as Kafka ≥ 3.7 writes it: `{"version":0,"brokerEpoch":<n>}`. */
export function formatCleanShutdown(brokerEpoch: bigint): string {
  return `{"version":0,"brokerEpoch":${brokerEpoch}}`;
}

/**
 * Creates `.kafka_cleanshutdown` in `logDir` atomically and durably. Call only after every log of the
 * directory was closed cleanly.
 * @param brokerEpoch written in the JSON content; default −1 (unknown).
 * @throws KlxError `io-error`; or what `opts.fault` throws.
 */
export function writeCleanShutdown(logDir: string, brokerEpoch: bigint = -1n, opts: WriteOptions = {}): void {
  writeFileAtomic(join(logDir, CLEAN_SHUTDOWN_FILE), formatCleanShutdown(brokerEpoch), opts);
}
