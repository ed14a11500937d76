/**
 * The `edit.*` API: previews that equal what the append and the roll then do (offsets, bytes,
 * position, segment, roll and its reason), the written batch decoded back from the `.log` with the
 * engine's reader (keys, values, headers, timestamps, tombstones exactly as sent, CRC valid), and
 * every refusal: read-only window, "Open for writing" off, a stale preview, a held writer lock,
 * oversize records and requests, invalid base64.
 */
import { readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { scanLogFile, type BatchEntry } from '../../../src-main/engine/format/log-reader.ts';
import { WRITER_LOCK_FILE, acquireLock } from '../../../src-main/engine/log/log-lock.ts';
import { PartitionLog } from '../../../src-main/engine/log/partition-log.ts';
import { createServerApi, type ServerApi } from '../../../src-main/api/index.ts';
import { stateStamp } from '../../../src-main/api/edit/edit-writer.ts';
import type { KlxEvent, MethodName, Res } from '../../../src-shared/contract.ts';
import type { Envelope } from '../../../src-shared/wire.ts';
import { EDIT_LIMITS } from '../../../src-shared/edit-types.ts';
import { buildPartition, rec, singles } from '../../support/log-builder.ts';
import { tempDir } from '../helpers.ts';

const tmp = tempDir('klx-edit-api-');
afterAll(() => tmp.remove());

/** The first record's timestamp (ms): 2024-05-29T16:26:40Z. */
const T0 = 1_717_000_000_000;
let n = 0;
/** A fresh log dir with `orders-0` holding offsets 0..2 (three single-record batches), opened in a fresh session; write mode as asked. */
async function setup(opts: { writeMode?: boolean; sidecar?: string; topic?: string } = {}): Promise<{ server: ServerApi; dir: string; events: KlxEvent[] }> {
  const logDir = join(tmp.dir, `logs-${++n}`);
  const topic = opts.topic ?? 'orders';
  const dir = buildPartition(logDir, { topic, segments: [{ batches: singles(rec('k0', 'a', T0), rec('k1', 'b', T0 + 1000), rec('k2', 'c', T0 + 2000)) }] });
  if (opts.sidecar) writeFileSync(join(dir, 'klx-topic.properties'), opts.sidecar);
  const server = createServerApi({ version: 'test', transport: 'bridge' });
  const events: KlxEvent[] = [];
  server.ctx.events.subscribe((e) => events.push(e));
  await server.ctx.session.open(logDir, { readOnly: false });
  if (opts.writeMode !== false) server.ctx.session.setWriteMode(true, { readOnly: false });
  return { server, dir, events };
}

async function call<M extends MethodName>(server: ServerApi, method: M, req: unknown, readOnly = false): Promise<Envelope<Res<M>>> {
  return (await server.dispatch(method, req, { readOnly })) as Envelope<Res<M>>;
}

async function ok<M extends MethodName>(server: ServerApi, method: M, req: unknown): Promise<Res<M>> {
  const r = await call(server, method, req);
  if (!r.ok) throw new Error(`${method} failed: ${r.error.code}: ${r.error.message}`);
  return r.result;
}

/** The v2 batches of a `.log`, decoded (records included), CRC checked. */
function batchesOf(file: string): BatchEntry[] {
  return [...scanLogFile(file, { deep: true, verifyCrc: true })].filter((e): e is BatchEntry => e.type === 'batch');
}

const text = (b: Uint8Array | null): string | null => (b === null ? null : Buffer.from(b).toString('utf8'));

/** The batch of the tests: a JSON value with two headers (one binary, one null) and a tombstone. */
const twoRecords = [
  { key: { text: 'order-42' }, value: { text: '{"order":42,"amount":"12.50"}' }, headers: [{ key: 'trace', value: { base64: Buffer.from([0, 1, 2, 255]).toString('base64') } }, { key: 'empty', value: null }], timestamp: '1717000000000' },
  { key: { base64: Buffer.from([0xca, 0xfe]).toString('base64') }, value: null, tombstone: true },
];

describe('edit.preview and edit.append', () => {
  it('the preview is exactly what the append does; the batch decodes as sent with a valid CRC; log.changed names the folder', async () => {
    const { server, dir, events } = await setup();
    const logFile = join(dir, '00000000000000000000.log');
    const sizeBefore = statSync(logFile).size;
    const stampBefore = stateStamp(dir);
    const req = { dir, records: twoRecords, compression: 'gzip', now: '1717000005000' };
    const p = await ok(server, 'edit.preview', req);
    // The preview touched nothing and took no lock.
    expect(stateStamp(dir)).toBe(stampBefore);
    expect(readdirSync(dir)).not.toContain(WRITER_LOCK_FILE);
    expect(p).toMatchObject({
      topic: 'orders',
      partition: 0,
      baseOffset: '3',
      lastOffset: '4',
      recordCount: 2,
      position: sizeBefore,
      segmentBaseOffset: '0',
      segmentFile: logFile,
      segmentName: '00000000000000000000.log',
      newSegment: false,
      rollReason: null,
      rollExplanation: null,
      logEndOffsetBefore: '3',
      logEndOffset: '5',
      activeSegment: { baseOffset: '0', name: '00000000000000000000.log', size: sizeBefore },
      timestampType: 'CreateTime',
      timestampTypeSource: 'topic',
      // the tombstone has no timestamp: it gets `now`, the larger one
      maxTimestamp: '1717000005000',
      now: '1717000005000',
      compression: 'gzip',
      indexEntry: false,
      lock: null,
      limits: { segmentBytes: 1073741824, maxMessageBytes: 1048588, indexIntervalBytes: 4096, cleanupPolicy: ['delete'] },
    });
    expect(p.fingerprint).toMatch(/^[0-9a-f]{32}$/);
    // Same request, same state: same preview.
    expect(await ok(server, 'edit.preview', req)).toEqual(p);

    const a = await ok(server, 'edit.append', { ...req, fingerprint: p.fingerprint });
    expect(a).toEqual({
      dir,
      baseOffset: p.baseOffset,
      lastOffset: p.lastOffset,
      recordCount: 2,
      size: p.size,
      position: p.position,
      segmentBaseOffset: '0',
      segmentFile: p.segmentFile,
      segmentName: p.segmentName,
      rolled: false,
      rollReason: null,
      logEndOffset: '5',
      maxTimestamp: p.maxTimestamp,
      tookOverStaleLock: null,
    });
    expect(statSync(logFile).size).toBe(sizeBefore + p.size);
    expect(readdirSync(dir)).not.toContain(WRITER_LOCK_FILE);
    expect(events.filter((e) => e.type === 'log.changed')).toEqual([{ type: 'log.changed', dirs: [dir], reason: 'appended 2 records at offsets 3..4' }]);

    // Decode the .log with the engine's reader.
    const batches = batchesOf(logFile);
    expect(batches).toHaveLength(4);
    const last = batches[3]!;
    expect(last.header).toMatchObject({ position: p.position, size: p.size, baseOffset: 3n, lastOffset: 4n, crcValid: true, compression: 'gzip', timestampType: 'CreateTime', maxTimestamp: 1717000005000n, producerId: -1n, recordCount: 2 });
    expect(last.error).toBeUndefined();
    const [r0, r1] = last.records!;
    expect(r0!.offset).toBe(3n);
    expect(text(r0!.key)).toBe('order-42');
    expect(text(r0!.value)).toBe('{"order":42,"amount":"12.50"}');
    expect(r0!.timestamp).toBe(1717000000000n);
    expect(r0!.headers.map((h) => ({ key: h.key, value: h.value === null ? null : [...h.value] }))).toEqual([
      { key: 'trace', value: [0, 1, 2, 255] },
      { key: 'empty', value: null },
    ]);
    expect(r1!.offset).toBe(4n);
    expect([...r1!.key!]).toEqual([0xca, 0xfe]);
    expect(r1!.value).toBeNull();
    expect(r1!.timestamp).toBe(1717000005000n);
    expect(r1!.headers).toEqual([]);

    // The read side sees them: LEO 5, the tombstone at offset 4.
    const page = await ok(server, 'log.records', { dir, from: '3' });
    expect(page.logEndOffset).toBe('5');
    expect(page.rows.map((r) => (r.kind === 'record' ? [r.offset, r.value === null] : r.kind))).toEqual([
      ['3', false],
      ['4', true],
    ]);
    expect(PartitionLog.open(dir).logEndOffset).toBe(5n);

    // The same fingerprint again is stale now (the partition changed).
    const again = await call(server, 'edit.append', { ...req, fingerprint: p.fingerprint });
    expect(again).toMatchObject({ ok: false, error: { code: 'invalid-argument', details: { stale: true } } });
    expect(!again.ok && again.error.message).toContain('preview again');
    expect(statSync(logFile).size).toBe(sizeBefore + p.size);
  });

  it('a roll forced by segment.bytes (klx-topic.properties) is previewed with its reason and happens', async () => {
    const { server, dir } = await setup({ sidecar: 'segment.bytes=300\n' });
    const logFile = join(dir, '00000000000000000000.log');
    const size = statSync(logFile).size; // 3 single-record batches, 70-odd bytes each
    const req = { dir, records: [{ key: { text: 'k3' }, value: { text: 'x'.repeat(120) } }], now: String(T0 + 5000) };
    const p = await ok(server, 'edit.preview', req);
    expect(p.size + size).toBeGreaterThan(300);
    expect(p).toMatchObject({
      baseOffset: '3',
      newSegment: true,
      rollReason: 'segment.bytes',
      position: 0,
      segmentBaseOffset: '3',
      segmentName: '00000000000000000003.log',
      segmentFile: join(dir, '00000000000000000003.log'),
      limits: { segmentBytes: 300 },
    });
    expect(p.rollExplanation).toBe(`00000000000000000000.log holds ${size} bytes; with this ${p.size}-byte batch it would pass segment.bytes = 300 (Kafka rolls when size > segment.bytes − batch size: LogSegment.shouldRoll)`);
    const a = await ok(server, 'edit.append', { ...req, fingerprint: p.fingerprint });
    expect(a).toMatchObject({ rolled: true, rollReason: 'segment.bytes', segmentBaseOffset: '3', position: 0, size: p.size, logEndOffset: '4' });
    expect(statSync(join(dir, '00000000000000000003.log')).size).toBe(p.size);
    expect(statSync(logFile).size).toBe(size);
    const segs = (await ok(server, 'log.partition', { dir })).segments;
    expect(segs.map((s) => [s.baseOffset, s.active])).toEqual([
      ['0', false],
      ['3', true],
    ]);
    expect(batchesOf(join(dir, '00000000000000000003.log')).map((b) => [b.header.baseOffset, b.header.crcValid])).toEqual([[3n, true]]);
  });

  it('a roll forced by segment.ms (record time, not wall time) names both timestamps', async () => {
    const { server, dir } = await setup();
    const week = 604_800_000;
    const req = { dir, records: [{ key: { text: 'late' }, value: { text: 'v' }, timestamp: String(T0 + week + 1) }], now: String(T0 + week + 1) };
    const p = await ok(server, 'edit.preview', req);
    expect(p).toMatchObject({ newSegment: true, rollReason: 'segment.ms', segmentName: '00000000000000000003.log', limits: { segmentMs: String(week) } });
    expect(p.rollExplanation).toBe(`the batch's maxTimestamp ${T0 + week + 1} is ${week + 1} ms (7.0 days) after 00000000000000000000.log's first batch (${T0}): more than segment.ms = ${week} ms (7 days)`);
    // One millisecond earlier is not more than segment.ms: no roll.
    const q = await ok(server, 'edit.preview', { ...req, records: [{ ...req.records[0]!, timestamp: String(T0 + week) }] });
    expect(q).toMatchObject({ newSegment: false, rollReason: null, segmentName: '00000000000000000000.log' });
    expect((await ok(server, 'edit.append', { ...req, fingerprint: p.fingerprint })).rolled).toBe(true);
  });

  it('LogAppendTime (request override) stamps the batch with the preview clock', async () => {
    const { server, dir } = await setup();
    const req = { dir, records: [{ key: { text: 'k' }, value: { text: 'v' }, timestamp: '10' }], timestampType: 'LogAppendTime', now: String(T0 + 9000) };
    const p = await ok(server, 'edit.preview', req);
    expect(p).toMatchObject({ timestampType: 'LogAppendTime', timestampTypeSource: 'request', maxTimestamp: String(T0 + 9000) });
    await ok(server, 'edit.append', { ...req, fingerprint: p.fingerprint });
    const last = batchesOf(join(dir, '00000000000000000000.log')).at(-1)!;
    expect(last.header).toMatchObject({ timestampType: 'LogAppendTime', maxTimestamp: BigInt(T0 + 9000), crcValid: true });
    expect(last.records![0]!.timestamp).toBe(BigInt(T0 + 9000));
  });

  it('an append with another clock than the preview is refused as stale (what is written is what was shown)', async () => {
    const { server, dir } = await setup();
    const req = { dir, records: [{ key: { text: 'k' }, value: { text: 'v' } }], now: String(T0 + 5000) };
    const p = await ok(server, 'edit.preview', req);
    expect(await call(server, 'edit.append', { ...req, now: String(T0 + 6000), fingerprint: p.fingerprint })).toMatchObject({ ok: false, error: { code: 'invalid-argument', details: { stale: true } } });
    // and a changed record too
    expect(await call(server, 'edit.append', { ...req, records: [{ key: { text: 'k' }, value: { text: 'w' } }], fingerprint: p.fingerprint })).toMatchObject({ ok: false, error: { details: { stale: true } } });
    expect(PartitionLog.open(dir).logEndOffset).toBe(3n);
  });
});

describe('refusals', () => {
  const one = (dir: string) => ({ dir, records: [{ key: { text: 'k' }, value: { text: 'v' } }], now: String(T0 + 5000) });

  it('"Open for writing" off: read-only naming the folder; a read-only window: refused by dispatch; previews still work', async () => {
    const { server, dir } = await setup({ writeMode: false });
    const p = await ok(server, 'edit.preview', one(dir));
    const r = await call(server, 'edit.append', { ...one(dir), fingerprint: p.fingerprint });
    expect(r).toMatchObject({ ok: false, error: { code: 'read-only', file: dir } });
    expect(!r.ok && r.error.message).toContain('switch on "Open for writing"');
    const rp = await ok(server, 'edit.rollPreview', { dir });
    expect(await call(server, 'edit.roll', { dir, fingerprint: rp.fingerprint })).toMatchObject({ ok: false, error: { code: 'read-only' } });
    server.ctx.session.setWriteMode(true, { readOnly: false });
    expect(await call(server, 'edit.append', { ...one(dir), fingerprint: p.fingerprint }, true)).toMatchObject({ ok: false, error: { code: 'read-only', message: 'edit.append changes files and is refused: opened read-only' } });
    expect(await call(server, 'edit.roll', { dir, fingerprint: rp.fingerprint }, true)).toMatchObject({ ok: false, error: { code: 'read-only' } });
    expect(PartitionLog.open(dir).logEndOffset).toBe(3n);
    expect(readdirSync(dir).filter((f) => f.endsWith('.log'))).toEqual(['00000000000000000000.log']);
  });

  it('another writer holds the lock: the preview names it, the append is refused with locked', async () => {
    const { server, dir } = await setup();
    const lock = acquireLock(join(dir, WRITER_LOCK_FILE), { purpose: 'klx append (test)' });
    try {
      const p = await ok(server, 'edit.preview', one(dir));
      expect(p.lock).toMatchObject({ stale: false });
      expect(p.lock!.holder).toContain(`pid ${process.pid}`);
      expect(p.lock!.holder).toContain('klx append (test)');
      const r = await call(server, 'edit.append', { ...one(dir), fingerprint: p.fingerprint });
      expect(r).toMatchObject({ ok: false, error: { code: 'locked', file: join(dir, WRITER_LOCK_FILE) } });
      expect(!r.ok && r.error.message).toContain('locked by another writer');
      const rp = await ok(server, 'edit.rollPreview', { dir });
      expect(await call(server, 'edit.roll', { dir, fingerprint: rp.fingerprint })).toMatchObject({ ok: false, error: { code: 'locked' } });
    } finally {
      lock.release();
    }
    // Once released the same preview goes through.
    const p = await ok(server, 'edit.preview', one(dir));
    expect(p.lock).toBeNull();
    expect(await ok(server, 'edit.append', { ...one(dir), fingerprint: p.fingerprint })).toMatchObject({ baseOffset: '3' });
  });

  it('oversize records and requests, invalid base64 and a tombstone with a value are refused before anything is read', async () => {
    const { server, dir } = await setup();
    const big = 'x'.repeat(EDIT_LIMITS.recordBytes + 1);
    const r1 = await call(server, 'edit.preview', { dir, records: [{ key: null, value: { text: 'ok' } }, { key: { text: 'k' }, value: { text: big } }] });
    // The schema bounds the text length (16 MiB characters) first; a value of 16 MiB − 1 characters plus a key still passes it and is caught by the byte check.
    expect(r1).toMatchObject({ ok: false, error: { code: 'invalid-argument' } });
    const justOver = 'x'.repeat(EDIT_LIMITS.recordBytes - 1);
    const r2 = await call(server, 'edit.preview', { dir, records: [{ key: { text: 'kk' }, value: { text: justOver } }] });
    expect(r2).toMatchObject({ ok: false, error: { code: 'invalid-argument', details: { recordIndex: 0, bytes: EDIT_LIMITS.recordBytes + 1, limit: EDIT_LIMITS.recordBytes } } });
    expect(!r2.ok && r2.error.message).toBe(`record 0 holds ${EDIT_LIMITS.recordBytes + 1} bytes of key, value and headers; at most 16 MiB (16777216 bytes) per record`);
    const multi = 'é'.repeat(EDIT_LIMITS.recordBytes / 2 + 1); // 2 bytes per character
    const r3 = await call(server, 'edit.preview', { dir, records: [{ key: null, value: { text: multi } }] });
    expect(r3).toMatchObject({ ok: false, error: { details: { bytes: EDIT_LIMITS.recordBytes + 2 } } });
    const fifteen = 'y'.repeat(15 * 1024 * 1024);
    const r4 = await call(server, 'edit.preview', { dir, records: Array.from({ length: 5 }, () => ({ key: null, value: { text: fifteen } })) });
    expect(r4).toMatchObject({ ok: false, error: { code: 'invalid-argument', details: { bytes: 75 * 1024 * 1024, limit: EDIT_LIMITS.requestBytes } } });
    expect(!r4.ok && r4.error.message).toContain('at most 64 MiB (67108864 bytes) per request');

    const r5 = await call(server, 'edit.preview', { dir, records: [{ key: null, value: { base64: 'not base64!' } }] });
    expect(r5).toMatchObject({ ok: false, error: { code: 'invalid-argument' } });
    expect(!r5.ok && r5.error.message).toContain('not valid base64');
    expect(!r5.ok && r5.error.details).toMatchObject({ issues: [{ path: ['records', '0', 'value', 'base64'] }] });
    expect(await call(server, 'edit.preview', { dir, records: [{ key: null, value: { base64: 'QUJD' } }] })).toMatchObject({ ok: true });
    expect(await call(server, 'edit.preview', { dir, records: [{ key: null, value: { base64: 'QUJ' } }] })).toMatchObject({ ok: false, error: { code: 'invalid-argument' } });

    expect(await call(server, 'edit.preview', { dir, records: [{ key: { text: 'k' }, value: { text: 'v' }, tombstone: true }] })).toMatchObject({
      ok: false,
      error: { code: 'invalid-argument', message: "record 0 is marked as a tombstone but has a value; a tombstone's value is null" },
    });
    expect(await call(server, 'edit.preview', { dir, records: [] })).toMatchObject({ ok: false, error: { code: 'invalid-argument' } });
    expect(PartitionLog.open(dir).logEndOffset).toBe(3n);
  });

  it("the broker's own refusals: a keyless record on a compacted topic, a batch above max.message.bytes", async () => {
    const { server, dir } = await setup({ sidecar: 'cleanup.policy=compact\nmax.message.bytes=200\n' });
    const r1 = await call(server, 'edit.preview', { dir, records: [{ key: null, value: { text: 'v' } }] });
    expect(r1).toMatchObject({ ok: false, error: { code: 'invalid-record' } });
    expect(!r1.ok && r1.error.message).toContain('Compacted topic cannot accept message without key');
    const r2 = await call(server, 'edit.preview', { dir, records: [{ key: { text: 'k' }, value: { text: 'v'.repeat(300) } }] });
    expect(r2).toMatchObject({ ok: false, error: { code: 'invalid-record', details: { maxMessageBytes: 200 } } });
  });

  it('a CreateTime more than message.timestamp.after.max.ms (1 h, Kafka 4.0) after now is refused (LogValidator.validateTimestamp); allowTimestampOutOfRange writes it and the preview says which brokers refuse it', async () => {
    const { server, dir } = await setup();
    const now = '1717000005000';
    const late = { key: { text: 'k' }, value: { text: 'v' }, timestamp: String(1_717_000_005_000 + 3_600_001) };
    const r = await call(server, 'edit.preview', { dir, records: [late], now });
    expect(r).toMatchObject({ ok: false, error: { code: 'invalid-record', details: { config: 'message.timestamp.after.max.ms', value: '3600000', source: 'default' } } });
    expect(!r.ok && r.error.message).toContain('CreateTime 1717003605001 of record 0 (offset 3) in the append to orders-0 is 3600001 ms after now (1717000005000): a broker accepts [');
    // now + 3600000 exactly is accepted, with no refusal note.
    const edge = await ok(server, 'edit.preview', { dir, records: [{ ...late, timestamp: '1717003605000' }], now });
    expect(edge.brokerRefusal).toBeNull();
    const req = { dir, records: [late], now, allowTimestampOutOfRange: true };
    const p = await ok(server, 'edit.preview', req);
    expect(p.maxTimestamp).toBe('1717003605001');
    expect(p.brokerRefusal).toContain('a Kafka 4.0+ broker refuses it with the default message.timestamp.after.max.ms=3600000 (1 h, KIP-1030)');
    const a = await ok(server, 'edit.append', { ...req, fingerprint: p.fingerprint });
    expect(a.baseOffset).toBe('3');
    const last = batchesOf(join(dir, '00000000000000000000.log')).at(-1)!;
    expect(last.header.maxTimestamp).toBe(1_717_003_605_001n);
  });
});

describe('edit.rollPreview and edit.roll', () => {
  it('previews the new segment at logEndOffset, rolls it, and refuses a second roll of the now empty segment', async () => {
    const { server, dir, events } = await setup();
    const p = await ok(server, 'edit.rollPreview', { dir });
    expect(p).toMatchObject({
      rolled: true,
      note: null,
      previousSegmentBaseOffset: '0',
      previousSegmentName: '00000000000000000000.log',
      segmentBaseOffset: '3',
      segmentName: '00000000000000000003.log',
      segmentFile: join(dir, '00000000000000000003.log'),
      finalTimeIndexEntry: { timestamp: String(T0 + 2000), offset: '2' },
      logEndOffset: '3',
      lock: null,
    });
    expect(readdirSync(dir).filter((f) => f.endsWith('.log'))).toEqual(['00000000000000000000.log']);
    const r = await ok(server, 'edit.roll', { dir, fingerprint: p.fingerprint });
    expect(r).toMatchObject({ rolled: true, segmentBaseOffset: '3', segmentName: '00000000000000000003.log', fingerprint: '' });
    // The roll writes the producer snapshot at the new base offset, as UnifiedLog.roll does (issue 13 finding 12).
    expect(readdirSync(dir).filter((f) => /^0+3\./.test(f)).sort()).toEqual(['00000000000000000003.index', '00000000000000000003.log', '00000000000000000003.snapshot', '00000000000000000003.timeindex']);
    expect(statSync(join(dir, '00000000000000000003.log')).size).toBe(0);
    // The closed segment got its final time-index entry (T0 + 2000 → offset 2, relative 2).
    const ti = (await import('node:fs')).readFileSync(join(dir, '00000000000000000000.timeindex'));
    expect(ti.readBigInt64BE(ti.length - 12)).toBe(BigInt(T0 + 2000));
    expect(ti.readInt32BE(ti.length - 4)).toBe(2);
    expect(events.filter((e) => e.type === 'log.changed')).toEqual([{ type: 'log.changed', dirs: [dir], reason: 'rolled a new segment 00000000000000000003.log' }]);
    // Stale fingerprint now.
    expect(await call(server, 'edit.roll', { dir, fingerprint: p.fingerprint })).toMatchObject({ ok: false, error: { code: 'invalid-argument', details: { stale: true } } });
    // Nothing to roll in an empty active segment.
    const again = await ok(server, 'edit.rollPreview', { dir });
    expect(again).toMatchObject({ rolled: false, segmentBaseOffset: '3' });
    expect(again.note).toContain('is empty');
    const none = await ok(server, 'edit.roll', { dir, fingerprint: again.fingerprint });
    expect(none.rolled).toBe(false);
    expect(events.filter((e) => e.type === 'log.changed')).toHaveLength(1);
    // The next append goes into the new segment without another roll.
    const pa = await ok(server, 'edit.preview', { dir, records: [{ key: { text: 'k' }, value: { text: 'v' } }], now: String(T0 + 5000) });
    expect(pa).toMatchObject({ baseOffset: '3', segmentBaseOffset: '3', newSegment: false, position: 0 });
  });
});
