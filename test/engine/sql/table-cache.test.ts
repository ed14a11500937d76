/**
 * The table cache: an unchanged folder reuses its DuckDB file (nothing read from the logs), any
 * change (append, checkpoint, value cap) builds a new one and drops the old state, a crash mid-build
 * (leftover `.building-` file) or a damaged cache file never passes for a complete table set, a
 * folder that changes while it is read is not cached, and the log folder itself is never written.
 * The schema files given are part of the state by their contents; the format choices are not (the
 * decoded columns are computed at query time).
 */
import { spawnSync } from 'node:child_process';
import { appendFileSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { encodeBatch } from '../../../src-main/engine/format/record-batch.ts';
import { openPath } from '../../../src-main/engine/log/log-dir.ts';
import { decodeFingerprint } from '../../../src-main/engine/sql/decode-columns.ts';
import { SqlSession } from '../../../src-main/engine/sql/sql-session.ts';
import { cacheKey, defaultCacheDir, folderFingerprint, makeCacheDir, prepareLogTables } from '../../../src-main/engine/sql/table-cache.ts';
import { removeLeftoverTempDirs, tempTablesPrefix } from '../../../src-main/engine/sql/sql-resources.ts';
import { buildPartition, rec, singles, tempDir } from '../../support/log-builder.ts';
import { openSql, scalar } from './sql-test-helpers.ts';

function folderState(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => {
      const p = join(e.parentPath, e.name);
      const st = statSync(p);
      return `${p} ${st.size} ${st.mtimeMs}`;
    })
    .sort();
}

const dbFiles = (cacheDir: string) => readdirSync(cacheDir).filter((n) => n.endsWith('.duckdb')).sort();

