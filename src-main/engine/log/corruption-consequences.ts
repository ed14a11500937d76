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
 * offset F (Kafka CompletedFetch)`). With `crcOnly` false (bytes that are not a batch Kafka can read:
 * garbage, a cut batch, an unknown magic) every consumer stops there, whatever `check.crcs`
 * (`ByteBufferLogInputStream.nextBatch` throws CorruptRecordException). Lower case; callers
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
  const who = crcOnly ? 'a consumer with check.crcs=true (the default)' : 'a consumer (whatever check.crcs: ByteBufferLogInputStream.nextBatch cannot read the bytes)';
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
