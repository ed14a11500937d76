import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MethodName, Res } from '../../../src-shared/contract.ts';
import type { RecordRow } from '../../../src-shared/log-types.ts';
import { createServerApi, type ServerApi } from '../../../src-main/api/index.ts';
import { buildSchemaFixtures, type SchemaFixtures } from '../../engine/decode/schema-fixtures.ts';

let server: ServerApi;
let fx: SchemaFixtures;

async function call<M extends MethodName>(method: M, req: unknown): Promise<Res<M>> {
  const env = await server.dispatch(method, req, { readOnly: true });
  if (!env.ok) throw new Error(env.error.message);
  return env.result as Res<M>;
}

beforeAll(async () => {
  fx = buildSchemaFixtures();
  server = createServerApi({ version: '0.0.0-test', transport: 'bridge', jobs: { progressIntervalMs: 0 } });
  await call('log.open', { path: fx.logDir });
}, 120_000);
afterAll(() => fx?.cleanup());

describe('log.records: main decodes the rows of the page (bodies from python3-avro / python3-protobuf)', () => {
  it('Avro through the folder\'s _schemas: one-line JSON, schema id, typed errors', async () => {
    const page = await call('log.records', { dir: join(fx.logDir, 'orders-0') });
    const rows = page.rows.filter((r): r is RecordRow => r.kind === 'record');
    expect(rows[0]!.keyDecoded).toEqual({ format: 'long', text: '1' });
    expect(rows[0]!.valueDecoded).toEqual({ format: 'confluent', text: fx.expected.orders[0], schemaId: 7 });
    expect(rows[4]!.valueDecoded).toEqual({ format: 'confluent', text: null, error: 'unknown schema id 12', schemaId: 12 });
  });

  it('Protobuf: message index out of range is the row\'s error', async () => {
    const page = await call('log.records', { dir: join(fx.logDir, 'payments-0') });
    const rows = page.rows.filter((r): r is RecordRow => r.kind === 'record');
    expect(rows[3]!.valueDecoded).toEqual({ format: 'confluent', text: '{"trace":"t-9"}', schemaId: 9 });
    expect(rows[4]!.valueDecoded?.error).toBe('Protobuf: message index 3 out of range (the 2 top-level messages of id 9 (payments-value v1))');
  });
});
