/**
 * Folders that follow the disk (issue 14): a file created, appended to or deleted under an opened
 * folder by another process gives ONE debounced `folder.changed` event naming the partition and the
 * change (preceded by `log.changed` with `external: true`, which drops main's caches); changes
 * inside the app's own trash and cache folders give none; the app's own append gives its
 * `log.changed` and no `folder.changed`. Also `session.close`, `session.reload` and the recent
 * folders with why one cannot be opened.
 */
import { appendFileSync, mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createServerApi, type ServerApi } from '../../../src-main/api/index.ts';
import { folderWatchersOf } from '../../../src-main/api/core/folder-watcher.ts';
import { logCacheOf } from '../../../src-main/api/core/log-cache.ts';
import { fileRecentStore, recentFoldersFile } from '../../../src-main/api/core/recent-store.ts';
import type { FolderChangedEvent, KlxEvent, MethodName, Res } from '../../../src-shared/contract.ts';
import type { Envelope } from '../../../src-shared/wire.ts';
import { encodeBatch } from '../../../src-main/engine/format/record-batch.ts';
import { buildPartition, rec, singles } from '../../support/log-builder.ts';
import { tempDir } from '../helpers.ts';

const tmp = tempDir('klx-watch-');
const saved = { trash: process.env.KLX_TRASH_DIR, cache: process.env.XDG_CACHE_HOME };
beforeAll(() => {
  // The app's trash and SQL cache inside the opened folder, to show they are not followed.
  process.env.KLX_TRASH_DIR = join(tmp.dir, 'root', 'trash');
  process.env.XDG_CACHE_HOME = join(tmp.dir, 'root', 'cache');
});
afterAll(() => {
  if (saved.trash === undefined) delete process.env.KLX_TRASH_DIR;
  else process.env.KLX_TRASH_DIR = saved.trash;
  if (saved.cache === undefined) delete process.env.XDG_CACHE_HOME;
  else process.env.XDG_CACHE_HOME = saved.cache;
  tmp.remove();
});

const DEBOUNCE = 120;
const T0 = 1_717_000_000_000;
let server: ServerApi;
let events: KlxEvent[];
let n = 0;
afterEach(() => folderWatchersOf(server.ctx)?.close());

/** `<tmp>/<name>/kafka-logs/prices-0` with offsets 0..2, opened at `<tmp>/<name>` with the watcher on. */
async function setup(name = `root-${n++}`): Promise<{ root: string; logDir: string; dir: string }> {
  const root = join(tmp.dir, name);
  const logDir = join(root, 'kafka-logs');
  const dir = buildPartition(logDir, { topic: 'prices', segments: [{ batches: singles(rec('a', '1', T0), rec('b', '2', T0 + 1), rec('c', '3', T0 + 2)) }] }, { highWatermark: 3n });
  server = createServerApi({ version: 'test', transport: 'bridge', watch: { debounceMs: DEBOUNCE, maxWaitMs: 5_000 } });
  events = [];
  server.ctx.events.subscribe((e) => events.push(e));
  await server.ctx.session.open(root, { readOnly: false });
  events.length = 0;
  return { root, logDir, dir };
}

const changed = (): FolderChangedEvent[] => events.filter((e): e is FolderChangedEvent => e.type === 'folder.changed');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits until `count` folder.changed events arrived, then a debounce more (to see no extra one). */
async function settle(count: number): Promise<FolderChangedEvent[]> {
  const until = Date.now() + 5_000;
  while (changed().length < count && Date.now() < until) await sleep(20);
  await sleep(DEBOUNCE * 3);
  return changed();
}

async function call<M extends MethodName>(method: M, req: unknown): Promise<Envelope<Res<M>>> {
  return (await server.dispatch(method, req, { readOnly: false })) as Envelope<Res<M>>;
}

