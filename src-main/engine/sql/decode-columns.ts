/**
 * The decode layer in SQL (issue 11): the decoded columns of `records` / `latest` / `state`
 * (`key_format`, `value_format`, `key_decoded`, `value_decoded` as DuckDB JSON, `schema_id`
 * INTEGER (NULL without Confluent framing), `decode_error`, plus `timestamp_utc` TIMESTAMP) and the
 * `schemas` table (the offline registry rebuilt from the folder's `_schemas` topics and the schema
 * files given).
 *
 * Records are decoded when a query asks for these columns, not while the tables are built (issue
 * 16: decoding then costs nothing to queries that do not use it): `klx_decoded` (record-functions.ts)
 * reads the record back from its segment and runs one `RecordDecoder` per build or query session
 * (the folder's `_schemas` read once, on first use). Keys and values above the decode
 * cap (1 MiB, as the inspector) keep no decoded JSON: `decode_error = 'too large'`. A key's error
 * is written `key: <reason>`; when both fail the value's error follows after `; `.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { DuckDBConnection } from './duckdb.ts';
import { openSchemasTopics, RecordDecoder, schemasOf } from '../decode/record-decoder.ts';
import { SCHEMAS_TOPIC } from '../decode/formats/json.ts';
import { parsePartitionDirName } from '../files/file-names.ts';
import type { FormatChoices } from '../decode/format.ts';
import { schemaSourceFiles, type LoneSchemaFile } from '../decode/schemas/schema-sources.ts';
import { KlxError } from '../errors.ts';
import type { OpenedLogs } from '../log/log-dir.ts';
import { ColumnarAppender } from './columnar-appender.ts';

/** How the tables decode records (absent or `{}`: auto for every topic, the folder's `_schemas`). */
export interface DecodeTableOptions {
  /** Per topic, the format of keys and values (absent = auto). */
  choices?: FormatChoices;
  /** Schema files, folders or registry exports added to the folder's `_schemas` (`--schemas`: `PATH`, `ID=FILE`, `SUBJECT=FILE`). */
  schemaPaths?: string[];
  /** What a lone schema file that maps to nothing is read as (see `addSchemaSources`); absent: it is an error. */
  lone?: LoneSchemaFile;
  /**
   * A log directory whose `_schemas` partitions are read instead of the opened folder's (`openSchemasTopics`):
   * for a partition folder, the log directory holding it, as `klx fetch` reads the schemas beside a partition.
   */
  schemasFrom?: string;
}

/**
 * The view columns for the decoded columns and `timestamp_utc`, over `klx_internal.record_rows r`
 * extended with `d`, the struct `klx_decoded` returns (`record-functions.ts`).
 */
export const DECODE_VIEW_COLUMNS_SQL = [
  `CASE WHEN r."timestamp" >= 0 THEN epoch_ms(r."timestamp") END AS timestamp_utc`,
  `r.d.key_format AS key_format`,
  `r.d.value_format AS value_format`,
  `CAST(r.d.key_decoded AS JSON) AS key_decoded`,
  `CAST(r.d.value_decoded AS JSON) AS value_decoded`,
  `r.d.schema_id AS schema_id`,
  `r.d.decode_error AS decode_error`,
].join(', ');

/**
 * What the cached tables depend on besides the folder's files, for the table cache's fingerprint
 * (16 hex digits); `'off'` when decoding is off. The tables keep no decoded value: the decoded
 * columns are computed when a query reads them, by the query session's decoder (`klx_decoded`), so
 * the format choices (and schema files given in the app, which the `schemas` table never lists) are
 * not part of it, and a cache built with other choices is reused as is. The `schemas` table is
 * built with the tables: every `--schemas` argument is part of it with the name and SHA-256 of each
 * file it reads (a folder's files, the file of `ID=FILE` / `SUBJECT=FILE`), so an edited schema
 * file gives a new table set, whatever its size or mtime. With `schemasFrom`, the name, size, mtime,
 * ctime and inode of every file of its `_schemas` partition folders are part of it too (those
 * folders are outside the opened folder, whose own files the cache's fingerprint covers).
 * @throws KlxError `io-error` when a schema file cannot be read.
 */
