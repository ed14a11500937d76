/**
 * Where the decode layer's schemas come from:
 * - {@link registryFromSchemasTopics}: the offline registry rebuilt from every `_schemas` partition
 *   of the opened folders (records applied in offset order, see `SchemaRegistry.applyRecord`);
 * - {@link addSchemaFiles}: user-supplied files: `.avsc` (Avro), `.proto` (Protobuf, imports
 *   resolved against the other `.proto` files given), JSON Schema `.json`, a folder of them, or a
 *   Schema Registry export (`GET /schemas` JSON: an array of `{subject, version, id, schemaType?,
 *   schema, references?}`).
 *
 * A file's name says what it is for: `<id>.avsc` (digits only) registers schema id N;
 * `<subject>.avsc` (e.g. `orders-value.avsc`) registers that subject (version 1) and, with
 * TopicNameStrategy's `-key`/`-value` suffix, the schema of topic `orders`'s values without framing
 * (plain Avro). Read once when a folder is opened or `--schemas` is given; never per record.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, extname, join, relative, resolve } from 'node:path';
import { KlxError } from '../../errors.ts';
import { recordsOf, walkLog } from '../../log/log-walk.ts';
import type { PartitionLog } from '../../log/partition-log.ts';
import { SCHEMAS_TOPIC } from '../formats/json.ts';
import { SchemaRegistry, type SchemaEntry, type SchemasTopicStats, type SchemaType } from './schema-registry.ts';

/**
 * Rebuilds the registry from the `_schemas` partitions among `partitions` (other topics are skipped).
 * @param where names a partition in sources, e.g. `(log) => "_schemas-0 of /data/logs"`
 * @returns the registry (also given one, to add to) and per-partition stats
 */
export function registryFromSchemasTopics(partitions: PartitionLog[], where: (log: PartitionLog) => string, registry = new SchemaRegistry()): { registry: SchemaRegistry; stats: SchemasTopicStats } {
  const stats: SchemasTopicStats = { records: 0, schemaRecords: 0, tombstones: 0, ignored: 0, problems: [] };
  for (const log of partitions) {
    if (!SCHEMAS_TOPIC.test(log.topic)) continue;
    const label = where(log);
    for (const e of walkLog(log)) {
      if (e.type !== 'batch' || e.header.isControl) continue;
      let records;
      try {
        records = recordsOf(e);
      } catch {
        stats.problems.push({ offset: String(e.header.baseOffset), reason: 'batch cannot be decoded' });
        continue;
      }
      for (const r of records) {
        stats.records++;
        const problem = registry.applyRecord(r.key, r.value, `${label} (offset ${r.offset})`);
        if (problem) {
          stats.ignored++;
          stats.problems.push({ offset: String(r.offset), reason: problem });
        } else if (r.value === null) stats.tombstones++;
        else stats.schemaRecords++;
      }
    }
  }
  return { registry, stats };
}

const EXT_TYPE: Record<string, SchemaType> = { '.avsc': 'AVRO', '.proto': 'PROTOBUF', '.json': 'JSON' };

function filesUnder(path: string): string[] {
  const st = statSync(path);
  if (!st.isDirectory()) return [path];
  const out: string[] = [];
  const visit = (dir: string, depth: number) => {
    for (const n of readdirSync(dir).sort()) {
      const full = join(dir, n);
      const s = statSync(full);
      if (s.isDirectory()) {
        if (depth < 8) visit(full, depth + 1);
      } else if (EXT_TYPE[extname(n).toLowerCase()]) out.push(full);
    }
  };
  visit(path, 0);
  return out;
}

function isExport(v: unknown): v is Record<string, unknown>[] {
  return Array.isArray(v) && v.every((x) => typeof x === 'object' && x !== null && typeof (x as Record<string, unknown>).schema === 'string' && (x as Record<string, unknown>).id !== undefined);
}

/**
 * Adds the schemas of a file or folder (see the module comment) to `registry`.
 * @returns how many schema versions were added
 * @throws KlxError `not-found` when `path` does not exist, `invalid-argument` naming the file when
 *   a `.json` file is neither a JSON Schema nor a registry export.
 */
export function addSchemaFiles(registry: SchemaRegistry, path: string): number {
  const abs = resolve(path);
  try {
    statSync(abs);
  } catch {
    throw new KlxError('not-found', 'no such schema file or folder', { file: path });
  }
  const root = statSync(abs).isDirectory() ? abs : resolve(abs, '..');
  let added = 0;
  for (const file of filesUnder(abs)) {
    const ext = extname(file).toLowerCase();
    const text = readFileSync(file, 'utf8');
    const source = `file ${file}`;
    if (ext === '.json') {
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch (e) {
        throw new KlxError('invalid-argument', `not JSON: ${e instanceof Error ? e.message : String(e)}`, { file });
      }
      if (isExport(parsed)) {
        for (const x of parsed) {
          const type = (x.schemaType as string | undefined) ?? 'AVRO';
          registry.add({
            id: Number(x.id),
            subject: String(x.subject ?? `id-${x.id}`),
            version: Number(x.version ?? 1),
            schemaType: (['AVRO', 'PROTOBUF', 'JSON'].includes(type) ? type : 'AVRO') as SchemaType,
            schema: x.schema as string,
            references: Array.isArray(x.references) ? (x.references as { name: string; subject: string; version: number }[]) : [],
            deleted: x.deleted === true,
            source,
          });
          added++;
        }
        continue;
      }
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new KlxError('invalid-argument', 'a .json schema file must be a JSON Schema object or a registry export (GET /schemas array)', { file });
    }
    const stem = basename(file, extname(file));
    const isId = /^\d+$/.test(stem);
    // A .proto is also registered under its path relative to the folder, so imports find it.
    const subject = isId ? `id-${stem}` : ext === '.proto' ? relative(root, file).split('\\').join('/') : stem;
    const entry: SchemaEntry = { id: isId ? Number(stem) : 0, subject, version: 1, schemaType: EXT_TYPE[ext]!, schema: text, references: [], deleted: false, source };
    registry.add(entry);
    if (ext === '.proto' && subject !== stem) registry.add({ ...entry, subject: stem });
    const m = /^(.+)-(key|value)$/.exec(stem);
    if (m) registry.setForTopic(m[1]!, m[2] as 'key' | 'value', entry);
    added++;
  }
  return added;
}
