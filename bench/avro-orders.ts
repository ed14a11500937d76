/**
 * Bench data shared by the decode benches: an `Order` record (Avro schema, plain object per
 * record number), Confluent framing, and a log directory holding `_schemas-0` (registering the
 * schema under id 1) beside a partition of framed Avro orders. Bench data, not test fixtures:
 * the bodies come from avsc, the library the benches compare against.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createPartition } from '../src-main/engine/log/partition-create.ts';
import { PartitionWriter } from '../src-main/engine/log/partition-writer.ts';
import { fmtInt, progress } from './lib.ts';

/** The Avro schema of the benches' `Order` values. */
export const ORDER_AVRO_SCHEMA = {
  type: 'record',
  name: 'Order',
  namespace: 'bench',
  fields: [
    { name: 'id', type: 'string' },
    { name: 'amount', type: 'double' },
    { name: 'qty', type: 'int' },
    { name: 'ts', type: 'long' },
    { name: 'status', type: { type: 'enum', name: 'Status', symbols: ['NEW', 'PAID', 'SHIPPED'] } },
    { name: 'note', type: ['null', 'string'], default: null },
  ],
};

/** The `Order` of record number `n` (ts in ms from 2023-11-14). */
export function order(n: number) {
  return { id: `order-${n}`, amount: (n % 10_000) / 100, qty: n % 17, ts: 1_700_000_000_000 + n, status: ['NEW', 'PAID', 'SHIPPED'][n % 3]!, note: n % 5 === 0 ? null : `note ${n % 101}` };
}

/**
 * Confluent wire format: magic byte 0, the 4-byte big-endian schema id, then (Protobuf) the
 * message-index varint `index` when given, then `body`.
 */
export function frame(id: number, body: Uint8Array, index?: number): Buffer {
  const head = index === undefined ? 5 : 6;
  const b = Buffer.allocUnsafe(head + body.length);
  b[0] = 0;
  b.writeUInt32BE(id, 1);
  if (index !== undefined) b[5] = index;
  b.set(body, head);
  return b;
}

/** What {@link ensureOrdersLog} writes. */
export interface OrdersLogSpec {
  /** The log directory (created; rewritten when `params` changed). */
  logDir: string;
  /** The topic of the orders partition (partition 0); its subject is `<topic>-value`. */
  topic: string;
  records: number;
  perBatch: number;
  /** The framed value of record `n`. */
  value: (n: number) => Buffer;
  /** Topic config of the orders partition. */
  config?: Record<string, unknown>;
  /** Compared with the stored `params.json`: the folder is reused while they are equal. */
  params: unknown;
}

/** Writes `_schemas-0` and `<topic>-0` of `spec` once (keys `order-<n mod 50000>`), returns the log directory. */
export function ensureOrdersLog(spec: OrdersLogSpec): string {
  const { logDir, topic, records, perBatch } = spec;
  const meta = join(logDir, 'params.json');
  if (existsSync(meta) && readFileSync(meta, 'utf8') === JSON.stringify(spec.params)) return logDir;
  rmSync(logDir, { recursive: true, force: true });
  mkdirSync(logDir, { recursive: true });
  createPartition(logDir, '_schemas', 0, { 'cleanup.policy': ['compact'] });
  const subject = `${topic}-value`;
  let w = PartitionWriter.open(join(logDir, '_schemas-0'));
  w.append([{ key: JSON.stringify({ keytype: 'SCHEMA', subject, version: 1, magic: 1 }), value: JSON.stringify({ subject, version: 1, id: 1, schema: JSON.stringify(ORDER_AVRO_SCHEMA) }) }]);
  w.close();
  createPartition(logDir, topic, 0, (spec.config ?? {}) as never);
  w = PartitionWriter.open(join(logDir, `${topic}-0`));
  try {
    for (let b = 0; b < records / perBatch; b++) {
      if (b % 200 === 0) progress(`writing ${fmtInt(b * perBatch)} / ${fmtInt(records)} records`);
      const recs = [];
      for (let i = 0; i < perBatch; i++) {
        const n = b * perBatch + i;
        recs.push({ key: `order-${n % 50_000}`, value: spec.value(n), timestamp: 1_700_000_000_000 + n });
      }
      w.append(recs);
    }
  } finally {
    w.close();
  }
  progress('');
  writeFileSync(meta, JSON.stringify(spec.params));
  return logDir;
}
