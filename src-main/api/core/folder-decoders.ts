/**
 * The decode layer of one API context (an app window or a bridge): one {@link RecordDecoder} per
 * opened folder (its `_schemas` partitions read once, on first use) carrying that folder's format
 * choices, and the store the choices are persisted in ({@link DecodeChoicesStore}, the app's own
 * settings, never the opened folder). Shared by the domains that decode: `log.records` summaries,
 * `decode.*`, and the SQL tables (which are built with the same choices).
 *
 * A change of choices ({@link FolderDecoders.setChoice}, {@link FolderDecoders.setSchema}) updates the folder's decoder and emits
 * `decode.choices` so the SQL sessions of the folder rebuild and the renderer decodes again. A
 * `log.changed` event inside a folder drops its decoder (an append to `_schemas` may add schemas).
 */
import { KlxError } from '../../engine/errors.ts';
import { AUTO, type FormatChoices, type Side, type TopicChoice, type UserSchema } from '../../engine/decode/format.ts';
import { checkUserSchema } from '../../engine/decode/schemas/user-schemas.ts';
import { openSchemasTopics, RecordDecoder, schemasOf } from '../../engine/decode/record-decoder.ts';
import { defaultFormatRegistry } from '../../engine/decode/default-formats.ts';
import type { FormatRegistry } from '../../engine/decode/format.ts';
import { memoryDecodeChoicesStore, type DecodeChoicesStore } from './decode-choices-store.ts';
import { isInsideDir } from './paths.ts';
import type { ApiContext } from './types.ts';

/** Decoders and choices of the opened folders of one context. */
export class FolderDecoders {
  private readonly decoders = new Map<string, RecordDecoder>();
  /** The registry every decoder of this context uses (formats are stateless). */
  readonly formats: FormatRegistry = defaultFormatRegistry();

  constructor(
    private readonly ctx: ApiContext,
    public store: DecodeChoicesStore = memoryDecodeChoicesStore(),
  ) {
    ctx.events.subscribe((e) => {
      if (e.type !== 'log.changed') return;
      for (const root of [...this.decoders.keys()]) if (e.dirs.some((d) => isInsideDir(d, root) || isInsideDir(root, d))) this.decoders.delete(root);
    });
  }

  /** The opened folder holding `path` (a real path already checked by the session), else `path` itself. */
  rootOf(path: string): string {
    const opened = this.ctx.session.opened().filter((r) => isInsideDir(path, r));
    // The innermost opened folder wins (a partition folder opened on its own inside an opened log dir).
    return opened.sort((a, b) => b.length - a.length)[0] ?? path;
  }

  /** The persisted choices of the folder `root`. */
  choices(root: string): FormatChoices {
    return this.store.get(root);
  }

  /**
   * The decoder of the folder holding `dir` (made on first use: the folder's `_schemas` partitions
   * are read then; a folder that cannot be read as logs decodes without schemas).
   */
  decoderFor(dir: string): RecordDecoder {
    const root = this.rootOf(dir);
    let d = this.decoders.get(root);
    if (!d) {
      let schemas;
      try {
        schemas = schemasOf(openSchemasTopics(root)).registry;
      } catch {
        schemas = undefined;
      }
      d = new RecordDecoder({ formats: this.formats, schemas, choices: this.store.get(root) });
      this.decoders.set(root, d);
    }
    return d;
  }

  /**
   * Chooses `format` for `topic`'s `side` in the folder `root` (`auto` removes the choice), persists
   * it, updates the folder's decoder and emits `decode.choices`.
   * @throws KlxError `invalid-argument` when no format has that name; Node's I/O error when the store cannot write.
   */
  setChoice(root: string, topic: string, side: Side, format: string): FormatChoices {
    if (format !== AUTO && !this.formats.get(format)) {
      throw new KlxError('invalid-argument', `no format named ${JSON.stringify(format)} (formats: ${this.formats.names().join(', ')})`);
    }
    return this.change(root, topic, (entry) => {
      if (format === AUTO) delete entry[side];
      else entry[side] = format;
    });
  }

  /**
   * Gives `schema` (schema files, see `user-schemas.ts`) for `topic`'s `side` in the folder `root`,
   * or removes it (`null`); persists it with the choices, updates the folder's decoder and emits
   * `decode.choices`.
   * @throws KlxError `invalid-argument` naming the file when the schema does not compile or is over
   *   1 MiB; Node's I/O error when the store cannot write.
   */
  setSchema(root: string, topic: string, side: Side, schema: UserSchema | null): FormatChoices {
    if (schema) checkUserSchema(topic, side, schema);
    return this.change(root, topic, (entry) => {
      if (schema) entry[`${side}Schema`] = structuredClone(schema);
      else delete entry[`${side}Schema`];
    });
  }

  private change(root: string, topic: string, edit: (entry: TopicChoice) => void): FormatChoices {
    const choices = this.store.get(root);
    const entry = { ...(choices[topic] ?? {}) };
    edit(entry);
    if (Object.values(entry).every((v) => v === undefined)) delete choices[topic];
    else choices[topic] = entry;
    this.store.set(root, choices);
    this.decoders.get(root)?.setChoices(structuredClone(choices));
    this.ctx.events.emit({ type: 'decode.choices', root, choices: structuredClone(choices) });
    return choices;
  }
}

const byContext = new WeakMap<ApiContext, FolderDecoders>();

/** The {@link FolderDecoders} of a context (made on first use, choices in memory until {@link configureDecodeChoices}). */
export function folderDecodersOf(ctx: ApiContext): FolderDecoders {
  let d = byContext.get(ctx);
  if (!d) {
    d = new FolderDecoders(ctx);
    byContext.set(ctx, d);
  }
  return d;
}

/** Sets where a context persists its format choices (Electron: its user-data folder; the bridge: the app data folder). */
export function configureDecodeChoices(ctx: ApiContext, store: DecodeChoicesStore): void {
  folderDecodersOf(ctx).store = store;
}
