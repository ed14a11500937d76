/**
 * KRaft `__cluster_metadata` records and the KRaft control records, decoded as
 * `kafka-dump-log.sh --cluster-metadata-decoder` prints them (Kafka's `DumpLogSegments`
 * `ClusterMetadataLogMessageParser`, `MetadataRecordSerde` / `AbstractApiMessageSerde`,
 * the generated `MetadataRecordType` and `*RecordJsonConverter` classes).
 *
 * A metadata record's value is a frame: unsigned varint frame version (1; 0 was the KRaft preview of
 * Kafka 2.8, which Kafka 3.0+ refuses: AbstractApiMessageSerde.read throws MetadataParseException), unsigned varint apiKey, unsigned varint version, then the record
 * body in that version (all metadata records are flexible from version 0). The key is null.
 * Printed as `{"type":"TOPIC_RECORD","version":0,"data":{"name":"t","topicId":"…"}}`.
 *
 * Control records of KRaft batches (value = the message body, whose first field is its own int16
 * `version`, read at the current version 0 as Kafka's `ControlRecordUtils` does) are printed as
 * dump-log's control line prints them (` LeaderChange: {…}`, ` SnapshotHeader {…}`, …).
 *
 * The field tables below are this project's transcription of Kafka's metadata schemas
 * (`metadata/src/main/resources/common/metadata/*.json`, `LeaderChangeMessage.json`,
 * `SnapshotHeaderRecord.json`, `SnapshotFooterRecord.json`, `KRaftVersionRecord.json`,
 * `VotersRecord.json`), every record type and version Kafka has defined up to 4.4 (checked against a
 * 4.5-SNAPSHOT tree of Aug 2026: RegisterBrokerRecord v4, BrokerRegistrationChangeRecord v3,
 * UnregisterControllerRecord), including two types
 * Kafka later removed (apiKey 6 AccessControlRecord until 3.4, apiKey 16 RemoveFeatureLevelRecord
 * until 3.2) so logs written by those releases still decode. Pure: no I/O.
 */
import { DecodeError } from '../decode-error.ts';
import { base64Of } from '../json-text.ts';
import { ProtocolReader } from '../protocol-reader.ts';
import { field as f, message, messageJsonText, readMessage, structArray, struct, type DecodedMessage, type MessageSchema, type UnknownTag } from './message-schema.ts';

const endpoint = (withSecurityProtocol: boolean) =>
  structArray([f('Name', 'string', '0+'), f('Host', 'string', '0+'), f('Port', 'uint16', '0+'), ...(withSecurityProtocol ? [f('SecurityProtocol', 'int16', '0+')] : [])]);
const supportedFeature = structArray([f('Name', 'string', '0+'), f('MinSupportedVersion', 'int16', '0+'), f('MaxSupportedVersion', 'int16', '0+')]);
const aclFields = (withId: boolean, resourceNameNullable: boolean) => [
  ...(withId ? [f('Id', 'uuid', '0+')] : []),
  f('ResourceType', 'int8', '0+'),
  f('ResourceName', 'string', '0+', resourceNameNullable ? { nullable: '0+' } : {}),
  f('PatternType', 'int8', '0+'),
  f('Principal', 'string', '0+'),
  f('Host', 'string', '0+'),
  f('Operation', 'int8', '0+'),
  f('PermissionType', 'int8', '0+'),
];
const optionalName = (name: string) => [f(name, 'string', '0+', { nullable: '0+', tagged: '0+', tag: 0, default: null })];

