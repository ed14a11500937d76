/**
 * Where the decode layer's schemas come from:
 * - {@link registryFromSchemasTopics}: the offline registry rebuilt from every `_schemas` partition
 *   of the opened folders (records applied in offset order, see `SchemaRegistry.applyRecord`);
 * - {@link addSchemaFiles}: user-supplied files: `.avsc` (Avro), `.proto` (Protobuf, imports
 *   resolved against the other `.proto` files given), JSON Schema `.json`, a folder of them, or a
 *   Schema Registry export (`GET /schemas` JSON: an array of `{subject, version, id, schemaType?,
 *   schema, references?}`).
 *
 * How a file is mapped ({@link addSchemaSources}; the same for `.proto` and JSON Schema `.json`):
 * - by its name: `<id>.avsc` (digits only, e.g. `42.avsc`) is schema id 42 (Confluent-framed
 *   records naming id 42); `<topic>-key.avsc` / `<topic>-value.avsc` (Schema Registry's
 *   TopicNameStrategy subjects, e.g. `orders-value.avsc`) is the schema of topic `orders`'s values:
 *   plain (unframed) Avro datums, and framed records whose schema id no source knows; any other
 *   `<subject>.avsc` registers that subject (version 1), which only serves as what another schema
 *   imports (a `.proto` import path, a Schema Registry reference);
 * - explicitly, one file per argument: `42=pay.avsc` (schema id 42), `orders-value=pay.avsc`
 *   (subject `orders-value`, hence topic `orders`'s values as above), `common/money.proto=m.proto`
 *   (the subject an import names). An argument that is an existing path is always a path;
 * - a registry export maps itself (each entry's id and subject).
 * A file that ends up used by nothing (no id, no topic, imported by no schema) is refused with a
 * typed error naming it and saying how to map it; inside a folder it is named in a note.
 * Read once when a folder is opened or `--schemas` is given; never per record.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
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

/**
 * The files one `--schemas` argument (`PATH`, `ID=FILE`, `SUBJECT=FILE`, see {@link parseSchemaSpec})
 * reads: the file itself, or the `.avsc`/`.proto`/`.json` files of a folder (8 levels down), sorted;
 * absolute paths. For the SQL table cache's fingerprint (`decodeFingerprint`).
 * @throws KlxError `invalid-argument` for an id outside 1..2^31-1; Node's error when the path does not exist.
 */
export function schemaSourceFiles(arg: string): string[] {
  return filesUnder(resolve(parseSchemaSpec(arg).path));
}

function isExport(v: unknown): v is Record<string, unknown>[] {
  return Array.isArray(v) && v.every((x) => typeof x === 'object' && x !== null && typeof (x as Record<string, unknown>).schema === 'string' && (x as Record<string, unknown>).id !== undefined);
}

/** One schema source argument (`--schemas`), as {@link parseSchemaSpec} reads it. */
export interface SchemaSpec {
  /** The file, folder or registry export. */
  path: string;
  /** `ID=FILE`: the file is the schema with this id (1..2^31-1). */
  id?: number;
  /** `SUBJECT=FILE`: the file is this subject, version 1 (`<topic>-key`/`-value`: that topic side's schema). */
  subject?: string;
}

/**
 * Reads one `--schemas` argument: `PATH`, `ID=FILE` or `SUBJECT=FILE` (see the module comment). An
 * argument naming an existing file or folder is a path even when it holds `=`.
 * @throws KlxError `invalid-argument` for an id outside 1..2^31-1.
 */
export function parseSchemaSpec(arg: string): SchemaSpec {
  if (existsSync(arg)) return { path: arg };
  const m = /^([^=/\\]+)=(.+)$/.exec(arg);
  if (!m) return { path: arg };
  const [, left, path] = m as unknown as [string, string, string];
  if (!/^\d+$/.test(left)) return { path, subject: left };
  const id = Number(left);
  if (id < 1 || id > 2147483647) throw new KlxError('invalid-argument', `a schema id is 1..2147483647 (Schema Registry's ids), got ${left}`, { file: path });
  return { path, id };
}

