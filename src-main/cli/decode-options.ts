/**
 * The decode options the record-reading commands share (`klx fetch`, `klx query`, `klx export`):
 * `--key-format F`, `--value-format F` and `--schemas PATH|ID=FILE|SUBJECT=FILE` (repeatable), turned
 * into the decode layer's choices and schema registry by one function, {@link cliDecodeSetup}, for
 * one topic (fetch) or every topic under a folder (query, export).
 *
 * Which format a topic's side is decoded with: the option when given (it applies to every topic the
 * command reads), else the format saved in the app for the topic (its format switcher,
 * `decode-choices.json` in the app's data folder, {@link savedChoicesFor}), else `auto`: an explicit
 * option wins over a saved choice. Schema files given in the app for a topic are used too.
 */
import { realpathSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import { appDataDir, decodeChoicesFile, readDecodeChoicesFile, savedChoicesFor } from '../api/core/decode-choices-store.ts';
import type { FormatChoices, TopicChoice } from '../engine/decode/format.ts';
import { SCHEMAS_TOPIC } from '../engine/decode/formats/json.ts';
import { openSchemasTopics, RecordDecoder, schemasOf } from '../engine/decode/record-decoder.ts';
import type { LoneSchemaFile } from '../engine/decode/schemas/schema-sources.ts';
import { KlxError } from '../engine/errors.ts';
import { parsePartitionDirName } from '../engine/files/file-names.ts';
import { openPath, type OpenedLogs } from '../engine/log/log-dir.ts';
import type { DecodeTableOptions } from '../engine/sql/decode-columns.ts';

/** The decode options as commander parses them (absent: not given). */
export interface CliDecodeFlags {
  /** Format of keys: a format name or `auto`. */
  keyFormat?: string;
  /** Format of values: a format name or `auto`. */
  valueFormat?: string;
  /** `--schemas` arguments, in the order given. */
  schemas?: string[];
}

/** What {@link cliDecodeSetup} gives a command. */
export interface CliDecodeSetup {
  /** The decoder: the registry (`_schemas` + schema files) and {@link choices} (for `klx fetch`, `klx export`). */
  decoder: RecordDecoder;
  /** Per topic, the format of each side and the schema files saved in the app for it. */
  choices: FormatChoices;
  /** The same decoding for the SQL tables (`SqlSession.open`'s `decode`): choices, schema paths, lone-file rule. */
  decode: DecodeTableOptions;
  /** Notes for stderr: saved choices applied, a lone schema file's use, unused files found in folders. */
  notes: string[];
}

/** Where a command's topics and saved choices come from. */
export interface CliDecodeSource {
  /** The folder whose `_schemas` partitions are read (null: none). */
  opened: OpenedLogs | null;
  /** The topics the command reads (each gets the formats given). */
  topics: readonly string[];
  /** The path the user gave: the choices saved in the app for a folder holding it or inside it apply. */
  savedFor: string;
}

/** Whether `topic` is left out when the lone-file rule counts a folder's topics: a name starting with `__` (`__consumer_offsets`...) or a `_schemas` topic (`SCHEMAS_TOPIC`). */
function isInternalTopic(topic: string): boolean {
  return topic.startsWith('__') || SCHEMAS_TOPIC.test(topic);
}

/**
 * Turns the decode options into the decode layer's choices and schema registry (see the module
 * comment). Schemas: the `_schemas` partitions of `source.opened`, then the `--schemas` sources
 * (see `engine/decode/schemas/schema-sources.ts` for how files are mapped); a lone Avro file that
 * maps to nothing is the schema of the one side given as `--key-format avro` / `--value-format avro`
 * of the one topic read (not counting `__` and `_schemas` topics), with a note; with several topics it
 * must be mapped. An explicit format is validated; a saved one this version does not know is
 * replaced by `auto` with a note.
 * @param flags the options; `dataDir` the app's data folder holding `decode-choices.json`
 * @returns the decoder, the choices, the SQL tables' decode options and notes for stderr
 * @throws KlxError `invalid-argument` for an unknown format name (listing the formats) or a schema
 *   file given that nothing uses (naming it and how to map it); `not-found` for a schema path.
 */
export function cliDecodeSetup(source: CliDecodeSource, flags: CliDecodeFlags, dataDir = appDataDir()): CliDecodeSetup {
  const { keyFormat, valueFormat } = flags;
  const schemaPaths = flags.schemas ?? [];
  let real = resolve(source.savedFor);
  try {
    real = realpathSync(source.savedFor);
  } catch {
    // keep the path as given
  }
  const file = decodeChoicesFile(dataDir);
  const saved = savedChoicesFor(readDecodeChoicesFile(file), real);
  const topics = [...new Set(source.topics)];
  const dataTopics = topics.filter((t) => !isInternalTopic(t));
  // One schema file that maps to nothing is read as the one side given as plain Avro (without a schema saved in the app).
  const loneTopic = topics.length === 1 ? topics[0]! : dataTopics.length === 1 ? dataTopics[0]! : null;
  const avroSides = (['key', 'value'] as const).filter((side) => (side === 'key' ? keyFormat : valueFormat) === 'avro' && loneTopic !== null && !saved[loneTopic]?.[`${side}Schema`]);
  const avroSide = avroSides.length === 1 ? avroSides[0]! : null;
  const lone: LoneSchemaFile = { topic: loneTopic ?? dataTopics[0] ?? topics[0] ?? 'orders', avroSide, said: `--${avroSide ?? 'value'}-format avro` };
  const { registry, notes: schemaNotes } = schemasOf(source.opened, schemaPaths, lone);
  const decoder = new RecordDecoder({ schemas: registry });
  for (const f of [keyFormat, valueFormat]) {
    if (f !== undefined && f !== 'auto' && !decoder.formats.get(f)) throw new KlxError('invalid-argument', `no format named "${f}"; formats: ${decoder.formats.names().join(', ')}`);
  }
  const notes: string[] = [...schemaNotes];
  const choices: FormatChoices = {};
  // Saved choices of topics the command does not name stay (a folder's topics are only listed).
  for (const [topic, c] of Object.entries(saved)) choices[topic] = { ...c };
  for (const topic of topics) {
    const s = saved[topic] ?? {};
    const pick = (side: 'key' | 'value', given: string | undefined): string => {
      if (given !== undefined) return given;
      const name = s[side];
      if (name === undefined) return 'auto';
      if (!decoder.formats.get(name)) {
        notes.push(`the ${side} format saved in the app for ${topic} ("${name}", ${file}) is unknown to this version; decoding ${side}s with auto`);
        return 'auto';
      }
      notes.push(`decoding ${side}s of ${topic} as ${name}, the format saved in the app (${file}); --${side}-format overrides it`);
      return name;
    };
    const choice: TopicChoice = { key: pick('key', keyFormat), value: pick('value', valueFormat) };
    for (const side of ['key', 'value'] as const) {
      const given = s[`${side}Schema`];
      if (!given) continue;
      choice[`${side}Schema`] = given;
      notes.push(`reading ${side}s of ${topic} with the schema file ${given.files[0]!.name} given in the app (${file})`);
    }
    choices[topic] = choice;
  }
  decoder.setChoices(choices);
  return { decoder, choices, decode: { choices, schemaPaths, lone }, notes };
}

/**
 * The topics of every partition folder of `listed` (`openPath` of a partition folder, a log directory
 * or a folder of log directories; with `lazy`, from the listing: no partition folder is opened).
 */
export function topicsOf(listed: OpenedLogs): string[] {
  const topics = new Set<string>();
  for (const d of listed.logDirs) {
    for (const p of d.partitions) topics.add(p.topic);
    for (const dir of d.unopened) {
      const name = parsePartitionDirName(basename(dir));
      if (name) topics.add(name.topic);
    }
  }
  return [...topics].sort();
}

/**
 * {@link cliDecodeSetup} for every topic under `path` (`klx query`): the topics from one listing
 * ({@link topicsOf}), the schemas of the `_schemas` partitions under `path`, or beside it when it is
 * a partition folder ({@link logDirOfPartition}; only those are opened, `openSchemasTopics`), the
 * choices saved for folders holding `path` or inside it.
 * @throws KlxError as {@link cliDecodeSetup}; `not-found` / `not-a-log-dir` for `path`.
 */
export function cliDecodeSetupUnder(path: string, flags: CliDecodeFlags, dataDir = appDataDir()): CliDecodeSetup {
  const listed = openPath(path, { lazy: true });
  const beside = logDirOfPartition(listed);
  const setup = cliDecodeSetup({ opened: openSchemasTopics(beside ?? path), topics: topicsOf(listed), savedFor: path }, flags, dataDir);
  return beside === null ? setup : { ...setup, decode: { ...setup.decode, schemasFrom: beside } };
}

/**
 * For an opened partition folder (`openPath` of it), the log directory holding it, whose `_schemas`
 * partitions `klx fetch`, `klx query` and `klx export` read for that partition (those in the same
 * log directory); null for a log directory or a folder of them (their own `_schemas` partitions are read).
 */
export function logDirOfPartition(opened: OpenedLogs): string | null {
  const only = opened.logDirs.length === 1 ? opened.logDirs[0]! : null;
  return only !== null && only.partitions.length === 1 && only.partitions[0]!.dir === opened.root ? only.path : null;
}
