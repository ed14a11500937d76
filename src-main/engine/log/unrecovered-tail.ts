/**
 * What a broker does with bytes that are not a batch at the end of a partition's last segment when it
 * does not recover that segment at startup (a clean shutdown: `LogLoader.recoverLog` recovers no
 * segment), as sentences shared by `klx repair`'s plan, `klx verify` and the health check, so that
 * they say the same thing (checked against Kafka 2.8–4.x: LogLoader, LogSegment, FileRecords,
 * FileLogInputStream, LocalLog, CompletedFetch, FetchCollector, ReplicaManager).
 *
 * The sequence: `LogManager.loadLogs` deletes the clean-shutdown marker and loads the log without
 * recovery; `LogSegment.readNextOffset` computes the log end offset F from the complete batches
 * (FileLogInputStream.nextBatch returns nothing for an entry that reaches past the end of the file),
 * while `FileRecords.open` keeps the whole file, the garbage included, and places its write position at
 * the file's size. The next append (`LogSegment.append` → `FileRecords.append`) is written after the
 * garbage, with base offset F. A read that walks batches from an earlier position (a fetch or
 * ListOffsets: `LogSegment.read` → `translateOffset` → `FileRecords.searchForOffsetWithSize` →
 * `FileLogInputStream.nextBatch`, from the offset index's entry at or below the offset; the first
 * append after a load writes no entry: `bytesSinceLastIndexEntry` starts at 0) frames the garbage with
 * its own size field, so the garbage and the head of the appended data become one "batch". The
 * segment is recovered at the next start without a clean shutdown (it holds the recovery point, at most
 * F after this load), and `LogSegment.recover` cuts it where that frame starts: the appended batches go.
 */
import { FileSource } from '../format/log-reader.ts';
import { LOG_OVERHEAD, V2_HEADER_SIZE } from '../format/types.ts';
import { consumerStopsAt, framedConsumerText, KRAFT_METADATA_TOPIC } from './corruption-consequences.ts';
import { framingAt } from './broker-framing.ts';

/** What a broker that does not recover the last segment makes of its tail at load (LogSegment.readNextOffset; see {@link brokerTailAtLoad}). */
export type TailAtLoad = { kind: 'ignored' } | { kind: 'fails'; position: number; what: string } | { kind: 'read-as-batch'; position: number; nextOffset: bigint };

/**
 * How a broker that does not recover the last segment (clean shutdown) reads its bytes from
 * `position` (the first invalid byte) to the end when it computes the log end offset at load
 * (LogLoader.recoverLog → LogSegment.readNextOffset → the last batch `FileLogInputStream.nextBatch`
 * yields; Kafka 2.x–4.1): nextBatch reads only each entry's first 17 bytes and returns nothing when
 * fewer remain or the size field reaches past the end, throws CorruptRecordException for a size
 * below 14 (LegacyRecord.RECORD_OVERHEAD_V0); the last entry's next offset comes from its header
 * (offset + 1 for magic 0/1; baseOffset + lastOffsetDelta + 1 otherwise, a KafkaException when the
 * 61-byte header is cut by the end of the file). An exception there is no IOException, so
 * `LogManager.loadLogs` rethrows it and the broker does not start.
 * @param log the `.log` file; `position`, `fileSize` in bytes.
 */
export function brokerTailAtLoad(log: string, position: number, fileSize: number): TailAtLoad {
  const src = new FileSource(log);
  try {
    let pos = position;
    let last: number | null = null;
    while (pos < fileSize - 17) {
      const size = src.read(pos + 8, 4).readInt32BE(0);
      if (size < 14) return { kind: 'fails', position: pos, what: `a size field of ${size}, below the 14-byte minimum (FileLogInputStream.nextBatch throws CorruptRecordException)` };
      if (pos > fileSize - LOG_OVERHEAD - size) break;
      last = pos;
      pos += LOG_OVERHEAD + size;
    }
    if (last === null) return { kind: 'ignored' };
    const magic = src.read(last + 16, 1).readInt8(0);
    if (magic < 2) return { kind: 'read-as-batch', position: last, nextOffset: src.read(last, 8).readBigInt64BE(0) + 1n };
    if (last + V2_HEADER_SIZE > fileSize) return { kind: 'fails', position: last, what: `a batch whose ${V2_HEADER_SIZE}-byte header the end of the file cuts (loading it throws KafkaException "Failed to load record batch")` };
    const h = src.read(last, V2_HEADER_SIZE);
    return { kind: 'read-as-batch', position: last, nextOffset: h.readBigInt64BE(0) + BigInt(h.readInt32BE(23)) + 1n };
  } finally {
    src.close();
  }
}

