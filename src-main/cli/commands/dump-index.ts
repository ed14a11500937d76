/**
 * JSON objects for the entries of an `.index` or `.timeindex` file (`klx dump FILE.index`): one per
 * real entry, then one per problem the reader found (stale slots, zero tail, sanity failures).
 */
import { readOffsetIndex } from '../../engine/files/offset-index.ts';
import { readTimeIndex } from '../../engine/files/time-index.ts';
import { int64Json } from '../../engine/format/batch-json.ts';

/**
 * @param file path of the index file; @param label the name printed in `file`.
 * @throws KlxError `not-found` / `io-error` when the file cannot be read.
 */
export function indexFileJson(file: string, label: string): Record<string, unknown>[] {
  if (file.endsWith('.timeindex')) {
    const idx = readTimeIndex(file);
    return [
      ...idx.entries.map((e, i) => ({ type: 'timeindex-entry', file: label, slot: i, position: i * 12, timestamp: int64Json(e.timestamp), offset: int64Json(e.offset), relativeOffset: e.relativeOffset })),
      { type: 'index-summary', file: label, kind: 'timeindex', size: idx.fileSize, entries: idx.entries.length, staleEntries: idx.staleEntries, trailingZeroEntries: idx.trailingZeroEntries, trailingBytes: idx.trailingBytes },
      ...idx.problems.map((p) => ({ type: 'index-problem', file: label, position: p.position, kind: p.kind, kafkaCorrupt: p.kafkaCorrupt, reason: p.reason })),
    ];
  }
  const idx = readOffsetIndex(file);
  return [
    ...idx.entries.map((e, i) => ({ type: 'index-entry', file: label, slot: i, position: i * 8, offset: int64Json(e.offset), relativeOffset: e.relativeOffset, logPosition: e.position })),
    { type: 'index-summary', file: label, kind: 'index', size: idx.fileSize, entries: idx.entries.length, staleEntries: idx.staleEntries, trailingZeroEntries: idx.trailingZeroEntries, trailingBytes: idx.trailingBytes },
    ...idx.problems.map((p) => ({ type: 'index-problem', file: label, position: p.position, kind: p.kind, kafkaCorrupt: p.kafkaCorrupt, reason: p.reason })),
  ];
}
