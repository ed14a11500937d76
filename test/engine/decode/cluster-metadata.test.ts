/**
 * KRaft metadata records and control records on hand-built bytes. Each expected JSON line was written
 * from Kafka's schema JSON files and its JsonConverterGenerator rules (schema order, tagged fields only
 * when not default, Uuid as base64url, float64 as Java's Double.toString), not from the decoder.
 */
import { clusterMetadataFormat } from '../../../src-main/engine/decode/formats/internal-topics.ts';
import { describe, expect, it } from 'vitest';
import { DecodeError } from '../../../src-main/engine/decode/decode-error.ts';
import {
  clusterMetadataJsonText,
  decodeClusterMetadataRecord,
  decodeKRaftControlRecord,
  kraftControlJsonText,
  METADATA_RECORDS,
  metadataTypeName,
} from '../../../src-main/engine/decode/internal/cluster-metadata.ts';
import { javaDoubleText, jacksonString } from '../../../src-main/engine/decode/internal/message-schema.ts';
import { bytes, uuidB64 } from '../../support/kafka-bytes.ts';

const U1 = Uint8Array.from({ length: 16 }, (_, i) => i);
const U2 = Uint8Array.from({ length: 16 }, (_, i) => 0xf0 + i);
const U3 = Uint8Array.from({ length: 16 }, (_, i) => 0x3e + i * 7);
const u1 = uuidB64(U1);
const u2 = uuidB64(U2);
const u3 = uuidB64(U3);

/** A metadata frame: frame version 1, apiKey, version. */
const frame = (apiKey: number, version: number) => bytes().uv(1).uv(apiKey).uv(version);
const line = (value: Uint8Array) => clusterMetadataJsonText(decodeClusterMetadataRecord(value));
const i32 = (n: number) => bytes().i32(n).done();
const i8 = (n: number) => bytes().i8(n).done();

function decodeError(fn: () => unknown): DecodeError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(DecodeError);
    return e as DecodeError;
  }
  throw new Error('expected a DecodeError');
}

