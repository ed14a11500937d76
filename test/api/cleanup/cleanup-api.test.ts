/**
 * The Cleanup API (`cleanup.*`) through `dispatch`, with the engine running in the cleaner worker
 * thread: compaction and retention plans with exact figures, runs that equal their plans and change
 * the files accordingly, undo restoring byte-identical files, the trash, and the refusals (read-only,
 * write mode off, stale preview, invalid config, lock held, corrupt segment) with their codes, files
 * and byte positions intact across the worker.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createServerApi, type ServerApi } from '../../../src-main/api/index.ts';
import { runInWorker } from '../../../src-main/api/cleanup/cleaner-worker-runner.ts';
import type { PlanTaskResult } from '../../../src-main/api/cleanup/cleanup-task.ts';
import { encodeBatch } from '../../../src-main/engine/format/record-batch.ts';
import type { JobResult, KlxEvent, MethodName } from '../../../src-shared/contract.ts';
import type { CleanupReport } from '../../../src-shared/cleanup-types.ts';
import { buildCompactedOrders, buildPartition, rec, singles, type BatchInput } from '../../support/log-builder.ts';
import { tempDir, useTrashDir } from '../helpers.ts';

const TS = 1_700_000_000_000;
const DAY = 86_400_000;
const tmp = tempDir('klx-cleanup-api-');
const trash = join(tmp.dir, 'trash');
let n = 0;

useTrashDir(trash, () => tmp.remove());

/**
 * A compacted-looking partition `orders-0` in a fresh log directory, three segments:
 * - 0: k1=a k2=b k1=c k3=d k2=<tombstone> k4=e (offsets 0..5)
 * - 6: k1=f k3=g <no key>=x k5=h (offsets 6..9)
 * - 10 (active): k1=i k6=j (offsets 10..11)
 */
function compacted(): { logDir: string; dir: string } {
  const logDir = join(tmp.dir, `case-${++n}`, 'kafka-logs');
  const dir = buildCompactedOrders(logDir, TS);
  return { logDir, dir };
}

/** Name → `<size>:<sha256>` of every file of the partition folder, plus the log directory's checkpoint files (byte identity, cheaply compared). */
function snapshot(dir: string, logDir: string): Map<string, string> {
  const m = new Map<string, string>();
  const add = (key: string, path: string) => {
    const b = readFileSync(path);
    m.set(key, `${b.length}:${createHash('sha256').update(b).digest('hex')}`);
  };
  for (const name of readdirSync(dir).sort()) add(name, join(dir, name));
  for (const f of ['cleaner-offset-checkpoint', 'log-start-offset-checkpoint']) if (existsSync(join(logDir, f))) add(`../${f}`, join(logDir, f));
  return m;
}

function logFiles(dir: string): { name: string; size: number }[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.log'))
    .sort()
    .map((name) => ({ name, size: statSync(join(dir, name)).size }));
}

type Outcome<T> = { ok: true; result: T } | { ok: false; error: { code: string; message: string; file?: string; position?: number; details?: Record<string, unknown> } };

/** Starts a job method and waits for its end. */
async function job<M extends MethodName>(server: ServerApi, method: M, req: unknown, readOnly = false, onStarted?: (jobId: string) => void): Promise<Outcome<M extends 'cleanup.plan' | 'cleanup.run' ? JobResult<M> : never>> {
  const env = await server.dispatch(method, req, { readOnly });
  if (!env.ok) return env as Outcome<never>;
  const { jobId } = env.result as { jobId: string };
  onStarted?.(jobId);
  const end = await server.ctx.jobs.wait(jobId);
  return (end.ok ? { ok: true, result: end.result } : { ok: false, error: end.error }) as Outcome<never>;
}

/** Calls a plain method (the answer loosely typed: the tests assert its values). */
async function call(server: ServerApi, method: MethodName, req: unknown, readOnly = false): Promise<any> {
  return server.dispatch(method, req, { readOnly });
}

