/**
 * Builds the decode layer's schema fixtures once per test file: `encode_fixtures.py` (run with
 * /usr/bin/python3: Apache Avro's and Google's protobuf Python libraries, never this project's
 * code) writes the bodies and schema files; the `_schemas` topic is written with `klx append
 * --records` as a user would; data topics (orders, payments, events, plain) with the engine's
 * partition writer from the encoders' bytes.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { createPartition } from '../../../src-main/engine/log/partition-create.ts';
import { PartitionWriter, type AppendRecord } from '../../../src-main/engine/log/partition-writer.ts';
import { tempDir } from '../../support/log-builder.ts';
import { REPO_ROOT } from '../../support/real-data.ts';

export interface SchemaFixtures {
  /** The encoder's output folder (schema files, expected.json, container files). */
  files: string;
  /** A log directory with _schemas-0, orders-0, payments-0, events-0, plain-0. */
  logDir: string;
  expected: {
    orders: string[];
    orderBodies: string[];
    payments: Record<string, unknown>[];
    paymentsFramed: string[];
    readings: { sensor: string; celsius: number; at: number }[];
    plainBodies: string[];
  };
  cleanup(): void;
}

function ndjson(path: string): AppendRecord[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => {
      const o = JSON.parse(l) as Record<string, unknown>;
      const b = (x: unknown) => (typeof x === 'string' ? new Uint8Array(Buffer.from(x, 'base64')) : null);
      return {
        key: o.keyBase64 !== undefined ? b(o.keyBase64) : ((o.key as string | undefined) ?? null),
        value: o.valueBase64 !== undefined ? b(o.valueBase64) : ((o.value as string | null | undefined) ?? null),
        timestamp: BigInt(o.timestamp as number),
      };
    });
}

/** Runs the independent encoders and writes the log directory (see the module comment). */
export function buildSchemaFixtures(): SchemaFixtures {
  const root = tempDir('klx-decode-');
  const files = join(root, 'files');
  const logDir = join(root, 'logs');
  try {
    execFileSync('/usr/bin/python3', [join(REPO_ROOT, 'test/engine/decode/fixtures/encode_fixtures.py'), files], { stdio: 'pipe' });
  } catch (e) {
    throw new Error(`the fixture encoders need /usr/bin/python3 with python3-avro and python3-protobuf (apt-get install python3-avro python3-protobuf; .ci/run installs them): ${(e as { stderr?: Buffer }).stderr?.toString() ?? e}`);
  }
  createPartition(logDir, '_schemas', 0, { 'cleanup.policy': ['compact'] });
  const r = spawnSync(process.execPath, [join(REPO_ROOT, 'bin/klx.mjs'), 'append', join(logDir, '_schemas-0'), '--records', join(files, 'schemas.ndjson')], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`klx append failed: ${r.stderr}`);
  for (const topic of ['orders', 'payments', 'events', 'plain']) {
    createPartition(logDir, topic, 0);
    const w = PartitionWriter.open(join(logDir, `${topic}-0`));
    try {
      w.append(ndjson(join(files, `${topic}.ndjson`)));
    } finally {
      w.close();
    }
  }
  return {
    files,
    logDir,
    expected: JSON.parse(readFileSync(join(files, 'expected.json'), 'utf8')) as SchemaFixtures['expected'],
    cleanup: () => rmSync(root, { recursive: true, force: true }),
  };
}

/**
 * Adds `orders-1` to the fixtures' log directory: the encoder's orders records 3 and 1 again
 * (python3-avro bytes, offsets 0 and 1), a second partition of the topic for cross-partition search.
 */
export function addSecondOrdersPartition(fx: SchemaFixtures): void {
  const lines = readFileSync(join(fx.files, 'orders.ndjson'), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as { keyBase64: string; valueBase64: string; timestamp: number });
  createPartition(fx.logDir, 'orders', 1);
  const w = PartitionWriter.open(join(fx.logDir, 'orders-1'));
  try {
    w.append([lines[2]!, lines[0]!].map((o) => ({ key: new Uint8Array(Buffer.from(o.keyBase64, 'base64')), value: new Uint8Array(Buffer.from(o.valueBase64, 'base64')), timestamp: BigInt(o.timestamp) })));
  } finally {
    w.close();
  }
}
