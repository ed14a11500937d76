/**
 * `__transaction_state` keys and values on hand-built bytes; the expected JSON was written from
 * Kafka's TransactionLogKey/Value schemas and the JSON converter rules, not from the decoder.
 */
import { describe, expect, it } from 'vitest';
import { DecodeError } from '../../../src-main/engine/decode/decode-error.ts';
import {
  decodeTransactionLogKey,
  decodeTransactionLogRecord,
  decodeTransactionLogValue,
  transactionLogKeyText,
  transactionLogValueText,
  transactionStateName,
} from '../../../src-main/engine/decode/internal/transaction-log.ts';
import { bytes } from '../../support/kafka-bytes.ts';

describe('transaction log', () => {
  it('key: record type 0 and the classic transactional id string', () => {
    const k = decodeTransactionLogKey(bytes().i16(0).str('payments-tx-1').done());
    expect(k).toEqual({ type: 0, data: { transactionalId: 'payments-tx-1' } });
    expect(transactionLogKeyText(k)).toBe('{"type":"0","data":{"transactionalId":"payments-tx-1"}}');
  });

  it('value v0 (non-flexible) with partitions', () => {
    const v = bytes().i16(0).i64(42n).i16(3).i32(60000).i8(1).arr(2).str('orders').arr(2).i32(0).i32(2).str('audit').arr(1).i32(5).i64(1700000000123n).i64(1700000000001n).done();
    const dec = decodeTransactionLogValue(v);
    expect(dec.version).toBe(0);
    expect(transactionLogValueText(dec)).toBe(
      '{"version":"0","data":{"producerId":42,"producerEpoch":3,"transactionTimeoutMs":60000,"transactionStatus":"Ongoing","transactionPartitions":[{"topic":"orders","partitionIds":[0,2]},{"topic":"audit","partitionIds":[5]}],"transactionLastUpdateTimestampMs":1700000000123,"transactionStartTimestampMs":1700000000001}}',
    );
    expect(transactionStateName(dec.data.transactionStatus as number)).toBe('Ongoing');
  });

  it('value v1 (flexible): tagged fields in schema order, only when not default', () => {
    const tagPrev = bytes().i64(41n).done();
    const tagNext = bytes().i64(-1n).done(); // the default: not printed
    const tagTv = bytes().i16(2).done();
    const v = bytes().i16(1).i64(9007199254740993n).i16(0).i32(900000).i8(4).carr(null).i64(1700000000200n).i64(-1n).tags([0, tagPrev], [1, tagNext], [2, tagTv]).done();
    const dec = decodeTransactionLogValue(v);
    expect(dec.data.producerId).toBe(9007199254740993n);
    expect(transactionLogValueText(dec)).toBe(
      '{"version":"1","data":{"producerId":9007199254740993,"previousProducerId":41,"producerEpoch":0,"transactionTimeoutMs":900000,"transactionStatus":"CompleteCommit","transactionPartitions":null,"transactionLastUpdateTimestampMs":1700000000200,"transactionStartTimestampMs":-1,"clientTransactionVersion":2}}',
    );
    const plain = bytes().i16(1).i64(7n).i16(1).i32(1000).i8(0).carr(1).cstr('t').cints([3]).t0().i64(5n).i64(4n).t0().done();
    expect(transactionLogValueText(decodeTransactionLogValue(plain))).toBe(
      '{"version":"1","data":{"producerId":7,"producerEpoch":1,"transactionTimeoutMs":1000,"transactionStatus":"Empty","transactionPartitions":[{"topic":"t","partitionIds":[3]}],"transactionLastUpdateTimestampMs":5,"transactionStartTimestampMs":4}}',
    );
  });

  it('transactionStatus: the state name as dump-log prints it since Kafka 4.4 (KAFKA-20712), the id as a string when unknown', () => {
    const v = (status: number) => bytes().i16(0).i64(1n).i16(0).i32(1000).i8(status).arr(0).i64(5n).i64(4n).done();
    const texts = [2, 3, 5, 6, 7, 8, -1].map((s) => /"transactionStatus":("[^"]*"|[^,]*)/.exec(transactionLogValueText(decodeTransactionLogValue(v(s))))![1]);
    expect(texts).toEqual(['"PrepareCommit"', '"PrepareAbort"', '"CompleteAbort"', '"Dead"', '"PrepareEpochFence"', '"8"', '"-1"']);
    // the decoded data keeps the id (the SQL table's state_id)
    expect(decodeTransactionLogValue(v(8)).data.transactionStatus).toBe(8);
  });

  it('NextProducerEpoch (tag 3, Kafka 4.1+, KIP-939) is a known field printed after producerEpoch, not an unknown tag', () => {
    const v = bytes().i16(1).i64(7n).i16(1).i32(1000).i8(1).carr(0).i64(5n).i64(4n).tags([1, bytes().i64(8n).done()], [3, bytes().i16(2).done()]).done();
    const dec = decodeTransactionLogValue(v);
    expect(dec.unknownTaggedFields).toEqual([]);
    expect(transactionLogValueText(dec)).toBe(
      '{"version":"1","data":{"producerId":7,"nextProducerId":8,"producerEpoch":1,"nextProducerEpoch":2,"transactionTimeoutMs":1000,"transactionStatus":"Ongoing","transactionPartitions":[],"transactionLastUpdateTimestampMs":5,"transactionStartTimestampMs":4}}',
    );
    // its default (-1) is not printed
    const dflt = bytes().i16(1).i64(7n).i16(1).i32(1000).i8(1).carr(0).i64(5n).i64(4n).tags([3, bytes().i16(-1).done()]).done();
    expect(transactionLogValueText(decodeTransactionLogValue(dflt))).not.toContain('nextProducerEpoch');
  });

  it('keeps unknown tags and reports them', () => {
    const v = bytes().i16(1).i64(7n).i16(1).i32(1000).i8(0).carr(0).i64(5n).i64(4n).tags([9, Uint8Array.from([1, 2])]).done();
    const dec = decodeTransactionLogValue(v);
    expect(dec.unknownTaggedFields).toEqual([{ path: '', tag: 9, data: Uint8Array.from([1, 2]) }]);
    // not printed: the JsonConverter knows only the schema's fields
    expect(transactionLogValueText(dec)).toBe('{"version":"1","data":{"producerId":7,"producerEpoch":1,"transactionTimeoutMs":1000,"transactionStatus":"Empty","transactionPartitions":[],"transactionLastUpdateTimestampMs":5,"transactionStartTimestampMs":4}}');
  });

  it('tombstone prints <DELETE>; errors name the position', () => {
    const rec = decodeTransactionLogRecord(bytes().i16(0).str('x').done(), null);
    expect(rec.value).toBeNull();
    expect(transactionLogValueText(rec.value)).toBe('<DELETE>');
    const err = (fn: () => unknown) => {
      try {
        fn();
      } catch (e) {
        expect(e).toBeInstanceOf(DecodeError);
        return (e as DecodeError).message;
      }
      throw new Error('no error');
    };
    expect(err(() => decodeTransactionLogKey(bytes().i16(1).str('x').done()))).toMatch(/Unknown record type 1/);
    expect(err(() => decodeTransactionLogKey(null))).toMatch(/without a key/);
    expect(err(() => decodeTransactionLogValue(bytes().i16(2).done()))).toMatch(/Can't read version 2 of TransactionLogValue/);
    expect(err(() => decodeTransactionLogValue(bytes().i16(0).i64(1n).i16(0).done()))).toMatch(/^byte 12: transactionTimeoutMs: needs 4 bytes, 0 left/);
    // bytes after the last field are ignored and invalid UTF-8 reads as U+FFFD, as the coordinator reads them
    // (generated read + Readable.readString = new String(bytes, UTF_8); TransactionCoordinatorRecordSerde)
    expect(decodeTransactionLogKey(bytes().i16(0).str('x').i8(0).done()).data.transactionalId).toBe('x');
    expect(decodeTransactionLogKey(bytes().i16(0).i16(2).raw(Uint8Array.of(0x74, 0xc3)).done()).data.transactionalId).toBe('t\ufffd');
    expect(decodeTransactionLogValue(bytes().i16(0).i64(1n).i16(0).i32(1000).i8(0).i32(0).i64(5n).i64(4n).i16(7).done()).data.producerId).toBe(1n);
    expect(transactionStateName(7)).toBe('PrepareEpochFence');
    expect(transactionStateName(9)).toBe('Unknown(9)');
  });
});
