/**
 * `sql.*` handlers: SQL over an opened folder with DuckDB (issue 7), on the engine's
 * `SqlSession` (read-only tables built from the logs, cached by folder fingerprint).
 *
 * - `sql.open` (job): prepares the folder's table set — built with progress (bytes of `.log` read)
 *   and cancel, or reused from the cache — and lists the tables with columns, types and row counts.
 * - `sql.query` (job, so it can be cancelled): one read-only statement; the first `limit` rows as
 *   JSON-safe cells (`sql-cells.ts`), `truncated` when there were more. Refused statements fail
 *   with `read-only`; DuckDB's errors keep their message (`LINE n:` and caret) and carry
 *   `details.line` / `details.position` (0-based character index) for the editor's marker.
 * - `sql.export` (job): the FULL result as CSV or NDJSON, exactly as `klx query --csv/--json`
 *   writes it (`engine/sql/sql-format.ts`), into a temporary file of the cache folder; the renderer
 *   fetches it in chunks with `sql.exportRead` (as the inspector's "Save full value" does) and saves
 *   it through the browser's download (Electron: a save dialog), then `sql.exportDiscard`s it.
 *
 * Every path goes through `ctx.session.resolve` (inside an opened folder). Nothing here writes to
 * the user's folders: tables and exports live in the cache folder, so no method is `write: true`.
 * Sessions are kept per context and replaced when the folder's files change (`sql-sessions.ts`).
 */
import { open, rm, stat } from 'node:fs/promises';
import { basename } from 'node:path';
import { KlxError } from '../../engine/errors.ts';
import type { ReadProgress } from '../../engine/log/fetch.ts';
import { writeCsv, writeNdjson } from '../../engine/sql/sql-format.ts';
import { FileLineSink } from '../../engine/sql/file-line-sink.ts';
import type { QueryCursor, SqlValue } from '../../engine/sql/sql-session.ts';
import type { JobResult } from '../../../src-shared/contract.ts';
import type { SqlCell } from '../../../src-shared/sql-types.ts';
import { toCells } from './sql-cells.ts';
import { sqlRegistryOf, type SqlLease, type SqlRegistry } from './sql-sessions.ts';
import type { ApiContext, DomainHandlers, JobContext } from '../core/types.ts';

export { configureSql, type SqlConfig } from './sql-sessions.ts';

