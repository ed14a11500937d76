/**
 * The schemas the decode layer knows, by id and by subject/version, as a Schema Registry serves
 * them (`GET /schemas/ids/{id}`, `GET /subjects/{s}/versions/{v}`), kept in memory.
 *
 * {@link SchemaRegistry} is rebuilt offline from Schema Registry's own storage topic (`_schemas`,
 * `kafkastore.topic`): each record's key is JSON `{"keytype": "SCHEMA"|"CONFIG"|"MODE"|
 * "DELETE_SUBJECT"|"CLEAR_SUBJECT"|"NOOP", "subject", "version", "magic"}`; a SCHEMA key's value is
 * `{"subject","version","id","schema","schemaType"?,"references"?,"deleted"?}` (schemaType absent =
 * AVRO). Applying the records in offset order gives the registry's state: the latest value of each
 * SCHEMA key wins, a null value (tombstone: a hard delete) removes that subject version, `deleted:
 * true` (a soft delete) and DELETE_SUBJECT (versions up to N soft-deleted) mark versions deleted.
 * As Schema Registry does, a soft-deleted schema is still found by id (records written with it
 * must stay readable); a hard-deleted one is not, unless another subject version keeps the id.
 *
 * User-supplied schemas (files, folders, a `GET /schemas` export) are added with
 * {@link SchemaRegistry.add}; schemas given for a topic (no id) are found with {@link SchemaLookup.forTopic}.
 * Pure: parsing only; reading topics and files is in `schema-sources.ts`.
 */

/** A schema type as Schema Registry names it. */
export type SchemaType = 'AVRO' | 'PROTOBUF' | 'JSON';

/** A schema reference (an import of a .proto, a named Avro type, a JSON Schema `$ref`). */
export interface SchemaReference {
  /** The import path / type name / `$ref` the schema text uses. */
  name: string;
  subject: string;
  version: number;
}

/** One registered schema version. */
export interface SchemaEntry {
  /** Global id (the 4 bytes after the magic byte of the wire format); 0 for a schema given for a topic. */
  id: number;
  subject: string;
  version: number;
  schemaType: SchemaType;
  /** The schema text (Avro JSON, .proto text, JSON Schema JSON). */
  schema: string;
  references: SchemaReference[];
  /** Soft-deleted (still readable by id, as Schema Registry serves it). */
  deleted: boolean;
  /** Where it came from, e.g. `"_schemas-0 offset 12 in /data/logs"` or `"file /x/orders-value.avsc"`. */
  source: string;
}

/** What formats look schemas up in. */
export interface SchemaLookup {
  /** The schema registered with `id`, or undefined. */
  byId(id: number): SchemaEntry | undefined;
  /** The schema of `subject` at `version` (-1 or `latest` = the highest), or undefined. */
  bySubject(subject: string, version: number | 'latest'): SchemaEntry | undefined;
  /** A schema given for a topic's key or value without framing (plain Avro), or undefined. */
  forTopic(topic: string, side: 'key' | 'value'): SchemaEntry | undefined;
  /** Every schema, ordered by id then subject. */
  all(): SchemaEntry[];
}

const TYPES = new Set(['AVRO', 'PROTOBUF', 'JSON']);

function asRefs(v: unknown): SchemaReference[] {
  if (!Array.isArray(v)) return [];
  return v
    .filter((r): r is Record<string, unknown> => typeof r === 'object' && r !== null)
    .map((r) => ({ name: String(r.name ?? ''), subject: String(r.subject ?? ''), version: Number(r.version ?? -1) }));
}

/** Counts of what a `_schemas` topic held, for explanations and the `schemas` table's notes. */
export interface SchemasTopicStats {
  records: number;
  schemaRecords: number;
  tombstones: number;
  ignored: number;
  /** Records whose key or value was not the JSON Schema Registry writes (offset, reason). */
  problems: { offset: string; reason: string }[];
}

/** An in-memory schema registry (see the module comment). */
export class SchemaRegistry implements SchemaLookup {
  /** subject → version → entry */
  private readonly subjects = new Map<string, Map<number, SchemaEntry>>();
  private readonly topicSchemas = new Map<string, SchemaEntry>();
  /** The schemas users gave per topic side (checked before `topicSchemas`) and the files they import, by subject. */
  private userTopicSchemas = new Map<string, SchemaEntry>();
  private userSubjects = new Map<string, SchemaEntry>();
  private idIndex: Map<number, SchemaEntry> | null = null;
  private changes = 0;

  /**
   * A number that changes whenever what {@link byId}, {@link bySubject} or {@link forTopic} answer
   * may change (a schema added, removed, soft-deleted, given for a topic). Decoders that keep a
   * schema resolved for a schema id compare it to know when to resolve again.
   */
  get generation(): number {
    return this.changes;
  }

  /** Adds or replaces a schema version (user files, registry exports, `_schemas` records). */
  add(e: SchemaEntry): void {
    let m = this.subjects.get(e.subject);
    if (!m) this.subjects.set(e.subject, (m = new Map()));
    m.set(e.version, e);
    this.idIndex = null;
    this.changes++;
  }