describe('cluster metadata records', () => {
  it('names every type as MetadataRecordType does', () => {
    expect([...METADATA_RECORDS.keys()].sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29]);
    expect(metadataTypeName('ZkMigrationStateRecord')).toBe('ZK_MIGRATION_STATE_RECORD');
    expect(metadataTypeName('NoOpRecord')).toBe('NO_OP_RECORD');
    expect(metadataTypeName('ClearElrRecord')).toBe('CLEAR_ELR_RECORD');
    expect(metadataTypeName('UnregisterControllerRecord')).toBe('UNREGISTER_CONTROLLER_RECORD');
  });

  it('TopicRecord v0', () => {
    const v = frame(2, 0).cstr('orders').uuid(U1).t0().done();
    expect(line(v)).toBe(`{"type":"TOPIC_RECORD","version":0,"data":{"name":"orders","topicId":"${u1}"}}`);
    const rec = decodeClusterMetadataRecord(v);
    expect(rec).toMatchObject({ apiKey: 2, name: 'TopicRecord', version: 0, data: { name: 'orders', topicId: u1 }, unknownTaggedFields: [] });
  });

  it('PartitionRecord v0 with the tagged LeaderRecoveryState in schema order', () => {
    const v = frame(3, 0).i32(3).uuid(U1).cints([1, 2, 3]).cints([1, 2]).cints([]).cints([]).i32(1).i32(5).i32(7).tags([0, i8(1)]).done();
    expect(line(v)).toBe(
      `{"type":"PARTITION_RECORD","version":0,"data":{"partitionId":3,"topicId":"${u1}","replicas":[1,2,3],"isr":[1,2],"removingReplicas":[],"addingReplicas":[],"leader":1,"leaderRecoveryState":1,"leaderEpoch":5,"partitionEpoch":7}}`,
    );
  });

  it('PartitionRecord v1 adds Directories; v2 the tagged ELR fields (printed when not null, even empty)', () => {
    const v1 = frame(3, 1).i32(0).uuid(U1).cints([1, 2]).cints([1]).cints([]).cints([]).i32(1).i32(0).i32(0).carr(2).uuid(U2).uuid(U3).t0().done();
    expect(line(v1)).toBe(
      `{"type":"PARTITION_RECORD","version":1,"data":{"partitionId":0,"topicId":"${u1}","replicas":[1,2],"isr":[1],"removingReplicas":[],"addingReplicas":[],"leader":1,"leaderEpoch":0,"partitionEpoch":0,"directories":["${u2}","${u3}"]}}`,
    );
    const elr = bytes().cints([2]).done();
    const lke = bytes().cints([]).done();
    const v2 = frame(3, 2).i32(0).uuid(U1).cints([1]).cints([1]).cints([]).cints([]).i32(1).i32(0).i32(0).carr(1).uuid(U2).tags([1, elr], [2, lke]).done();
    expect(line(v2)).toBe(
      `{"type":"PARTITION_RECORD","version":2,"data":{"partitionId":0,"topicId":"${u1}","replicas":[1],"isr":[1],"removingReplicas":[],"addingReplicas":[],"leader":1,"leaderEpoch":0,"partitionEpoch":0,"directories":["${u2}"],"eligibleLeaderReplicas":[2],"lastKnownElr":[]}}`,
    );
  });

  it('PartitionChangeRecord v0–v2: tagged fields by tag, defaults left out, unknown tags kept', () => {
    const v0 = frame(5, 0).i32(4).uuid(U1).tags([0, bytes().cints([1]).done()], [1, i32(-1)], [5, i8(0)]).done();
    expect(line(v0)).toBe(`{"type":"PARTITION_CHANGE_RECORD","version":0,"data":{"partitionId":4,"topicId":"${u1}","isr":[1],"leader":-1,"leaderRecoveryState":0}}`);

    // Leader -2 and LeaderRecoveryState -1 are the defaults: present in the bytes but not printed.
    const v1 = frame(5, 1).i32(4).uuid(U1).tags([1, i32(-2)], [5, i8(-1)], [8, bytes().carr(1).uuid(U2).done()]).done();
    expect(line(v1)).toBe(`{"type":"PARTITION_CHANGE_RECORD","version":1,"data":{"partitionId":4,"topicId":"${u1}","directories":["${u2}"]}}`);

    const v2 = frame(5, 2).i32(4).uuid(U1).tags([2, bytes().cints([1, 2]).done()], [6, bytes().cints([2]).done()], [7, bytes().cints(null).done()]).done();
    expect(line(v2)).toBe(`{"type":"PARTITION_CHANGE_RECORD","version":2,"data":{"partitionId":4,"topicId":"${u1}","replicas":[1,2],"eligibleLeaderReplicas":[2]}}`);

    // Tag 8 (Directories) exists only from v1: in v0 it is an unknown tag, kept with its bytes.
    const unknownTag = bytes().carr(1).uuid(U2).done();
    const v0x = frame(5, 0).i32(4).uuid(U1).tags([8, unknownTag]).done();
    const rec = decodeClusterMetadataRecord(v0x);
    expect(rec.data).toEqual({ partitionId: 4, topicId: u1 });
    expect(rec.unknownTaggedFields).toEqual([{ path: '', tag: 8, data: unknownTag }]);
    // dump-log does not print it (MetadataJsonConverters know only the version's fields)
    expect(clusterMetadataJsonText(rec)).toBe(`{"type":"PARTITION_CHANGE_RECORD","version":0,"data":{"partitionId":4,"topicId":"${u1}"}}`);
    // the inspector keeps it as a note outside data; its display line is dump-log's
    const out = clusterMetadataFormat.decode(v0x, { topic: '__cluster_metadata', side: 'value' }) as { json: Record<string, unknown>; display: string };
    expect(out.display).toBe(clusterMetadataJsonText(rec));
    expect(out.json.unknownTaggedFields).toEqual([{ path: '', tag: 8, data: Buffer.from(unknownTag).toString('base64') }]);
    expect(out.json.data).toEqual({ partitionId: 4, topicId: u1 });
  });

  const endpoint = (name: string, host: string, port: number) => bytes().cstr(name).cstr(host).u16(port).i16(0).t0().done();
  const feature = (name: string, lo: number, hi: number) => bytes().cstr(name).i16(lo).i16(hi).t0().done();

  it('RegisterBrokerRecord v0–v3', () => {
    const ep = endpoint('PLAINTEXT', 'kafka-1', 65535);
    const ft = feature('metadata.version', 1, 25);
    const v0 = frame(0, 0).i32(1).uuid(U1).i64(7n).carr(1).raw(ep).carr(1).raw(ft).cstr(null).bool(true).t0().done();
    const common0 = `"incarnationId":"${u1}","brokerEpoch":7,"endPoints":[{"name":"PLAINTEXT","host":"kafka-1","port":65535,"securityProtocol":0}],"features":[{"name":"metadata.version","minSupportedVersion":1,"maxSupportedVersion":25}]`;
    expect(line(v0)).toBe(`{"type":"REGISTER_BROKER_RECORD","version":0,"data":{"brokerId":1,${common0},"rack":null,"fenced":true}}`);
    const v1 = frame(0, 1).i32(1).uuid(U1).i64(7n).carr(1).raw(ep).carr(1).raw(ft).cstr('r1').bool(false).bool(true).t0().done();
    expect(line(v1)).toBe(`{"type":"REGISTER_BROKER_RECORD","version":1,"data":{"brokerId":1,${common0},"rack":"r1","fenced":false,"inControlledShutdown":true}}`);
    const v2 = frame(0, 2).i32(1).bool(true).uuid(U1).i64(7n).carr(1).raw(ep).carr(1).raw(ft).cstr(null).bool(true).bool(false).t0().done();
    expect(line(v2)).toBe(`{"type":"REGISTER_BROKER_RECORD","version":2,"data":{"brokerId":1,"isMigratingZkBroker":true,${common0},"rack":null,"fenced":true,"inControlledShutdown":false}}`);
    const v3 = frame(0, 3).i32(1).bool(false).uuid(U1).i64(7n).carr(1).raw(ep).carr(1).raw(ft).cstr(null).bool(true).bool(false).tags([0, bytes().carr(1).uuid(U3).done()]).done();
    expect(line(v3)).toBe(`{"type":"REGISTER_BROKER_RECORD","version":3,"data":{"brokerId":1,"isMigratingZkBroker":false,${common0},"rack":null,"fenced":true,"inControlledShutdown":false,"logDirs":["${u3}"]}}`);
    const v3noDirs = frame(0, 3).i32(1).bool(false).uuid(U1).i64(7n).carr(0).carr(0).cstr(null).bool(true).bool(false).t0().done();
    expect(line(v3noDirs)).toBe(`{"type":"REGISTER_BROKER_RECORD","version":3,"data":{"brokerId":1,"isMigratingZkBroker":false,"incarnationId":"${u1}","brokerEpoch":7,"endPoints":[],"features":[],"rack":null,"fenced":true,"inControlledShutdown":false}}`);
  });

  it('BrokerRegistrationChangeRecord v0–v2', () => {
    expect(line(frame(17, 0).i32(1).i64(7n).tags([0, i8(-1)]).done())).toBe(`{"type":"BROKER_REGISTRATION_CHANGE_RECORD","version":0,"data":{"brokerId":1,"brokerEpoch":7,"fenced":-1}}`);
    expect(line(frame(17, 1).i32(1).i64(7n).tags([1, i8(1)]).done())).toBe(`{"type":"BROKER_REGISTRATION_CHANGE_RECORD","version":1,"data":{"brokerId":1,"brokerEpoch":7,"inControlledShutdown":1}}`);
    expect(line(frame(17, 2).i32(1).i64(7n).tags([0, i8(1)], [2, bytes().carr(2).uuid(U1).uuid(U2).done()]).done())).toBe(
      `{"type":"BROKER_REGISTRATION_CHANGE_RECORD","version":2,"data":{"brokerId":1,"brokerEpoch":7,"fenced":1,"logDirs":["${u1}","${u2}"]}}`,
    );
  });

  it('CordonedLogDirs (KIP-1066, Kafka 4.3+; nullable, default null since 4.4): RegisterBrokerRecord v4 tag 1, BrokerRegistrationChangeRecord v3 tag 3', () => {
    const ep = endpoint('PLAINTEXT', 'kafka-1', 9092);
    const v4 = frame(0, 4).i32(1).bool(false).uuid(U1).i64(7n).carr(1).raw(ep).carr(0).cstr(null).bool(true).bool(false).tags([0, bytes().carr(1).uuid(U3).done()], [1, bytes().carr(1).uuid(U2).done()]).done();
    expect(line(v4)).toBe(
      `{"type":"REGISTER_BROKER_RECORD","version":4,"data":{"brokerId":1,"isMigratingZkBroker":false,"incarnationId":"${u1}","brokerEpoch":7,"endPoints":[{"name":"PLAINTEXT","host":"kafka-1","port":9092,"securityProtocol":0}],"features":[],"rack":null,"fenced":true,"inControlledShutdown":false,"logDirs":["${u3}"],"cordonedLogDirs":["${u2}"]}}`,
    );
    // absent: null, its default, not printed
    const v4none = frame(0, 4).i32(1).bool(false).uuid(U1).i64(7n).carr(0).carr(0).cstr(null).bool(true).bool(false).t0().done();
    expect(line(v4none)).not.toContain('cordoned');
    // an empty list is not the default (null): printed
    expect(line(frame(17, 3).i32(1).i64(7n).tags([3, bytes().carr(0).done()]).done())).toBe(`{"type":"BROKER_REGISTRATION_CHANGE_RECORD","version":3,"data":{"brokerId":1,"brokerEpoch":7,"cordonedLogDirs":[]}}`);
    expect(decodeClusterMetadataRecord(v4).unknownTaggedFields).toEqual([]);
  });

  it('UnregisterControllerRecord (apiKey 29, Kafka 4.4+, KAFKA-20395)', () => {
    expect(line(frame(29, 0).i32(3001).t0().done())).toBe('{"type":"UNREGISTER_CONTROLLER_RECORD","version":0,"data":{"controllerId":3001}}');
  });

  it('ClientQuotaRecord: float64 as Java prints a double, null entity name', () => {
    const v = frame(14, 0).carr(2).cstr('user').cstr('alice').t0().cstr('client-id').cstr(null).t0().cstr('producer_byte_rate').f64(1048576).bool(false).t0().done();
    expect(line(v)).toBe(
      `{"type":"CLIENT_QUOTA_RECORD","version":0,"data":{"entity":[{"entityType":"user","entityName":"alice"},{"entityType":"client-id","entityName":null}],"key":"producer_byte_rate","value":1048576.0,"remove":false}}`,
    );
    const big = frame(14, 0).carr(0).cstr('request_percentage').f64(2.5e7).bool(true).t0().done();
    expect(line(big)).toBe(`{"type":"CLIENT_QUOTA_RECORD","version":0,"data":{"entity":[],"key":"request_percentage","value":2.5E7,"remove":true}}`);
  });

  it('Java Double.toString and Jackson string escapes', () => {
    const cases: [number, string][] = [
      [0, '0.0'],
      [-0, '-0.0'],
      [1, '1.0'],
      [100, '100.0'],
      [0.25, '0.25'],
      [0.001, '0.001'],
      [0.0001, '1.0E-4'],
      [1234567, '1234567.0'],
      [9999999.5, '9999999.5'],
      [1e7, '1.0E7'],
      [123456789.123, '1.23456789123E8'],
      [-1.5e-7, '-1.5E-7'],
      [1e21, '1.0E21'],
      [Number.MAX_VALUE, '1.7976931348623157E308'],
    ];
    for (const [d, text] of cases) expect(javaDoubleText(d), String(d)).toBe(text);
    expect(jacksonString('a"b\\c\n\t\u0001\u001f/é')).toBe('"a\\"b\\\\c\\n\\t\\u0001\\u001F/é"');
  });

  it('UserScramCredentialRecord bytes as base64; ConfigRecord null value', () => {
    const salt = Uint8Array.from([1, 2, 3, 250]);
    const v = frame(11, 0).cstr('alice').i8(1).cbytes(salt).cbytes(new Uint8Array(0)).cbytes(Uint8Array.from([255])).i32(4096).t0().done();
    expect(line(v)).toBe(`{"type":"USER_SCRAM_CREDENTIAL_RECORD","version":0,"data":{"name":"alice","mechanism":1,"salt":"AQID+g==","storedKey":"","serverKey":"/w==","iterations":4096}}`);
    expect(line(frame(4, 0).i8(2).cstr('orders').cstr('retention.ms').cstr(null).t0().done())).toBe(
      `{"type":"CONFIG_RECORD","version":0,"data":{"resourceType":2,"resourceName":"orders","name":"retention.ms","value":null}}`,
    );
  });

  it('ACL, delegation token and the other single-version records', () => {
    const cases: [Uint8Array, string][] = [
      [frame(1, 0).i32(2).i64(99n).t0().done(), `{"type":"UNREGISTER_BROKER_RECORD","version":0,"data":{"brokerId":2,"brokerEpoch":99}}`],
      [
        frame(6, 0).i8(2).cstr(null).i8(3).cstr('User:bob').cstr('*').i8(3).i8(3).t0().done(),
        `{"type":"ACCESS_CONTROL_RECORD","version":0,"data":{"resourceType":2,"resourceName":null,"patternType":3,"principal":"User:bob","host":"*","operation":3,"permissionType":3}}`,
      ],
      [frame(7, 0).i32(1).i64(12n).t0().done(), `{"type":"FENCE_BROKER_RECORD","version":0,"data":{"id":1,"epoch":12}}`],
      [frame(8, 0).i32(1).i64(13n).t0().done(), `{"type":"UNFENCE_BROKER_RECORD","version":0,"data":{"id":1,"epoch":13}}`],
      [frame(9, 0).uuid(U2).t0().done(), `{"type":"REMOVE_TOPIC_RECORD","version":0,"data":{"topicId":"${u2}"}}`],
      [
        frame(10, 0).cstr('User:alice').cstr('User:admin').carr(2).cstr('User:bob').cstr('User:carol').i64(1700000000000n).i64(1700600000000n).i64(1700086400000n).cstr('tok-1').t0().done(),
        `{"type":"DELEGATION_TOKEN_RECORD","version":0,"data":{"owner":"User:alice","requester":"User:admin","renewers":["User:bob","User:carol"],"issueTimestamp":1700000000000,"maxTimestamp":1700600000000,"expirationTimestamp":1700086400000,"tokenId":"tok-1"}}`,
      ],
      [frame(12, 0).cstr('metadata.version').i16(21).t0().done(), `{"type":"FEATURE_LEVEL_RECORD","version":0,"data":{"name":"metadata.version","featureLevel":21}}`],
      [frame(15, 0).i32(1).i64(-1n).i64(4611686018427387904n).t0().done(), `{"type":"PRODUCER_IDS_RECORD","version":0,"data":{"brokerId":1,"brokerEpoch":-1,"nextProducerId":4611686018427387904}}`],
      [frame(16, 0).cstr('old.feature').t0().done(), `{"type":"REMOVE_FEATURE_LEVEL_RECORD","version":0,"data":{"name":"old.feature"}}`],
      [
        frame(18, 0).uuid(U3).i8(2).cstr('orders').i8(3).cstr('User:bob').cstr('*').i8(3).i8(3).t0().done(),
        `{"type":"ACCESS_CONTROL_ENTRY_RECORD","version":0,"data":{"id":"${u3}","resourceType":2,"resourceName":"orders","patternType":3,"principal":"User:bob","host":"*","operation":3,"permissionType":3}}`,
      ],
      [frame(19, 0).uuid(U3).t0().done(), `{"type":"REMOVE_ACCESS_CONTROL_ENTRY_RECORD","version":0,"data":{"id":"${u3}"}}`],
      [frame(20, 0).t0().done(), `{"type":"NO_OP_RECORD","version":0,"data":{}}`],
      [frame(21, 0).i8(3).t0().done(), `{"type":"ZK_MIGRATION_STATE_RECORD","version":0,"data":{"zkMigrationState":3}}`],
      [frame(22, 0).cstr('alice').i8(2).t0().done(), `{"type":"REMOVE_USER_SCRAM_CREDENTIAL_RECORD","version":0,"data":{"name":"alice","mechanism":2}}`],
      [frame(23, 0).t0().done(), `{"type":"BEGIN_TRANSACTION_RECORD","version":0,"data":{}}`],
      [frame(23, 0).tags([0, bytes().cstr('Bootstrap records').done()]).done(), `{"type":"BEGIN_TRANSACTION_RECORD","version":0,"data":{"name":"Bootstrap records"}}`],
      [frame(24, 0).t0().done(), `{"type":"END_TRANSACTION_RECORD","version":0,"data":{}}`],
      [frame(25, 0).tags([0, bytes().cstr('controller failover').done()]).done(), `{"type":"ABORT_TRANSACTION_RECORD","version":0,"data":{"reason":"controller failover"}}`],
      [frame(26, 0).cstr('tok-1').t0().done(), `{"type":"REMOVE_DELEGATION_TOKEN_RECORD","version":0,"data":{"tokenId":"tok-1"}}`],
      [
        frame(27, 0).i32(3000).uuid(U1).bool(true).carr(1).raw(endpoint('CONTROLLER', 'c1', 9093)).carr(1).raw(feature('kraft.version', 0, 1)).t0().done(),
        `{"type":"REGISTER_CONTROLLER_RECORD","version":0,"data":{"controllerId":3000,"incarnationId":"${u1}","zkMigrationReady":true,"endPoints":[{"name":"CONTROLLER","host":"c1","port":9093,"securityProtocol":0}],"features":[{"name":"kraft.version","minSupportedVersion":0,"maxSupportedVersion":1}]}}`,
      ],
      [frame(28, 0).cstr('').t0().done(), `{"type":"CLEAR_ELR_RECORD","version":0,"data":{"topicName":""}}`],
    ];
    for (const [v, want] of cases) expect(line(v)).toBe(want);
  });

  it('refuses what Kafka refuses, with the byte position', () => {
    expect(decodeError(() => decodeClusterMetadataRecord(bytes().uv(0).uv(2).uv(0).done())).reason).toMatch(/frame version 0/);
    expect(decodeError(() => decodeClusterMetadataRecord(bytes().uv(2).uv(2).uv(0).done())).reason).toMatch(/unknown frame version 2/);
    expect(decodeError(() => decodeClusterMetadataRecord(frame(99, 0).t0().done())).reason).toBe('Unknown metadata id 99');
    expect(decodeError(() => decodeClusterMetadataRecord(frame(13, 0).t0().done())).reason).toBe('Unknown metadata id 13');
    expect(decodeError(() => decodeClusterMetadataRecord(frame(2, 1).cstr('t').uuid(U1).t0().done())).reason).toMatch(/Can't read version 1 of TopicRecord/);
    expect(decodeError(() => decodeClusterMetadataRecord(frame(3, 3).done())).reason).toMatch(/Can't read version 3 of PartitionRecord/);
    const garbage = decodeError(() => decodeClusterMetadataRecord(frame(2, 0).cstr('t').uuid(U1).t0().i8(7).done()));
    expect(garbage.reason).toBe('Found 1 byte(s) of garbage after TOPIC_RECORD');
    expect(garbage.position).toBe(22);
    const whole = frame(2, 0).cstr('orders').uuid(U1).t0().done();
    const cut = decodeError(() => decodeClusterMetadataRecord(whole.subarray(0, 15)));
    expect(cut.position).toBe(10);
    expect(cut.reason).toMatch(/topicId: needs 16 bytes, 5 left/);
    // A hostile count is refused before any allocation.
    expect(decodeError(() => decodeClusterMetadataRecord(frame(3, 0).i32(0).uuid(U1).uv(1_000_001).done())).reason).toMatch(/replicas: array of 1000000 entries cannot fit/);
    expect(decodeError(() => decodeClusterMetadataRecord(null)).reason).toMatch(/without a value/);
    // Tagged fields out of order are not Kafka's encoding.
    expect(decodeError(() => decodeClusterMetadataRecord(frame(5, 0).i32(1).uuid(U1).tags([1, i32(2)], [0, bytes().cints([1]).done()]).done())).reason).toMatch(/tagged field 0 after 1/);
  });
});

describe('KRaft control records', () => {
  it('LeaderChange as written by a Kafka 3.2 controller (kraft-metadata-small offset 0)', () => {
    const v = Uint8Array.from(Buffer.from('AAAAAAABAgAAAAEAAgAAAAEAAA==', 'base64'));
    const rec = decodeKRaftControlRecord(2, v);
    expect(rec.label).toBe('LeaderChange:');
    expect(kraftControlJsonText(2, rec)).toBe('{"version":0,"leaderId":1,"voters":[{"voterId":1}],"grantingVoters":[{"voterId":1}]}');
  });

  it('SnapshotHeader, SnapshotFooter, KRaftVersion, KRaftVoters', () => {
    const text = (t: number, v: Uint8Array) => {
      const r = decodeKRaftControlRecord(t, v);
      return `${r.label} ${kraftControlJsonText(t, r)}`;
    };
    expect(text(3, bytes().i16(0).i64(1749603213271n).t0().done())).toBe('SnapshotHeader {"version":0,"lastContainedLogTimestamp":1749603213271}');
    expect(text(4, bytes().i16(0).t0().done())).toBe('SnapshotFooter {"version":0}');
    expect(text(5, bytes().i16(0).i16(1).t0().done())).toBe('KRaftVersion {"version":0,"kRaftVersion":1}');
    const voters = bytes().i16(0).carr(1).i32(1).uuid(U2).carr(1).cstr('CONTROLLER').cstr('localhost').u16(9093).t0().i16(0).i16(1).t0().t0().t0().done();
    expect(text(6, voters)).toBe(
      `KRaftVoters {"version":0,"voters":[{"voterId":1,"voterDirectoryId":"${u2}","endpoints":[{"name":"CONTROLLER","host":"localhost","port":9093}],"kRaftVersionFeature":{"minSupportedVersion":0,"maxSupportedVersion":1}}]}`,
    );
    expect(decodeError(() => decodeKRaftControlRecord(0, bytes().i16(0).i32(1).done())).reason).toMatch(/not a KRaft control record/);
    expect(decodeError(() => decodeKRaftControlRecord(4, bytes().i16(0).done())).reason).toMatch(/tagged field count/);
  });
});
