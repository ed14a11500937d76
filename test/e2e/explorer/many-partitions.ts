/**
 * Generates a log directory with many small partitions for the tree bench (`bench/tree.bench.ts`)
 * and the explorer's many-partitions browser test: by default 20 topics × 25 partitions = 500
 * partitions of 2 segments each (1,000 segments), each segment 20 uncompressed v2 batches of 5
 * records (records of ~60 bytes), with broker-built `.index` / `.timeindex` files, `meta.properties`
 * and the checkpoints a broker leaves at a clean shutdown (one line per partition in each file, as
 * `LogManager` writes them: recovery point and high watermark at the log end offset, log start 0).
 *
 * Records of partition p of topic t: key `k-<offset mod 50>`, value
 * `{"topic":"<t>","partition":<p>,"offset":<offset>}`, CreateTime = MANY_T0 + offset ms.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { encodeBatch } from '../../../src-main/engine/format/record-batch.ts';
import { writeSegmentFiles } from '../../../src-main/engine/segment/segment-file-writer.ts';

/** First record's timestamp: 2024-01-01T00:00:00Z. */
export const MANY_T0 = 1704067200000n;

export interface ManyPartitionsOptions {
  topics?: number;
  partitionsPerTopic?: number;
  segmentsPerPartition?: number;
  batchesPerSegment?: number;
  recordsPerBatch?: number;
}

export interface ManyPartitions {
  logDir: string;
  /** Topic names, `topic-00` …, in order. */
  topics: string[];
  partitions: number;
  segments: number;
  /** Records in each partition. */
  recordsPerPartition: number;
}

/** The topic names of `generateManyPartitions` (`topic-00`, `topic-01`, …). */
export function manyTopicName(i: number): string {
  return `topic-${String(i).padStart(2, '0')}`;
}

/**
 * Writes the partitions under `logDir` (see the module comment).
 * @returns where they are and what they hold.
 */
export function generateManyPartitions(logDir: string, opts: ManyPartitionsOptions = {}): ManyPartitions {
  const topicCount = opts.topics ?? 20;
  const perTopic = opts.partitionsPerTopic ?? 25;
  const segments = opts.segmentsPerPartition ?? 2;
  const perSegment = opts.batchesPerSegment ?? 20;
  const perBatch = opts.recordsPerBatch ?? 5;
  mkdirSync(logDir, { recursive: true });
  const topics = Array.from({ length: topicCount }, (_, i) => manyTopicName(i));
  const end = segments * perSegment * perBatch;
  const lines: string[] = [];
  for (const topic of topics) {
    for (let p = 0; p < perTopic; p++) {
      const dir = join(logDir, `${topic}-${p}`);
      mkdirSync(dir, { recursive: true });
      let offset = 0;
      for (let s = 0; s < segments; s++) {
        const base = BigInt(offset);
        const bufs: Buffer[] = [];
        for (let b = 0; b < perSegment; b++) {
          const records = Array.from({ length: perBatch }, (_, i) => {
            const o = offset + i;
            return { key: `k-${o % 50}`, value: `{"topic":"${topic}","partition":${p},"offset":${o}}`, timestamp: MANY_T0 + BigInt(o) };
          });
          bufs.push(encodeBatch({ baseOffset: BigInt(offset), records, producerId: -1n }));
          offset += perBatch;
        }
        writeSegmentFiles(dir, base, bufs, { indexIntervalBytes: 1024 });
      }
      lines.push(`${topic} ${p} ${end}`);
    }
  }
  const checkpoint = (entries: string[]) => `0\n${entries.length}\n${entries.map((l) => `${l}\n`).join('')}`;
  writeFileSync(join(logDir, 'recovery-point-offset-checkpoint'), checkpoint(lines));
  writeFileSync(join(logDir, 'replication-offset-checkpoint'), checkpoint(lines));
  writeFileSync(join(logDir, 'log-start-offset-checkpoint'), checkpoint(lines.map((l) => l.replace(/ \d+$/, ' 0'))));
  writeFileSync(join(logDir, 'meta.properties'), 'version=0\nbroker.id=1\ncluster.id=many-partitions-bench\n');
  writeFileSync(join(logDir, '.kafka_cleanshutdown'), '{"version":0,"brokerEpoch":1}');
  return { logDir, topics, partitions: topicCount * perTopic, segments: topicCount * perTopic * segments, recordsPerPartition: end };
}
