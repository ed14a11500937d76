/**
 * What Kafka does with a batch whose CRC fails, as sentences shared by every place that reports one
 * (`klx verify` and the health check's `crc-mismatch` findings, `klx fetch`'s `corrupt-record` error,
 * `klx repair`'s plan), so that they all say the same thing:
 * - a consumer with `check.crcs=true` (the default) throws `CorruptRecordException` at the batch and
 *   reads nothing past it until it seeks beyond it (Kafka `CompletedFetch.maybeEnsureValid`);
 * - a leader serves the bytes as they are (the fetch path does not check CRCs), and a follower
 *   refuses to append them (`UnifiedLog.analyzeAndValidateRecords`: "Record is corrupt"; the
 *   `AbstractFetcherThread` logs "Found invalid messages during fetch" and retries);
 * - at startup a broker checks the CRC only of the segments it recovers (`LogLoader.recoverLog`:
 *   from the segment holding the recovery point on, none after a clean shutdown; plus a segment
 *   whose `.index` is missing, `LogLoader.loadSegmentFiles`), and `LogSegment.recover` cuts the
 *   segment at the first batch failing `RecordBatch.ensureValid`; `recoverLog` then deletes the later
 *   segments.
 * Imports nothing: a leaf used by engine/log modules.
 */

/**
 * Whether a broker recovers (re-validates) a segment at startup, and why (Kafka `LogLoader`);
 * `kraftMetadataLog` when the segment is of `__cluster_metadata`, which no consumer reads (the CRC texts
 * then name what KRaft nodes do).
 */
export type StartupRecovery = (
  | { kind: 'recovered' }
  | { kind: 'recovered-alone' }
  | { kind: 'clean-shutdown' }
  | { kind: 'below-recovery-point'; recoveryPoint: bigint }
) & { kraftMetadataLog?: boolean };

/** The KRaft metadata log's topic: only KRaft voters and observers fetch it (KafkaRaftClient), no consumer. */
export const KRAFT_METADATA_TOPIC = '__cluster_metadata';

/**
 * Whether a broker recovers segment `i` at startup, as `LogLoader` decides: `recoverLog` recovers
 * the segments from the one holding the recovery point on (all of them without a recovery point)
 * unless the log directory had a clean shutdown; `loadSegmentFiles` recovers a segment whose `.index`
 * is missing whatever the shutdown.
 * @param bases the segments' base offsets, ascending.
 * @param i the segment's index in `bases`.
 * @param recoveryPoint the partition's `recovery-point-offset-checkpoint` entry (null: none, i.e. 0).
 * @param indexMissing true when the segment has no `.index` file.
 * @param topic the partition's topic (`__cluster_metadata` marks the result `kraftMetadataLog`).
 */
export function startupRecoveryOf(bases: readonly bigint[], i: number, cleanShutdown: boolean, recoveryPoint: bigint | null, indexMissing: boolean, topic?: string): StartupRecovery {
  let recoverFrom = 0;
  for (let k = 0; k < bases.length; k++) if (bases[k]! <= (recoveryPoint ?? 0n)) recoverFrom = k;
  const s: StartupRecovery =
    !cleanShutdown && i >= recoverFrom ? { kind: 'recovered' } : indexMissing ? { kind: 'recovered-alone' } : cleanShutdown ? { kind: 'clean-shutdown' } : { kind: 'below-recovery-point', recoveryPoint: recoveryPoint ?? 0n };
  return topic === KRAFT_METADATA_TOPIC ? { ...s, kraftMetadataLog: true } : s;
}

/**
 * What a consumer does at a batch it cannot use: `a consumer with check.crcs=true (the default) stops
 * at offset F until it seeks past offset L (Kafka CompletedFetch)` (without `seekPast`: `... stops at
 * offset F (Kafka CompletedFetch)`). With `crcOnly` false (an entry a broker serves whose magic byte is
 * not 0, 1 or 2) every consumer stops there, whatever `check.crcs` (`ByteBufferLogInputStream.nextBatchSize`
 * throws CorruptRecordException "Invalid magic found in record"); for other bytes that are not a batch see
 * {@link framingConsequence}: what happens depends on their size field. Lower case; callers
 * capitalise at a sentence start. For `topic` `__cluster_metadata`, which no consumer reads, what a KRaft
 * node does instead: its KafkaRaftClient checks each batch's CRC when it reads committed batches for its
 * listeners (RecordsIterator.readBatch: DefaultRecordBatch.ensureValid throws CorruptRecordException).
 */