/** A schema file added by {@link addSchemaSources}: its entries (a `.proto` has two subjects) and whether its name or mapping gave it a use. */
interface AddedFile {
  file: string;
  /** Given as the argument itself, not found in a folder. */
  direct: boolean;
  entries: SchemaEntry[];
  /** It has a schema id or is a topic side's schema. */
  mapped: boolean;
  /** How many schema versions it holds (a registry export: its entries; else 1). */
  versions: number;
}

/**
 * Adds the schemas of one source (see the module comment) to `registry`.
 * @returns the files added (a registry export's entries count as mapped)
 * @throws KlxError `not-found` when the path does not exist; `invalid-argument` naming the file
 *   when a `.json` file is neither a JSON Schema nor a registry export, or when `ID=`/`SUBJECT=`
 *   names a folder or a registry export.
 */
function addSource(registry: SchemaRegistry, spec: SchemaSpec): AddedFile[] {
  const path = spec.path;
  const abs = resolve(path);
  let st;
  try {
    st = statSync(abs);
  } catch {
    throw new KlxError('not-found', 'no such schema file or folder', { file: path });
  }
  const mapping = spec.id !== undefined ? String(spec.id) : spec.subject;
  if (mapping !== undefined && st.isDirectory()) throw new KlxError('invalid-argument', `${mapping}=PATH maps one schema file; this is a folder (its files are mapped by their names)`, { file: path });
  const root = st.isDirectory() ? abs : resolve(abs, '..');
  const out: AddedFile[] = [];
  for (const file of filesUnder(abs)) {
    const ext = extname(file).toLowerCase();
    const text = readFileSync(file, 'utf8');
    const source = `file ${file}`;
    const direct = file === abs;
    if (ext === '.json') {
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch (e) {
        throw new KlxError('invalid-argument', `not JSON: ${e instanceof Error ? e.message : String(e)}`, { file });
      }
      if (isExport(parsed)) {
        if (mapping !== undefined) throw new KlxError('invalid-argument', `${mapping}=PATH maps one schema file; this is a registry export (its entries carry their ids and subjects)`, { file: path });
        const entries: SchemaEntry[] = [];
        for (const x of parsed) {
          const type = (x.schemaType as string | undefined) ?? 'AVRO';
          const e: SchemaEntry = {
            id: Number(x.id),
            subject: String(x.subject ?? `id-${x.id}`),
            version: Number(x.version ?? 1),
            schemaType: (['AVRO', 'PROTOBUF', 'JSON'].includes(type) ? type : 'AVRO') as SchemaType,
            schema: x.schema as string,
            references: Array.isArray(x.references) ? (x.references as { name: string; subject: string; version: number }[]) : [],
            deleted: x.deleted === true,
            source,
          };
          registry.add(e);
          entries.push(e);
        }
        out.push({ file, direct, entries, mapped: true, versions: entries.length });
        continue;
      }
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new KlxError('invalid-argument', 'a .json schema file must be a JSON Schema object or a registry export (GET /schemas array)', { file });
    }
    if (!EXT_TYPE[ext]) throw new KlxError('invalid-argument', 'a schema file must end in .avsc (Avro), .proto (Protobuf) or .json (JSON Schema or a registry export)', { file });
    const stem = basename(file, extname(file));
    const id = spec.id ?? (mapping === undefined && /^\d+$/.test(stem) ? Number(stem) : 0);
    // A .proto is also registered under its path relative to the folder, so imports find it.
    const subject = spec.subject ?? (id > 0 ? `id-${id}` : ext === '.proto' ? relative(root, file).split('\\').join('/') : stem);
    const entry: SchemaEntry = { id, subject, version: 1, schemaType: EXT_TYPE[ext]!, schema: text, references: [], deleted: false, source };
    const entries = [entry];
    registry.add(entry);
    if (mapping === undefined && ext === '.proto' && subject !== stem) {
      const alias = { ...entry, subject: stem };
      registry.add(alias);
      entries.push(alias);
    }
    const topicSide = id > 0 ? null : /^(.+)-(key|value)$/.exec(spec.subject ?? stem);
    if (topicSide) registry.setForTopic(topicSide[1]!, topicSide[2] as 'key' | 'value', entry);
    out.push({ file, direct, entries, mapped: id > 0 || topicSide !== null, versions: 1 });
  }
  return out;
}