/** A server with `root` opened and write mode as asked; collects its events. */
async function serverFor(root: string, writeMode: boolean): Promise<{ server: ServerApi; events: KlxEvent[] }> {
  const server = createServerApi({ version: '1', transport: 'bridge', jobs: { progressIntervalMs: 0 } });
  const events: KlxEvent[] = [];
  server.ctx.events.subscribe((e) => events.push(e));
  expect(await call(server, 'session.open', { path: root })).toMatchObject({ ok: true });
  if (writeMode) expect(await call(server, 'session.setWriteMode', { enabled: true })).toMatchObject({ ok: true });
  return { server, events };
}

/** A report without the fields that differ between a plan and its run. */
function comparable(r: CleanupReport): Omit<CleanupReport, 'dryRun' | 'trashEntries'> {
  const { dryRun: _d, trashEntries: _t, ...rest } = r;
  return rest;
}

const NOW = String(TS + 2 * DAY);

describe('cleanup.plan', () => {
  it('previews a compaction with exact removed counts, offset ranges, segments and bytes, touching nothing', async () => {
    const { logDir, dir } = compacted();
    const before = snapshot(dir, logDir);
    const { server, events } = await serverFor(logDir, false);
    const r = await job(server, 'cleanup.plan', { dir, operation: 'compaction', now: NOW });
    if (!r.ok) throw new Error(r.error.message);
    expect(r.result).toMatchObject({ dir, operation: 'compaction', now: NOW, trashDir: trash, fingerprintFiles: 13 });
    expect(r.result.planId).toMatch(/^[0-9a-f]{32}$/);
    expect(r.result.partitions).toHaveLength(1);
    const p = r.result.partitions[0]!;
    expect(p).toMatchObject({ partitionDir: dir, rel: '.', topic: 'orders', partition: 0, error: null });
    const rep = p.report!;
    expect(rep).toMatchObject({ operation: 'compaction', dryRun: true, rules: 'kafka', nothingToDo: false, removedTotal: 5, passes: 1, invalidMessages: 1 });
    expect(rep.removed).toEqual([
      { reason: 'superseded', records: 4, ranges: [{ first: '0', last: '3' }], truncated: false },
      { reason: 'keyless', records: 1, ranges: [{ first: '8', last: '8' }], truncated: false },
    ]);
    expect(rep.holes).toEqual([{ first: '0', last: '3' }, { first: '8', last: '8' }]);
    expect(rep.segments.deleted).toEqual([]);
    expect(rep.segments.rewritten).toEqual([
      { baseOffset: '0', file: '00000000000000000000.log', bytes: 425, records: 6, batches: 6, firstOffset: '0', lastOffset: '5' },
      { baseOffset: '6', file: '00000000000000000006.log', bytes: 282, records: 4, batches: 4, firstOffset: '6', lastOffset: '9' },
    ]);
    expect(rep.segments.created).toEqual([{ baseOffset: '0', file: '00000000000000000000.log', bytes: 358, records: 5, batches: 5, firstOffset: '4', lastOffset: '9' }]);
    expect(rep.before).toEqual({ segments: 2, bytes: 707, records: 10, batches: 10 });
    expect(rep.after).toEqual({ segments: 1, bytes: 358, records: 5, batches: 5 });
    expect(rep.log).toEqual({ bytesBefore: 849, bytesAfter: 500, logStartOffsetBefore: '0', logStartOffsetAfter: '0', logEndOffset: '12', highWatermark: '12' });
    expect(rep.cleanable).toMatchObject({ firstDirtyOffset: '0', firstUncleanableOffset: '10', uncleanableReason: 'active-segment', cleanBytes: 0, cleanableBytes: 707, dirtyRatio: 1, brokerWouldClean: false });
    // orders has the default cleanup.policy=delete: a broker never compacts it (LogCleanerManager.grabFilthiestCompactedLog).
    expect(rep.cleanable!.brokerNeverCompacts).toMatch(/^cleanup\.policy is delete \(the default\), and a broker's log cleaner only picks logs whose cleanup\.policy includes compact \(LogCleanerManager\.grabFilthiestCompactedLog/);
    expect(rep.notes.at(-1)).toMatch(/^not what a broker would do \(LogCleanerManager\.grabFilthiestCompactedLog\): a broker never compacts this topic: cleanup\.policy is delete/);
    expect(rep.cleanerCheckpoint).toEqual({ before: null, after: '10' });
    expect(rep.checkpointsWritten).toEqual(['cleaner-offset-checkpoint']);
    // The bytes are the files': 849 = the three .log files.
    expect(logFiles(dir).reduce((a, f) => a + f.size, 0)).toBe(849);
    // Progress came through the job, from the worker.
    expect(events.some((e) => e.type === 'job.progress' && e.method === 'cleanup.plan' && e.phase === 'planning compaction of orders-0')).toBe(true);
    expect(snapshot(dir, logDir)).toEqual(before);
    expect(events.some((e) => e.type === 'log.changed')).toBe(false);
    // The form's "like a broker" box: nothing planned, and why.
    const lb = await job(server, 'cleanup.plan', { dir, operation: 'compaction', now: NOW, likeBroker: true });
    if (!lb.ok) throw new Error(lb.error.message);
    const lbRep = lb.result.partitions[0]!.report!;
    expect([lbRep.nothingToDo, lbRep.segments.rewritten.length, lbRep.segments.created.length]).toEqual([true, 0, 0]);
    expect(lbRep.notes[0]).toMatch(/^a broker never compacts this topic: cleanup\.policy is delete \(the default\)/);
  });

  it('classic rules remove the tombstone too (older than delete.retention.ms), with the override naming its key', async () => {
    const { logDir, dir } = compacted();
    const { server } = await serverFor(logDir, false);
    const r = await job(server, 'cleanup.plan', { dir, operation: 'compaction', now: NOW, rules: 'classic', config: { 'delete.retention.ms': '1000' } });
    if (!r.ok) throw new Error(r.error.message);
    const rep = r.result.partitions[0]!.report!;
    expect(rep.rules).toBe('classic');
    // Classic: keyless records are kept; the tombstone at 4 (older than 1 s at `now`) goes.
    expect(rep.removed.map((x) => [x.reason, x.records, x.ranges])).toEqual([
      ['superseded', 4, [{ first: '0', last: '3' }]],
      ['tombstone', 1, [{ first: '4', last: '4' }]],
    ]);
    expect(rep.holes).toEqual([{ first: '0', last: '4' }]);
  });

  it('previews retention with a `now` override: old segments go only once now − their largest timestamp passes retention.ms', async () => {
    const logDir = join(tmp.dir, `case-${++n}`, 'kafka-logs');
    const dir = buildPartition(logDir, {
      topic: 'events',
      segments: [{ batches: singles(rec('a', '1', TS), rec('b', '2', TS + 1000)) }, { batches: singles(rec('c', '3', TS + DAY)) }, { batches: singles(rec('d', '4', TS + 8 * DAY)) }],
    });
    const { server } = await serverFor(logDir, false);
    const early = await job(server, 'cleanup.plan', { dir, operation: 'retention', now: String(TS + 7 * DAY) });
    if (!early.ok) throw new Error(early.error.message);
    expect(early.result.partitions[0]!.report).toMatchObject({ nothingToDo: true, removedTotal: 0 });
    const late = await job(server, 'cleanup.plan', { dir, operation: 'retention', now: String(TS + 8 * DAY + 1) });
    if (!late.ok) throw new Error(late.error.message);
    const rep = late.result.partitions[0]!.report!;
    expect(rep.segments.deleted.map((s) => [s.file, s.records, s.firstOffset, s.lastOffset])).toEqual([
      ['00000000000000000000.log', 2, '0', '1'],
      ['00000000000000000002.log', 1, '2', '2'],
    ]);
    expect(rep.removed).toEqual([{ reason: 'retention', records: 3, ranges: [{ first: '0', last: '2' }], truncated: false }]);
    expect(rep.log).toMatchObject({ logStartOffsetBefore: '0', logStartOffsetAfter: '3', logEndOffset: '4' });
    expect(rep.log.bytesBefore - rep.log.bytesAfter).toBe(rep.before.bytes);
    expect(rep.notes.join('\n')).toMatch(/retention/);
    // retention.bytes as an override: keep at most the last segment's bytes.
    const bySize = await job(server, 'cleanup.plan', { dir, operation: 'retention', now: String(TS), config: { 'retention.bytes': String(logFiles(dir)[2]!.size) } });
    if (!bySize.ok) throw new Error(bySize.error.message);
    expect(bySize.result.partitions[0]!.report!.segments.deleted.map((s) => s.baseOffset)).toEqual(['0', '2']);
  });

  it('over a whole log directory: one outcome per partition, a damaged partition reported and the others planned', async () => {
    const { logDir } = compacted();
    const bad = encodeBatch({ baseOffset: 1n, records: [rec('k2', 'b')] });
    bad.writeInt16BE(5, 21);
    buildPartition(logDir, { topic: 'orders', partition: 1, segments: [{ baseOffset: 0n, batches: [{ records: [rec('k1', 'a')] }, bad, { records: [rec('k1', 'c')] }] }, { baseOffset: 3n, batches: singles(rec('k3', 'x')) }] });
    const { server } = await serverFor(logDir, false);
    const r = await job(server, 'cleanup.plan', { dir: logDir, operation: 'compaction', now: NOW });
    if (!r.ok) throw new Error(r.error.message);
    expect(r.result.partitions.map((p) => [p.rel, p.report?.removedTotal ?? null, p.error?.code ?? null])).toEqual([
      ['orders-0', 5, null],
      ['orders-1', null, 'unknown-codec'],
    ]);
    expect(r.result.partitions[1]!.error).toMatchObject({ file: join(logDir, 'orders-1', '00000000000000000000.log'), position: 71 });
  });

  it('refuses an invalid config value or an unknown config with invalid-config naming the key', async () => {
    const { logDir, dir } = compacted();
    const { server } = await serverFor(logDir, false);
    const bad = await job(server, 'cleanup.plan', { dir, operation: 'retention', config: { 'retention.ms': 'soon' } });
    expect(bad).toMatchObject({ ok: false, error: { code: 'invalid-config', details: { key: 'retention.ms', value: 'soon' } } });
    expect(!bad.ok && bad.error.message).toMatch(/retention\.ms must be an integer number of milliseconds, got "soon"/);
    const ratio = await job(server, 'cleanup.plan', { dir, operation: 'compaction', config: { 'min.cleanable.dirty.ratio': '1.5' } });
    expect(ratio).toMatchObject({ ok: false, error: { code: 'invalid-config', details: { key: 'min.cleanable.dirty.ratio' } } });
    const unknown = await job(server, 'cleanup.plan', { dir, operation: 'retention', config: { 'retention.days': '7' } });
    expect(unknown).toMatchObject({ ok: false, error: { code: 'invalid-config', details: { key: 'retention.days' } } });
    expect(!unknown.ok && unknown.error.message).toMatch(/unknown topic config "retention\.days"/);
  });

  it('keeps a corrupt segment error intact across the worker: code, file, byte position, details', async () => {
    const logDir = join(tmp.dir, `case-${++n}`, 'kafka-logs');
    const bad = encodeBatch({ baseOffset: 1n, records: [rec('k2', 'b')] });
    bad.writeInt16BE(5, 21);
    const dir = buildPartition(logDir, { segments: [{ baseOffset: 0n, batches: [{ records: [rec('k1', 'a')] }, bad, { records: [rec('k1', 'c')] }] }, { baseOffset: 3n, batches: singles(rec('k3', 'x')) }] });
    const { server } = await serverFor(logDir, false);
    const r = await job(server, 'cleanup.plan', { dir, operation: 'compaction', now: '10000' });
    const file = join(dir, '00000000000000000000.log');
    expect(r).toEqual({
      ok: false,
      error: { code: 'unknown-codec', message: `${file}: position 71: log segment may be corrupt: unknown compression codec id 5 in the batch at baseOffset 1`, file, position: 71, details: { segment: '0', bytes: 71 } },
    });
    // And straight from the worker: a KlxError with the same fields.
    await expect(runInWorker<PlanTaskResult>({ kind: 'plan', path: dir, operation: 'compaction', options: { now: 10_000, config: {} } })).rejects.toMatchObject({ name: 'KlxError', code: 'unknown-codec', file, position: 71, reason: 'log segment may be corrupt: unknown compression codec id 5 in the batch at baseOffset 1' });
  });
});

describe('cleanup.run and cleanup.undo', () => {
  it('runs exactly the previewed compaction: measured report = plan, files changed accordingly, log.changed; undo restores byte-identical files', async () => {
    const { logDir, dir } = compacted();
    const original = snapshot(dir, logDir);
    const { server, events } = await serverFor(logDir, true);
    const plan = await job(server, 'cleanup.plan', { dir, operation: 'compaction', now: NOW });
    if (!plan.ok) throw new Error(plan.error.message);
    const run = await job(server, 'cleanup.run', { dir, operation: 'compaction', planId: plan.result.planId });
    if (!run.ok) throw new Error(run.error.message);
    expect(run.result).toMatchObject({ planId: plan.result.planId, dir, operation: 'compaction', now: NOW, trashDir: trash, changedDirs: [dir] });
    const measured = run.result.partitions[0]!.report!;
    expect(measured.dryRun).toBe(false);
    expect(comparable(measured)).toEqual(comparable(plan.result.partitions[0]!.report!));
    expect(measured.trashEntries).toHaveLength(1);
    expect(run.result.trashEntries).toEqual(measured.trashEntries);
    // The files: segments 0 and 6 replaced by one cleaned segment 0 of 358 bytes; the active one untouched.
    expect(logFiles(dir)).toEqual([
      { name: '00000000000000000000.log', size: 358 },
      { name: '00000000000000000010.log', size: 142 },
    ]);
    expect(existsSync(join(dir, '00000000000000000006.index'))).toBe(false);
    expect(readFileSync(join(logDir, 'cleaner-offset-checkpoint'), 'utf8')).toBe('0\n1\norders 0 10\n');
    // Progress from the engine inside the worker, and the reload event.
    const phases = events.filter((e) => e.type === 'job.progress' && e.method === 'cleanup.run').map((e) => (e as { phase: string }).phase);
    expect(phases).toContain('orders-0: build offset map');
    expect(phases).toContain('orders-0: swap');
    expect(events.filter((e) => e.type === 'log.changed')).toEqual([{ type: 'log.changed', dirs: [dir], reason: 'cleanup.run: compaction' }]);
    // The explorer's read side sees the new files at once.
    const part = await call(server, 'log.partition', { dir });
    expect(part.ok && part.result.segments.map((s: { baseOffset: string; size: number }) => [s.baseOffset, s.size])).toEqual([
      ['0', 358],
      ['10', 142],
    ]);

    // The trash lists the run; undo is possible until it is emptied.
    const listed = await call(server, 'cleanup.trash', { dir });
    expect(listed).toMatchObject({ ok: true, result: { trashDir: trash, otherEntries: 0, lastRun: { runId: run.result.runId, operation: 'compaction', partitionDirs: [dir] } } });
    expect(listed.result.entries).toHaveLength(1);
    expect(listed.result.entries[0]).toMatchObject({ id: measured.trashEntries[0], runId: run.result.runId, operation: 'compaction', state: 'committed', partitionDir: dir, topic: 'orders', partition: 0, files: 6 });
    expect(listed.result.entries[0].bytes).toBe(707 + 12 + 12); // the two .log files and their time indexes (empty offset indexes)
    expect(listed.result.bytes).toBe(listed.result.entries[0].bytes);

    const undone = await call(server, 'cleanup.undo', { dir });
    expect(undone).toMatchObject({ ok: true, result: { runId: run.result.runId, entries: [{ operation: 'compaction', partitionDir: dir }] } });
    expect([...undone.result.entries[0].restored].sort()).toEqual([
      '00000000000000000000.index',
      '00000000000000000000.log',
      '00000000000000000000.timeindex',
      '00000000000000000006.index',
      '00000000000000000006.log',
      '00000000000000000006.timeindex',
    ]);
    const after = snapshot(dir, logDir);
    after.delete('../cleaner-offset-checkpoint');
    const orig = new Map(original);
    expect(after).toEqual(orig);
    expect(existsSync(join(logDir, 'cleaner-offset-checkpoint')) ? readFileSync(join(logDir, 'cleaner-offset-checkpoint'), 'utf8') : '').not.toContain('orders 0 10');
    expect(events.filter((e) => e.type === 'log.changed').at(-1)).toEqual({ type: 'log.changed', dirs: [dir], reason: 'cleanup.undo' });
    expect(await call(server, 'cleanup.trash', { dir })).toMatchObject({ ok: true, result: { entries: [], lastRun: null } });
    expect(await call(server, 'cleanup.undo', { dir })).toMatchObject({ ok: false, error: { code: 'not-found' } });
  });

  it('runs retention with the preview\'s now and undoes it', async () => {
    const logDir = join(tmp.dir, `case-${++n}`, 'kafka-logs');
    const dir = buildPartition(logDir, { topic: 'events', segments: [{ batches: singles(rec('a', '1', TS), rec('b', '2', TS + 1000)) }, { batches: singles(rec('c', '3', TS + 9 * DAY)) }] });
    const original = snapshot(dir, logDir);
    const { server } = await serverFor(logDir, true);
    const plan = await job(server, 'cleanup.plan', { dir, operation: 'retention', now: String(TS + 9 * DAY) });
    if (!plan.ok) throw new Error(plan.error.message);
    expect(plan.result.partitions[0]!.report!.segments.deleted.map((s) => s.file)).toEqual(['00000000000000000000.log']);
    // `now` left out: the run uses the preview's.
    const run = await job(server, 'cleanup.run', { dir, operation: 'retention', planId: plan.result.planId });
    if (!run.ok) throw new Error(run.error.message);
    expect(run.result.now).toBe(String(TS + 9 * DAY));
    expect(comparable(run.result.partitions[0]!.report!)).toEqual(comparable(plan.result.partitions[0]!.report!));
    expect(logFiles(dir).map((f) => f.name)).toEqual(['00000000000000000002.log']);
    expect(readFileSync(join(logDir, 'log-start-offset-checkpoint'), 'utf8')).toBe('0\n1\nevents 0 2\n');
    expect(await call(server, 'cleanup.undo', { dir })).toMatchObject({ ok: true, result: { entries: [{ operation: 'retention', restored: expect.arrayContaining(['00000000000000000000.log']) }] } });
    const after = snapshot(dir, logDir);
    expect([...after.keys()].filter((k) => !k.startsWith('../'))).toEqual([...original.keys()].filter((k) => !k.startsWith('../')));
    for (const [k, v] of original) if (!k.startsWith('../')) expect(after.get(k), k).toBe(v);
  });

  it('is refused in a read-only window and while "Open for writing" is off, touching nothing', async () => {
    const { logDir, dir } = compacted();
    const before = snapshot(dir, logDir);
    const { server } = await serverFor(logDir, false);
    const plan = await job(server, 'cleanup.plan', { dir, operation: 'compaction', now: NOW });
    if (!plan.ok) throw new Error(plan.error.message);
    const req = { dir, operation: 'compaction', planId: plan.result.planId };
    expect(await job(server, 'cleanup.run', req, true)).toMatchObject({ ok: false, error: { code: 'read-only', message: 'cleanup.run changes files and is refused: opened read-only' } });
    const off = await job(server, 'cleanup.run', req);
    expect(off).toMatchObject({ ok: false, error: { code: 'read-only', file: dir } });
    expect(!off.ok && off.error.message).toMatch(/switch on "Open for writing"/);
    expect(await call(server, 'cleanup.undo', { dir })).toMatchObject({ ok: false, error: { code: 'read-only' } });
    expect(await call(server, 'cleanup.emptyTrash', {})).toMatchObject({ ok: false, error: { code: 'read-only' } });
    expect(await call(server, 'cleanup.emptyTrash', {}, true)).toMatchObject({ ok: false, error: { code: 'read-only' } });
    expect(snapshot(dir, logDir)).toEqual(before);
    // A plan is a read: allowed in a read-only window too.
    expect(await job(server, 'cleanup.plan', { dir, operation: 'compaction', now: NOW }, true)).toMatchObject({ ok: true });
  });

  it('refuses a stale preview: files changed since, other settings, another now, an unknown planId', async () => {
    const { logDir, dir } = compacted();
    const { server, events } = await serverFor(logDir, true);
    const plan = await job(server, 'cleanup.plan', { dir, operation: 'compaction', now: NOW });
    if (!plan.ok) throw new Error(plan.error.message);
    const planId = plan.result.planId;
    const stale = { ok: false, error: { code: 'invalid-argument', details: { reason: 'plan-stale' } } };
    expect(await job(server, 'cleanup.run', { dir, operation: 'compaction', planId: 'nope' })).toMatchObject(stale);
    expect(await job(server, 'cleanup.run', { dir, operation: 'compaction', planId, rules: 'classic' })).toMatchObject(stale);
    expect(await job(server, 'cleanup.run', { dir, operation: 'compaction', planId, config: { 'delete.retention.ms': '5' } })).toMatchObject(stale);
    expect(await job(server, 'cleanup.run', { dir, operation: 'compaction', planId, now: String(TS) })).toMatchObject(stale);
    // A broker appended to the active segment meanwhile.
    const active = join(dir, '00000000000000000010.log');
    writeFileSync(active, Buffer.concat([readFileSync(active), encodeBatch({ baseOffset: 12n, records: [rec('k7', 'z', TS + 12)] })]));
    const before = snapshot(dir, logDir);
    const r = await job(server, 'cleanup.run', { dir, operation: 'compaction', planId });
    expect(r).toMatchObject({ ok: false, error: { code: 'invalid-argument', file: dir, details: { reason: 'plan-stale', changes: ['00000000000000000010.log changed: 142 → 213 bytes'] } } });
    expect(!r.ok && r.error.message).toMatch(/the files changed since the preview .*preview again/);
    expect(snapshot(dir, logDir)).toEqual(before);
    // A touched file (same size, new mtime) counts too.
    const again = await job(server, 'cleanup.plan', { dir, operation: 'compaction', now: NOW });
    if (!again.ok) throw new Error(again.error.message);
    utimesSync(join(dir, '00000000000000000006.log'), new Date(), new Date(Date.now() + 5000));
    const touched = await job(server, 'cleanup.run', { dir, operation: 'compaction', planId: again.result.planId });
    expect(touched).toMatchObject({ ok: false, error: { details: { reason: 'plan-stale', changes: ['00000000000000000006.log was rewritten (same size, new modification time)'] } } });
    expect(events.some((e) => e.type === 'log.changed')).toBe(false);
  });

  it('is refused with `locked` while another writer holds the partition, touching nothing', async () => {
    const { logDir, dir } = compacted();
    const { server } = await serverFor(logDir, true);
    const plan = await job(server, 'cleanup.plan', { dir, operation: 'compaction', now: NOW });
    if (!plan.ok) throw new Error(plan.error.message);
    writeFileSync(join(dir, 'klx-writer.lock'), JSON.stringify({ pid: process.pid, hostname: hostname(), createdAt: new Date().toISOString(), purpose: 'klx append', nonce: 'other' }) + '\n');
    const before = snapshot(dir, logDir);
    const r = await job(server, 'cleanup.run', { dir, operation: 'compaction', planId: plan.result.planId });
    expect(r).toMatchObject({ ok: false, error: { code: 'locked', file: join(dir, 'klx-writer.lock') } });
    expect(!r.ok && r.error.message).toMatch(/klx append/);
    expect(snapshot(dir, logDir)).toEqual(before);
  });

  it('honours cancel in the middle of a big compaction: nothing was changed, no trash entry', async () => {
    const logDir = join(tmp.dir, `case-${++n}`, 'kafka-logs');
    const value = 'v'.repeat(120);
    const batches: BatchInput[] = [];
    for (let b = 0; b < 120; b++) batches.push({ records: Array.from({ length: 100 }, (_, i) => rec(`key-${(b * 100 + i) % 2000}`, value, TS + b)) });
    const dir = buildPartition(logDir, { topic: 'big', segments: [{ batches }, { batches: singles(rec('k', 'last', TS + 1000)) }] });
    expect(statSync(join(dir, '00000000000000000000.log')).size).toBeGreaterThan(1024 * 1024);
    const before = snapshot(dir, logDir);
    const { server, events } = await serverFor(logDir, true);
    const plan = await job(server, 'cleanup.plan', { dir, operation: 'compaction', now: NOW });
    if (!plan.ok) throw new Error(plan.error.message);
    expect(plan.result.partitions[0]!.report!.removedTotal).toBe(10_000);
    let jobId = '';
    let cancelledAt = '';
    const off = server.ctx.events.subscribe((e) => {
      if (e.type === 'job.progress' && e.jobId === jobId && e.phase === 'big-0: build offset map' && e.done > 0 && !cancelledAt) {
        cancelledAt = `${e.done} of ${e.total}`;
        server.ctx.jobs.cancel(jobId);
      }
    });
    const r = await job(server, 'cleanup.run', { dir, operation: 'compaction', planId: plan.result.planId }, false, (id) => (jobId = id));
    off();
    expect(cancelledAt).not.toBe('');
    expect(r).toMatchObject({ ok: false, error: { code: 'cancelled' } });
    expect(snapshot(dir, logDir)).toEqual(before);
    expect(existsSync(trash) ? readdirSync(trash).filter((id) => id.includes('big-0')) : []).toEqual([]);
    expect(events.some((e) => e.type === 'log.changed')).toBe(false);
    // The worker's own answer says so in words.
    const ac = new AbortController();
    ac.abort();
    await expect(
      runInWorker({ kind: 'run', path: dir, operation: 'compaction', options: { now: Number(NOW), config: {} }, trashDir: trash, expected: {} as never }, { signal: ac.signal }),
    ).rejects.toMatchObject({ code: 'invalid-argument' }); // an empty expected fingerprint is stale: checked before anything
    const planned = await runInWorker<PlanTaskResult>({ kind: 'plan', path: dir, operation: 'compaction', options: { now: Number(NOW), config: {} } });
    const ac2 = new AbortController();
    ac2.abort();
    await expect(
      runInWorker({ kind: 'run', path: dir, operation: 'compaction', options: { now: Number(NOW), config: {} }, trashDir: trash, expected: planned.fingerprint }, { signal: ac2.signal }),
    ).rejects.toMatchObject({ code: 'cancelled', message: `${dir}: compaction cancelled: nothing was changed` });
    expect(snapshot(dir, logDir)).toEqual(before);
  }, 180_000);

  it('a cancelled preview stops the worker at once', async () => {
    const { logDir, dir } = compacted();
    const { server } = await serverFor(logDir, false);
    const r = await job(server, 'cleanup.plan', { dir, operation: 'compaction', now: NOW }, false, (id) => server.ctx.jobs.cancel(id));
    expect(r).toMatchObject({ ok: false, error: { code: 'cancelled' } });
  });
});

describe('cleanup.trash and cleanup.emptyTrash', () => {
  it('lists only entries of the opened folders and empties them; undo is then impossible', async () => {
    const { logDir, dir } = compacted();
    const { server } = await serverFor(logDir, true);
    const plan = await job(server, 'cleanup.plan', { dir, operation: 'compaction', now: NOW });
    if (!plan.ok) throw new Error(plan.error.message);
    const run = await job(server, 'cleanup.run', { dir, operation: 'compaction', planId: plan.result.planId });
    if (!run.ok) throw new Error(run.error.message);
    const id = run.result.trashEntries[0]!;
    // Another session that opened another folder does not see (nor delete) this entry.
    const unrelated = join(tmp.dir, `case-${++n}`);
    buildPartition(unrelated, { topic: 'x', segments: [{ batches: singles(rec('a', 'b')) }] });
    const stranger = createServerApi({ version: '1', transport: 'bridge' });
    await call(stranger, 'session.open', { path: unrelated });
    await call(stranger, 'session.setWriteMode', { enabled: true });
    const seen = await call(stranger, 'cleanup.trash', {});
    expect(seen.ok && seen.result.entries.some((e: { id: string }) => e.id === id)).toBe(false);
    expect(await call(stranger, 'cleanup.emptyTrash', { ids: [id] })).toMatchObject({ ok: false, error: { code: 'invalid-argument' } });
    expect(existsSync(join(trash, id))).toBe(true);
    const emptied = await call(server, 'cleanup.emptyTrash', { dir });
    expect(emptied).toMatchObject({ ok: true, result: { removed: [id] } });
    expect(emptied.result.bytes).toBe(731);
    expect(existsSync(join(trash, id))).toBe(false);
    expect(await call(server, 'cleanup.undo', { dir })).toMatchObject({ ok: false, error: { code: 'not-found' } });
  });
});