describe('table cache', () => {
  it('an unchanged folder reuses its file; an append builds a new one and removes the old state; the folder is never written', async () => {
    const logDir = tempDir();
    const dir = buildPartition(logDir, { segments: [{ batches: singles(rec('a', '1'), rec('b', '2')) }] });
    const cacheDir = tempDir('klx-sql-cache-');
    const before = folderState(logDir);

    const first = await openSql(dir, { cacheDir });
    expect([first.reused, first.buildSummary?.records]).toEqual([false, 2]);
    const firstFile = first.dbPath;
    first.close();
    expect(dbFiles(cacheDir)).toEqual([firstFile.slice(cacheDir.length + 1)]);

    const second = await openSql(dir, { cacheDir });
    expect([second.reused, second.buildSummary, second.dbPath]).toEqual([true, null, firstFile]);
    expect(await scalar(second, 'SELECT count(*) FROM records')).toBe(2n);
    second.close();
    expect(folderState(logDir)).toEqual(before);

    appendFileSync(join(dir, '00000000000000000000.log'), encodeBatch({ baseOffset: 2n, records: [rec('a', '3')] }));
    const third = await openSql(dir, { cacheDir });
    expect(third.reused).toBe(false);
    expect(third.dbPath).not.toBe(firstFile);
    expect(await scalar(third, `SELECT value_text FROM state WHERE key_text = 'a'`)).toBe('3');
    third.close();
    expect(dbFiles(cacheDir)).toEqual([third.dbPath.slice(cacheDir.length + 1)]);
  });

  it('a checkpoint change (log-start-offset-checkpoint) or another value cap is another state', async () => {
    const logDir = tempDir();
    const dir = buildPartition(logDir, { segments: [{ batches: singles(rec('a', '1'), rec('b', '2'), rec('c', '3')) }] });
    const cacheDir = tempDir('klx-sql-cache-');
    const fp = folderFingerprint(openPath(dir));
    expect(fp).toMatch(/^[0-9a-f]{64}$/);
    expect(folderFingerprint(openPath(dir))).toBe(fp);
    expect(folderFingerprint(openPath(dir), 10)).not.toBe(fp);

    const s1 = await openSql(dir, { cacheDir });
    expect(await scalar(s1, 'SELECT log_start_offset FROM partitions')).toBe(0n);
    s1.close();
    writeFileSync(join(logDir, 'log-start-offset-checkpoint'), '0\n1\ntest 0 2\n');
    expect(folderFingerprint(openPath(dir))).not.toBe(fp);
    const s2 = await openSql(dir, { cacheDir });
    expect(s2.reused).toBe(false);
    expect(await scalar(s2, 'SELECT log_start_offset FROM partitions')).toBe(2n);
    expect(await scalar(s2, 'SELECT count(*) FROM state')).toBe(1n);
    s2.close();
    const s3 = await openSql(dir, { cacheDir, valueCapBytes: 1 });
    expect(s3.reused).toBe(false);
    expect(await scalar(s3, `SELECT value FROM records WHERE key_text = 'c'`)).toEqual(Buffer.from('3'));
  });

  it('rebuild: true builds even when a cache file exists', async () => {
    const dir = buildPartition(tempDir(), { segments: [{ batches: singles(rec('a', '1')) }] });
    const cacheDir = tempDir('klx-sql-cache-');
    (await openSql(dir, { cacheDir })).close();
    const again = await openSql(dir, { cacheDir, rebuild: true });
    expect(again.reused).toBe(false);
    expect(dbFiles(cacheDir)).toHaveLength(1);
  });

  it('a crash mid-build leaves only a .building- file: ignored, removed once its process is gone, and the tables are built again', async () => {
    const dir = buildPartition(tempDir(), { segments: [{ batches: singles(rec('a', '1')) }] });
    const cacheDir = tempDir('klx-sql-cache-');
    const root = openPath(dir).root;
    const dead = spawnSync(process.execPath, ['-e', '0']).pid!;
    const key = cacheKey(root);
    const state = folderFingerprint(openPath(dir)).slice(0, 16);
    const leftover = `${key}-${state}.building-${dead}-0badc0de.duckdb`;
    const live = `${key}-${state}.building-${process.pid}-0badc0df.duckdb`;
    writeFileSync(join(cacheDir, leftover), 'half a database');
    writeFileSync(join(cacheDir, `${leftover}.wal`), 'half a wal');
    writeFileSync(join(cacheDir, live), 'another build of this process, still running');
    const s = await openSql(dir, { cacheDir });
    expect(s.reused).toBe(false);
    expect(await scalar(s, 'SELECT count(*) FROM records')).toBe(1n);
    expect(readdirSync(cacheDir).sort()).toEqual([`${key}-${state}.duckdb`, live, `${key}.root`].sort());
  });

  it('a cache folder that cannot be made is an io-error naming it, at once (Node\'s recursive mkdir loops forever under /proc)', async () => {
    const dir = buildPartition(tempDir(), { segments: [{ batches: singles(rec('a', '1')) }] });
    const started = Date.now();
    await expect(prepareLogTables(dir, { cacheDir: '/proc/nope/deeper' })).rejects.toMatchObject({ code: 'io-error', file: '/proc/nope/deeper', reason: "cannot create the SQL cache folder: ENOENT: no such file or directory, mkdir '/proc/nope'" });
    const file = join(tempDir(), 'a-file');
    writeFileSync(file, 'x');
    expect(() => makeCacheDir(join(file, 'cache'))).toThrow(expect.objectContaining({ code: 'io-error', file: join(file, 'cache'), reason: `cannot create the SQL cache folder: ENOTDIR: not a directory, stat '${join(file, 'cache')}'` }));
    expect(() => makeCacheDir(file)).toThrow(expect.objectContaining({ code: 'io-error', file, reason: `cannot create the SQL cache folder: ${file} is not a folder` }));
    expect(Date.now() - started).toBeLessThan(5000);
    const made = join(tempDir(), 'x', 'y', 'z');
    makeCacheDir(made);
    expect(statSync(made).isDirectory()).toBe(true);
  });

  it('the table sets of a folder that no longer exists are removed at the next open (its <key>.root names the folder); others stay', async () => {
    const cacheDir = tempDir('klx-sql-cache-');
    const gone = buildPartition(tempDir(), { segments: [{ batches: singles(rec('a', '1')) }] });
    const kept = buildPartition(tempDir(), { segments: [{ batches: singles(rec('b', '2')) }] });
    const goneKey = cacheKey(openPath(gone).root);
    const keptKey = cacheKey(openPath(kept).root);
    (await openSql(gone, { cacheDir })).close();
    (await openSql(kept, { cacheDir })).close();
    expect(readFileSync(join(cacheDir, `${goneKey}.root`), 'utf8')).toBe(openPath(gone).root);
    expect(readdirSync(cacheDir).filter((n) => n.startsWith(goneKey))).toHaveLength(2);
    rmSync(gone, { recursive: true });
    await openSql(kept, { cacheDir });
    expect(readdirSync(cacheDir).sort()).toEqual([`${keptKey}-${folderFingerprint(openPath(kept)).slice(0, 16)}.duckdb`, `${keptKey}.root`].sort());
  });

  it('table sets without cache go to <tmpdir>/klx-sql-<pid>-*; what killed processes left there (klx-sql-<pid>-*, klx-duckdb-<pid>) is removed at the next open', async () => {
    const tmp = tempDir('klx-tmp-');
    const dead = spawnSync(process.execPath, ['-e', '0']).pid!;
    for (const n of [`klx-sql-${dead}-AbC123`, `klx-duckdb-${dead}`, `klx-sql-${process.ppid}-live12`, `klx-duckdb-${process.ppid}`, 'klx-sql-Xy12ab']) {
      mkdirSync(join(tmp, n));
      writeFileSync(join(tmp, n, 'f.duckdb'), 'left');
    }
    expect(removeLeftoverTempDirs(tmp).sort()).toEqual([`klx-duckdb-${dead}`, `klx-sql-${dead}-AbC123`]);
    expect(readdirSync(tmp).sort()).toEqual([`klx-duckdb-${process.ppid}`, `klx-sql-${process.ppid}-live12`, 'klx-sql-Xy12ab'].sort());
    expect(tempTablesPrefix()).toBe(`klx-sql-${process.pid}-`);
  });

  it('a damaged cache file under the final name is not trusted: the tables are built again', async () => {
    const dir = buildPartition(tempDir(), { segments: [{ batches: singles(rec('a', '1'), rec('a', '2')) }] });
    const cacheDir = tempDir('klx-sql-cache-');
    const s = await openSql(dir, { cacheDir });
    const file = s.dbPath;
    s.close();
    writeFileSync(file, Buffer.alloc(4096, 7));
    const again = await openSql(dir, { cacheDir });
    expect([again.reused, again.dbPath]).toEqual([false, file]);
    expect(await scalar(again, 'SELECT value_text FROM state')).toBe('2');
  });

  it('a folder that changes while it is read is not cached: the tables are used once and deleted', async () => {
    const dir = buildPartition(tempDir(), { segments: [{ batches: singles(rec('a', '1')) }] });
    const cacheDir = tempDir('klx-sql-cache-');
    let appended = false;
    const prepared = await prepareLogTables(dir, {
      cacheDir,
      onProgress: () => {
        if (appended) return;
        appended = true;
        appendFileSync(join(dir, '00000000000000000000.log'), encodeBatch({ baseOffset: 1n, records: [rec('b', '2')] }));
      },
    });
    expect([prepared.persistent, prepared.reused]).toEqual([false, false]);
    expect(prepared.dbPath).toContain('.building-');
    prepared.release();
    expect(dbFiles(cacheDir)).toEqual([]);
    const s = await openSql(dir, { cacheDir });
    expect(await scalar(s, 'SELECT count(*) FROM records')).toBe(2n);
  });

  it('two sessions read the same cache file at once', async () => {
    const dir = buildPartition(tempDir(), { segments: [{ batches: singles(rec('a', '1'), rec('b', '2')) }] });
    const cacheDir = tempDir('klx-sql-cache-');
    const a = await openSql(dir, { cacheDir });
    const b = await SqlSession.open(dir, { cacheDir });
    try {
      expect(b.reused).toBe(true);
      expect(await Promise.all([scalar(a, 'SELECT count(*) FROM state'), scalar(b, 'SELECT count(*) FROM records')])).toEqual([2n, 2n]);
    } finally {
      b.close();
    }
  });

  it('the default cache folder follows XDG_CACHE_HOME, else ~/.cache', () => {
    expect(defaultCacheDir({ XDG_CACHE_HOME: '/x/cache' })).toBe('/x/cache/kafka-log-explorer');
    expect(defaultCacheDir({})).toMatch(/\.cache\/kafka-log-explorer$/);
    expect(cacheKey('/a')).toMatch(/^[0-9a-f]{16}$/);
    expect(cacheKey('/a')).not.toBe(cacheKey('/b'));
  });

  it('decodeFingerprint: the contents of the schema files given (a folder\'s files, ID=FILE), not the format choices', () => {
    const dir = tempDir('klx-fp-schemas-');
    mkdirSync(join(dir, 'folder'));
    writeFileSync(join(dir, 'folder', '7.avsc'), '"string"');
    writeFileSync(join(dir, 'pay.avsc'), '"long"');
    const specs = [join(dir, 'folder'), `9=${join(dir, 'pay.avsc')}`];
    const fp = decodeFingerprint({ schemaPaths: specs });
    expect(fp).toMatch(/^[0-9a-f]{16}$/);
    // Decoded columns are computed at query time: another format for a topic reuses the tables.
    expect(decodeFingerprint({ schemaPaths: specs, choices: { orders: { value: 'hex' } } })).toBe(fp);
    expect(decodeFingerprint({})).toBe(decodeFingerprint(undefined));
    expect(decodeFingerprint(false)).toBe('off');
    // Same size, another schema: a file inside a folder, and the file of ID=FILE.
    writeFileSync(join(dir, 'folder', '7.avsc'), '"bytes"');
    const fp2 = decodeFingerprint({ schemaPaths: specs });
    expect(fp2).not.toBe(fp);
    writeFileSync(join(dir, 'pay.avsc'), '"int" ');
    expect(decodeFingerprint({ schemaPaths: specs })).not.toBe(fp2);
    // A missing file is part of it too (opening the session names it).
    expect(decodeFingerprint({ schemaPaths: [join(dir, 'none.avsc')] })).not.toBe(decodeFingerprint({}));
  });
});
