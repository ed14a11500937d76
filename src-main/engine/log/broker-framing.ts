/**
 * Reads how a broker frames the bytes at a position of a segment (Kafka `FileLogInputStream.nextBatch`:
 * {@link BrokerFraming}) and where a fetch gets past them (`LogSegment.translateOffset` starts from the
 * `.index` entry at or below the fetch offset; `LocalLog.read` goes on to the next segment when a
 * segment yields nothing), for the texts of {@link framingConsequence} and `klx fetch`.
 */
import { FileSource } from '../format/log-reader.ts';
import { brokerFraming, type BrokerFraming, type FramingPlace } from './corruption-consequences.ts';
import type { PartitionLog } from './partition-log.ts';

/**
 * How a broker frames the entry at `position` of the `.log` file `file` ({@link brokerFraming} of its
 * size field and magic byte).
 * @param fileSize the file's size in bytes (the end FileLogInputStream reads to).
 * @throws Error from the file system when the file cannot be read.
 */
export function framingAt(file: string, position: number, fileSize: number): BrokerFraming {
  const remaining = fileSize - position;
  if (remaining <= 17) return brokerFraming(0, 0, remaining);
  const src = new FileSource(file);
  try {
    const head = src.read(position, 17);
    return brokerFraming(head.readInt32BE(8), head.readInt8(16), remaining);
  } finally {
    src.close();
  }
}

/**
 * The {@link FramingPlace} of bytes at `position` of segment `segmentIndex` of `log`, reached by a
 * consumer reading in order at `failAt`: the first `.index` entry of the segment whose position lies
 * past them (a fetch from its offset on starts there: LogSegment.translateOffset), the next segment's
 * base offset (LocalLog.read), and in the last segment the log end offset.
 * @param position byte position of the entry's first byte (offsets: `failAt`).
 */
export function framingPlace(log: PartitionLog, segmentIndex: number, position: number, failAt: bigint): FramingPlace {
  const seg = log.segments[segmentIndex]!;
  let indexResumeAt: bigint | null = null;
  if (seg.files.indexSize > 0) {
    for (const e of seg.offsetIndex().entries) {
      if (e.position > position && e.position < seg.size && e.offset >= failAt) {
        indexResumeAt = e.offset;
        break;
      }
    }
  }
  const next = log.segments[segmentIndex + 1];
  return next ? { failAt, indexResumeAt, nextSegmentAt: next.baseOffset } : { failAt, indexResumeAt, nextSegmentAt: null, logEnd: log.logEndOffset };
}

/** True for the framings at which a broker's read of the segment ends (nothing returned) or fails: not an entry it serves. */
export function endsBrokerRead(f: BrokerFraming): boolean {
  return f.kind !== 'framed';
}
