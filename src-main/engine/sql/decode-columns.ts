/**
 * The decode layer in SQL (issue 11): the decoded columns of `records` / `latest` / `state`
 * (`key_format`, `value_format`, `key_decoded`, `value_decoded` as DuckDB JSON, `schema_id`
 * INTEGER (NULL without Confluent framing), `decode_error`, plus `timestamp_utc` TIMESTAMP) and the
 * `schemas` table (the offline registry rebuilt from the folder's `_schemas` topics and the schema
 * files given).
 *
 * Records are decoded while the tables are built (one `RecordDecoder` per build, the folder's
 * `_schemas` read once before the walk), so queries never decode. Keys and values above the decode
 * cap (1 MiB, as the inspector) keep no decoded JSON: `decode_error = 'too large'`. A key's error
 * is written `key: <reason>`; when both fail the value's error follows after `; `.
 */
import { createHash } from 'node:crypto';
import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { RecordDecoder, schemasOf } from '../decode/record-decoder.ts';
import type { FormatChoices } from '../decode/format.ts';
import type { KafkaRecord } from '../format/types.ts';
import type { OpenedLogs } from '../log/log-dir.ts';
import { ColumnarAppender, type ColumnKind } from './columnar-appender.ts';

/** How the tables decode records (absent or `{}`: auto for every topic, the folder's `_schemas`). */
export interface DecodeTableOptions {
  /** Per topic, the format of keys and values (absent = auto). */
  choices?: FormatChoices;
  /** Schema files, folders or registry exports added to the folder's `_schemas` (`--schemas`). */
  schemaPaths?: string[];
}

/** The decoded columns appended to `klx_internal.record_rows`, in order. */
export const DECODE_ROW_COLUMNS = [
  ['key_format', 'varchar'],
  ['value_format', 'varchar'],
  ['key_decoded', 'varchar'],
  ['value_decoded', 'varchar'],
  ['schema_id', 'int32'],
  ['decode_error', 'varchar'],
] as const satisfies readonly (readonly [string, ColumnKind])[];

/** The view columns over `klx_internal.record_rows r` for the decoded columns and `timestamp_utc`. */
export const DECODE_VIEW_COLUMNS_SQL = [
  `CASE WHEN r."timestamp" >= 0 THEN epoch_ms(r."timestamp") END AS timestamp_utc`,
  `r.key_format`,
  `r.value_format`,
  `CAST(r.key_decoded AS JSON) AS key_decoded`,
  `CAST(r.value_decoded AS JSON) AS value_decoded`,
  `r.schema_id`,
  `r.decode_error`,
].join(', ');

/**
 * A text naming what decoding depends on besides the folder's files (choices, schema files with
 * their sizes and times), for the table cache's fingerprint; `'off'` when decoding is off.
 */
export function decodeFingerprint(opts: DecodeTableOptions | false | undefined): string {
  if (opts === false) return 'off';
  const h = createHash('sha256');
  h.update(JSON.stringify(opts?.choices ?? {}));
  for (const p of opts?.schemaPaths ?? []) {
    const abs = resolve(p);
    try {
      const s = statSync(abs);
      h.update(`\n${abs}\t${s.size}\t${s.mtimeMs}`);
    } catch {
      h.update(`\n${abs}\tmissing`);
    }
  }
  return h.digest('hex').slice(0, 16);
}

/** Writes the decoded columns of records into `record_rows` (see the module comment). */
export class RecordRowDecoder {
  private constructor(
    readonly decoder: RecordDecoder | null,
    private readonly first: number,
  ) {}

  /**
   * @param opened the folder (its `_schemas` partitions are read here, once)
   * @param firstColumn index of `key_format` in `record_rows`
   * @throws KlxError for a schema path that does not exist or cannot be read
   */
  static create(opened: OpenedLogs, opts: DecodeTableOptions | false | undefined, firstColumn: number): RecordRowDecoder {
    if (opts === false) return new RecordRowDecoder(null, firstColumn);
    const { registry } = schemasOf(opened, opts?.schemaPaths ?? []);
    return new RecordRowDecoder(new RecordDecoder({ schemas: registry, choices: opts?.choices ?? {} }), firstColumn);
  }

  /** Writes the six decoded columns of one record (all NULL when decoding is off or for control records). */
  write(out: ColumnarAppender, topic: string, r: KafkaRecord, isControl: boolean): void {
    const c = this.first;
    if (this.decoder === null || (isControl && topic !== '__cluster_metadata')) {
      for (let i = 0; i < 6; i++) out.null(c + i);
      return;
    }
    const controlType = isControl ? r.control?.typeId : undefined;
    const k = this.decoder.decode(topic, 'key', r.key, null, controlType);
    const v = this.decoder.decode(topic, 'value', r.value, r.key, controlType);
    out.varchar(c, k.format);
    out.varchar(c + 1, v.format);
    out.varchar(c + 2, k.jsonText);
    out.varchar(c + 3, v.jsonText);
    const id = v.schemaId ?? k.schemaId;
    if (id === undefined) out.null(c + 4);
    else out.int32(c + 4, id | 0);
    const err = k.error !== undefined ? (v.error !== undefined ? `key: ${k.error}; ${v.error}` : `key: ${k.error}`) : (v.error ?? null);
    out.varchar(c + 5, err);
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