/** Metadata record schemas by apiKey (Kafka's `MetadataRecordType` ids). */
export const METADATA_RECORDS: ReadonlyMap<number, MessageSchema> = new Map<number, MessageSchema>([
  [
    0,
    message('RegisterBrokerRecord', '0-4', '0+', [
      f('BrokerId', 'int32', '0+'),
      f('IsMigratingZkBroker', 'bool', '2+', { default: false }),
      f('IncarnationId', 'uuid', '0+'),
      f('BrokerEpoch', 'int64', '0+'),
      f('EndPoints', endpoint(true), '0+'),
      f('Features', supportedFeature, '0+'),
      f('Rack', 'string', '0+', { nullable: '0+' }),
      f('Fenced', 'bool', '0+', { default: true }),
      f('InControlledShutdown', 'bool', '1+', { default: false }),
      f('LogDirs', '[]uuid', '3+', { tagged: '3+', tag: 0 }),
      // v4, Kafka 4.3+ (KIP-1066, KAFKA-19774); nullable with default null since 4.4 (KAFKA-20441)
      f('CordonedLogDirs', '[]uuid', '4+', { tagged: '4+', tag: 1, nullable: '4+', default: null }),
    ]),
  ],
  [1, message('UnregisterBrokerRecord', '0', '0+', [f('BrokerId', 'int32', '0+'), f('BrokerEpoch', 'int64', '0+')])],
  [2, message('TopicRecord', '0', '0+', [f('Name', 'string', '0+'), f('TopicId', 'uuid', '0+')])],
  [
    3,
    message('PartitionRecord', '0-2', '0+', [
      f('PartitionId', 'int32', '0+'),
      f('TopicId', 'uuid', '0+'),
      f('Replicas', '[]int32', '0+'),
      f('Isr', '[]int32', '0+'),
      f('RemovingReplicas', '[]int32', '0+'),
      f('AddingReplicas', '[]int32', '0+'),
      f('Leader', 'int32', '0+'),
      f('LeaderRecoveryState', 'int8', '0+', { tagged: '0+', tag: 0, default: 0 }),
      f('LeaderEpoch', 'int32', '0+'),
      f('PartitionEpoch', 'int32', '0+'),
      f('Directories', '[]uuid', '1+'),
      f('EligibleLeaderReplicas', '[]int32', '2+', { nullable: '2+', tagged: '2+', tag: 1, default: null }),
      f('LastKnownElr', '[]int32', '2+', { nullable: '2+', tagged: '2+', tag: 2, default: null }),
    ]),
  ],
  [4, message('ConfigRecord', '0', '0+', [f('ResourceType', 'int8', '0+'), f('ResourceName', 'string', '0+'), f('Name', 'string', '0+'), f('Value', 'string', '0+', { nullable: '0+' })])],
  [
    5,
    message('PartitionChangeRecord', '0-2', '0+', [
      f('PartitionId', 'int32', '0+'),
      f('TopicId', 'uuid', '0+'),
      f('Isr', '[]int32', '0+', { nullable: '0+', tagged: '0+', tag: 0, default: null }),
      f('Leader', 'int32', '0+', { tagged: '0+', tag: 1, default: -2 }),
      f('Replicas', '[]int32', '0+', { nullable: '0+', tagged: '0+', tag: 2, default: null }),
      f('RemovingReplicas', '[]int32', '0+', { nullable: '0+', tagged: '0+', tag: 3, default: null }),
      f('AddingReplicas', '[]int32', '0+', { nullable: '0+', tagged: '0+', tag: 4, default: null }),
      f('LeaderRecoveryState', 'int8', '0+', { tagged: '0+', tag: 5, default: -1 }),
      f('Directories', '[]uuid', '1+', { nullable: '1+', tagged: '1+', tag: 8, default: null }),
      f('EligibleLeaderReplicas', '[]int32', '2+', { nullable: '2+', tagged: '2+', tag: 6, default: null }),
      f('LastKnownElr', '[]int32', '2+', { nullable: '2+', tagged: '2+', tag: 7, default: null }),
    ]),
  ],
  [6, message('AccessControlRecord', '0', '0+', aclFields(false, true))],
  [7, message('FenceBrokerRecord', '0', '0+', [f('Id', 'int32', '0+'), f('Epoch', 'int64', '0+')])],
  [8, message('UnfenceBrokerRecord', '0', '0+', [f('Id', 'int32', '0+'), f('Epoch', 'int64', '0+')])],
  [9, message('RemoveTopicRecord', '0', '0+', [f('TopicId', 'uuid', '0+')])],
  [
    10,
    message('DelegationTokenRecord', '0', '0+', [
      f('Owner', 'string', '0+'),
      f('Requester', 'string', '0+'),
      f('Renewers', '[]string', '0+'),
      f('IssueTimestamp', 'int64', '0+'),
      f('MaxTimestamp', 'int64', '0+'),
      f('ExpirationTimestamp', 'int64', '0+'),
      f('TokenId', 'string', '0+'),
    ]),
  ],
  [
    11,
    message('UserScramCredentialRecord', '0', '0+', [
      f('Name', 'string', '0+'),
      f('Mechanism', 'int8', '0+'),
      f('Salt', 'bytes', '0+'),
      f('StoredKey', 'bytes', '0+'),
      f('ServerKey', 'bytes', '0+'),
      f('Iterations', 'int32', '0+'),
    ]),
  ],
  [12, message('FeatureLevelRecord', '0', '0+', [f('Name', 'string', '0+'), f('FeatureLevel', 'int16', '0+')])],
  [
    14,
    message('ClientQuotaRecord', '0', '0+', [
      f('Entity', structArray([f('EntityType', 'string', '0+'), f('EntityName', 'string', '0+', { nullable: '0+' })]), '0+'),
      f('Key', 'string', '0+'),
      f('Value', 'float64', '0+'),
      f('Remove', 'bool', '0+'),
    ]),
  ],
  [15, message('ProducerIdsRecord', '0', '0+', [f('BrokerId', 'int32', '0+'), f('BrokerEpoch', 'int64', '0+'), f('NextProducerId', 'int64', '0+')])],
  [16, message('RemoveFeatureLevelRecord', '0', '0+', [f('Name', 'string', '0+')])],
  [
    17,
    message('BrokerRegistrationChangeRecord', '0-3', '0+', [
      f('BrokerId', 'int32', '0+'),
      f('BrokerEpoch', 'int64', '0+'),
      f('Fenced', 'int8', '0+', { tagged: '0+', tag: 0, default: 0 }),
      f('InControlledShutdown', 'int8', '1+', { tagged: '1+', tag: 1, default: 0 }),
      f('LogDirs', '[]uuid', '2+', { tagged: '2+', tag: 2 }),
      // v3, Kafka 4.3+ (KIP-1066); nullable with default null since 4.4 (KAFKA-20441)
      f('CordonedLogDirs', '[]uuid', '3+', { tagged: '3+', tag: 3, nullable: '3+', default: null }),
    ]),
  ],
  [18, message('AccessControlEntryRecord', '0', '0+', aclFields(true, false))],
  [19, message('RemoveAccessControlEntryRecord', '0', '0+', [f('Id', 'uuid', '0+')])],
  [20, message('NoOpRecord', '0', '0+', [])],
  [21, message('ZkMigrationStateRecord', '0', '0+', [f('ZkMigrationState', 'int8', '0+')])],
  [22, message('RemoveUserScramCredentialRecord', '0', '0+', [f('Name', 'string', '0+'), f('Mechanism', 'int8', '0+')])],
  [23, message('BeginTransactionRecord', '0', '0+', optionalName('Name'))],
  [24, message('EndTransactionRecord', '0', '0+', [])],
  [25, message('AbortTransactionRecord', '0', '0+', optionalName('Reason'))],
  [26, message('RemoveDelegationTokenRecord', '0', '0+', [f('TokenId', 'string', '0+')])],
  [
    27,
    message('RegisterControllerRecord', '0', '0+', [
      f('ControllerId', 'int32', '0+'),
      f('IncarnationId', 'uuid', '0+'),
      f('ZkMigrationReady', 'bool', '0+'),
      f('EndPoints', endpoint(true), '0+'),
      f('Features', supportedFeature, '0+'),
    ]),
  ],
  [28, message('ClearElrRecord', '0', '0+', [f('TopicName', 'string', '0+')])],
  // Kafka 4.4+ (KAFKA-20395)
  [29, message('UnregisterControllerRecord', '0', '0+', [f('ControllerId', 'int32', '0+')])],
]);

