/**
 * The constants of the partition readers that callers name before loading them: the Kafka
 * consumer's fetch defaults (`fetch.ts`) and the special ListOffsets targets (`time-lookup.ts`).
 * Both modules re-export them.
 *
 * No imports: the `klx` command line shows and parses these in its help and arguments without
 * loading the readers (and through them the compression libraries).
 */

/** Default record budget of one fetch: the Java consumer's `max.poll.records`. */
export const DEFAULT_MAX_RECORDS = 500;
/** Default byte budget of one fetch: the Java consumer's `max.partition.fetch.bytes` (1 MiB). */
export const DEFAULT_MAX_BYTES = 1024 * 1024;

/** Kafka's isolation levels. */
export type IsolationLevel = 'read_uncommitted' | 'read_committed';

/** ListOffsets target meaning "the log start offset". */
export const EARLIEST_TIMESTAMP = -2n;
/** ListOffsets target meaning "the log end offset". */
export const LATEST_TIMESTAMP = -1n;
