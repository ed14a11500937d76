/**
 * `__consumer_offsets` records as `kafka-dump-log.sh --offsets-decoder` prints them (Kafka 4's
 * DumpLogSegments.OffsetsMessageParser: the generated *JsonConverter of each record type, field names
 * camelCase as JsonConverterGenerator writes them: FieldSpec.camelCaseName, the first letter
 * lower-cased), on hand-built bytes; the expected texts are written from the schemas in
 * group-coordinator/src/main/resources/common/message/*.json, not from the decoder.
 */
import { describe, expect, it } from 'vitest';
import { decodeInternalRecordText } from '../../../src-main/engine/decode/internal/dump-log-text.ts';
import { bytes } from '../../support/kafka-bytes.ts';

const topicId = Uint8Array.from([0xab, 0xcd, 0xef, 0x12, 0x34, 0x56, 0x78, 0x90, 0xab, 0xcd, 0xef, 0x12, 0x34, 0x56, 0x78, 0x90]);

describe('dump-log text of __consumer_offsets records', () => {
  it('ConsumerGroupCurrentMemberAssignment (type 8): camelCase names, Uuid as Uuid.toString (base64url)', () => {
    const key = bytes().i16(8).str('cg').str('m1').done();
    const value = bytes().i16(0).i32(5).i32(4).i8(0).carr(1).uuid(topicId).cints([0, 3]).t0().carr(0).t0().done();
    expect(decodeInternalRecordText('offsets', key, value, 0n)).toEqual({
      key: '{"type":"8","data":{"groupId":"cg","memberId":"m1"}}',
      payload: '{"version":"0","data":{"memberEpoch":5,"previousMemberEpoch":4,"state":0,"assignedPartitions":[{"topicId":"q83vEjRWeJCrze8SNFZ4kA","partitions":[0,3]}],"partitionsPendingRevocation":[]}}',
      error: null,
    });
  });

  it('ConsumerGroupMetadata (type 3): MetadataHash (tag 0, Kafka 4.1+) printed when not its default 0', () => {
    const key = bytes().i16(3).str('cg').done();
    const withHash = bytes().i16(0).i32(7).tags([0, bytes().i64(-5n).done()]).done();
    expect(decodeInternalRecordText('offsets', key, withHash, 0n).payload).toBe('{"version":"0","data":{"epoch":7,"metadataHash":-5}}');
    expect(decodeInternalRecordText('offsets', key, bytes().i16(0).i32(7).t0().done(), 0n).payload).toBe('{"version":"0","data":{"epoch":7}}');
  });

  it('strings with control characters escaped as Jackson does (upper-case hex); a tombstone is <DELETE>', () => {
    const key = bytes().i16(1).str('g\u001f"x').str('t').i32(2).done();
    expect(decodeInternalRecordText('offsets', key, null, 0n)).toEqual({ key: '{"type":"1","data":{"group":"g\\u001F\\"x","topic":"t","partition":2}}', payload: '<DELETE>', error: null });
  });

  it('a tagged field this decoder does not know is not printed, as Kafka prints only what its schema knows (JsonConverterGenerator)', () => {
    const key = bytes().i16(3).str('cg').done();
    const v = bytes().i16(0).i32(7).tags([9, Uint8Array.from([1, 2])]).done();
    expect(decodeInternalRecordText('offsets', key, v, 0n).payload).toBe('{"version":"0","data":{"epoch":7}}');
  });

  it('AssignmentEpochs (tag 0 of a TopicPartitions entry, KIP-1251, Kafka 4.3+): printed when not null, only in the current assignment', () => {
    const key = bytes().i16(8).str('cg').str('m1').done();
    const value = bytes().i16(0).i32(5).i32(4).i8(0)
      .carr(1).uuid(topicId).cints([0, 3]).tags([0, bytes().cints([5, 4]).done()])
      .carr(1).uuid(topicId).cints([7]).t0()
      .t0().done();
    expect(decodeInternalRecordText('offsets', key, value, 0n).payload).toBe(
      '{"version":"0","data":{"memberEpoch":5,"previousMemberEpoch":4,"state":0,"assignedPartitions":[{"topicId":"q83vEjRWeJCrze8SNFZ4kA","partitions":[0,3],"assignmentEpochs":[5,4]}],"partitionsPendingRevocation":[{"topicId":"q83vEjRWeJCrze8SNFZ4kA","partitions":[7]}]}}',
    );
  });

  it('AssignmentTimestamp (tag 0, KIP-1263, Kafka 4.3+) of the target assignment metadata (types 6, 12, 20), printed when not 0', () => {
    const v = bytes().i16(0).i32(9).tags([0, bytes().i64(1700000000123n).done()]).done();
    expect(decodeInternalRecordText('offsets', bytes().i16(6).str('cg').done(), v, 0n).payload).toBe('{"version":"0","data":{"assignmentEpoch":9,"assignmentTimestamp":1700000000123}}');
    expect(decodeInternalRecordText('offsets', bytes().i16(12).str('sg').done(), v, 0n).payload).toBe('{"version":"0","data":{"assignmentEpoch":9,"assignmentTimestamp":1700000000123}}');
    expect(decodeInternalRecordText('offsets', bytes().i16(20).str('app').done(), v, 0n).payload).toBe('{"version":"0","data":{"assignmentEpoch":9,"assignmentTimestamp":1700000000123}}');
    expect(decodeInternalRecordText('offsets', bytes().i16(6).str('cg').done(), bytes().i16(0).i32(9).tags([0, bytes().i64(0n).done()]).done(), 0n).payload).toBe('{"version":"0","data":{"assignmentEpoch":9}}');
  });

  it('StreamsGroupMetadataValue tags 0-3 (Kafka 4.2+/4.4+) and the AssignmentEpochs of a streams task set (Kafka 4.2+)', () => {
    const key = bytes().i16(17).str('app').done();
    const cfg = bytes().carr(1).cstr('num.standby.replicas').cstr('1').t0().done();
    const v = bytes().i16(0).i32(4).i64(-2n).tags([0, bytes().i32(3).done()], [1, cfg], [2, bytes().i32(-2).done()], [3, bytes().i32(-1).done()]).done();
    expect(decodeInternalRecordText('offsets', key, v, 0n).payload).toBe(
      '{"version":"0","data":{"epoch":4,"metadataHash":-2,"validatedTopologyEpoch":3,"lastAssignmentConfigs":[{"key":"num.standby.replicas","value":"1"}],"storedDescriptionTopologyEpoch":-2}}',
    );
    const k22 = bytes().i16(22).str('app').str('m').done();
    const task = (epochs: boolean) => bytes().carr(1).cstr('0').cints([1, 2]).raw(epochs ? bytes().tags([0, bytes().cints([4, 4]).done()]).done() : bytes().t0().done()).done();
    const v22 = bytes().i16(0).i32(4).i32(3).i8(0).raw(task(true)).carr(0).carr(0).carr(0).carr(0).carr(0).t0().done();
    expect(decodeInternalRecordText('offsets', k22, v22, 0n).payload).toBe(
      '{"version":"0","data":{"memberEpoch":4,"previousMemberEpoch":3,"state":0,"activeTasks":[{"subtopologyId":"0","partitions":[1,2],"assignmentEpochs":[4,4]}],"standbyTasks":[],"warmupTasks":[],"activeTasksPendingRevocation":[],"standbyTasksPendingRevocation":[],"warmupTasksPendingRevocation":[]}}',
    );
  });

  it('OffsetCommitValue v4: leaderEpoch in schema order (was printed after commitTimestamp); topicId (tag 0, Kafka 4.1+, KAFKA-19141) when not the zero Uuid', () => {
    const key = bytes().i16(1).str('g').str('orders').i32(0).done();
    const v = bytes().i16(4).i64(42n).i32(3).cstr('').i64(1700000000000n).tags([0, bytes().uuid(topicId).done()]).done();
    expect(decodeInternalRecordText('offsets', key, v, 0n).payload).toBe('{"version":"4","data":{"offset":42,"leaderEpoch":3,"metadata":"","commitTimestamp":1700000000000,"topicId":"q83vEjRWeJCrze8SNFZ4kA"}}');
    const zero = bytes().i16(4).i64(42n).i32(3).cstr('').i64(1700000000000n).tags([0, bytes().uuid(new Uint8Array(16)).done()]).done();
    expect(decodeInternalRecordText('offsets', key, zero, 0n).payload).toBe('{"version":"4","data":{"offset":42,"leaderEpoch":3,"metadata":"","commitTimestamp":1700000000000}}');
  });

  it('GroupMetadataValue v2+: currentStateTimestamp before members, in schema order', () => {
    const key = bytes().i16(2).str('g').done();
    const v = bytes().i16(2).str('consumer').i32(1).str('range').str('m1').i64(77n).arr(0).done();
    expect(decodeInternalRecordText('offsets', key, v, 0n).payload).toBe('{"version":"2","data":{"protocolType":"consumer","generation":1,"protocol":"range","leader":"m1","currentStateTimestamp":77,"members":[]}}');
  });

  it("a record type the decoder does not know: dump-log's 'Unknown record type N at offset O, skipping.' as the key, no payload (GroupCoordinatorRecordSerde, DumpLogSegments)", () => {
    // the value is not read at all, even when it is too short to hold a version
    expect(decodeInternalRecordText('offsets', bytes().i16(99).str('g').done(), Uint8Array.of(1), 812n)).toEqual({ key: 'Unknown record type 99 at offset 812, skipping.', payload: null, error: null, unknownType: 99 });
    expect(decodeInternalRecordText('offsets', bytes().i16(18).done(), null, 3n).key).toBe('Unknown record type 18 at offset 3, skipping.');
    // a known type whose key does not decode is still this tool's error
    expect(decodeInternalRecordText('offsets', bytes().i16(2).done(), null, 3n).error).toMatch(/^key: byte 2: /);
    // __transaction_state knows type 0 only (TransactionCoordinatorRecordSerde)
    expect(decodeInternalRecordText('transactions', bytes().i16(1).str('t').done(), null, 7n)).toEqual({ key: 'Unknown record type 1 at offset 7, skipping.', payload: null, error: null, unknownType: 1 });
  });
});
