/**
 * Where format choices are persisted (api/core/decode-choices-store.ts): a JSON file of the app's
 * data folder keyed by the opened folder's real path, written atomically; a missing or invalid file
 * reads as no choices; the data folder follows $KLX_DATA_DIR, else the platform's data folder.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { appDataDir, decodeChoicesFile, fileDecodeChoicesStore, MAX_REMEMBERED_FOLDERS, memoryDecodeChoicesStore, readDecodeChoicesFile, savedChoicesFor } from '../../../src-main/api/core/decode-choices-store.ts';
import { tempDir } from '../helpers.ts';

const tmp = tempDir('klx-choices-');
afterAll(() => tmp.remove());

describe('fileDecodeChoicesStore', () => {
  it('reads nothing from a missing or invalid file, writes {version, folders} atomically, and drops a folder whose choices are all auto', () => {
    const dir = join(tmp.dir, 'a');
    const file = decodeChoicesFile(dir);
    expect(file).toBe(join(dir, 'decode-choices.json'));
    expect(fileDecodeChoicesStore(file).get('/data/logs')).toEqual({});
    mkdirSync(dir, { recursive: true });
    writeFileSync(file, '{"version": 2, "folders": 7}');
    const store = fileDecodeChoicesStore(file);
    expect(store.get('/data/logs')).toEqual({});
    store.set('/data/logs', { orders: { value: 'avro' } });
    store.set('/other', { prices: { key: 'string', value: 'double' } });
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ version: 1, folders: { '/data/logs': { orders: { value: 'avro' } }, '/other': { prices: { key: 'string', value: 'double' } } } });
    expect(readdirSync(dir)).toEqual(['decode-choices.json']); // no temporary file left
    // A copy, not the store's own object.
    const got = fileDecodeChoicesStore(file).get('/other');
    got.prices!.value = 'hex';
    expect(fileDecodeChoicesStore(file).get('/other')).toEqual({ prices: { key: 'string', value: 'double' } });
    store.set('/data/logs', {});
    expect(Object.keys((JSON.parse(readFileSync(file, 'utf8')) as { folders: object }).folders)).toEqual(['/other']);
  });

  it(`keeps at most ${MAX_REMEMBERED_FOLDERS} folders, dropping the least recently set`, () => {
    const file = decodeChoicesFile(join(tmp.dir, 'b'));
    const store = fileDecodeChoicesStore(file);
    for (let i = 0; i <= MAX_REMEMBERED_FOLDERS; i++) store.set(`/f${i}`, { t: { key: 'long' } });
    store.set('/f1', { t: { key: 'int' } }); // set again: now the most recent
    const folders = Object.keys((JSON.parse(readFileSync(file, 'utf8')) as { folders: object }).folders);
    expect(folders.length).toBe(MAX_REMEMBERED_FOLDERS);
    expect(folders).not.toContain('/f0');
    expect(folders[folders.length - 1]).toBe('/f1');
    expect(existsSync(file)).toBe(true);
  });

  it('memory store: per folder, copies in and out', () => {
    const m = memoryDecodeChoicesStore();
    const c = { t: { value: 'json' } };
    m.set('/x', c);
    c.t.value = 'hex';
    expect(m.get('/x')).toEqual({ t: { value: 'json' } });
    expect(m.get('/y')).toEqual({});
  });
});

describe('savedChoicesFor (what klx fetch/query apply outside the app)', () => {
  const folders = {
    '/data': { orders: { key: 'string', value: 'json' }, prices: { value: 'double' } },
    '/data/logs': { orders: { value: 'avro' } },
    '/data/logs/orders-0': { orders: { key: 'long' } },
    '/data/logs-2': { orders: { key: 'hex' } },
    '/elsewhere': { orders: { key: 'uuid' } },
  };
  it('merges the folders holding the path and inside it, the longer folder winning per topic and side', () => {
    expect(savedChoicesFor(folders, '/data/logs/orders-0')).toEqual({ orders: { key: 'long', value: 'avro' }, prices: { value: 'double' } });
    expect(savedChoicesFor(folders, '/data/logs')).toEqual({ orders: { key: 'long', value: 'avro' }, prices: { value: 'double' } });
    // '/data/logs-2' is not inside '/data/logs' (a prefix of the text only).
    expect(savedChoicesFor(folders, '/data/logs-2/orders-0')).toEqual({ orders: { key: 'hex', value: 'json' }, prices: { value: 'double' } });
    expect(savedChoicesFor(folders, '/other')).toEqual({});
  });

  it('an earlier file (the Electron user-data one) is read until the data folder has its own, then written there', () => {
    const old = decodeChoicesFile(join(tmp.dir, 'userdata'));
    fileDecodeChoicesStore(old).set('/x', { t: { value: 'json' } });
    const file = decodeChoicesFile(join(tmp.dir, 'data'));
    const store = fileDecodeChoicesStore(file, old);
    expect(store.get('/x')).toEqual({ t: { value: 'json' } });
    store.set('/y', { u: { key: 'long' } });
    expect(readDecodeChoicesFile(file)).toEqual({ '/x': { t: { value: 'json' } }, '/y': { u: { key: 'long' } } });
    // Once the data folder has its file, the earlier one is no longer read.
    fileDecodeChoicesStore(old).set('/z', { v: { key: 'hex' } });
    expect(fileDecodeChoicesStore(file, old).get('/z')).toEqual({});
  });
});

describe('appDataDir', () => {
  it('is $KLX_DATA_DIR when set, else the XDG data folder (Linux)', () => {
    expect(appDataDir({ KLX_DATA_DIR: '/srv/klx' })).toBe('/srv/klx');
    if (process.platform === 'linux') {
      expect(appDataDir({ XDG_DATA_HOME: '/home/u/.data' })).toBe('/home/u/.data/kafka-log-explorer');
      expect(appDataDir({})).toBe(join(homedir(), '.local', 'share', 'kafka-log-explorer'));
    }
  });
});