/**
 * Adds the schemas of a file or folder (see the module comment) to `registry`, without checking
 * that each file is used (see {@link addSchemaSources}).
 * @returns how many schema versions were added
 * @throws KlxError as {@link addSchemaSources}.
 */
export function addSchemaFiles(registry: SchemaRegistry, path: string): number {
  let n = 0;
  for (const f of addSource(registry, { path })) n += f.versions;
  return n;
}

/** The import paths a `.proto` text names. */
const PROTO_IMPORT = /^\s*import\s+(?:weak\s+|public\s+)?"([^"]+)"\s*;/gm;

/** What {@link addSchemaSources} may do with a lone schema file that maps to nothing. */
export interface LoneSchemaFile {
  /** The topic being read. */
  topic: string;
  /** The one side of `topic` read as plain Avro (`--value-format avro`), or null when none or both are. */
  avroSide: 'key' | 'value' | null;
  /** How the user said so, for the note (e.g. `--value-format avro`). */
  said: string;
}

/**
 * Adds every source in `specs` (`--schemas` arguments, see {@link parseSchemaSpec}) to `registry`
 * and checks that each schema file is used: it has a schema id, is a topic side's schema, or a
 * schema in `registry` imports it (a Schema Registry reference's subject, or a `.proto` import path
 * equal to its subject). When `lone` is given, `specs` is one Avro file that maps to nothing and
 * `lone.avroSide` is set, the file is that topic side's schema (the only reading that makes sense),
 * with a note.
 * @returns notes for the user (the lone file's use; unused files found in folders)
 * @throws KlxError `invalid-argument` naming a file given directly that is used by nothing, saying
 *   how to map it; as {@link addSchemaFiles} for unreadable sources.
 */
export function addSchemaSources(registry: SchemaRegistry, specs: readonly SchemaSpec[], lone?: LoneSchemaFile): string[] {
  const added: AddedFile[] = [];
  for (const spec of specs) added.push(...addSource(registry, spec));
  const notes: string[] = [];
  const onlyOne = specs.length === 1 && added.length === 1 && added[0]!.direct ? added[0]! : null;
  if (onlyOne && !onlyOne.mapped && lone?.avroSide && onlyOne.entries[0]!.schemaType === 'AVRO' && !registry.forTopic(lone.topic, lone.avroSide)) {
    registry.setForTopic(lone.topic, lone.avroSide, onlyOne.entries[0]!);
    onlyOne.mapped = true;
    notes.push(`reading ${lone.avroSide}s of ${lone.topic} with ${onlyOne.file}, the only schema file given (${lone.said}); --schemas ${lone.topic}-${lone.avroSide}=FILE says so explicitly`);
  }
  const unused = added.filter((f) => !f.mapped);
  if (unused.length === 0) return notes;
  const imported = new Set<string>();
  const fileEntries = added.flatMap((f) => f.entries);
  for (const e of [...registry.all(), ...fileEntries]) {
    for (const r of e.references) imported.add(r.subject);
    if (e.schemaType === 'PROTOBUF') for (const m of e.schema.matchAll(PROTO_IMPORT)) imported.add(m[1]!);
  }
  const example = lone?.topic ?? 'orders';
  for (const f of unused) {
    if (f.entries.some((e) => imported.has(e.subject))) continue;
    const name = basename(f.file);
    const ext = extname(name);
    const why =
      `this schema file is not used: its name maps it to no schema id and no topic, and no schema imports it ` +
      `(files are mapped by name: <schemaId>${ext} e.g. 42${ext}, <topic>-value${ext} / <topic>-key${ext} e.g. ${example}-value${ext}); ` +
      `map it explicitly with --schemas 42=${name} (schema id 42) or --schemas ${example}-value=${name} (subject ${example}-value: the values of topic ${example}${ext === '.avsc' ? ', framed or plain Avro' : ''})`;
    if (f.direct) throw new KlxError('invalid-argument', why, { file: f.file });
    notes.push(`${f.file}: ${why}`);
  }
  return notes;
}