  /** Removes a subject version (a hard delete). */
  remove(subject: string, version: number): void {
    this.subjects.get(subject)?.delete(version);
    this.idIndex = null;
    this.changes++;
  }

  /** Gives `topic`'s key or value a schema without framing (plain Avro datum). */
  setForTopic(topic: string, side: 'key' | 'value', e: SchemaEntry): void {
    this.topicSchemas.set(`${side}\u0000${topic}`, e);
    this.changes++;
  }

  /**
   * Replaces the layer of schemas users gave per topic side (`schemas`: `[topic, side, entry]`) and
   * the entries they import (`deps`, found by subject only, never by id). That layer wins over
   * {@link setForTopic} and is never listed by {@link all}.
   */
  setUserSchemas(schemas: [string, 'key' | 'value', SchemaEntry][], deps: SchemaEntry[]): void {
    this.userTopicSchemas = new Map(schemas.map(([t, side, e]) => [`${side}\u0000${t}`, e]));
    this.userSubjects = new Map(deps.map((e) => [e.subject, e]));
    this.changes++;
  }

  forTopic(topic: string, side: 'key' | 'value'): SchemaEntry | undefined {
    if (this.userTopicSchemas.size === 0 && this.topicSchemas.size === 0) return undefined; // auto asks per record
    const k = `${side}\u0000${topic}`;
    return this.userTopicSchemas.get(k) ?? this.topicSchemas.get(k);
  }

  byId(id: number): SchemaEntry | undefined {
    if (!this.idIndex) {
      const idx = new Map<number, SchemaEntry>();
      for (const e of this.all()) {
        const had = idx.get(e.id);
        // The first live version keeps the id; a soft-deleted one only when nothing live has it.
        if (!had || (had.deleted && !e.deleted)) idx.set(e.id, e);
      }
      this.idIndex = idx;
    }
    return this.idIndex.get(id);
  }

  bySubject(subject: string, version: number | 'latest'): SchemaEntry | undefined {
    const user = this.userSubjects.get(subject);
    if (user) return user;
    const m = this.subjects.get(subject);
    if (!m || m.size === 0) return undefined;
    if (version === 'latest' || version === -1) {
      let best: SchemaEntry | undefined;
      for (const e of m.values()) if (!e.deleted && (!best || e.version > best.version)) best = e;
      return best;
    }
    return m.get(version);
  }

  all(): SchemaEntry[] {
    const out: SchemaEntry[] = [];
    for (const m of this.subjects.values()) for (const e of m.values()) if (e.id > 0) out.push(e);
    return out.sort((a, b) => a.id - b.id || (a.subject < b.subject ? -1 : a.subject > b.subject ? 1 : a.version - b.version));
  }

  /** Number of schema versions held (with an id). */
  get size(): number {
    return this.all().length;
  }

  /**
   * Applies one record of a `_schemas` topic (in offset order).
   * @param where e.g. `"_schemas-0 offset 12 in /data/logs"`, kept as the entry's `source`
   * @returns null when applied or ignored, else why the record was not understood
   */
  applyRecord(key: Uint8Array | null, value: Uint8Array | null, where: string): string | null {
    if (key === null) return 'no key';
    let k: Record<string, unknown>;
    try {
      k = JSON.parse(new TextDecoder().decode(key)) as Record<string, unknown>;
    } catch {
      return 'key is not JSON';
    }
    if (typeof k !== 'object' || k === null) return 'key is not a JSON object';
    const keytype = k.keytype;
    const subject = typeof k.subject === 'string' ? k.subject : null;
    if (keytype === 'SCHEMA') {
      const version = Number(k.version);
      if (subject === null || !Number.isInteger(version)) return 'SCHEMA key without subject/version';
      if (value === null) {
        this.remove(subject, version);
        return null;
      }
      let v: Record<string, unknown>;
      try {
        v = JSON.parse(new TextDecoder().decode(value)) as Record<string, unknown>;
      } catch {
        return 'SCHEMA value is not JSON';
      }
      const id = Number(v.id);
      const type = v.schemaType === undefined || v.schemaType === null ? 'AVRO' : String(v.schemaType);
      if (!Number.isInteger(id) || typeof v.schema !== 'string' || !TYPES.has(type)) return 'SCHEMA value without id/schema or with an unknown schemaType';
      this.add({ id, subject, version, schemaType: type as SchemaType, schema: v.schema, references: asRefs(v.references), deleted: v.deleted === true, source: where });
      return null;
    }
    if (keytype === 'DELETE_SUBJECT' || keytype === 'CLEAR_SUBJECT') {
      if (subject === null || value === null) return null;
      let upTo = Number.POSITIVE_INFINITY;
      try {
        const v = JSON.parse(new TextDecoder().decode(value)) as Record<string, unknown>;
        if (Number.isInteger(Number(v.version))) upTo = Number(v.version);
      } catch {
        return `${keytype} value is not JSON`;
      }
      const m = this.subjects.get(subject);
      if (m) for (const e of m.values()) if (e.version <= upTo) m.set(e.version, { ...e, deleted: true });
      this.idIndex = null;
      this.changes++;
      return null;
    }
    return null; // CONFIG, MODE, NOOP, DELETE_* of other kinds: no schema change
  }
}
