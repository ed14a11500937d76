/**
 * Building the offset map of a cleaning round over the dirty section (spec §13.3; Kafka's
 * `Cleaner.buildOffsetMap` and `buildOffsetMapForSegment`).
 *
 * Segments of `[start, end)` (start = firstDirtyOffset, end = firstUncleanableOffset) are read in
 * order, the first from the offset-index position of `start`. Aborted transactions come from the
 * `.txnindex` files (`txn-metadata.ts`); control batches and aborted data batches put nothing. For
 * every other record with a key and offset ≥ start: when the map already holds its maximum number of
 * keys, mapping stops there (even for a key already in the map) and the round will clean only up to
 * the map's latest offset; else `map[key] = offset`. After each batch with lastOffset ≥ start the
 * map's latest offset becomes that lastOffset, and after a segment read to its end it becomes the
 * next segment's base offset − 1 (or end − 1 for the last one).
 *
 * Keys in the active segment (and anywhere at or past `end`) are never mapped, so older copies of a
 * key whose newest value is in the active segment survive the round (B04) — what Kafka does; the
 * issue text's "keys in the active segment count" does not match Kafka's `Cleaner.buildOffsetMap`
 * (it maps up to LogCleanerManager.cleanableOffsets' firstUncleanableOffset).
 */
import { KlxError } from '../errors.ts';
import { decodeV2Records, inflateRecordsArea } from '../format/record-batch.ts';
import { V2_HEADER_SIZE } from '../format/types.ts';
import type { PartitionLog } from '../log/partition-log.ts';
import { segmentsInRange } from './cleanable-range.ts';
import type { SkimpyOffsetMap } from './offset-map.ts';
import { newRecordView, readRecordAt } from './record-walk.ts';
import type { SupersededOffsets } from './superseded-offsets.ts';
import { sourceBatches, withSegmentFile } from './source-batches.ts';
import { CleanedTransactionMetadata, collectAbortedTransactions } from './txn-metadata.ts';

/** What building the map did. */
export interface MapBuildResult {
  /** The map filled up before `end`: the round cleans only up to `map.latestOffset + 1`. */
  full: boolean;
  segments: number;
  /** Segments read whole (from byte 0 to the end), so with every CRC checked. */
  verified: Set<bigint>;
  recordsRead: number;
  bytesRead: number;
}

/** Options of {@link buildOffsetMap}. */
export interface MapBuildOptions {
  signal?: AbortSignal;
  /** Called with the bytes of each batch read. */
  onBytes?: (n: number) => void;
  /** Receives every offset a put supersedes (`superseded-offsets.ts`). */
  superseded?: SupersededOffsets;
}

const view = newRecordView();
let scratchCap = 0;
let digests = new Int32Array(0);
let offs = new Float64Array(0);
function ensureScratch(n: number): void {
  if (n <= scratchCap) return;
  scratchCap = Math.max(n, scratchCap * 2, 1024);
  digests = new Int32Array(scratchCap * 4);
  offs = new Float64Array(scratchCap);
}

function checkDone(signal: AbortSignal | undefined, log: PartitionLog): void {
  if (signal?.aborted) throw new KlxError('cancelled', 'compaction cancelled while building the offset map: nothing was changed', { file: log.dir });
}

/**
 * Fills `map` from the dirty section `[start, end)` of `log` (see the module comment).
 * @throws KlxError for a damaged segment (see `source-batches.ts`), `cancelled`.
 */
export function buildOffsetMap(log: PartitionLog, start: bigint, end: bigint, map: SkimpyOffsetMap, opts: MapBuildOptions = {}): MapBuildResult {
  map.clear();
  const dirty = segmentsInRange(log, start, end);
  const txn = new CleanedTransactionMetadata();
  txn.addAbortedTransactions(collectAbortedTransactions(log, start, end));
  const startNum = Number(start);
  const superseded = opts.superseded;
  const result: MapBuildResult = { full: false, segments: 0, verified: new Set(), recordsRead: 0, bytesRead: 0 };
  for (let si = 0; si < dirty.length; si++) {
    const seg = dirty[si]!;
    const nextStart = si + 1 < dirty.length ? dirty[si + 1]!.baseOffset : end;
    result.segments++;
    checkDone(opts.signal, log);
    let batchesSinceCheck = 0;
    const from = seg.positionFor(start);
    for (const entry of sourceBatches(seg, from, true, true)) {
      if (++batchesSinceCheck >= 256) {
        batchesSinceCheck = 0;
        checkDone(opts.signal, log);
      }
      const h = entry.header;
      result.bytesRead += h.size;
      opts.onBytes?.(h.size);
      try {
        if (h.isControl) {
          const recs = decodeV2Records(h, entry.bytes);
          txn.onControlBatchRead({ producerId: h.producerId, isTransactional: h.isTransactional, lastOffset: h.lastOffset, controlType: recs[0]?.control?.typeId ?? null });
          result.recordsRead++;
        } else if (!txn.onBatchRead({ producerId: h.producerId, isTransactional: h.isTransactional, lastOffset: h.lastOffset })) {
          if (h.magic === 2) {
            const data = inflateRecordsArea(h, entry.bytes);
            const base = Number(h.baseOffset);
            // Hash the batch's keys, then put them (SkimpyOffsetMap.putAll may defer puts into buckets).
            ensureScratch(h.recordCount);
            let n = 0;
            let pos = 0;
            for (let i = 0; i < h.recordCount; i++) {
              pos = readRecordAt(data, pos, data.length, view);
              const offset = base + view.offsetDelta;
              if (view.keyLength >= 0 && offset >= startNum) {
                map.digestInto(data, view.keyStart, view.keyLength, digests, n * 4);
                offs[n++] = offset;
              }
              result.recordsRead++;
            }
            if (pos !== data.length) throw new KlxError('corrupt-batch', `${data.length - pos} bytes left in the records area after ${h.recordCount} records`);
            if (map.putAll(digests, offs, n, superseded) < n) {
              result.full = true;
              return result;
            }
          } else {
            for (const r of entry.records ?? []) {
              const offset = Number(r.offset);
              if (r.key !== null && offset >= startNum) {
                if (map.full) {
                  result.full = true;
                  return result;
                }
                const prev = map.putHashed(map.hash(r.key, 0, r.key.length), offset);
                if (prev >= 0 && superseded) superseded.mark(prev);
              }
              result.recordsRead++;
            }
          }
        } else result.recordsRead += h.recordCount;
      } catch (err) {
        if (err instanceof KlxError && err.position === undefined) throw withSegmentFile(new KlxError(err.code, `batch at baseOffset ${h.baseOffset}: ${err.reason}`, { position: h.position, cause: err }), seg);
        throw withSegmentFile(err, seg, h.position);
      }
      if (h.lastOffset >= start) map.updateLatestOffset(Number(h.lastOffset));
    }
    map.updateLatestOffset(Number(nextStart - 1n));
    if (from === 0) result.verified.add(seg.baseOffset);
  }
  map.flushDeferred();
  return result;
}
