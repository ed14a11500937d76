/**
 * Both broker-written KRaft `__cluster_metadata` data sets decode with zero errors. The exact lines
 * asserted here were checked byte by byte against Kafka's schemas (frame 01, apiKey, version, body);
 * the record and NoOp counts come from the data sets' PROVENANCE.md (kafka-python's count).
 */
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { scanLogFile } from '../../../src-main/engine/format/log-reader.ts';
import {
  clusterMetadataJsonText,
  decodeClusterMetadataRecord,
  decodeKRaftControlRecord,
  kraftControlJsonText,
} from '../../../src-main/engine/decode/internal/cluster-metadata.ts';
import { describeRealData, REAL_DATA } from '../../support/real-data.ts';

/** Every record of the partition's segments as dump-log's decoded text (control records: `<label> <json>`). */
function decodeAll(caseName: string, segments: string[]): { offset: bigint; text: string }[] {
  const out: { offset: bigint; text: string }[] = [];
  for (const seg of segments) {
    for (const e of scanLogFile(join(REAL_DATA, caseName, '__cluster_metadata-0', seg), { deep: true })) {
      expect(e.type).toBe('batch');
      if (e.type !== 'batch') continue;
      expect(e.error).toBeUndefined();
      for (const r of e.records!) {
        if (e.header.isControl) {
          const c = decodeKRaftControlRecord(r.control!.typeId, r.value);
          out.push({ offset: r.offset, text: `${c.label} ${kraftControlJsonText(r.control!.typeId, c)}` });
        } else {
          const rec = decodeClusterMetadataRecord(r.value);
          expect(rec.unknownTaggedFields).toEqual([]);
          out.push({ offset: r.offset, text: clusterMetadataJsonText(rec) });
        }
      }
    }
  }
  return out;
}

describeRealData('KRaft __cluster_metadata real data', () => {
  it('kraft-metadata-small (Kafka 3.2): every record, exactly', () => {
    const got = decodeAll('kraft-metadata-small', ['00000000000000000000.log']);
    const topicId = 'pqFUXC1fRJ-sOJ2VK_4P4A';
    const partition = (p: number) =>
      `{"type":"PARTITION_RECORD","version":0,"data":{"partitionId":${p},"topicId":"${topicId}","replicas":[1],"isr":[1],"removingReplicas":[],"addingReplicas":[],"leader":1,"leaderEpoch":0,"partitionEpoch":0}}`;
    expect(got.map((g) => [Number(g.offset), g.text])).toEqual([
      [0, 'LeaderChange: {"version":0,"leaderId":1,"voters":[{"voterId":1}],"grantingVoters":[{"voterId":1}]}'],
      [
        1,
        '{"type":"REGISTER_BROKER_RECORD","version":0,"data":{"brokerId":1,"incarnationId":"rq2ie8gzQGGfWoqJvnzDeQ","brokerEpoch":0,"endPoints":[{"name":"PLAINTEXT","host":"localhost","port":9091,"securityProtocol":0},{"name":"LISTENER_DOCKER_EXTERNAL","host":"172.18.0.14","port":9092,"securityProtocol":0}],"features":[],"rack":null,"fenced":true}}',
      ],
      [2, '{"type":"UNFENCE_BROKER_RECORD","version":0,"data":{"id":1,"epoch":0}}'],
      [3, `{"type":"TOPIC_RECORD","version":0,"data":{"name":"test1","topicId":"${topicId}"}}`],
      [4, partition(0)],
      [5, partition(1)],
      [6, partition(2)],
    ]);
  });

  it('kraft-3x-metadata-2seg (Kafka >= 3.7): 23,767 records, zero errors, 23,717 NoOps, 5 leader changes', () => {
    const got = decodeAll('kraft-3x-metadata-2seg', ['00000000000000000000.log', '00000000000000014667.log']);
    expect(got.length).toBe(23767);
    const count = (prefix: string) => got.filter((g) => g.text.startsWith(prefix)).length;
    expect(count('{"type":"NO_OP_RECORD","version":0,"data":{}}')).toBe(23717);
    expect(got.filter((g) => g.text.startsWith('LeaderChange: ')).map((g) => Number(g.offset))).toEqual([0, 3442, 3612, 14667, 21698]);
    const at = (o: number) => got.find((g) => g.offset === BigInt(o))!.text;
    expect(at(1)).toBe('{"type":"BEGIN_TRANSACTION_RECORD","version":0,"data":{"name":"Bootstrap records"}}');
    expect(at(2)).toBe('{"type":"FEATURE_LEVEL_RECORD","version":0,"data":{"name":"metadata.version","featureLevel":25}}');
    expect(at(5)).toBe('{"type":"END_TRANSACTION_RECORD","version":0,"data":{}}');
    expect(at(15778)).toBe('{"type":"TOPIC_RECORD","version":0,"data":{"name":"product-created-events-topic","topicId":"zcBnIA7CRl29wXuh_gnLoQ"}}');
    expect(at(15781)).toBe(
      '{"type":"PARTITION_RECORD","version":2,"data":{"partitionId":2,"topicId":"zcBnIA7CRl29wXuh_gnLoQ","replicas":[1],"isr":[1],"removingReplicas":[],"addingReplicas":[],"leader":1,"leaderEpoch":0,"partitionEpoch":0,"directories":["xtV8ykyou77J3v7TiYexPA"]}}',
    );
    expect(at(21693)).toBe('{"type":"PARTITION_CHANGE_RECORD","version":2,"data":{"partitionId":0,"topicId":"zcBnIA7CRl29wXuh_gnLoQ","leader":-1}}');
    expect(at(23318)).toBe('{"type":"PRODUCER_IDS_RECORD","version":0,"data":{"brokerId":1,"brokerEpoch":21723,"nextProducerId":1000}}');
    expect(at(9)).toBe('{"type":"BROKER_REGISTRATION_CHANGE_RECORD","version":0,"data":{"brokerId":1,"brokerEpoch":7,"fenced":-1}}');
  });
});
