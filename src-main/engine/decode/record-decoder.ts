/**
 * The decode layer as the rest of the product uses it: one {@link RecordDecoder} per opened folder
 * (or CLI run) holding the format registry, the schema sources (the offline registry rebuilt from
 * the folder's `_schemas` partitions plus user schema files) and the per-topic/per-side format
 * choices, decoding a record's key and value on request. Nothing is decoded ahead: callers decode
 * the rows they show or the rows they write (SQL, exports).
 *
 * `auto` per record asks every format (see `format.ts`); when the winner for a topic's side was
 * sure of itself (confidence ≥ 0.9: the topic's own format, a Confluent schema id found, an Avro
 * container), the next record of that side tries it first and keeps it when it is still as sure,
 * so a million framed records do not pay the whole detection each. Each side remembers the slot of
 * its last call, so callers decoding key then value of each record stay on the hot path.
 *
 * Hot path (chosen format or auto's sure pick): a format with {@link Format.prepare} makes a reader
 * for one detect key (Confluent framing: the schema of one id, looked up and compiled once); the
 * slot keeps it, and a record with the same key is read with it directly. The reader is dropped
 * when the schema registry changes (`SchemaRegistry.generation`), so a schema added or deleted
 * is seen by the next record.
 */
import { basename, relative } from 'node:path';
import { defaultFormatRegistry } from './default-formats.ts';
import { AUTO, choiceFor, chosenReason, Decoded, decodeBytes, decodeFailure, decodePrepared, decodeWith, isNotedOutput, DEFAULT_MAX_DECODE_BYTES, type DecodeContext, type Format, type FormatChoices, type FormatRegistry, type PreparedReader, type Side } from './format.ts';
import { SchemaRegistry, type SchemasTopicStats } from './schemas/schema-registry.ts';
import { addSchemaSources, parseSchemaSpec, registryFromSchemasTopics, type LoneSchemaFile } from './schemas/schema-sources.ts';
import { userSchemaLayer } from './schemas/user-schemas.ts';
import { allPartitions, openPath, type OpenedLogs } from '../log/log-dir.ts';
import { PartitionLog } from '../log/partition-log.ts';
import { parsePartitionDirName } from '../files/file-names.ts';
import { SCHEMAS_TOPIC } from './formats/json.ts';

/** Options of a {@link RecordDecoder}. */
export interface RecordDecoderOptions {
  formats?: FormatRegistry;
  schemas?: SchemaRegistry;
  /** Per topic, the format of keys and values (absent = auto). */
  choices?: FormatChoices;
  /** Bytes above which a key/value is not decoded (`too large`); default 1 MiB. */
  maxBytes?: number;
}

/** What a decoder keeps per topic side. */
interface Slot {
  choice: string;
  /** The chosen format (null: auto). */
  format: Format | null;
  reason: string;
  /** auto: the format that was sure of the last record, its detection reason and the full reason. */
  sure: Format | null;
  sureDetect?: string;
  sureReason: string;
  /** The sure format's {@link Format.detectKey} of the bytes `sureDetect` was said of (null: none). */
  sureKey: number | null;
  /** The schema registry's generation `sureKey` was found in. */
  sureGeneration: number;
  /** The reader the slot's format (chosen, or auto's sure pick) prepared for one detect key, or null. */
  hot: Hot | null;
}

/** A reader {@link Format.prepare} made for one detect key, with what a result of it says. */
interface Hot {
  format: Format;
  /** The format's name and {@link Format.detectKey}, kept here for the hot path. */
  name: string;
  detectKey: (bytes: Uint8Array) => number | null;
  key: number;
  read: PreparedReader;
  reason: string;
  /** The schema registry's generation it was prepared in (a schema change makes it stale). */
  generation: number;
}

/** One record's key and value, decoded. */
export interface DecodedRecord {
  key: Decoded;
  value: Decoded;
}

/** Decodes records' keys and values (see the module comment). */
export class RecordDecoder {
  readonly formats: FormatRegistry;
  readonly schemas: SchemaRegistry;
  choices: FormatChoices;
  readonly maxBytes: number;
  /** Per side, per topic: the choice in force, its format and reason (chosen), or auto's sure pick. */
  private readonly slots = { key: new Map<string, Slot>(), value: new Map<string, Slot>() };
  /** Per side (callers alternate key and value of each record): the slot and topic of that side's last call. */
  private lastKeySlot: Slot | null = null;
  private lastKeyTopic = '';
  private lastValueSlot: Slot | null = null;
  private lastValueTopic = '';
  /** One context object reused by every call (decoding is synchronous and formats keep no context). */
  private readonly ctx: DecodeContext = { topic: '', side: 'value', key: null, schemas: null, maxBytes: DEFAULT_MAX_DECODE_BYTES };