export function decodeFingerprint(opts: DecodeTableOptions | false | undefined): string {
  if (opts === false) return 'off';
  const h = createHash('sha256');
  if (opts?.schemasFrom !== undefined) h.update(schemasTopicsState(opts.schemasFrom));
  for (const arg of opts?.schemaPaths ?? []) {
    h.update(`schemas\t${arg}\n`);
    let files: string[];
    try {
      files = schemaSourceFiles(arg);
    } catch {
      h.update('missing\n'); // opening the session names it (schemasOf)
      continue;
    }
    for (const f of files) {
      let bytes: Buffer;
      try {
        bytes = readFileSync(f);
      } catch (err) {
        throw new KlxError('io-error', `cannot read the schema file: ${(err as Error).message}`, { file: f, cause: err });
      }
      h.update(`${f}\t${createHash('sha256').update(bytes).digest('hex')}\n`);
    }
  }
  return h.digest('hex').slice(0, 16);
}

/** The state of the `_schemas` partition folders of log directory `dir` (one line per file; unreadable: a line saying so). */
function schemasTopicsState(dir: string): string {
  const lines = [`schemas-from\t${dir}`];
  let names: string[];
  try {
    names = readdirSync(dir).sort();
  } catch {
    return `${lines[0]}\tunreadable\n`;
  }
  for (const name of names) {
    const part = parsePartitionDirName(name);
    if (!part || !SCHEMAS_TOPIC.test(part.topic)) continue;
    let files: string[];
    try {
      files = readdirSync(join(dir, name)).sort();
    } catch {
      lines.push(`${name}\tunreadable`);
      continue;
    }
    for (const f of files) {
      try {
        const st = statSync(join(dir, name, f));
        lines.push(`${name}/${f}\t${st.size}\t${st.mtimeMs}\t${st.ctimeMs}\t${st.ino}`);
      } catch {
        // removed while listing
      }
    }
  }
  return `${lines.join('\n')}\n`;
}

/** The decode layer of one table build or query session, and the `schemas` table (see the module comment). */
export class RecordRowDecoder {
  /** undefined until first asked for. */
  private cached: RecordDecoder | null | undefined = undefined;

  private constructor(
    private readonly opened: OpenedLogs,
    private readonly opts: DecodeTableOptions | false | undefined,
  ) {}

  /** Decoding as `opts` says for the folder `opened` (its `_schemas` are read on first use, once). */
  static create(opened: OpenedLogs, opts: DecodeTableOptions | false | undefined): RecordRowDecoder {
    return new RecordRowDecoder(opened, opts);
  }

  /**
   * The decoder, null when decoding is off.
   * @throws KlxError for a schema path that does not exist or cannot be read
   */
  get decoder(): RecordDecoder | null {
    if (this.cached === undefined) {
      if (this.opts === false) this.cached = null;
      else {
        const from = this.opts?.schemasFrom;
        const { registry } = schemasOf(from !== undefined ? openSchemasTopics(from) : this.opened, this.opts?.schemaPaths ?? [], this.opts?.lone);
        this.cached = new RecordDecoder({ schemas: registry, choices: this.opts?.choices ?? {} });
      }
    }
    return this.cached;
  }

  /** Creates and fills the `schemas` table (empty when decoding is off). */
  async writeSchemasTable(connection: DuckDBConnection): Promise<number> {
    await connection.run(
      'CREATE TABLE schemas (id INTEGER, subject VARCHAR, version INTEGER, schema_type VARCHAR, "schema" VARCHAR, "references" JSON, deleted BOOLEAN, source VARCHAR)',
    );
    const all = this.decoder?.schemas.all() ?? [];
    if (all.length === 0) return 0;
    const out = await ColumnarAppender.create(connection, null, 'schemas', ['int32', 'varchar', 'int32', 'varchar', 'varchar', 'varchar', 'bool', 'varchar']);
    for (const e of all) {
      out.int32(0, e.id);
      out.varchar(1, e.subject);
      out.int32(2, e.version);
      out.varchar(3, e.schemaType);
      out.varchar(4, e.schema);
      out.varchar(5, JSON.stringify(e.references));
      out.bool(6, e.deleted);
      out.varchar(7, e.source);
      out.endRow();
    }
    out.close();
    return all.length;
  }
}
