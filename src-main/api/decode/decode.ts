/**
 * `decode.*` handlers (issue 11): main's decode layer for the renderer and the bridge.
 *
 * - `decode.formats`: `auto` and every format of the registry, in auto's tie-break order.
 * - `decode.record`: one record's key and value decoded with the requested formats, else the
 *   topic's choice of the folder (`auto` by default): the format used and why, the decoded JSON as
 *   pretty text with int64 exact, the one-line text the table shows, the schema id/subject/version,
 *   or the typed reason it did not decode together with the raw bytes (capped at 1 MiB, as the
 *   decoder). The record is read as `log.recordValue` reads it (Kafka's fetch: `recordAt`).
 * - `decode.choices` / `decode.setChoice`: the format per topic and per side of the opened folder
 *   holding a path, persisted in the app's own settings (`api/core/folder-decoders.ts`); a change
 *   re-decodes `log.records` summaries and rebuilds the folder's SQL tables with the new choice.
 * - `decode.setSchema`: schema files (names and texts) given for a topic side, kept with the
 *   choices (see `engine/decode/schemas/user-schemas.ts`), for folders without a `_schemas` topic.
 *
 * Every path goes through `ctx.session.resolve` (inside an opened folder). Nothing here writes to
 * the opened folders.
 */
import { KlxError } from '../../engine/errors.ts';
import { recordAt } from '../../engine/log/fetch.ts';
import { AUTO, DEFAULT_MAX_DECODE_BYTES, type Decoded } from '../../engine/decode/format.ts';
import { toJsonText } from '../../engine/decode/json-text.ts';
import type { DecodedPart } from '../../../src-shared/decode-types.ts';
import { folderDecodersOf } from '../core/folder-decoders.ts';
import { logCacheOf } from '../core/log-cache.ts';
import type { ApiContext, DomainHandlers } from '../core/types.ts';

/** The one-line text is cut here (as the records table's summaries). */
const TEXT_CAP = 512;

/** A decoded key/value on the wire (see `decodedPart` in src-shared/decode-types.ts). */
export function decodedPartOf(d: Decoded, bytes: Uint8Array | null, choice: string): DecodedPart {
  const text = d.text;
  let raw: string | null = null;
  if (d.error !== undefined && bytes !== null) {
    const b = bytes.byteLength > DEFAULT_MAX_DECODE_BYTES ? bytes.subarray(0, DEFAULT_MAX_DECODE_BYTES) : bytes;
    raw = Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('base64');
  }
  return {
    choice,
    format: d.format,
    reason: d.reason,
    isNull: bytes === null,
    size: bytes?.byteLength ?? 0,
    json: d.ok ? toJsonText(d.json, 2) : null,
    text: text === null ? null : text.length > TEXT_CAP ? `${text.slice(0, TEXT_CAP - 1)}…` : text,
    schemaId: d.schemaId ?? null,
    subject: d.subject ?? null,
    version: d.version ?? null,
    error: d.error ?? null,
    errorCode: d.errorCode ?? (d.error !== undefined ? 'invalid' : null),
    errorPosition: d.errorPosition ?? null,
    bytes: raw,
  };
}

/** Builds the `decode.*` handlers. */
export function decodeHandlers(ctx: ApiContext): DomainHandlers<'decode'> {
  const cache = logCacheOf(ctx);
  const decoders = folderDecodersOf(ctx);

  return {
    'decode.formats': async () => ({
      formats: [{ name: AUTO, title: 'Auto (detect per record)', topicOnly: false }, ...decoders.formats.all().map((f) => ({ name: f.name, title: f.title, topicOnly: f.topicOnly === true }))],
    }),

    /** Errors: `invalid-argument` (outside the opened folders, unknown format), `offset-out-of-range`, `not-found` (a hole), engine read errors with file and position. */
    'decode.record': async (req, call) => {
      const log = cache.partition(await ctx.session.resolve(req.dir, call));
      const offset = BigInt(req.offset);
      if (offset >= log.logEndOffset) {
        throw new KlxError('offset-out-of-range', `offset ${offset} is at or after the log end offset ${log.logEndOffset} of ${log.topic}-${log.partition}`, { file: log.dir });
      }
      const r = await recordAt(log, offset, { includeControl: true });
      if (r === null) throw new KlxError('not-found', `no record at offset ${offset}: the offset is in a hole (see the records table for its cause)`, { file: log.dir });
      const decoder = decoders.decoderFor(log.dir);
      for (const f of [req.keyFormat, req.valueFormat]) {
        if (f !== undefined && f !== AUTO && !decoder.formats.get(f)) throw new KlxError('invalid-argument', `no format named ${JSON.stringify(f)} (formats: ${decoder.formats.names().join(', ')})`);
      }
      const keyChoice = req.keyFormat ?? decoder.choiceFor(log.topic, 'key');
      const valueChoice = req.valueFormat ?? decoder.choiceFor(log.topic, 'value');
      const controlType = r.control?.typeId;
      const key = decoder.decode(log.topic, 'key', r.key, null, controlType, keyChoice);
      const value = decoder.decode(log.topic, 'value', r.value, r.key, controlType, valueChoice);
      return { offset: req.offset, topic: log.topic, partition: log.partition, key: decodedPartOf(key, r.key, keyChoice), value: decodedPartOf(value, r.value, valueChoice) };
    },

    'decode.choices': async (req, call) => {
      const root = decoders.rootOf(await ctx.session.resolve(req.path, call));
      return { root, choices: decoders.choices(root) };
    },

    /** Errors: `invalid-argument` (outside the opened folders, unknown format), `io-error` when the settings cannot be written. */
    'decode.setChoice': async (req, call) => {
      const root = decoders.rootOf(await ctx.session.resolve(req.path, call));
      try {
        return { root, choices: decoders.setChoice(root, req.topic, req.side, req.format) };
      } catch (err) {
        if (err instanceof KlxError) throw err;
        throw new KlxError('io-error', `cannot save the format choice: ${(err as Error).message}`, { ...savedFile(err), cause: err });
      }
    },

    /** Errors: `invalid-argument` (outside the opened folders; a schema file that does not compile, naming it), `io-error` when the settings cannot be written. */
    'decode.setSchema': async (req, call) => {
      const root = decoders.rootOf(await ctx.session.resolve(req.path, call));
      try {
        return { root, choices: decoders.setSchema(root, req.topic, req.side, req.schema) };
      } catch (err) {
        if (err instanceof KlxError) throw err;
        throw new KlxError('io-error', `cannot save the schema files: ${(err as Error).message}`, { ...savedFile(err), cause: err });
      }
    },
  };
}

/** The settings file a failed save names (Node's I/O errors carry the path they failed on). */
function savedFile(err: unknown): { file?: string } {
  const path = (err as NodeJS.ErrnoException | null)?.path;
  return typeof path === 'string' ? { file: path } : {};
}
