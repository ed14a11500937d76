/**
 * JSON objects for the entries of an `.index` or `.timeindex` file (`klx dump FILE.index`): one per
 * real entry, then one per problem the reader found (stale slots, zero tail, sanity failures).
 *
 * Field names follow `kafka-dump-log.sh` (DumpLogSegments.dumpIndex / dumpTimeIndex, which print
 * `offset: O position: P` and `timestamp: T offset: O`): in an `index-entry`, `position` is the byte
 * position of the batch in the segment's `.log` (the entry's physical position, OffsetPosition.position).
 * The entry's own place in the index file is `slot` (its entry number) and `indexPosition` (its byte
 * position in the `.index` / `.timeindex` file: slot × 8, slot × 12). Until 2026-12 an `index-entry`
 * named the .log position `logPosition` and put the slot's byte position in `position`.
 */
import { readOffsetIndex } from '../../engine/files/offset-index.ts';
import { readTimeIndex } from '../../engine/files/time-index.ts';
import { int64Json } from '../../engine/format/batch-json.ts';

/**
 * The NDJSON objects of `klx dump FILE.index|FILE.timeindex --json`:
 * - `index-entry`: `{ type, file, offset, position, relativeOffset, slot, indexPosition }`, where
 *   `offset` is the absolute offset (baseOffset + relativeOffset), `position` the batch's byte position
 *   in the .log, `indexPosition` the entry's byte position in the .index (slot × 8);
 * - `timeindex-entry`: `{ type, file, timestamp, offset, relativeOffset, slot, indexPosition }`
 *   (timestamp in ms; `indexPosition` = slot × 12);
 * - `index-summary`: file size (bytes), entries, stale slots, zero tail;
 * - `index-problem`: `{ indexPosition, kind, kafkaCorrupt, reason }`, `indexPosition` a byte position in the index file.
 * int64 values are numbers when safe, else strings (int64Json).
 *
 * @param file path of the index file; @param label the name printed in `file`.
 * @throws KlxError `not-found` / `io-error` when the file cannot be read.
 */
export function indexFileJson(file: string, label: string): Record<string, unknown>[] {
  if (file.endsWith('.timeindex')) {
    const idx = readTimeIndex(file);
    return [
      ...idx.entries.map((e, i) => ({ type: 'timeindex-entry', file: label, timestamp: int64Json(e.timestamp), offset: int64Json(e.offset), relativeOffset: e.relativeOffset, slot: i, indexPosition: i * 12 })),
      { type: 'index-summary', file: label, kind: 'timeindex', size: idx.fileSize, entries: idx.entries.length, staleEntries: idx.staleEntries, trailingZeroEntries: idx.trailingZeroEntries, trailingBytes: idx.trailingBytes },
      ...idx.problems.map((p) => ({ type: 'index-problem', file: label, indexPosition: p.position, kind: p.kind, kafkaCorrupt: p.kafkaCorrupt, reason: p.reason })),
    ];
  }
  const idx = readOffsetIndex(file);
  return [
    ...idx.entries.map((e, i) => ({ type: 'index-entry', file: label, offset: int64Json(e.offset), position: e.position, relativeOffset: e.relativeOffset, slot: i, indexPosition: i * 8 })),
    { type: 'index-summary', file: label, kind: 'index', size: idx.fileSize, entries: idx.entries.length, staleEntries: idx.staleEntries, trailingZeroEntries: idx.trailingZeroEntries, trailingBytes: idx.trailingBytes },
    ...idx.problems.map((p) => ({ type: 'index-problem', file: label, indexPosition: p.position, kind: p.kind, kafkaCorrupt: p.kafkaCorrupt, reason: p.reason })),
  ];
}