export function consumerStopsAt(failAt: bigint, seekPast?: bigint, crcOnly = true, topic?: string): string {
  if (topic === KRAFT_METADATA_TOPIC) {
    return crcOnly
      ? `no consumer reads ${KRAFT_METADATA_TOPIC} (only KRaft voters and observers fetch it: KafkaRaftClient); a KRaft node refuses the batch at offset ${failAt} when it reads it for its listeners (RecordsIterator.readBatch: CorruptRecordException)`
      : `no consumer reads ${KRAFT_METADATA_TOPIC} (only KRaft voters and observers fetch it: KafkaRaftClient); a KRaft node cannot read the bytes at offset ${failAt} as a batch (CorruptRecordException)`;
  }
  const who = crcOnly ? 'a consumer with check.crcs=true (the default)' : 'a consumer (whatever check.crcs: ByteBufferLogInputStream.nextBatchSize refuses a magic byte other than 0, 1 or 2)';
  return `${who} stops at offset ${failAt}${seekPast !== undefined ? ` until it seeks past offset ${seekPast}` : ''} (Kafka CompletedFetch)`;
}

/**
 * The whole consequence of a batch whose CRC fails: the consumer ({@link consumerStopsAt}), the
 * leader and followers, and, when `startup` is given, what a broker does with it at startup.
 * @param h the batch's offsets (for a v0/v1 wrapper message, its first and last offset).
 */
export function crcFailureConsequence(h: { baseOffset: bigint; lastOffset: bigint }, startup?: StartupRecovery): string {
  const kraft = startup?.kraftMetadataLog === true;
  const parts = [
    consumerStopsAt(h.baseOffset, h.lastOffset, true, kraft ? KRAFT_METADATA_TOPIC : undefined),
    kraft
      ? 'the quorum leader serves the batch as it is (fetches do not check CRCs) and a voter or observer refuses to append it (KafkaMetadataLog.appendAsFollower: UnifiedLog.analyzeAndValidateRecords)'
      : 'a leader serves the batch as it is (fetches do not check CRCs) and a follower refuses to append it (UnifiedLog.analyzeAndValidateRecords)',
  ];
  if (startup) parts.push(startupCrcText(startup));
  return parts.join('; ');
}

/** What a broker does at startup with a batch failing its CRC in a segment recovered as `s` says. */
export function startupCrcText(s: StartupRecovery): string {
  switch (s.kind) {
    case 'recovered':
      return 'at startup a broker cuts the segment at this batch and deletes every later segment (LogLoader.recoverLog; LogSegment.recover: RecordBatch.ensureValid checks the CRC)';
    case 'recovered-alone':
      return 'at startup a broker recovers this segment alone, its .index being missing, and cuts it at this batch (LogLoader.loadSegmentFiles, LogSegment.recover)';
    case 'clean-shutdown':
      return 'a broker does not check it at startup (clean shutdown: LogLoader.recoverLog recovers no segment)';
    case 'below-recovery-point':
      return `a broker does not check it at startup (the segment lies below the recovery point ${s.recoveryPoint}: LogLoader.recoverLog recovers only the segments from the one holding it on)`;
  }
}

/**
 * How a broker frames the entry at a byte position of a `.log` (Kafka `FileLogInputStream.nextBatch`,
 * 2.8–4.x), from its 12-byte log header and magic byte:
 * - `short`: fewer than 17 bytes are left, nextBatch returns nothing (the segment's batches end there);
 * - `size-below-minimum`: the size field is below 14 (`LegacyRecord.RECORD_OVERHEAD_V0`): nextBatch
 *   throws CorruptRecordException;
 * - `past-end`: the size field reaches past the end of the file (`position > end - LOG_OVERHEAD - size`):
 *   nextBatch returns nothing, no error: the segment's batches end there;
 * - `framed`: anything else is taken for an entry of `size` + 12 bytes whatever it holds (magic below 2:
 *   a legacy entry, else a v2 batch); `magic` is that byte (signed).
 * `size` is the signed int32 size field; `remaining` the bytes from the position to the end of the file.
 */
