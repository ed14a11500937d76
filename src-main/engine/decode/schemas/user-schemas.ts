/**
 * Schema files users give for a topic's keys or values in the app (issue 11: "user-supplied files
 * ... mapped to a topic"), kept with the folder's format choices ({@link UserSchema}: the texts, read
 * once when loaded). They serve the folders that hold no `_schemas` topic:
 * - plain (unframed) Avro datums of that topic side are read with it (format `avro`);
 * - Confluent-framed values whose schema id no schema source knows are read with it, the reason
 *   saying so (`confluent`), since the user said which schema that topic side is written with.
 *
 * {@link userSchemaLayer} turns the choices into registry entries ({@link SchemaRegistry.setUserSchemas});
 * {@link checkUserSchema} compiles one before it is kept, so a bad file is refused with its name and
 * the reason instead of failing every record later.
 */
import { extname } from 'node:path';
import { KlxError } from '../../errors.ts';
import { DecodeError } from '../decode-error.ts';
import type { FormatChoices, UserSchema } from '../format.ts';
import { avroTypesOf } from '../formats/avro.ts';
import { protoFileOf } from '../formats/protobuf.ts';
import { SchemaRegistry, type SchemaEntry, type SchemaType } from './schema-registry.ts';

/** The schema type of a file name, by its extension (`.avsc`, `.proto`, `.json`), or null. */
export function schemaTypeOfName(name: string): SchemaType | null {
  const ext = extname(name).toLowerCase();
  return ext === '.avsc' ? 'AVRO' : ext === '.proto' ? 'PROTOBUF' : ext === '.json' ? 'JSON' : null;
}

/** At most this many bytes of schema text per topic side (every file together). */
export const MAX_USER_SCHEMA_BYTES = 1 << 20;

const PROTO_IMPORT = /^\s*import\s+(?:weak\s+|public\s+)?"([^"]+)"\s*;/gm;

/**
 * The registry entries of one user schema: the schema and the files it imports. A `.proto` refers
 * to the files its `import` lines name (a file given as `money.proto` serves `import
 * "common/money.proto"`: a browser gives file names without folders); Avro and JSON Schema refer to
 * every other file (named types, `$ref` by file name).
 */
function entriesOf(topic: string, side: 'key' | 'value', s: UserSchema): { main: SchemaEntry; deps: SchemaEntry[] } {
  const type = (name: string) => schemaTypeOfName(name) ?? 'AVRO';
  const subjectOf = (i: number) => (i === 0 ? `${topic}-${side}` : `user:${topic}-${side}/${s.files[i]!.name}`);
  const refsOf = (i: number): SchemaEntry['references'] => {
    const f = s.files[i]!;
    if (type(f.name) !== 'PROTOBUF') return i === 0 ? s.files.slice(1).map((d, j) => ({ name: d.name, subject: subjectOf(j + 1), version: 1 })) : [];
    const refs: SchemaEntry['references'] = [];
    for (const m of f.text.matchAll(PROTO_IMPORT)) {
      const path = m[1]!;
      const j = s.files.findIndex((d, k) => k !== i && k > 0 && (d.name === path || d.name === path.slice(path.lastIndexOf('/') + 1)));
      if (j > 0) refs.push({ name: path, subject: subjectOf(j), version: 1 });
    }
    return refs;
  };
  const entries = s.files.map(
    (f, i): SchemaEntry => ({ id: 0, subject: subjectOf(i), version: 1, schemaType: type(f.name), schema: f.text, references: refsOf(i), deleted: false, source: `schema file ${f.name} given for ${topic} ${side}s` }),
  );
  return { main: entries[0]!, deps: entries.slice(1) };
}

/** The user schemas of `choices` as the layer {@link SchemaRegistry.setUserSchemas} takes. */
export function userSchemaLayer(choices: FormatChoices): { schemas: [string, 'key' | 'value', SchemaEntry][]; deps: SchemaEntry[] } {
  const schemas: [string, 'key' | 'value', SchemaEntry][] = [];
  const deps: SchemaEntry[] = [];
  for (const [topic, c] of Object.entries(choices)) {
    for (const side of ['key', 'value'] as const) {
      const s = side === 'key' ? c.keySchema : c.valueSchema;
      if (!s || s.files.length === 0) continue;
      const e = entriesOf(topic, side, s);
      schemas.push([topic, side, e.main]);
      deps.push(...e.deps);
    }
  }
  return { schemas, deps };
}

/**
 * Checks that `schema` can be used for `topic`'s `side`: at least one file, names ending in `.avsc`,
 * `.proto` or `.json`, at most {@link MAX_USER_SCHEMA_BYTES} of text, every other file imported by
 * a `.proto` schema (none left unread), and the first file compiles with the others (Avro with
 * avsc, Protobuf with protobufjs and at least one message, JSON Schema as a JSON object).
 * @throws KlxError `invalid-argument` naming the file and the reason.
 */
export function checkUserSchema(topic: string, side: 'key' | 'value', schema: UserSchema): void {
  if (schema.files.length === 0) throw new KlxError('invalid-argument', 'no schema file given');
  let bytes = 0;
  for (const f of schema.files) {
    if (schemaTypeOfName(f.name) === null) throw new KlxError('invalid-argument', 'a schema file must end in .avsc (Avro), .proto (Protobuf) or .json (JSON Schema)', { file: f.name });
    bytes += Buffer.byteLength(f.text);
  }
  if (bytes > MAX_USER_SCHEMA_BYTES) throw new KlxError('invalid-argument', `the schema files hold ${bytes} bytes; at most ${MAX_USER_SCHEMA_BYTES} are kept per topic side`, { file: schema.files[0]!.name });
  const { main, deps } = entriesOf(topic, side, schema);
  if (main.schemaType === 'PROTOBUF') {
    // A file the .proto does not import (directly or through another file given) would never be read.
    const reached = new Set<string>([main.subject]);
    const visit = (e: SchemaEntry) => {
      for (const r of e.references) {
        if (reached.has(r.subject)) continue;
        reached.add(r.subject);
        const d = deps.find((x) => x.subject === r.subject);
        if (d) visit(d);
      }
    };
    visit(main);
    const unused = deps.findIndex((d) => !reached.has(d.subject));
    if (unused >= 0) {
      const name = schema.files[unused + 1]!.name;
      throw new KlxError('invalid-argument', `${schema.files[0]!.name} does not import this file (directly or through the others given), so it would never be read: give the schema first, then only the files it imports`, { file: name });
    }
  }
  const registry = new SchemaRegistry();
  registry.setUserSchemas([[topic, side, main]], deps);
  const name = schema.files[0]!.name;
  try {
    if (main.schemaType === 'AVRO') avroTypesOf(main, registry);
    else if (main.schemaType === 'PROTOBUF') {
      if (protoFileOf(main, registry).messages.length === 0) throw new Error('it declares no message');
    } else {
      const v = JSON.parse(main.schema) as unknown;
      if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new Error('a JSON Schema is a JSON object');
      for (const d of deps) JSON.parse(d.schema);
    }
  } catch (err) {
    const why = err instanceof DecodeError ? err.reason : err instanceof Error ? err.message : String(err);
    throw new KlxError('invalid-argument', `cannot use this schema: ${why}`, { file: name, cause: err });
  }
}
