/**
 * Builds the SQL tables of a partition folder in a fresh process (segments decoded in worker
 * threads, one per core, as the app does) and answers `SELECT count(*) FROM state`, then prints one
 * JSON line: records, stateRows, cacheBytes and maxRssBytes (the kernel's high-water mark of the
 * whole process, workers and DuckDB included), for test/engine/sql/bounded-memory.test.ts.
 *
 * usage: node --import tsx test/support/sql-build-probe.ts PARTITION_DIR CACHE_DIR
 */
import { rmSync, statSync } from 'node:fs';
import { startEntryWorker } from '../../src-main/api/core/entry-worker.ts';
import { SQL_BUILD_WORKER } from '../../src-main/engine/sql/sql-build-pool.ts';
import { SqlSession } from '../../src-main/engine/sql/sql-session.ts';

const [dir, cacheDir] = process.argv.slice(2) as [string, string];
rmSync(cacheDir, { recursive: true, force: true });
const s = await SqlSession.open(dir, { cacheDir, startWorker: () => startEntryWorker(SQL_BUILD_WORKER.entry, SQL_BUILD_WORKER.near) });
const stateRows = Number((await s.query('SELECT count(*) FROM state')).rows[0]![0]);
const out = { records: s.buildSummary?.records ?? 0, stateRows, cacheBytes: statSync(s.dbPath).size, maxRssBytes: process.resourceUsage().maxRSS * 1024 };
s.close();
console.log(JSON.stringify(out));
