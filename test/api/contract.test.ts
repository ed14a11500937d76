/**
 * The contract itself: names, flags, JSON-safety of every schema, and the derived types.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import { METHOD_NAMES, contract, isJobMethod, isMethodName, jobStarted, type JobMethodName, type JobResult, type KlxApi, type MethodName, type Req, type Res } from '../../src-shared/contract.ts';
import { META_CONTENT_SECURITY_POLICY } from '../../src-shared/csp.ts';
import { int64, toWireError } from '../../src-shared/wire.ts';

describe('contract', () => {
  it('lists the methods the app shell starts with', () => {
    expect(METHOD_NAMES).toEqual(expect.arrayContaining(['app.info', 'fs.complete', 'job.cancel', 'job.list', 'demo.sleepJob']));
  });

  it('names every method <domain>.<name>', () => {
    for (const m of METHOD_NAMES) expect(m).toMatch(/^[a-z]+\.[a-zA-Z]+$/);
  });

  it('gives every method a doc, a write flag and a job flag; job methods answer {jobId} and have a result schema', () => {
    for (const m of METHOD_NAMES) {
      const spec = contract[m];
      expect(spec.doc.length, m).toBeGreaterThan(10);
      expect(typeof spec.write, m).toBe('boolean');
      expect(typeof spec.job, m).toBe('boolean');
      if (spec.job) {
        expect(spec.response, m).toBe(jobStarted);
        expect('result' in spec, m).toBe(true);
      }
    }
  });

  it('every request, response and result schema is representable as JSON Schema (so JSON-safe: no bigint, Date, Map, bytes)', () => {
    for (const m of METHOD_NAMES) {
      const spec = contract[m] as { request: z.ZodType; response: z.ZodType; result?: z.ZodType };
      for (const [part, schema] of Object.entries({ request: spec.request, response: spec.response, result: spec.result })) {
        if (!schema) continue;
        expect(() => z.toJSONSchema(schema, { io: 'input' }), `${m} ${part}`).not.toThrow();
        expect(() => z.toJSONSchema(schema, { io: 'output' }), `${m} ${part}`).not.toThrow();
      }
    }
  });

  it('requests are strict: unknown keys are refused', () => {
    for (const m of METHOD_NAMES) {
      const parsed = contract[m].request.safeParse({ surely_unknown_key: 1 });
      expect(parsed.success, m).toBe(false);
    }
  });

  it('edit.append takes exactly the fields of edit.preview plus the fingerprint, and stays strict', () => {
    const preview = { dir: '/logs/t-0', records: [{ key: null, value: { text: 'v' } }] };
    expect(contract['edit.preview'].request.safeParse(preview).success).toBe(true);
    expect(contract['edit.preview'].request.safeParse({ ...preview, fingerprint: 'f' }).success).toBe(false);
    expect(contract['edit.append'].request.safeParse(preview).success).toBe(false);
    expect(contract['edit.append'].request.safeParse({ ...preview, fingerprint: 'f' }).success).toBe(true);
    expect(contract['edit.append'].request.safeParse({ ...preview, fingerprint: 'f', surely_unknown_key: 1 }).success).toBe(false);
    const keys = (m: MethodName) => Object.keys((z.toJSONSchema(contract[m].request, { io: 'input' }) as { properties: object }).properties).sort();
    expect(keys('edit.append')).toEqual([...keys('edit.preview'), 'fingerprint'].sort());
  });

  it('cleanup.run takes exactly the fields of cleanup.plan plus the planId; both answer the same outcome fields', () => {
    const plan = { dir: '/logs/t-0', operation: 'compaction' };
    expect(contract['cleanup.plan'].request.safeParse(plan).success).toBe(true);
    expect(contract['cleanup.plan'].request.safeParse({ ...plan, planId: 'p' }).success).toBe(false);
    expect(contract['cleanup.run'].request.safeParse(plan).success).toBe(false);
    expect(contract['cleanup.run'].request.safeParse({ ...plan, planId: 'p' }).success).toBe(true);
    const keys = (schema: z.ZodType) => Object.keys((z.toJSONSchema(schema, { io: 'input' }) as { properties: object }).properties).sort();
    expect(keys(contract['cleanup.run'].request)).toEqual([...keys(contract['cleanup.plan'].request), 'planId'].sort());
    expect(keys(contract['cleanup.plan'].result)).toEqual(['dir', 'fingerprintFiles', 'now', 'operation', 'partitions', 'planId', 'trashDir']);
    expect(keys(contract['cleanup.run'].result)).toEqual(['changedDirs', 'dir', 'now', 'operation', 'partitions', 'planId', 'runId', 'trashDir', 'trashEntries']);
  });

  it('isMethodName accepts only own contract keys', () => {
    expect(isMethodName('app.info')).toBe(true);
    for (const name of ['toString', '__proto__', 'constructor', 'hasOwnProperty', '']) expect(isMethodName(name), name).toBe(false);
    expect(isJobMethod('demo.sleepJob')).toBe(true);
    expect(isJobMethod('app.info')).toBe(false);
  });

  it('derives the client and request/response types from the one object', () => {
    expectTypeOf<MethodName>().toEqualTypeOf<keyof typeof contract>();
    expectTypeOf<JobMethodName>().toEqualTypeOf<
      'demo.sleepJob' | 'log.countRecords' | 'log.holes' | 'log.verify' | 'log.verifyFolder' | 'log.search' | 'log.export' | 'cleanup.plan' | 'cleanup.run' | 'cleanup.repairPlan' | 'cleanup.repair' | 'sql.open' | 'sql.query' | 'sql.export' | 'groups.list' | 'groups.describe' | 'groups.history' | 'groups.partitionCommits'
    >();
    expectTypeOf<KlxApi['app.info']>().toEqualTypeOf<(req: Req<'app.info'>) => Promise<Res<'app.info'>>>();
    expectTypeOf<Res<'demo.sleepJob'>>().toEqualTypeOf<{ jobId: string }>();
    expectTypeOf<JobResult<'demo.sleepJob'>>().toEqualTypeOf<{ ticks: number }>();
    expectTypeOf<Req<'fs.complete'>>().toEqualTypeOf<{ partial: string; limit?: number | undefined; hidden?: boolean | undefined }>();
  });

  it('int64 accepts the 64-bit range as decimal strings only', () => {
    for (const ok of ['0', '-1', '9223372036854775807', '-9223372036854775808']) expect(int64.safeParse(ok).success, ok).toBe(true);
    for (const bad of ['9223372036854775808', '01', '1.5', '', ' 1', '-0x1']) expect(int64.safeParse(bad).success, bad).toBe(false);
  });

  it('toWireError keeps code, message, file and position and makes details JSON', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(toWireError({ code: 'crc-mismatch', message: 'm', file: 'a.log', position: 61, details: { offset: 2n ** 63n - 1n } })).toEqual({
      code: 'crc-mismatch',
      message: 'm',
      file: 'a.log',
      position: 61,
      details: { offset: '9223372036854775807' },
    });
    expect(toWireError({ code: 'internal', message: 'x', details: cyclic }).details).toEqual({ unserializable: true });
  });

  it("the renderer's meta CSP is the shared policy", () => {
    const html = readFileSync(new URL('../../src-renderer/index.html', import.meta.url), 'utf8');
    expect(html).toContain(`content="${META_CONTENT_SECURITY_POLICY}"`);
  });
});