export type BrokerFraming =
  | { kind: 'short'; remaining: number }
  | { kind: 'size-below-minimum'; size: number; remaining: number }
  | { kind: 'past-end'; size: number; magic: number; remaining: number }
  | { kind: 'framed'; size: number; magic: number; remaining: number };

/** Bytes of a log header up to and including the magic byte (offset 8, size 4, epoch 4, magic 1). */
const HEADER_UP_TO_MAGIC = 17;

/**
 * {@link BrokerFraming} of an entry from its size field and magic byte (both read from the file) and
 * the bytes `remaining` from its position to the end of the file (FileLogInputStream.nextBatch).
 */
export function brokerFraming(size: number, magic: number, remaining: number): BrokerFraming {
  if (remaining <= HEADER_UP_TO_MAGIC) return { kind: 'short', remaining };
  if (size < 14) return { kind: 'size-below-minimum', size, remaining };
  if (size > remaining - 12) return { kind: 'past-end', size, magic, remaining };
  return { kind: 'framed', size, magic, remaining };
}

/** Where the bytes a broker cannot frame lie, and the offsets around them (see {@link framingConsequence}). */
export interface FramingPlace {
  /** The offset a consumer reading in order stands at when it reaches them (after the last batch before them). */
  failAt: bigint;
  /**
   * The offset of the segment's first `.index` entry pointing past them: a fetch at it or later starts after
   * them (LogSegment.translateOffset); null when there is none.
   */
  indexResumeAt: bigint | null;
  /** The next segment's base offset (LocalLog.read goes on to it when this segment yields nothing); null in the last segment. */
  nextSegmentAt: bigint | null;
  /**
   * In the last segment, the log end offset (LogSegment.readNextOffset, from the last `.index` entry): when it is
   * at or below `failAt` and no `.index` entry lies past the bytes, a broker loading the log walks over them.
   */
  logEnd?: bigint;
}

/**
 * What a broker and a consumer do at bytes of a segment that a broker frames as {@link BrokerFraming}
 * says, reached by a consumer reading in order at `p.failAt` (Kafka 2.8–4.x: FileLogInputStream.nextBatch,
 * LogSegment.read, LocalLog.read, ReplicaManager.readFromLocalLog, ByteBufferLogInputStream.nextBatchSize
 * (MemoryRecords reads fetch responses with a maximum size of Integer.MAX_VALUE), FetchCollector,
 * CompletedFetch). Lower case, no final period; for `__cluster_metadata` what a KRaft node does instead.
 */