/**
 * The frame a reader makes at `position` once a batch with base offset `logEndOffset` is appended
 * after the `garbage` bytes: the garbage's bytes, then the appended batch's first 8 bytes (its
 * baseOffset, known), then unknown bytes. Fields are null when any of their bytes is unknown.
 */
function frameAfterAppend(garbage: Buffer, logEndOffset: bigint): { size: number | null; magic: number | null; lastOffset: bigint | null } {
  const known: (number | null)[] = [];
  const head = Buffer.alloc(8);
  head.writeBigInt64BE(logEndOffset);
  for (let i = 0; i < V2_HEADER_SIZE; i++) known.push(i < garbage.length ? garbage[i]! : i < garbage.length + 8 ? head[i - garbage.length]! : null);
  const bytes = (from: number, n: number): Buffer | null => {
    const out = Buffer.alloc(n);
    for (let i = 0; i < n; i++) {
      const b = known[from + i];
      if (b === null || b === undefined) return null;
      out[i] = b;
    }
    return out;
  };
  const sizeBytes = bytes(8, 4);
  const magicByte = bytes(16, 1);
  const magic = magicByte ? magicByte.readInt8(0) : null;
  const offsetBytes = bytes(0, 8);
  const deltaBytes = bytes(23, 4);
  const lastOffset = magic === null || !offsetBytes ? null : magic < 2 ? offsetBytes.readBigInt64BE(0) : deltaBytes ? offsetBytes.readBigInt64BE(0) + BigInt(deltaBytes.readInt32BE(0)) : null;
  return { size: sizeBytes ? sizeBytes.readInt32BE(0) : null, magic, lastOffset };
}

/**
 * What a broker does with the bytes from `position` to the end of the last segment when it does not
 * recover that segment at startup (clean shutdown: LogLoader.recoverLog), from its load to the next start
 * after a crash, and what klx does about them. Lower case, no final period; names the Kafka classes (module comment).
 * @param log the `.log` file of the last segment; `position` its first invalid byte; `fileSize` its size (bytes).
 * @param logEndOffset the offset after the last complete batch before `position` (the segment's base offset when none).
 * @param topic the partition's topic (`__cluster_metadata`: what KRaft nodes do instead of consumers).
 * @param withKlx add what klx repair / append do about them (false where the caller says it: the repair plan).
 */