/** Kafka's `MessageGenerator.toSnakeCase(name).toUpperCase()`: `ZkMigrationStateRecord` → `ZK_MIGRATION_STATE_RECORD`. */
export function metadataTypeName(schemaName: string): string {
  let out = '';
  let prevUpper = true;
  for (const c of schemaName) {
    const upper = c !== c.toLowerCase() && c === c.toUpperCase();
    if (upper && !prevUpper) out += '_';
    out += c.toUpperCase();
    prevUpper = upper;
  }
  return out;
}

/** One decoded `__cluster_metadata` record. */
export interface ClusterMetadataRecord {
  /** Kafka's `MetadataRecordType` name, e.g. `TOPIC_RECORD`. */
  type: string;
  /** Kafka's schema name, e.g. `TopicRecord`. */
  name: string;
  apiKey: number;
  version: number;
  /** The record's fields as Kafka's JSON converter prints them (MetadataJsonConverters.writeJson; int64 as bigint, Uuid as base64url). */
  data: Record<string, unknown>;
  /** Tagged fields that this version does not define (Kafka keeps them in the generated message's unknownTaggedFields and its JsonConverter does not print them). */
  unknownTaggedFields: UnknownTag[];
}

function unsignedShort(r: ProtocolReader, what: string): number {
  const at = r.pos;
  const v = r.uvarint(what);
  if (v > 0x7fff) throw new DecodeError(at, `${what} ${v} does not fit a short`);
  return v;
}