export function framingConsequence(f: BrokerFraming, p: FramingPlace, topic?: string): string {
  const F = p.failAt;
  if (topic === KRAFT_METADATA_TOPIC) {
    if (f.kind === 'framed') return consumerStopsAt(F, undefined, false, topic);
    return `no consumer reads ${KRAFT_METADATA_TOPIC} (only KRaft voters and observers fetch it: KafkaRaftClient); ${f.kind === 'size-below-minimum' ? `a fetch from offset ${F} fails (FileLogInputStream.nextBatch throws CorruptRecordException)` : `a fetch from offset ${F} finds nothing more in this segment (FileLogInputStream.nextBatch returns nothing, LocalLog.read)`}`;
  }
  if (f.kind === 'framed') {
    const entry = `a broker takes these bytes for an entry of ${f.size + 12} bytes, as their size field says (FileLogInputStream.nextBatch), and serves it to a fetch that reaches it (unless the offsets its header claims lie below the fetch offset: then it passes over it and frames the bytes after it as the next entry)`;
    return `${entry}; ${framedConsumerText(f.magic, F)}`;
  }
  if (p.logEnd !== undefined && p.indexResumeAt === null && p.nextSegmentAt === null && F >= p.logEnd) {
    // LogSegment.readNextOffset walks from the last .index entry, before them, over them to find the log end.
    if (f.kind === 'size-below-minimum') {
      return `they lie at the log end offset ${p.logEnd} (after the last batch before them): a broker loading this log without recovering the segment (clean shutdown) walks over their size field, ${f.size}, below the 14-byte minimum, to find its log end and throws CorruptRecordException (LogSegment.readNextOffset, FileLogInputStream.nextBatch), which LogManager.loadLogs does not catch, so it does not start; one that recovers the segment cuts it there (LogSegment.recover), and a consumer then waits at offset ${F}`;
    }
    return `they lie at the log end offset ${p.logEnd} a broker computes (LogSegment.readNextOffset reads the batches before them), so a fetch at offset ${F} returns nothing, no error (LocalLog.read), a consumer waits there, and the bytes after them are never read`;
  }
  const seekTo =
    p.indexResumeAt !== null
      ? `a seek reads on only from offset ${p.indexResumeAt} (a fetch there starts at an .index entry past these bytes)`
      : p.nextSegmentAt !== null
        ? `a seek reads on only from offset ${p.nextSegmentAt} (the next segment)`
        : 'no seek within this segment gets past them (every fetch in it walks over them)';
  if (f.kind === 'size-below-minimum') {
    return (
      `a broker's read that walks over their size field, ${f.size}, below the 14-byte minimum, throws CorruptRecordException (FileLogInputStream.nextBatch): a fetch at offset ${F} fails with CORRUPT_MESSAGE (ReplicaManager.readFromLocalLog) ` +
      `and the consumer throws "Encountered corrupt message when fetching offset ${F}" (FetchCollector), whatever check.crcs; a consumer that got these bytes at the end of an earlier fetch fails on them itself ` +
      `(ByteBufferLogInputStream.nextBatchSize: "Record size ${f.size} is less than the minimum record overhead (14)"; CompletedFetch: "If needed, please seek past the record"); ${seekTo}`
    );
  }
  const what = f.kind === 'short' ? `only ${f.remaining} bytes are left, too few for a batch header` : `their size field, ${f.size}, reaches past the end of the file (${f.remaining} bytes left)`;
  const where =
    (p.nextSegmentAt !== null
      ? `LocalLog.read goes on to the next segment: a consumer at offset ${F} silently receives offset ${p.nextSegmentAt} next and the rest of this segment (offsets ${F}..${p.nextSegmentAt - 1n}) is skipped, no error`
      : `LocalLog.read returns no records and no error: a consumer waits at offset ${F} (a later segment, once rolled, is where it goes on)`) +
    (p.indexResumeAt !== null ? `; a fetch at offset ${p.indexResumeAt} or later reads on from the .index entry past these bytes` : '');
  // A consumer that gets the header in a fetch response checks the magic byte before comparing the size with what is left.
  const bytesAtConsumer =
    f.kind === 'past-end' && (f.magic < 0 || f.magic > 2)
      ? `; a consumer that gets this header at the end of an earlier fetch fails on its magic byte ${f.magic} whatever check.crcs (ByteBufferLogInputStream.nextBatchSize: CorruptRecordException "Invalid magic found in record")`
      : '; a consumer that gets this header at the end of an earlier fetch takes it for a partial batch and stops before it, no error (ByteBufferLogInputStream.nextBatch)';
  return `${what}: a broker takes them for the end of the segment's batches, no error (FileLogInputStream.nextBatch returns nothing), so a fetch at offset ${F} finds nothing in this segment (LogSegment.read) and ${where}${bytesAtConsumer}`;
}

/**
 * What a consumer does with an entry a broker serves as it is (its size field fits the file) but that is not a
 * valid batch, reached at offset `failAt`: a magic byte other than 0, 1 or 2 fails in every consumer
 * (ByteBufferLogInputStream.nextBatchSize: "Invalid magic found in record"), else a consumer with check.crcs=true
 * fails at its checks (CompletedFetch.maybeEnsureValid, RecordBatch.ensureValid). Lower case.
 */
export function framedConsumerText(magic: number, failAt: bigint): string {
  if (magic < 0 || magic > 2) return `a consumer fails on its magic byte ${magic} at offset ${failAt} whatever check.crcs (ByteBufferLogInputStream.nextBatchSize: CorruptRecordException "Invalid magic found in record"; CompletedFetch: "If needed, please seek past the record")`;
  return `${consumerStopsAt(failAt, undefined, true)} (RecordBatch.ensureValid checks its size and CRC), and one with check.crcs=false reads whatever its records decode to or fails on them`;
}
