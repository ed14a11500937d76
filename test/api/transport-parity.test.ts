/**
 * One table over the contract's method list: every method, called over HTTP through the bridge,
 * gives exactly what `dispatch` gives when called directly on the same context (for job methods:
 * the same final `job.end`, apart from the job id). The table's type has one entry per method, so
 * adding a method to the contract without a row here does not compile.
 */
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { METHOD_NAMES, contract, type JobEndEvent, type MethodName } from '../../src-shared/contract.ts';
import type { Envelope } from '../../src-shared/wire.ts';
import { startBridge, type Bridge } from '../../src-main/bridge/server.ts';
import { buildPartition, rec, singles } from '../support/log-builder.ts';
import { openEvents, post, tempDir, type EventStream } from './helpers.ts';

const tmp = tempDir('klx-parity-');
const data = join(tmp.dir, 'data');
const rendererDir = join(tmp.dir, 'renderer');
/** A log directory with one small compacted-looking partition (a hole at offset 1), for the log.* rows. */
const logs = join(tmp.dir, 'logs');
const orders = join(logs, 'orders-0');

/** Requests to try per method, built once the fixture folders exist. Valid and invalid ones. */
const cases: { readonly [M in MethodName]: readonly { name: string; request: unknown }[] } = {
  'app.info': [
    { name: 'valid', request: {} },
    { name: 'unknown key', request: { extra: 1 } },
  ],
  'app.decompressionBound': [
    { name: 'read', request: {} },
    { name: 'zero', request: { maxInflatedBytes: 0 } },
    { name: 'past 2 GiB', request: { maxInflatedBytes: 2 ** 31 + 1 } },
    { name: 'wrong type', request: { maxInflatedBytes: '1' } },
  ],
  'fs.complete': [
    { name: 'list a folder', request: { partial: `${data}/` } },
    { name: 'prefix', request: { partial: join(data, 'topic-') } },
    { name: 'home-relative', request: { partial: '~/da' } },
    { name: 'missing folder', request: { partial: join(data, 'nope', '') + '/' } },
    { name: 'wrong type', request: { partial: 42 } },
  ],
  'session.open': [
    { name: 'existing folder', request: { path: data } },
    { name: 'missing folder', request: { path: join(tmp.dir, 'missing') } },
    { name: 'a file', request: { path: join(data, 'topic-0', '00000000000000000000.log') } },
    { name: 'relative', request: { path: 'data' } },
  ],
  'session.folders': [{ name: 'valid', request: {} }],
  'session.close': [
    { name: 'not opened', request: { path: join(tmp.dir, 'missing') } },
    { name: 'relative', request: { path: 'data' } },
  ],
  'session.reload': [
    { name: 'opened folder', request: { path: data } },
    { name: 'not opened', request: { path: join(tmp.dir, 'missing') } },
  ],
  'session.setWriteMode': [
    { name: 'switch on', request: { enabled: true } },
    { name: 'switch off', request: { enabled: false } },
    { name: 'wrong type', request: { enabled: 'yes' } },
  ],
  'job.cancel': [
    { name: 'unknown job', request: { jobId: 'no-such-job' } },
    { name: 'malformed id', request: { jobId: '../etc' } },
  ],
  'job.list': [{ name: 'valid', request: {} }],
  'demo.sleepJob': [
    { name: 'succeeds', request: { ticks: 3, intervalMs: 5 } },
    { name: 'fails at tick 2', request: { ticks: 3, intervalMs: 5, failAt: 2 } },
    { name: 'zero ticks', request: { ticks: 0 } },
  ],
  'demo.touch': [
    { name: 'inside the opened folder', request: { path: join(data, 'topic-0', '00000000000000000000.log') } },
    { name: 'outside the opened folder', request: { path: join(tmp.dir, 'outside.txt') } },
    { name: 'symlink escape', request: { path: join(data, 'escape', 'outside.txt') } },
  ],
  'log.open': [
    { name: 'a log directory', request: { path: logs } },
    { name: 'a log directory, listed only', request: { path: logs, lazyAbove: 0 } },
    { name: 'a partition folder with an empty segment', request: { path: join(data, 'topic-0') } },
    { name: 'missing folder', request: { path: join(tmp.dir, 'missing') } },
  ],
  'log.summaries': [
    { name: 'a partition', request: { dirs: [orders] } },
    { name: 'outside the opened folders', request: { dirs: [tmp.dir] } },
    { name: 'no folder', request: { dirs: [] } },
  ],
  'log.partition': [
    { name: 'a partition', request: { dir: orders } },
    { name: 'outside the opened folders', request: { dir: tmp.dir } },
  ],
  'log.batches': [
    { name: 'first page', request: { dir: orders, segment: '0' } },
    { name: 'no such segment', request: { dir: orders, segment: '7' } },
  ],
  'log.records': [
    { name: 'first page', request: { dir: orders } },
    { name: 'backward from the end', request: { dir: orders, from: 'end', direction: 'backward', limit: 2 } },
    { name: 'past the log end', request: { dir: orders, from: '99' } },
  ],
  'log.recordValue': [
    { name: 'a value', request: { dir: orders, offset: '2', part: 'value' } },
    { name: 'an offset in a hole', request: { dir: orders, offset: '1', part: 'value' } },
  ],
  'log.seekTimestamp': [
    { name: 'a time', request: { dir: orders, timestamp: '1500' } },
    { name: 'after the last record', request: { dir: orders, timestamp: '99999' } },
  ],
  'log.countRecords': [{ name: 'a partition', request: { dir: orders } }],
  'log.holes': [{ name: 'a partition', request: { dir: orders } }],
  'log.verify': [{ name: 'a partition', request: { dir: orders } }],
  'log.verifyFolder': [{ name: 'the folder of a partition', request: { dir: orders } }],
  'log.search': [
    { name: 'a hit', request: { dir: orders, text: 'B' } },
    { name: 'empty text', request: { dir: orders, text: '' } },
  ],
  'log.copyRecords': [
    { name: 'ndjson across the hole', request: { dir: orders, from: '0', to: '2', format: 'ndjson' } },
    { name: 'append lines', request: { dir: orders, from: '0', to: '3', format: 'append' } },
  ],
  // Only refusals: a written file would make the second call's target exist already.
  'log.export': [
    { name: 'inside the opened folder', request: { dir: orders, format: 'csv', out: join(orders, 'x.csv') } },
    { name: 'a relative path', request: { dir: orders, format: 'ndjson', out: 'x.ndjson' } },
  ],
  // CLEANUP-ROWS
  'cleanup.plan': [
    { name: 'a compaction plan', request: { dir: orders, operation: 'compaction', now: '100000' } },
    { name: 'an invalid config value', request: { dir: orders, operation: 'retention', config: { 'retention.ms': 'soon' } } },
  ],
  'cleanup.run': [{ name: 'refused while write mode is off', request: { dir: orders, operation: 'compaction', planId: 'unknown' } }],
  'cleanup.repairPlan': [{ name: 'a partition', request: { dir: orders } }],
  'cleanup.repair': [{ name: 'refused while write mode is off', request: { dir: orders, signature: 'unknown' } }],
  'cleanup.undo': [{ name: 'refused while write mode is off', request: { dir: orders } }],
  'cleanup.trash': [{ name: 'entries of a partition', request: { dir: orders } }],
  'cleanup.horizons': [{ name: 'horizons of a partition', request: { dir: orders } }],
  'cleanup.history': [{ name: 'runs of a partition', request: { dir: orders, offsets: ['0'] } }],
  'cleanup.emptyTrash': [{ name: 'refused while write mode is off', request: {} }],
  // EDIT-ROWS
  'edit.preview': [
    { name: 'two records', request: { dir: orders, records: [{ key: { text: 'k9' }, value: { text: '{"a":1}' }, headers: [{ key: 'h', value: { base64: 'AAE=' } }] }, { key: { text: 'k9' }, value: null, tombstone: true, timestamp: '5000' }], compression: 'gzip', now: '4000' } },
    { name: 'invalid base64', request: { dir: orders, records: [{ key: null, value: { base64: 'not base64!' } }], now: '4000' } },
    { name: 'outside the opened folders', request: { dir: tmp.dir, records: [{ key: null, value: { text: 'x' } }] } },
  ],
  'edit.append': [{ name: 'write mode off', request: { dir: orders, records: [{ key: { text: 'k' }, value: { text: 'v' } }], now: '4000', fingerprint: 'f' } }],
  'edit.rollPreview': [
    { name: 'a partition', request: { dir: orders } },
    { name: 'unknown key', request: { dir: orders, dryRun: true } },
  ],
  'edit.roll': [{ name: 'write mode off', request: { dir: orders, fingerprint: 'f' } }],
  // SQL-ROWS
  // Cases that end before a table set is built (this bridge has no temporary cache folder);
  // sql-api.test.ts compares successful queries over HTTP and dispatch.
  'sql.open': [
    { name: 'outside the opened folders', request: { path: tmp.dir } },
    { name: 'unknown key', request: { path: logs, extra: 1 } },
  ],
  'sql.query': [
    { name: 'outside the opened folders', request: { path: tmp.dir, sql: 'SELECT 1' } },
    { name: 'limit too large', request: { path: logs, sql: 'SELECT 1', limit: 1_000_000_000 } },
    { name: 'empty statement', request: { path: logs, sql: '' } },
  ],
  'sql.export': [
    { name: 'outside the opened folders', request: { path: tmp.dir, sql: 'SELECT 1', format: 'csv' } },
    { name: 'unknown format', request: { path: logs, sql: 'SELECT 1', format: 'xlsx' } },
  ],
  'sql.exportRead': [
    { name: 'unknown export', request: { exportId: 'no-such-export' } },
    { name: 'malformed id', request: { exportId: '../etc/passwd' } },
  ],
  'sql.exportDiscard': [{ name: 'unknown export', request: { exportId: 'no-such-export' } }],
  // GROUPS-ROWS (the consumer groups: groups-api.test.ts; here, answers that need no __consumer_offsets)
  'groups.list': [
    { name: 'no __consumer_offsets in the folder', request: { path: logs } },
    { name: 'outside the opened folders', request: { path: tmp.dir } },
  ],
  'groups.describe': [{ name: 'no __consumer_offsets in the folder', request: { path: logs, group: 'g' } }],
  'groups.history': [{ name: 'unknown key', request: { path: logs, group: 'g', topic: 't', partition: 0, extra: 1 } }],
  'groups.partitionCommits': [{ name: 'no __consumer_offsets in the folder', request: { path: logs, dir: orders } }],
  // Lessons: only requests refused before anything is read or written (the data folder is the user's).
  'lessons.labs': [{ name: 'unknown key', request: { extra: 1 } }],
  'lessons.create': [
    { name: 'unknown lab', request: { labId: 'no-such-lab' } },
    { name: 'malformed id', request: { labId: '../x' } },
  ],
  'lessons.state': [{ name: 'unknown lab', request: { labId: 'no-such-lab' } }],
  'lessons.preview': [{ name: 'unknown lab', request: { labId: 'no-such-lab' } }],
  'lessons.run': [{ name: 'unknown lab', request: { labId: 'no-such-lab' } }],
  'decode.formats': [
    { name: 'valid', request: {} },
    { name: 'unknown key', request: { extra: 1 } },
  ],
  'decode.record': [
    { name: 'a record', request: { dir: orders, offset: '2' } },
    { name: 'a chosen format', request: { dir: orders, offset: '2', valueFormat: 'hex' } },
    { name: 'an offset in a hole', request: { dir: orders, offset: '1' } },
    { name: 'an unknown format', request: { dir: orders, offset: '2', valueFormat: 'nope' } },
  ],
  'decode.choices': [
    { name: 'a partition', request: { path: orders } },
    { name: 'outside the opened folders', request: { path: tmp.dir } },
  ],
  // Only refused changes: a change would alter what the other rows decode.
  'decode.setChoice': [
    { name: 'an unknown format', request: { path: orders, topic: 'orders', side: 'value', format: 'nope' } },
    { name: 'outside the opened folders', request: { path: tmp.dir, topic: 'orders', side: 'value', format: 'string' } },
  ],
  'decode.setSchema': [
    { name: 'a schema that does not compile', request: { path: orders, topic: 'orders', side: 'value', schema: { files: [{ name: 'orders.avsc', text: '{"type": "record"}' }] } } },
    { name: 'outside the opened folders', request: { path: tmp.dir, topic: 'orders', side: 'value', schema: null } },
  ],
};