describe('the folder watcher', () => {
  it('three appends in a burst to the active segment give one event: the segment grew by their bytes; log.changed (external) comes first', async () => {
    const { root, dir } = await setup();
    const log = join(dir, '00000000000000000000.log');
    const before = statSync(log).size;
    const batches = [3, 4, 5].map((o) => encodeBatch({ baseOffset: BigInt(o), records: [rec(`k${o}`, `v${o}`, T0 + o)] }));
    for (const b of batches) {
      appendFileSync(log, b);
      await sleep(20);
    }
    const grown = batches.reduce((s, b) => s + b.length, 0);
    expect(statSync(log).size).toBe(before + grown);
    const got = await settle(1);
    expect(got).toHaveLength(1);
    expect(got[0]!.root).toBe(root);
    expect(got[0]!.dirs).toEqual([dir]);
    expect(got[0]!.changes).toEqual([
      expect.objectContaining({ kind: 'partition-changed', dir, name: 'prices-0', segmentsGrown: [{ file: '00000000000000000000.log', bytes: grown }], segmentsAdded: [], otherFiles: 0 }),
    ]);
    expect(got[0]!.changes[0]!.text).toBe(`prices-0: 00000000000000000000.log grew by ${grown} bytes`);
    const i = events.findIndex((e) => e.type === 'log.changed');
    expect(events[i]).toEqual({ type: 'log.changed', dirs: [dir], reason: 'files changed on disk', external: true });
    expect(i).toBeLessThan(events.findIndex((e) => e.type === 'folder.changed'));
    // The partition's cached summary follows the file: logEndOffset 6 after the three batches.
    const summary = await call('log.partition', { dir });
    expect(summary.ok && summary.result.partition.logEndOffset).toBe('6');
  });

  it('a rolled segment (new .log and .index) is "1 segment added (…), 1 file changed"; a checkpoint rewrite names the checkpoint and the log directory', async () => {
    const { logDir, dir } = await setup();
    writeFileSync(join(dir, '00000000000000000003.log'), encodeBatch({ baseOffset: 3n, records: [rec('d', '4', T0 + 3)] }));
    writeFileSync(join(dir, '00000000000000000003.index'), Buffer.alloc(0));
    let got = await settle(1);
    expect(got).toHaveLength(1);
    expect(got[0]!.changes.map((c) => c.text)).toEqual(['prices-0: 1 segment added (00000000000000000003.log), 1 file changed']);
    expect(got[0]!.changes[0]!.segmentsAdded).toEqual(['00000000000000000003.log']);

    writeFileSync(join(logDir, 'replication-offset-checkpoint'), '0\n1\nprices 0 4\n');
    got = await settle(2);
    expect(got).toHaveLength(2);
    expect(got[1]!.changes).toEqual([expect.objectContaining({ kind: 'log-dir-changed', dir: logDir, checkpoints: ['replication-offset-checkpoint'], text: 'kafka-logs: replication-offset-checkpoint changed' })]);
    // The partitions of that log directory read its checkpoints: they are named as changed.
    expect(got[1]!.dirs).toEqual([dir]);
  });

  it('a partition folder created (as klx create makes it) and then deleted: one event each', async () => {
    const { logDir } = await setup();
    const created = join(logDir, 'prices-1');
    mkdirSync(created);
    writeFileSync(join(created, '00000000000000000000.log'), '');
    writeFileSync(join(created, '00000000000000000000.index'), '');
    writeFileSync(join(created, 'leader-epoch-checkpoint'), '0\n0\n');
    let got = await settle(1);
    expect(got).toHaveLength(1);
    expect(got[0]!.dirs).toEqual([created]);
    expect(got[0]!.changes).toEqual([expect.objectContaining({ kind: 'partition-created', dir: created, name: 'prices-1', segmentsAdded: ['00000000000000000000.log'], text: 'prices-1: partition created (1 segment)' })]);
    // Its files are followed from then on.
    appendFileSync(join(created, '00000000000000000000.log'), encodeBatch({ baseOffset: 0n, records: [rec('x', 'y', T0)] }));
    got = await settle(2);
    expect(got[1]!.changes.map((c) => c.kind)).toEqual(['partition-changed']);

    rmSync(created, { recursive: true });
    got = await settle(3);
    expect(got).toHaveLength(3);
    expect(got[2]!.changes).toEqual([expect.objectContaining({ kind: 'partition-deleted', dir: created, text: 'prices-1: partition deleted' })]);
  });

  it("files written in the app's own trash and SQL cache folders give no event", async () => {
    const { root } = await setup('root');
    mkdirSync(join(root, 'trash', 'run-1'), { recursive: true });
    writeFileSync(join(root, 'trash', 'run-1', '00000000000000000000.log'), 'x');
    mkdirSync(join(root, 'cache', 'kafka-log-explorer', 'prices-0'), { recursive: true });
    writeFileSync(join(root, 'cache', 'kafka-log-explorer', 'prices-0', 'tables.duckdb'), 'x');
    appendFileSync(join(root, 'trash', 'run-1', '00000000000000000000.log'), 'more');
    await sleep(DEBOUNCE * 4);
    expect(changed()).toEqual([]);
    expect(events.filter((e) => e.type === 'log.changed')).toEqual([]);
  });

  it("the app's own append gives its log.changed and no folder.changed", async () => {
    const { dir } = await setup();
    server.ctx.session.setWriteMode(true, { readOnly: false });
    const req = { dir, records: [{ key: { text: 'z' }, value: { text: '26' } }], now: String(T0 + 5000) };
    const p = await call('edit.preview', req);
    if (!p.ok) throw new Error(p.error.message);
    const a = await call('edit.append', { ...req, fingerprint: p.result.fingerprint });
    expect(a.ok ? 'appended' : a.error.message).toBe('appended');
    await sleep(DEBOUNCE * 4);
    expect(events.filter((e) => e.type === 'log.changed').map((e) => e.type === 'log.changed' && e.external)).toEqual([undefined]);
    expect(changed()).toEqual([]);
  });

  it('session.reload drops the cached partitions; session.close stops the watcher and refuses paths inside', async () => {
    const { root, dir } = await setup();
    expect((await call('log.partition', { dir })).ok).toBe(true);
    expect(logCacheOf(server.ctx).dirsInside(root)).toEqual([dir]);
    const r = await call('session.reload', { path: root });
    expect(r).toEqual({ ok: true, result: { path: root, dirs: [dir] } });
    expect(logCacheOf(server.ctx).dirsInside(root)).toEqual([]);
    expect(events.at(-1)).toEqual({ type: 'log.changed', dirs: [dir], reason: 'folder reloaded', external: true });

    const c = await call('session.close', { path: root });
    expect(c).toEqual({ ok: true, result: { opened: [] } });
    expect(events.at(-1)).toEqual({ type: 'session.closed', path: root });
    expect(folderWatchersOf(server.ctx)?.of(root)).toBeUndefined();
    appendFileSync(join(dir, '00000000000000000000.log'), 'junk');
    await sleep(DEBOUNCE * 3);
    expect(changed()).toEqual([]);
    const refused = await call('log.partition', { dir });
    expect(!refused.ok && refused.error.code).toBe('invalid-argument');
    const again = await call('session.close', { path: root });
    expect(!again.ok && again.error.code).toBe('not-found');
  });
});