  constructor(opts: RecordDecoderOptions = {}) {
    this.formats = opts.formats ?? defaultFormatRegistry();
    this.schemas = opts.schemas ?? new SchemaRegistry();
    this.choices = opts.choices ?? {};
    this.maxBytes = opts.maxBytes ?? DEFAULT_MAX_DECODE_BYTES;
    this.applyUserSchemas();
  }

  /** Puts the schema files of the choices (`keySchema` / `valueSchema`) in the registry's user layer. */
  private applyUserSchemas(): void {
    const { schemas, deps } = userSchemaLayer(this.choices);
    this.schemas.setUserSchemas(schemas, deps);
  }

  /** The choice in force for `topic`'s `side` (`auto` or a format name). */
  choiceFor(topic: string, side: Side): string {
    return choiceFor(this.choices, topic, side);
  }

  /** Replaces the choices (e.g. after the user picked a format or gave a schema file); forgets auto's remembered picks. */
  setChoices(choices: FormatChoices): void {
    this.choices = choices;
    this.applyUserSchemas();
    this.slots.key.clear();
    this.slots.value.clear();
    this.lastKeySlot = null;
    this.lastValueSlot = null;
  }

  /**
   * Decodes one key or value.
   * @param key the record's key, when decoding its value
   * @param controlType the control record type id when the record is a control record
   * @param choice a format name or `auto`; default the topic's choice
   */
  decode(topic: string, side: Side, bytes: Uint8Array | null, key?: Uint8Array | null, controlType?: number, choice?: string): Decoded {
    // The hot path first: the same topic side as the last call, its reader prepared for the same
    // detect key (e.g. schema id) in the same schema generation; nothing else is looked at.
    const last = side === 'value' ? this.lastValueSlot : this.lastKeySlot;
    if (last !== null && bytes !== null && topic === (side === 'value' ? this.lastValueTopic : this.lastKeyTopic) && (choice === undefined || choice === last.choice)) {
      const hot = last.hot;
      if (hot !== null && bytes.byteLength <= this.maxBytes && hot.generation === this.schemas.generation && hot.detectKey(bytes) === hot.key) {
        // decodePrepared's work, written out: one call less between the caller and the library.
        let json: unknown;
        try {
          json = hot.read.read(bytes);
        } catch (e) {
          return decodeFailure(hot.name, hot.reason, e);
        }
        return isNotedOutput(json) ? Decoded.of(hot.name, hot.reason, json.out) : new Decoded(hot.name, hot.reason, json, hot.read.meta, true);
      }
    }
    return this.decodeSlot(topic, side, bytes, key, controlType, choice);
  }

  /** {@link decode} beyond its hot path: finds the topic side's slot, detects (auto), prepares. */
  private decodeSlot(topic: string, side: Side, bytes: Uint8Array | null, key: Uint8Array | null | undefined, controlType: number | undefined, choice: string | undefined): Decoded {
    const ctx = this.ctx;
    ctx.topic = topic;
    ctx.side = side;
    ctx.key = key ?? null;
    ctx.schemas = this.schemas;
    ctx.maxBytes = this.maxBytes;
    ctx.controlType = controlType;
    let slot = side === 'value' ? this.lastValueSlot : this.lastKeySlot;
    if (slot === null || topic !== (side === 'value' ? this.lastValueTopic : this.lastKeyTopic)) {
      const slots = this.slots[side];
      slot = slots.get(topic) ?? null;
      if (!slot) {
        const c = this.choiceFor(topic, side);
        const format = c === AUTO ? null : this.formats.get(c);
        if (format === undefined) return decodeBytes(this.formats, bytes, ctx, c); // throws: no such format
        slot = { choice: c, format, reason: format ? chosenReason(format, ctx) : '', sure: null, sureReason: '', sureKey: null, sureGeneration: this.schemas.generation, hot: null };
        slots.set(topic, slot);
      }
      if (side === 'value') {
        this.lastValueSlot = slot;
        this.lastValueTopic = topic;
      } else {
        this.lastKeySlot = slot;
        this.lastKeyTopic = topic;
      }
    }
    if (choice !== undefined && choice !== slot.choice) return decodeBytes(this.formats, bytes, ctx, choice);
    const generation = this.schemas.generation;
    const small = bytes !== null && bytes.byteLength <= this.maxBytes;
    // The hot path: the same detect key (e.g. schema id) as the record the slot's reader was prepared for.
    const hot = slot.hot;
    if (hot !== null && small && hot.generation === generation && hot.detectKey(bytes!) === hot.key) return decodePrepared(hot.name, hot.read, bytes!, hot.reason);
    if (slot.format) {
      if (small) this.prepareHot(slot, slot.format, bytes!, slot.reason);
      return decodeWith(slot.format, bytes, ctx, slot.reason);
    }
    if (bytes === null) return decodeBytes(this.formats, bytes, ctx, AUTO);
    if (slot.sureGeneration !== generation) slot.sureKey = null; // a schema changed: detect again
    if (slot.sure && small) {
      // Same detection key as the sure record (e.g. the same schema id): same detection, no need to ask.
      const k = slot.sure.detectKey?.(bytes) ?? null;
      if (k !== null && k === slot.sureKey) {
        this.prepareHot(slot, slot.sure, bytes, slot.sureReason);
        return decodeWith(slot.sure, bytes, ctx, slot.sureReason);
      }
      const d = slot.sure.detect(bytes, ctx);
      if (d && d.confidence >= 0.9) {
        if (d.reason === slot.sureDetect) {
          slot.sureKey = k;
          slot.sureGeneration = generation;
        }
        return decodeWith(slot.sure, bytes, ctx, d.reason === slot.sureDetect ? slot.sureReason : `${slot.sure.title}: ${d.reason}`);
      }
    }
    const r = decodeBytes(this.formats, bytes, ctx, AUTO);
    const f = this.formats.get(r.format);
    if (f && r.ok) {
      const d = f.detect(bytes, ctx);
      if (d && d.confidence >= 0.9) {
        slot.sure = f;
        slot.sureDetect = d.reason;
        slot.sureReason = r.reason;
        slot.sureKey = f.detectKey?.(bytes) ?? null;
        slot.sureGeneration = generation;
        slot.hot = null;
      }
    }
    return r;
  }