let bridge: Bridge;
let events: EventStream;

beforeAll(async () => {
  mkdirSync(join(data, 'topic-0'), { recursive: true });
  mkdirSync(join(data, 'topic-1'), { recursive: true });
  writeFileSync(join(data, 'topic-0', '00000000000000000000.log'), '');
  writeFileSync(join(tmp.dir, 'outside.txt'), 'secret');
  symlinkSync(tmp.dir, join(data, 'escape'));
  mkdirSync(rendererDir);
  writeFileSync(join(rendererDir, 'index.html'), '<!doctype html><title>t</title>');
  buildPartition(logs, { topic: 'orders', segments: [{ batches: [...singles(rec('k0', 'a', 1000)), { baseOffset: 2n, records: [rec('k1', 'b', 2000)] }, ...singles(rec('k2', 'c', 3000))] }] });
  bridge = await startBridge({ readOnly: false, roots: [], rendererDir, homeDir: tmp.dir, dataDir: join(tmp.dir, 'app-data'), jobs: { progressIntervalMs: 0 } });
  events = await openEvents(bridge);
  await bridge.api.dispatch('session.open', { path: data }, bridge.dispatchOptions); // so demo.touch has an opened folder
  await bridge.api.dispatch('session.open', { path: logs }, bridge.dispatchOptions); // so the log.* rows have theirs
});