describe('recent folders', () => {
  it('are kept in recent-folders.json of the data folder, most recent first; a folder that went is listed unavailable with the reason', async () => {
    const data = join(tmp.dir, 'data');
    const a = join(tmp.dir, 'recent-a');
    const b = join(tmp.dir, 'recent-b');
    mkdirSync(a);
    mkdirSync(b);
    const s1 = createServerApi({ version: 'test', transport: 'bridge', recent: fileRecentStore(recentFoldersFile(data)) });
    await s1.ctx.session.open(a, { readOnly: false });
    await s1.ctx.session.open(b, { readOnly: false });
    rmSync(b, { recursive: true });
    // A new session (a restarted app) reads the file.
    const s2 = createServerApi({ version: 'test', transport: 'bridge', recent: fileRecentStore(recentFoldersFile(data)) });
    const f = (await s2.dispatch('session.folders', {}, { readOnly: false })) as Envelope<Res<'session.folders'>>;
    expect(f.ok && f.result.recent).toEqual([b, a]);
    expect(f.ok && f.result.recentFolders).toEqual([
      { path: b, available: false, reason: 'no longer exists' },
      { path: a, available: true },
    ]);
    // Confined to a served folder, the others are outside it.
    const served = join(tmp.dir, 'served');
    mkdirSync(served);
    const confined = (await s2.dispatch('session.folders', {}, { readOnly: false, allowedRoots: [served] })) as Envelope<Res<'session.folders'>>;
    expect(confined.ok && confined.result.recentFolders[1]).toEqual({ path: a, available: false, reason: `outside the folders this server was started for (${served})` });
  });
});