  /**
   * Keeps in `slot` the reader `format` prepares for the detect key of `bytes` (see
   * {@link Format.prepare}), unless it holds that one already or the format has none.
   */
  private prepareHot(slot: Slot, format: Format, bytes: Uint8Array, reason: string): void {
    if (!format.prepare || !format.detectKey) return;
    const key = format.detectKey(bytes);
    if (key === null) return;
    const generation = this.schemas.generation;
    const had = slot.hot;
    if (had && had.format === format && had.key === key && had.generation === generation && had.reason === reason) return;
    const read = format.prepare(key, this.ctx);
    slot.hot = read ? { format, name: format.name, detectKey: format.detectKey, key, read, reason, generation } : null;
  }

  /** Decodes a record's key and value with the topic's choices. */
  decodeRecord(topic: string, key: Uint8Array | null, value: Uint8Array | null, controlType?: number): DecodedRecord {
    return { key: this.decode(topic, 'key', key, null, controlType), value: this.decode(topic, 'value', value, key, controlType) };
  }
}

/**
 * The folder `root` opened for {@link schemasOf}: only its Schema Registry storage partitions
 * (topics matching `SCHEMAS_TOPIC`, `_schemas`) are opened, every other partition folder is only
 * listed (`openPath` lazy, in `unopened`), so a records page of a folder of 1,000 partitions does
 * not open them all (0.5–0.9 s) to find its schemas. The registry built from it equals the one built
 * from `openPath(root)`; a partition that cannot be opened no longer stops it unless it is a
 * `_schemas` one.
 * @throws KlxError as `openPath` (`not-found`, `not-a-log-dir`) and `PartitionLog.open` for a `_schemas` partition.
 */
export function openSchemasTopics(root: string): OpenedLogs {
  const opened = openPath(root, { lazy: true });
  for (const d of opened.logDirs) {
    for (const dir of d.unopened) {
      const name = parsePartitionDirName(basename(dir));
      if (name && SCHEMAS_TOPIC.test(name.topic)) d.partitions.push(PartitionLog.open(dir, { checkpoints: d.checkpoints }));
    }
    d.unopened = [];
  }
  return opened;
}

/**
 * Schema sources of an opened folder: the registry rebuilt from its `_schemas` partitions, then the
 * schema files/folders/exports of `schemaSpecs` (`--schemas` arguments: `PATH`, `ID=FILE`,
 * `SUBJECT=FILE`, see `parseSchemaSpec`; later ones replace earlier subject versions), each file
 * checked to be used (see `addSchemaSources`, which `lone` is passed to).
 * @returns the registry, the `_schemas` stats, and notes for the user (see `addSchemaSources`)
 * @throws KlxError `not-found` / `invalid-argument` for a schema path, or a file given that nothing uses (see `addSchemaSources`).
 */
export function schemasOf(opened: OpenedLogs | null, schemaSpecs: readonly string[] = [], lone?: LoneSchemaFile): { registry: SchemaRegistry; stats: SchemasTopicStats | null; notes: string[] } {
  let registry = new SchemaRegistry();
  let stats: SchemasTopicStats | null = null;
  if (opened) {
    const parts = allPartitions(opened);
    const r = registryFromSchemasTopics(
      parts.map((p) => p.log),
      (log) => {
        const rel = relative(opened.root, log.dir) || `${log.topic}-${log.partition}`;
        return `${rel} of ${opened.root}`;
      },
    );
    registry = r.registry;
    stats = r.stats;
  }
  const notes = schemaSpecs.length === 0 ? [] : addSchemaSources(registry, schemaSpecs.map(parseSchemaSpec), lone);
  return { registry, stats, notes };
}
