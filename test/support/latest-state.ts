/**
 * The latest state of a partition computed by the engine the way a consumer rebuilds it: `fetch`
 * from logStartOffset to the log end (control records and aborted data left out by fetch's
 * flags), keyless records skipped, the last record of each key kept (tombstones included). The
 * reference the SQL `latest` / `state` views are compared with, through the engine
 * (`test/engine/sql/state-real-data.test.ts`) and through the API (`test/api/sql-api.test.ts`).
 */
import { fetch } from '../../src-main/engine/log/fetch.ts';
import type { PartitionLog } from '../../src-main/engine/log/partition-log.ts';

/** Bytes as lower-case hex (null stays null). */
export const hex = (b: Uint8Array | null): string | null => (b === null ? null : Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex'));

/** key hex → [offset, value bytes or null]: the last record of each key, read with the engine's fetch. */
export async function engineLatest(log: PartitionLog): Promise<Map<string, [bigint, Uint8Array | null]>> {
  const out = new Map<string, [bigint, Uint8Array | null]>();
  let offset = log.logStartOffset;
  for (;;) {
    const page = await fetch(log, { offset, maxRecords: 10_000, maxBytes: Infinity });
    for (const r of page.records) {
      if (r.key === null || r.aborted) continue;
      out.set(hex(r.key)!, [r.offset, r.value]);
    }
    if (page.reachedLimit || page.nextOffset === offset) break;
    offset = page.nextOffset;
  }
  return out;
}