/**
 * Decodes the value of one `__cluster_metadata` record (Kafka's `MetadataRecordSerde.read`).
 * @param value the record value (a view is fine; nothing is kept beyond the decoded result)
 * @throws DecodeError on a null value, a frame version other than 1, an apiKey Kafka never defined,
 *   a version the record type does not have, bytes that do not match the schema, or bytes left after it.
 */
export function decodeClusterMetadataRecord(value: Uint8Array | null): ClusterMetadataRecord {
  if (value === null) throw new DecodeError(0, 'metadata record without a value');
  const r = new ProtocolReader(value);
  const frameVersion = unsignedShort(r, 'frame version');
  // Kafka 2.8's KRaft preview wrote frame version 0 (MetadataRecordSerde); 3.0+ read only 1 (AbstractApiMessageSerde).
  if (frameVersion === 0) throw new DecodeError(0, 'frame version 0 (the KRaft preview of Kafka 2.8), which Kafka 3.0 and later do not read');
  if (frameVersion !== 1) throw new DecodeError(0, `unknown frame version ${frameVersion} (only frame version 1 is defined)`);
  const apiKey = unsignedShort(r, 'type');
  const version = unsignedShort(r, 'version');
  const schema = METADATA_RECORDS.get(apiKey);
  if (!schema) throw new DecodeError(1, `Unknown metadata id ${apiKey}`);
  const msg: DecodedMessage = readMessage(r, schema, version);
  if (r.remaining > 0) throw new DecodeError(r.pos, `Found ${r.remaining} byte(s) of garbage after ${metadataTypeName(schema.name)}`);
  return { type: metadataTypeName(schema.name), name: schema.name, apiKey, version, data: msg.data, unknownTaggedFields: msg.unknownTaggedFields };
}

/** The `data` JSON text of a decoded record, exactly as Kafka's converter prints it (MetadataJsonConverters.writeJson). */
export function clusterMetadataDataText(rec: ClusterMetadataRecord): string {
  return messageJsonText(METADATA_RECORDS.get(rec.apiKey)!, rec.data);
}

/**
 * The line dump-log prints after ` payload: ` for a metadata record:
 * `{"type":"TOPIC_RECORD","version":0,"data":{…}}` (DumpLogSegments.ClusterMetadataLogMessageParser).
 * Tagged fields the version does not define are not printed, as MetadataJsonConverters do not print them
 * (they stay in `rec.unknownTaggedFields`, the SQL `cluster_metadata.unknown_tagged_fields` column and the
 * inspector's JSON, outside `data`).
 */
export function clusterMetadataJsonText(rec: ClusterMetadataRecord): string {
  return `{"type":"${rec.type}","version":${rec.version},"data":${clusterMetadataDataText(rec)}}`;
}

/** Unknown tagged fields as JSON text (`[{"path":"","tag":9,"data":"AQI="}]`). */
export function unknownTagsText(tags: readonly UnknownTag[]): string {
  return JSON.stringify(tags.map((t) => ({ path: t.path, tag: t.tag, data: base64Of(t.data) })));
}