export function unrecoveredTailText(log: string, position: number, fileSize: number, logEndOffset: bigint, topic?: string, withKlx = true): string {
  const tail = brokerTailAtLoad(log, position, fileSize);
  const F = logEndOffset;
  if (tail.kind === 'fails') return `a broker does not start: loading this log, LogSegment.readNextOffset reads the bytes at ${tail.position} as ${tail.what}, which LogManager.loadLogs does not catch`;
  if (tail.kind === 'read-as-batch') {
    // The entry it takes for the last batch is served to a fetch at F as it is: what a consumer does depends on its magic byte.
    const framed = framingAt(log, tail.position, fileSize);
    const consumer = topic === KRAFT_METADATA_TOPIC || framed.kind !== 'framed' ? consumerStopsAt(F, undefined, framed.kind !== 'framed' || (framed.magic >= 0 && framed.magic <= 2), topic) : framedConsumerText(framed.magic, F);
    return `a broker takes the bytes at byte ${tail.position} for the last batch and sets the log end offset to ${tail.nextOffset} instead of ${F} (LogSegment.readNextOffset reads only their size field and header); ${consumer}`;
  }
  const g = fileSize - position;
  const src = new FileSource(log);
  let garbage: Buffer;
  try {
    garbage = src.read(position, Math.min(g, V2_HEADER_SIZE));
  } finally {
    src.close();
  }
  const kraft = topic === KRAFT_METADATA_TOPIC;
  const reader = kraft ? 'a KRaft node' : 'a consumer';
  const load =
    `a broker opens the segment with all its ${fileSize} bytes (FileRecords.open: the write position is the file's size) and sets the log end offset to ${F} (LogSegment.readNextOffset reads only complete batches), so no read reaches these ${g} bytes until the next append; ` +
    `that append is written after them, at byte ${fileSize}, with base offset ${F} (LogSegment.append, FileRecords.append). ` +
    `Then a read that walks the batches from before byte ${position} (a fetch or ListOffsets at offset ${F} or later, until an .index entry points past these bytes: LogSegment.read, FileRecords.searchForOffsetWithSize, FileLogInputStream.nextBatch) `;
  const f = frameAfterAppend(garbage, F);
  let frame: string;
  if (f.size === null) {
    frame =
      `takes these bytes and the head of the appended batch for one entry whose size field is made partly of the appended batch's length: a fetch at offset ${F} meets that entry, not the appended batch (nothing while it reaches past the end of the file; else CorruptRecordException, or a batch whose CRC fails)`;
  } else if (f.size < 14) {
    frame =
      `reads their size field, ${f.size}, below the 14-byte minimum, and throws CorruptRecordException (FileLogInputStream.nextBatch): a fetch at offset ${F} fails with CORRUPT_MESSAGE (ReplicaManager.readFromLog) and ${reader} fetching it ${kraft ? 'cannot read on' : 'throws "Encountered corrupt message" (FetchCollector)'}`;
  } else {
    const frameBytes = LOG_OVERHEAD + f.size;
    const k = frameBytes - g;
    // An append is one whole batch of more than 61 bytes: a frame needing fewer appended bytes is complete after the first one.
    const wait =
      k > V2_HEADER_SIZE
        ? `until ${k} bytes are appended the entry reaches past the end of the file, nextBatch yields nothing and a fetch at offset ${F} returns no records and no error (LocalLog.read); after that `
        : 'from the first append on (a batch is more than 61 bytes) ';
    const crc = `it fails its CRC (DefaultRecordBatch.ensureValid: CorruptRecordException): ${consumerStopsAt(F, undefined, true, topic)}, and a follower fetching it refuses it (UnifiedLog.analyzeAndValidateRecords) and stays behind, so the appended records cannot be read from offset ${F}`;
    const taken = `takes these ${g} bytes and the first ${k} appended bytes for one batch of ${frameBytes} bytes (their size field says ${f.size})`;
    if (f.lastOffset !== null && f.lastOffset >= F) frame = `${taken}, claiming offsets up to ${f.lastOffset}: ${wait}a fetch at offset ${F} returns this entry, and ${crc}`;
    else if (f.lastOffset !== null) frame = `${taken}, claiming offsets up to ${f.lastOffset}, below ${F}: ${wait}the reader passes over it and frames the appended bytes from byte ${position + frameBytes} on as the next batch, so what a fetch at offset ${F} gets depends on those bytes (a batch the broker appended only if one starts exactly there)`;
    else frame = `${taken}, whose offsets come partly from the appended bytes: ${wait}a fetch at offset ${F} gets this entry, whose CRC fails (${consumerStopsAt(F, undefined, true, topic)}), or, when the offsets it claims lie below ${F}, whatever the appended bytes after it frame`;
  }
  const restart =
    `. LogManager.loadLogs deletes the clean-shutdown marker as it loads, so the next start after a crash recovers this segment (it holds the recovery point, at most ${F}, until a roll flushes it: LogLoader.recoverLog), and LogSegment.recover cuts it at byte ${position}: every batch appended after these bytes is lost` +
    (withKlx ? `. klx repair leaves them (a broker would not cut them) and klx append refuses to write after them; klx repair --truncate-at-corruption cuts them before anything is appended, losing no batch` : '');
  return load + frame + restart;
}
