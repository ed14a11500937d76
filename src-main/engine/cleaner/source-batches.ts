/**
 * Reading the batches of a segment the cleaner is about to map or rewrite (Kafka's
 * `FileRecords.readInto` + `MemoryRecords.batches` in `Cleaner.cleanInto` / `buildOffsetMapForSegment`,
 * and `growBuffersOrFail`'s corruption check).
 *
 * The cleaner must never rewrite what it cannot read: any bytes that are not a batch (a length field
 * running past the end of the file, an unknown magic, garbage), and any batch whose CRC does not
 * match, stop the cleaning of the partition with a KlxError naming the segment file, the byte
 * position and the reason, phrased as the broker's ("log segment may be corrupt: ..."). Nothing has
 * been changed at that point; other partitions are cleaned normally (B21).
 */
import { errorAt, KlxError } from '../errors.ts';
import { scanLogFile, type BatchEntry } from '../format/log-reader.ts';
import type { LogSegment } from '../segment/log-segment.ts';

/**
 * The batches of `seg` from byte position `start`, checked (see the module comment).
 * @param verifyCrc false only for a segment whose CRCs were checked earlier in the same round.
 * @param reuseWindows read into two buffers used in turn (`ScanOptions.reuseWindows`): a batch's
 *   bytes are valid only until the next batch after it is taken, so only for a caller done with each
 *   batch before asking for the next (the map build, and the cleaning, which copies each output
 *   batch into its write buffer at once).
 * @throws KlxError with the code of the damage (`truncated-batch`, `crc-mismatch`, `unknown-magic`,
 *   `batch-length-out-of-range`, `corrupt-batch`...), `file` = the `.log` path and `position`.
 */
export function sourceBatches(seg: LogSegment, start = 0, verifyCrc = true, reuseWindows = false): Generator<BatchEntry> {
  return sourceBatchesOf(seg.files.log, seg.baseOffset, start, verifyCrc, reuseWindows);
}

/**
 * {@link sourceBatches} of the segment whose `.log` file is `file` and baseOffset `baseOffset`
 * (for a thread that has the file's path, not the `LogSegment`: `map-chunks.ts`).
 * @throws KlxError as {@link sourceBatches}.
 */
export function* sourceBatchesOf(file: string, baseOffset: bigint, start = 0, verifyCrc = true, reuseWindows = false): Generator<BatchEntry> {
  for (const e of scanLogFile(file, { start, verifyCrc, resync: false, reuseWindows })) {
    if (e.type !== 'batch') {
      throw new KlxError(e.code, `log segment may be corrupt: ${e.reason}`, { file, position: e.position, details: { segment: baseOffset.toString(), bytes: e.size } });
    }
    if (e.header.crcValid === false) {
      throw new KlxError('crc-mismatch', `log segment may be corrupt: the batch at baseOffset ${e.header.baseOffset} fails its CRC-32C check`, { file, position: e.header.position });
    }
    yield e;
  }
}

/**
 * Names the place of an error thrown while handling a batch of `seg` (record decoding errors carry
 * only a position, sizes from corrupt header fields throw RangeErrors): the segment file and the
 * batch's position (`errorAt`), the reason prefixed as the broker's "log segment may be corrupt",
 * except for `decompression-limit` (a limit of this tool, not damage).
 */
export function withSegmentFile(err: unknown, seg: LogSegment, position?: number): unknown {
  return errorAt(err, { file: seg.files.log, ...(position !== undefined ? { position } : {}) }, unreadableBatchPrefix(err));
}

/**
 * How the cleaner prefixes the reason of a batch it cannot read: as the broker's "log segment may be
 * corrupt" (LogCleaner), except for `decompression-limit`, a limit of this tool and not damage
 * (its reason says so and names --max-inflated-bytes).
 */
export function unreadableBatchPrefix(err: unknown): string {
  return err instanceof KlxError && err.code === 'decompression-limit' ? 'the cleaner stops: it cannot read the batch' : 'log segment may be corrupt';
}