/** Builds the `sql.*` handlers; subscribes the context's sessions to `log.changed`. */
export function sqlHandlers(ctx: ApiContext): DomainHandlers<'sql'> {
  const registry = sqlRegistryOf(ctx);
  ctx.events.subscribe((e) => {
    if (e.type === 'log.changed') registry.markChanged(e.dirs);
    else if (e.type === 'decode.choices') registry.markChanged([e.root]);
  });

  /** The session of `path` for a job, with the build's progress reported as the job's. */
  const leaseFor = async (path: string, job: JobContext): Promise<SqlLease> => {
    const root = await ctx.session.resolve(path, job);
    job.progress({ phase: 'checking the SQL tables', done: 0, total: null, bytes: 0 });
    return registry.lease(root, { signal: job.signal, onProgress: (p: ReadProgress) => job.progress(p) });
  };

  return {
    /** Errors: `invalid-argument` (outside the opened folders), `not-a-log-dir`, `not-found`, `cancelled`, `io-error`. */
    'sql.open': async (req, job) => {
      const started = performance.now();
      const lease = await leaseFor(req.path, job);
      try {
        job.progress({ phase: 'counting table rows', done: 0, total: null, bytes: 0 });
        return { ...(await lease.schema()), elapsedMs: performance.now() - started };
      } finally {
        lease.release();
      }
    },

    /** Errors: as sql.open, plus `read-only` (refused statement) and `invalid-argument` (DuckDB's message, details.line/position). */
    'sql.query': async (req, job) => {
      const lease = await leaseFor(req.path, job);
      try {
        job.progress({ phase: 'running the query', done: 0, total: req.limit, bytes: 0 });
        const started = performance.now();
        const cursor = await lease.session.cursor(req.sql, { signal: job.signal });
        const rows: SqlCell[][] = [];
        let truncated = false;
        try {
          outer: for (;;) {
            const chunk = await cursor.next();
            if (chunk === null) break;
            for (const row of chunk) {
              if (rows.length >= req.limit) {
                truncated = true;
                break outer;
              }
              rows.push(toCells(row));
            }
            job.progress({ phase: 'reading rows', done: rows.length, total: req.limit, bytes: 0 });
          }
        } finally {
          cursor.close();
        }
        return {
          columns: cursor.columns,
          rows,
          rowCount: rows.length,
          truncated,
          limit: req.limit,
          statementType: cursor.statementType,
          elapsedMs: performance.now() - started,
          tablesOpened: lease.opened,
        };
      } finally {
        lease.release();
      }
    },

    /** Errors: as sql.query, plus `io-error` when the export file cannot be written. */
    'sql.export': async (req, job) => {
      const lease = await leaseFor(req.path, job);
      try {
        return await exportResult(registry, lease, req, job);
      } finally {
        lease.release();
      }
    },

    /** Errors: `not-found` (unknown or expired export), `invalid-argument` (start past the end), `io-error`. */
    'sql.exportRead': async (req) => {
      const e = registry.exportById(req.exportId);
      const fh = await open(e.file, 'r').catch((err: unknown) => {
        throw new KlxError('not-found', `the export file is gone: ${(err as Error).message}`, { file: e.file, cause: err });
      });
      try {
        const total = (await fh.stat()).size;
        if (req.start > total) throw new KlxError('invalid-argument', `start ${req.start} is past the end of the export (${total} bytes)`);
        const buf = Buffer.alloc(Math.min(req.maxBytes, total - req.start));
        let got = 0;
        while (got < buf.length) {
          const { bytesRead } = await fh.read(buf, got, buf.length - got, req.start + got);
          if (bytesRead === 0) break;
          got += bytesRead;
        }
        return { base64: buf.subarray(0, got).toString('base64'), start: req.start, total, eof: req.start + got >= total };
      } finally {
        await fh.close();
      }
    },

    'sql.exportDiscard': async (req) => ({ discarded: registry.discardExport(req.exportId) }),
  };
}

/** The rows of a cursor, reporting progress every chunk. */
async function* cursorRows(cursor: QueryCursor, onChunk: (rows: number) => void): AsyncGenerator<SqlValue[]> {
  let n = 0;
  for (;;) {
    const chunk = await cursor.next();
    if (chunk === null) return;
    for (const row of chunk) yield row;
    n += chunk.length;
    onChunk(n);
  }
}

/** `2024-05-01T10:15:00.000Z` → `20240501-101500` (UTC). */
function fileStamp(d: Date): string {
  return d.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
}

async function exportResult(registry: SqlRegistry, lease: SqlLease, req: { sql: string; format: 'csv' | 'ndjson' }, job: JobContext): Promise<JobResult<'sql.export'>> {
  const started = performance.now();
  job.progress({ phase: 'running the query', done: 0, total: null, bytes: 0 });
  const cursor = await lease.session.cursor(req.sql, { signal: job.signal });
  const name = basename(lease.session.root).replace(/[^A-Za-z0-9._-]+/g, '_') || 'klx';
  const ex = registry.newExport(`${name}-query-${fileStamp(new Date())}.${req.format === 'csv' ? 'csv' : 'ndjson'}`);
  const sink = new FileLineSink(ex.file);
  let ok = false;
  try {
    const rows = cursorRows(cursor, (n) => job.progress({ phase: 'exporting rows', done: n, total: null, bytes: sink.written }));
    const n = req.format === 'csv' ? await writeCsv(cursor.columns, rows, sink) : await writeNdjson(cursor.columns, rows, sink);
    await sink.close();
    const bytes = (await stat(ex.file)).size;
    registry.addExport(ex);
    ok = true;
    return { exportId: ex.id, fileName: ex.fileName, format: req.format, rows: n, bytes, elapsedMs: performance.now() - started };
  } finally {
    cursor.close();
    if (!ok) {
      sink.destroy();
      await rm(ex.file, { force: true });
    }
  }
}