// ---- KRaft control records ----------------------------------------------------------------------

const voter = (withDirectory: boolean) => structArray([f('VoterId', 'int32', '0+'), ...(withDirectory ? [f('VoterDirectoryId', 'uuid', '1+')] : [])]);

/** KRaft control record schemas by control type id (Kafka's `ControlRecordType`), with dump-log's label. */
export const KRAFT_CONTROL_RECORDS: ReadonlyMap<number, { label: string; schema: MessageSchema }> = new Map([
  [2, { label: 'LeaderChange:', schema: message('LeaderChangeMessage', '0-1', '0+', [f('Version', 'int16', '0+'), f('LeaderId', 'int32', '0+'), f('Voters', voter(true), '0+'), f('GrantingVoters', voter(true), '0+')]) }],
  [3, { label: 'SnapshotHeader', schema: message('SnapshotHeaderRecord', '0', '0+', [f('Version', 'int16', '0+'), f('LastContainedLogTimestamp', 'int64', '0+')]) }],
  [4, { label: 'SnapshotFooter', schema: message('SnapshotFooterRecord', '0', '0+', [f('Version', 'int16', '0+')]) }],
  [5, { label: 'KRaftVersion', schema: message('KRaftVersionRecord', '0', '0+', [f('Version', 'int16', '0+'), f('KRaftVersion', 'int16', '0+')]) }],
  [
    6,
    {
      label: 'KRaftVoters',
      schema: message('VotersRecord', '0', '0+', [
        f('Version', 'int16', '0+'),
        f(
          'Voters',
          structArray([
            f('VoterId', 'int32', '0+'),
            f('VoterDirectoryId', 'uuid', '0+'),
            f('Endpoints', endpoint(false), '0+'),
            f('KRaftVersionFeature', struct([f('MinSupportedVersion', 'int16', '0+'), f('MaxSupportedVersion', 'int16', '0+')]), '0+'),
          ]),
          '0+',
        ),
      ]),
    },
  ],
]);

/** A decoded KRaft control record (LEADER_CHANGE, SNAPSHOT_HEADER, SNAPSHOT_FOOTER, KRAFT_VERSION, KRAFT_VOTERS). */
export interface KRaftControlRecord {
  /** Kafka's schema name, e.g. `LeaderChangeMessage`. */
  name: string;
  /** What dump-log prints before the JSON: `LeaderChange:`, `SnapshotHeader`, `SnapshotFooter`, `KRaftVersion`, `KRaftVoters`. */
  label: string;
  data: Record<string, unknown>;
  unknownTaggedFields: UnknownTag[];
}

/** Whether a control type id is one of KRaft's (2–6), which {@link decodeKRaftControlRecord} reads. */
export function isKRaftControlType(typeId: number): boolean {
  return KRAFT_CONTROL_RECORDS.has(typeId);
}

/**
 * Decodes the value of a KRaft control record (Kafka's `ControlRecordUtils.deserialize*`: the body read
 * at version 0, its first field being the message's own `version`).
 * @throws DecodeError for a type id that is not KRaft's, a null value, or bytes that do not match.
 */
export function decodeKRaftControlRecord(typeId: number, value: Uint8Array | null): KRaftControlRecord {
  const entry = KRAFT_CONTROL_RECORDS.get(typeId);
  if (!entry) throw new DecodeError(0, `control type ${typeId} is not a KRaft control record`);
  if (value === null) throw new DecodeError(0, `${entry.schema.name}: control record without a value`);
  const r = new ProtocolReader(value);
  const msg = readMessage(r, entry.schema, 0);
  return { name: entry.schema.name, label: entry.label, data: msg.data, unknownTaggedFields: msg.unknownTaggedFields };
}

/** The JSON text dump-log prints for a KRaft control record (`{"version":0,"leaderId":1,…}`). */
export function kraftControlJsonText(typeId: number, rec: KRaftControlRecord): string {
  return messageJsonText(KRAFT_CONTROL_RECORDS.get(typeId)!.schema, rec.data);
}