afterAll(async () => {
  events.close();
  await bridge.close();
  tmp.remove();
});

/** Waits for the job's end: directly from the job manager, or from the HTTP event stream. */
async function jobEnd(envelope: Envelope<unknown>, via: 'direct' | 'http'): Promise<Omit<JobEndEvent, 'jobId'> | Envelope<unknown>> {
  if (!envelope.ok) return envelope;
  const { jobId } = envelope.result as { jobId: string };
  const end = (via === 'direct'
    ? await bridge.api.ctx.jobs.wait(jobId)
    : await events.waitFor((e) => e.type === 'job.end' && e.jobId === jobId)) as JobEndEvent;
  const { jobId: _drop, ...rest } = end;
  return rest;
}

describe('every contract method gives the same answer over HTTP as through dispatch', () => {
  it('the table has one row per contract method', () => {
    expect(Object.keys(cases).sort()).toEqual([...METHOD_NAMES].sort());
  });

  for (const method of METHOD_NAMES) {
    for (const c of cases[method]) {
      it(`${method}: ${c.name}`, async () => {
        const direct = await bridge.api.dispatch(method, c.request, bridge.dispatchOptions);
        const http = await post(bridge, method, c.request);
        expect(http.status).toBe(200);
        if (contract[method].job) {
          expect(await jobEnd(http.body, 'http')).toEqual(await jobEnd(direct, 'direct'));
        } else {
          // JSON round trip: what dispatch returns must be exactly what the wire carries.
          expect(http.body).toEqual(JSON.parse(JSON.stringify(direct)));
        }
      });
    }
  }

  it('the expected outcomes (so the parity above is not parity of two failures)', async () => {
    const ok = async (m: MethodName, req: unknown) => (await post(bridge, m, req)).body;
    expect(await ok('app.info', {})).toMatchObject({ ok: true, result: { transport: 'bridge', readOnly: false } });
    expect(await ok('fs.complete', { partial: `${data}/` })).toMatchObject({
      ok: true,
      result: { dir: data, entries: [{ name: 'escape' }, { name: 'topic-0' }, { name: 'topic-1' }] },
    });
    expect(await ok('fs.complete', { partial: '~/da' })).toMatchObject({ ok: true, result: { entries: [{ name: 'data', path: data }] } });
    expect(await ok('session.open', { path: join(tmp.dir, 'missing') })).toMatchObject({ ok: false, error: { code: 'not-found' } });
    expect(await ok('job.cancel', { jobId: 'no-such-job' })).toMatchObject({ ok: false, error: { code: 'not-found' } });
    expect(await ok('demo.touch', { path: join(data, 'escape', 'outside.txt') })).toMatchObject({ ok: false, error: { code: 'invalid-argument' } });
    // A write: refused while "Open for writing" is off (issue 17, defect 11).
    expect(await ok('demo.touch', { path: join(data, 'topic-0', '00000000000000000000.log') })).toMatchObject({ ok: false, error: { code: 'read-only' } });
    const started = await ok('demo.sleepJob', { ticks: 2, intervalMs: 1 });
    expect(await jobEnd(started, 'http')).toMatchObject({ ok: true, result: { ticks: 2 } });
    expect(await ok('log.records', { dir: orders })).toMatchObject({
      ok: true,
      result: { rows: [{ kind: 'record', offset: '0' }, { kind: 'hole', from: '1', to: '1', cause: 'compacted-between-batches' }, { kind: 'record', offset: '2' }, { kind: 'record', offset: '3' }], atEnd: true },
    });
    expect(await ok('log.partition', { dir: tmp.dir })).toMatchObject({ ok: false, error: { code: 'invalid-argument' } });
    expect(await ok('log.recordValue', { dir: orders, offset: '1', part: 'value' })).toMatchObject({ ok: false, error: { code: 'not-found' } });
    expect(await ok('log.records', { dir: orders, from: '99' })).toMatchObject({ ok: false, error: { code: 'offset-out-of-range' } });
    expect(await jobEnd(await ok('log.countRecords', { dir: orders }), 'http')).toMatchObject({ ok: true, result: { records: 3, batches: 3, offsetSpan: '4' } });
    expect(await jobEnd(await ok('log.search', { dir: orders, text: 'B' }), 'http')).toMatchObject({ ok: true, result: { matches: [{ offset: '2', in: ['value'] }] } });
    expect(await ok('decode.record', { dir: orders, offset: '2', valueFormat: 'hex' })).toMatchObject({ ok: true, result: { topic: 'orders', key: { choice: 'auto', format: 'string', text: 'k1' }, value: { choice: 'hex', format: 'hex', text: '62' } } });
    expect(await ok('decode.record', { dir: orders, offset: '1' })).toMatchObject({ ok: false, error: { code: 'not-found' } });
    expect(await ok('decode.record', { dir: orders, offset: '2', valueFormat: 'nope' })).toMatchObject({ ok: false, error: { code: 'invalid-argument' } });
    expect(await ok('decode.setChoice', { path: orders, topic: 'orders', side: 'value', format: 'nope' })).toMatchObject({ ok: false, error: { code: 'invalid-argument' } });
    expect(await ok('decode.choices', { path: orders })).toMatchObject({ ok: true, result: { root: logs, choices: {} } });
  });
});
