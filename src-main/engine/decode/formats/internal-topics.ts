/**
 * Kafka's internal topics as formats of the decode layer, claimed by topic name (confidence 1):
 * - `__consumer_offsets` ({@link consumerOffsetsFormat}): keys `{type, recordType, data}`, values
 *   `{version, data}` (the group coordinator's records, `internal/consumer-offsets.ts`);
 * - `__transaction_state` ({@link transactionLogFormat}): TransactionLogKey/Value (`internal/transaction-log.ts`);
 * - `__cluster_metadata` ({@link clusterMetadataFormat}): `{"type":"TOPIC_RECORD","version":0,"data":{…}}`
 *   exactly as `kafka-dump-log.sh --cluster-metadata-decoder` prints it, and KRaft control records
 *   (`internal/cluster-metadata.ts`).
 * A null value prints `<DELETE>` as dump-log's decoders print a tombstone (JSON `null`). A value is
 * read by the record type its key gives, so the value side needs `ctx.key`.
 */
import { DecodeError } from '../decode-error.ts';
import { FormatError, type DecodeContext, type Format, type FormatOutput } from '../format.ts';
import { parseJsonExact } from '../json-text.ts';
import { clusterMetadataJsonText, decodeClusterMetadataRecord, decodeKRaftControlRecord, isKRaftControlType, kraftControlJsonText, unknownTagsText } from '../internal/cluster-metadata.ts';
import { decodeConsumerOffsetsKey, decodeConsumerOffsetsValue, summarizeConsumerOffsetsKey, summarizeConsumerOffsetsValue } from '../internal/consumer-offsets.ts';
import { decodeTransactionLogKey, decodeTransactionLogValue, transactionStateName } from '../internal/transaction-log.ts';

/** What dump-log prints for a tombstone. */
const DELETE: FormatOutput = { json: null, display: '<DELETE>' };

function keyOf(ctx: DecodeContext, topic: string): Uint8Array {
  if (!ctx.key) throw new FormatError('invalid', 0, `a ${topic} value is read by its key's record type, and this record has no key`);
  return ctx.key;
}

function claims(name: string, what: string): Format['detect'] {
  const claim = { confidence: 1, reason: `${name} is ${what}` };
  return (_b, ctx) => (ctx.topic === name ? claim : null);
}

export const consumerOffsetsFormat: Format = {
  name: 'consumer-offsets',
  title: '__consumer_offsets (group coordinator)',
  topicOnly: true,
  detect: claims('__consumer_offsets', "Kafka's group coordinator log: offset commits and group metadata"), // GroupCoordinatorRecordSerde
  decode(b, ctx): FormatOutput {
    if (ctx.side === 'key') {
      const k = decodeConsumerOffsetsKey(b);
      return { json: k, display: summarizeConsumerOffsetsKey(k) };
    }
    let k;
    try {
      k = decodeConsumerOffsetsKey(keyOf(ctx, '__consumer_offsets'));
    } catch (e) {
      if (e instanceof DecodeError) throw new FormatError('invalid', 0, `the key does not decode, so the value's type is unknown (key: ${e.reason})`);
      throw e;
    }
    const v = decodeConsumerOffsetsValue(k.type, b);
    return { json: v, display: summarizeConsumerOffsetsValue(k, v) };
  },
  decodeNull: (ctx) => (ctx.side === 'value' ? DELETE : { json: null }),
};

export const transactionLogFormat: Format = {
  name: 'transaction-log',
  title: '__transaction_state (transaction coordinator)',
  topicOnly: true,
  detect: claims('__transaction_state', "Kafka's transaction coordinator log"),
  decode(b, ctx): FormatOutput {
    if (ctx.side === 'key') {
      const k = decodeTransactionLogKey(b);
      return { json: k, display: `transactionalId ${k.data.transactionalId}` };
    }
    const v = decodeTransactionLogValue(b);
    const d = v.data as { ProducerId?: bigint; producerId?: bigint; ProducerEpoch?: number; producerEpoch?: number; TransactionStatus?: number; transactionStatus?: number };
    const status = d.transactionStatus ?? d.TransactionStatus;
    return { json: v, display: `${status !== undefined ? transactionStateName(status) : '?'} · producerId ${String(d.producerId ?? d.ProducerId)} · epoch ${d.producerEpoch ?? d.ProducerEpoch} · v${v.version}` };
  },
  decodeNull: (ctx) => (ctx.side === 'value' ? DELETE : { json: null }),
};

export const clusterMetadataFormat: Format = {
  name: 'cluster-metadata',
  title: '__cluster_metadata (KRaft)',
  topicOnly: true,
  detect: claims('__cluster_metadata', 'the KRaft metadata log'),
  decode(b, ctx): FormatOutput {
    if (ctx.side === 'key') return { json: null, display: '' };
    if (ctx.controlType !== undefined) {
      if (!isKRaftControlType(ctx.controlType)) throw new FormatError('invalid', 0, `control type ${ctx.controlType} is not a KRaft control record`);
      const rec = decodeKRaftControlRecord(ctx.controlType, b);
      const text = kraftControlJsonText(ctx.controlType, rec);
      return { json: parseJsonExact(text), display: `${rec.label} ${text}` };
    }
    const rec = decodeClusterMetadataRecord(b);
    const text = clusterMetadataJsonText(rec);
    // dump-log's text; tagged fields the version does not define (which it does not print) as a note outside `data`
    const json = parseJsonExact(text) as Record<string, unknown>;
    if (rec.unknownTaggedFields.length > 0) json.unknownTaggedFields = parseJsonExact(unknownTagsText(rec.unknownTaggedFields));
    return { json, display: text };
  },
};

/** The internal-topic formats. */
export const INTERNAL_TOPIC_FORMATS: Format[] = [consumerOffsetsFormat, transactionLogFormat, clusterMetadataFormat];
