/**
 * Every `klx` command's name, arguments, options (with their parsers and defaults) and help text,
 * declared without loading the command: each action imports its implementation,
 * `commands/<name>.ts`, when the command runs. So `klx --help`, `klx --version` and a usage error
 * load none of the engine, and `klx dump` loads the log reader but not DuckDB, the bridge or zod.
 *
 * Keep this module cheap: besides commander it imports only `output.ts`, the import-free constant
 * modules of the engine (`read-defaults.ts`, `sql-defaults.ts`, `format/types.ts`), the topic-config
 * parser (`topic-config.ts`, for the config flags) and types. `test/cli/startup.test.ts` checks what
 * `klx --help` and `klx dump` load.
 */
import { InvalidArgumentError, Option, type Command } from 'commander';
import { KlxError } from '../engine/errors.ts';
import { COMPRESSIONS, type Compression } from '../engine/format/types.ts';
import { DEFAULT_MAX_RECORDS, EARLIEST_TIMESTAMP, LATEST_TIMESTAMP, type IsolationLevel } from '../engine/log/read-defaults.ts';
import { parseConfigPairs, parseConfigValue, type TopicConfig, type TopicConfigKey } from '../engine/log/topic-config.ts';
import { DEFAULT_VALUE_CAP_BYTES, defaultCacheDir, duckdbMemoryLimitBytes, formatMemorySize, parseMemorySize } from '../engine/sql/sql-defaults.ts';
import { parseNonNegativeInt } from './output.ts';
import type { AppendCliOptions } from './commands/append.ts';
import type { CompactFlags } from './commands/compact.ts';
import type { CreateOptions } from './commands/create.ts';
import type { DumpOptions } from './commands/dump.ts';
import type { ExportCliOptions } from './commands/export.ts';
import type { FetchCliOptions } from './commands/fetch.ts';
import type { GroupsCliOptions } from './commands/groups.ts';
import type { HolesCliOptions } from './commands/holes.ts';
import type { OffsetForTimeCliOptions } from './commands/offset-for-time.ts';
import type { QueryCommandOptions } from './commands/query.ts';
import type { RepairCliOptions } from './commands/repair.ts';
import type { RetentionFlags } from './commands/retention.ts';
import type { RollOptions } from './commands/roll.ts';
import type { ServeOptions } from './commands/serve.ts';
import type { VerifyCliOptions } from './commands/verify.ts';
import { parseInstant, TIME_FORMS_HELP } from './time-arg.ts';

/** Registers every command on `program`, in the order `klx --help` lists them. */
export function registerCommands(program: Command): void {
  registerDump(program);
  registerRetention(program);
  registerCompact(program);
  registerUndo(program);
  registerTrash(program);
  registerFetch(program);
  registerOffsetForTime(program);
  registerHoles(program);
  registerGroups(program);
  registerVerify(program);
  registerRepair(program);
  registerCreate(program);
  registerAppend(program);
  registerRoll(program);
  registerServe(program);
  registerQuery(program);
  registerExport(program);
  for (const c of program.commands) if (READS_RECORDS.has(c.name())) withMaxInflatedBytes(c);
}

/** The commands that decompress records, which take `--max-inflated-bytes`. */
const READS_RECORDS = new Set(['dump', 'fetch', 'holes', 'groups', 'verify', 'compact', 'query', 'export']);

/** The most `--max-inflated-bytes` allows (2 GiB; `MAX_INFLATED_BYTES_CEILING` of engine/format/compression.ts, not imported here to keep startup light). */
const MAX_INFLATED_BYTES = 2 * 1024 * 1024 * 1024;

/**
 * Adds `--max-inflated-bytes <bytes>` to a command that reads records: the bound on what one batch's
 * records area may inflate to (`setMaxInflatedBytes`), set before the command runs, for this
 * process and the worker threads it starts.
 */
function withMaxInflatedBytes(cmd: Command): void {
  cmd
    .option(
      '--max-inflated-bytes <bytes>',
      `read batches whose records inflate to up to this many bytes (raises the default bound, recordsCount × max.message.bytes at most 268435456, never lowers it; at most ${MAX_INFLATED_BYTES}). A batch past the bound is reported as not checked, not as damage (a broker has no such bound)`,
      (v) => {
        const n = parseNonNegativeInt(v, '--max-inflated-bytes');
        if (n < 1 || n > MAX_INFLATED_BYTES) throw new InvalidArgumentError(`--max-inflated-bytes must be from 1 to ${MAX_INFLATED_BYTES} (2 GiB: one records area is held in memory whole), got ${v}`);
        return n;
      },
    )
    .hook('preAction', async (_cmd, action) => {
      const n = action.opts()['maxInflatedBytes'] as number | undefined;
      if (n !== undefined) (await import('../engine/format/compression.ts')).setMaxInflatedBytes(n);
    });
}

// ---------------------------------------------------------------------------------------------
// Option parsers (commander prints their message on failure)

/** commander helper for repeatable options. */
export function collect(v: string, prev: string[]): string[] {
  return [...prev, v];
}

/** Parses a config flag with Kafka's validation; commander prints the reason on failure. */
export function configFlag<K extends TopicConfigKey>(key: K): (v: string) => TopicConfig[K] {
  return (v: string) => {
    try {
      return parseConfigValue(key, v);
    } catch (err) {
      throw new InvalidArgumentError(err instanceof KlxError ? err.reason : String(err));
    }
  };
}

/** Collects repeated `--config k=v` flags, validating each. */
export function collectConfig(v: string, prev: Partial<TopicConfig> = {}): Partial<TopicConfig> {
  try {
    return { ...prev, ...parseConfigPairs([v]) };
  } catch (err) {
    throw new InvalidArgumentError(err instanceof KlxError ? err.reason : String(err));
  }
}

/** Parses a non-negative int64 flag (offsets, `--now`). */
export function int64Flag(name: string): (v: string) => bigint {
  return (v: string) => {
    if (!/^\d{1,19}$/.test(v.trim()) || BigInt(v.trim()) > 9223372036854775807n) throw new InvalidArgumentError(`${name} must be a non-negative integer, got "${v}"`);
    return BigInt(v.trim());
  };
}

/** Parses `--now`: ms since the epoch or an ISO-8601 date(-time), zoneless = UTC (the rule of `./time-arg.ts`). */
export function nowFlag(v: string): number {
  const ms = parseInstant(v, '--now');
  if (ms > 9007199254740991n) throw new InvalidArgumentError(`--now ${v} is beyond 2^53 ms`);
  return Number(ms);
}

/** Parses an offset argument: a non-negative int64, `earliest` or `latest`. */
export function parseOffsetArg(v: string): bigint | 'earliest' | 'latest' {
  if (v === 'earliest' || v === 'latest') return v;
  if (!/^\d+$/.test(v) || BigInt(v) > 9223372036854775807n) throw new InvalidArgumentError(`--offset must be a non-negative integer, "earliest" or "latest", got "${v}"`);
  return BigInt(v);
}

function parseIsolation(v: string): IsolationLevel {
  if (v !== 'read_uncommitted' && v !== 'read_committed') throw new InvalidArgumentError(`--isolation must be read_uncommitted or read_committed, got "${v}"`);
  return v;
}

function parseUpTo(v: string): 'log-end' | 'high-watermark' {
  if (v !== 'log-end' && v !== 'high-watermark') throw new InvalidArgumentError(`--up-to must be log-end or high-watermark, got "${v}"`);
  return v;
}

/** Parses `--timestamp`: `earliest` (−2), `latest` (−1), or a time by the rule of `./time-arg.ts` (ms since the epoch, ISO-8601; zoneless = UTC). */
export function parseTimestampArg(v: string): bigint {
  if (v === 'earliest' || v === '-2') return EARLIEST_TIMESTAMP;
  if (v === 'latest' || v === '-1') return LATEST_TIMESTAMP;
  return parseInstant(v, '--timestamp');
}

/** `klx append --timestamp`: −1 (none), or a time by the rule of `./time-arg.ts` (ms since the epoch, ISO-8601; zoneless = UTC). */
function parseTimestamp(v: string): bigint {
  if (v.trim() === '-1') return -1n;
  return parseInstant(v, '--timestamp');
}

const DECODE_MODES = ['auto', 'none', 'offsets', 'transactions', 'metadata'] as const;

function parseDecodeMode(v: string): NonNullable<DumpOptions['decode']> {
  if (!(DECODE_MODES as readonly string[]).includes(v)) throw new InvalidArgumentError(`--decode must be one of ${DECODE_MODES.join(', ')}, got "${v}"`);
  return v as NonNullable<DumpOptions['decode']>;
}

/** An integer option within [min, max]. */
function parseIntArg(name: string, min: number, max: number): (v: string) => number {
  return (v) => {
    if (!/^\d+$/.test(v) || Number(v) < min || Number(v) > max) throw new InvalidArgumentError(`${name} must be an integer ${min}..${max}, got "${v}"`);
    return Number(v);
  };
}

/** A non-negative int64 option. */
function parseInt64Arg(name: string): (v: string) => bigint {
  return (v) => {
    if (!/^\d+$/.test(v) || BigInt(v) > 9223372036854775807n) throw new InvalidArgumentError(`${name} must be an integer 0..2^63-1, got "${v}"`);
    return BigInt(v);
  };
}

function parseCompression(v: string): Compression {
  if (!(COMPRESSIONS as readonly string[]).includes(v)) throw new InvalidArgumentError(`--compression must be one of ${COMPRESSIONS.join(', ')}, got "${v}"`);
  return v as Compression;
}

// ---------------------------------------------------------------------------------------------
// Decode options (klx fetch, klx query, klx export: one meaning, `./decode-options.ts`)

/**
 * One of the `--key-format`, `--value-format` and `--schemas` options of a command that decodes
 * records: `fetch` reads one topic; `query` and `export` apply them to every topic under PATH/DIR.
 * An option given wins over the format saved in the app for a topic (`./decode-options.ts`,
 * `cliDecodeSetup`, gives them their one meaning).
 */
function decodeOption(command: 'fetch' | 'query' | 'export', which: 'key' | 'value' | 'schemas'): Option {
  const one = command === 'fetch';
  const where = command === 'query' ? 'PATH' : 'DIR';
  const schemasTopics = one ? 'beside DIR' : `under ${where} (beside ${where} when it is a partition folder)`;
  const loneRule = one ? '' : ' when ' + where + ' holds one topic (not counting __ and _schemas topics)';
  if (which === 'key') {
    return new Option(
      '--key-format <format>',
      one
        ? 'decode keys as FORMAT (auto, string, long, int, json, avro, confluent, consumer-offsets, hex, ...); default: the format saved in the app for this topic, else auto'
        : `decode the keys of every topic under ${where} as FORMAT (auto, string, long, int, json, avro, confluent, consumer-offsets, hex, ...); default: the format saved in the app for each topic, else auto (given, it wins over a saved format)`,
    );
  }
  if (which === 'value') return new Option('--value-format <format>', one ? 'decode values as FORMAT (as --key-format)' : `decode the values of every topic under ${where} as FORMAT (as --key-format)`);
  return new Option(
    '--schemas <path>',
    `schema files (.avsc, .proto, .json), a folder of them or a registry export (GET /schemas); repeatable; _schemas partitions ${schemasTopics} are read too. ` +
      'A file is mapped by its name: <schemaId>.avsc (e.g. 42.avsc: Confluent-framed records with schema id 42), <topic>-value.avsc / <topic>-key.avsc ' +
      "(that topic's values/keys: plain Avro, and framed records whose id no source knows), any other <subject>.avsc only serves imports; " +
      'or explicitly: ID=FILE (42=pay.avsc) or SUBJECT=FILE (orders-value=pay.avsc). A file given that nothing uses is an error ' +
      `(in a folder: a note), except one .avsc with exactly one of --key-format/--value-format avro${loneRule}: it is read as that side`,
  )
    .argParser(collect)
    .default([]);
}

// ---------------------------------------------------------------------------------------------
// Read commands

function registerDump(program: Command): void {
  program
    .command('dump')
    .description('print the batches of .log files (or the entries of .index/.timeindex files); PATH may be a file, a partition directory or a log directory')
    .argument('<path...>', '.log/.index/.timeindex file, partition directory or log directory')
    .option('--deep', 'decode and print every record (decompressing batches)')
    .option('--json', "print NDJSON: one object per batch (fields as in EXPECTED.jsonl), or per index entry: offset, position (the batch's byte position in the .log, as kafka-dump-log prints it: DumpLogSegments.dumpIndex), timestamp (.timeindex), relativeOffset, slot and indexPosition (the entry's byte position in the index file)")
    .option('--max-bytes <n>', 'read at most N bytes of each .log file', (v) => parseNonNegativeInt(v, '--max-bytes'))
    .option(
      '--decode <decoder>',
      "decode records as kafka-dump-log's internal-topic decoders do (DumpLogSegments --offsets-decoder, --transaction-log-decoder, --cluster-metadata-decoder; implies --deep): auto (by the partition folder's topic), none, offsets (__consumer_offsets), transactions (__transaction_state), metadata (__cluster_metadata and KRaft snapshots). A record of a type the offsets/transactions decoder does not know prints dump-log's 'Unknown record type N at offset O, skipping.'; other records that do not decode print their bytes and '!! does not decode: …' (this tool's form, not dump-log's 'Error at offset O, skipping.')",
      parseDecodeMode,
    )
    .action(async (paths: string[], opts: DumpOptions) => (await import('./commands/dump.ts')).runDump(paths, opts));
}

function registerFetch(program: Command): void {
  program
    .command('fetch')
    .description('print the records a consumer at --offset would receive (follows offset holes; skips control records; read_committed hides aborted transactions)')
    .argument('<dir>', 'partition folder, or a log directory with --partition')
    .requiredOption('--offset <n>', 'first offset wanted: a number, "earliest" (log start offset) or "latest" (what ListOffsets latest answers a consumer: the high watermark, read_committed the last stable offset, Partition.fetchOffsetForTimestamp; with --up-to log-end and read_uncommitted the log end offset)', parseOffsetArg)
    .option('--max <n>', 'at most N records', (v) => parseNonNegativeInt(v, '--max'), DEFAULT_MAX_RECORDS)
    .option('--max-bytes <n>', 'byte budget in whole batches; the first batch is returned whole even if larger (Kafka KIP-74)', (v) => parseNonNegativeInt(v, '--max-bytes'))
    .option('--isolation <level>', 'read_uncommitted or read_committed', parseIsolation, 'read_uncommitted')
    .option('--include-control', 'also print control records (transaction markers, KRaft control records), flagged')
    .option('--up-to <limit>', 'read_uncommitted: stop at the "high-watermark" (default: where a consumer\'s fetches end, FetchIsolation.HIGH_WATERMARK in UnifiedLog.read; the log end offset when replication-offset-checkpoint has no entry) or at the "log-end" (every record the files hold, also those not yet known to be replicated)', parseUpTo, 'high-watermark')
    .option('--partition <topic-N>', 'the partition to read when DIR holds several')
    .option('--skip-corrupt', 'read on past batches whose CRC fails, marking their records (default: stop there with a corrupt-record error, exit 1, as a consumer with check.crcs=true does); a size field FileLogInputStream.nextBatch cannot frame ends the read as on a broker either way')
    .option('--json', 'print NDJSON: one {"type":"record"} per record (with keyFormat, valueFormat, keyDecoded, valueDecoded, schemaId, decodeError), then {"type":"end","nextOffset":...}')
    .addOption(decodeOption('fetch', 'key'))
    .addOption(decodeOption('fetch', 'value'))
    .addOption(decodeOption('fetch', 'schemas'))
    .action(async (dir: string, opts: FetchCliOptions) => (await import('./commands/fetch.ts')).runFetch(dir, opts));
}

function registerOffsetForTime(program: Command): void {
  program
    .command('offset-for-time')
    .description(
      'the first offset whose record has a timestamp at or after --timestamp, as a broker answers a consumer (Kafka offsetsForTimes, Partition.fetchOffsetForTimestamp); ' +
        '"earliest" gives the log start offset, "latest" the high watermark (read_committed: the last stable offset); a record at or past that is no answer',
    )
    .argument('<dir>', 'partition folder, or a log directory with --partition')
    .requiredOption('--timestamp <time>', `the target time: ${TIME_FORMS_HELP}; or "earliest" / "latest". The output repeats it in UTC`, parseTimestampArg)
    .option('--isolation <level>', 'read_uncommitted (up to the high watermark of replication-offset-checkpoint, or the log end offset when it has none) or read_committed (up to the last stable offset)', parseIsolation, 'read_uncommitted')
    .option('--partition <topic-N>', 'the partition to search when DIR holds several')
    .option('--json', 'print one JSON object')
    .action(async (dir: string, opts: OffsetForTimeCliOptions) => (await import('./commands/offset-for-time.ts')).runOffsetForTime(dir, opts));
}

function registerHoles(program: Command): void {
  program
    .command('holes')
    .description('list every offset range that holds no readable record, and why (compaction, control records, aborted transactions, log start, missing segments, damage)')
    .argument('<dir>', 'partition folder, or a log directory with --partition')
    .option('--partition <topic-N>', 'the partition to examine when DIR holds several')
    .option('--json', 'print NDJSON: one {"type":"hole"} per range, then {"type":"summary"}')
    .action(async (dir: string, opts: HolesCliOptions) => (await import('./commands/holes.ts')).runHoles(dir, opts));
}

function registerGroups(program: Command): void {
  program
    .command('groups')
    .description('the consumer groups stored in __consumer_offsets under DIR: committed offsets with the kafka-consumer-groups.sh --describe columns, plus the records actually left (holes, control records and aborted data not counted), where each consumer continues, a diagnosis and offset expiry')
    .argument('<dir>', 'a log directory (or a folder of log directories) holding __consumer_offsets-N and the partitions the groups read')
    .option('--group <id>', 'only this group (the message names its __consumer_offsets partition when that folder is missing)')
    .option('--now <time>', `the time offsets expire against (default: now): ${TIME_FORMS_HELP}`, nowFlag)
    .option('--isolation <level>', 'record lag of read_uncommitted (up to the log end offset of the files; a live consumer and kafka-consumer-groups.sh stop at the high watermark, ListOffsets latest) or read_committed (up to the last stable offset) consumers', parseIsolation, 'read_uncommitted')
    .option('--offsets-partitions <n>', 'offsets.topic.num.partitions (default 50, Kafka\'s default)', (v) => parseNonNegativeInt(v, '--offsets-partitions'))
    .option('--retention-minutes <n>', 'offsets.retention.minutes (default 10080, Kafka\'s default since 2.0)', (v) => parseNonNegativeInt(v, '--retention-minutes'))
    .option('--json', 'print NDJSON: one object per group, topic and partition')
    .action(async (dir: string, opts: GroupsCliOptions) => (await import('./commands/groups.ts')).runGroups(dir, opts));
}

const QUERY_TABLES_HELP = `
Tables (one set for every partition folder under PATH):
  records      one row per record: topic, partition, "offset", timestamp (ms), key/key_text,
               value/value_text (UTF-8 text or NULL), value_size, value_truncated, headers,
               is_tombstone, is_control, control_type, is_transactional, aborted, producer_id,
               batch_base_offset, segment_base_offset, position, crc_valid (false: the
               batch fails its CRC, as a consumer with check.crcs would refuse it,
               CompletedFetch.maybeEnsureValid), past_damage, past_damage_segment,
               past_damage_position (the record lies after damage in the log: a consumer
               reading in order stops at the damage, CompletedFetch; printed as a note),
               partition_id
  latest       the record with the highest offset of each key (tombstones included): what
               compaction keeps. No keyless, control, aborted or below-logStartOffset records.
  state        latest without tombstones: the current value of each key
  segments, batches, holes, partitions, damage, aborted_transactions
  transactions      __transaction_state records decoded: transactional_id, producer_id, producer_epoch,
                    state, partitions (JSON), timestamps (ms and _utc), key_json/value_json, decode_error
  cluster_metadata  __cluster_metadata records: record_offset, type, version, data (JSON as
                    kafka-dump-log --cluster-metadata-decoder prints it, DumpLogSegments), payload, decode_error
  consumer_offsets  every __consumer_offsets record decoded (record type, group, member, committed
                    offset, key_json/value_json, decode_error)
  group_metadata, group_offsets (committed offset, log offsets, lag, record_lag, diagnosis,
                    next_offset, expired), group_members

Only one SELECT / WITH / EXPLAIN / DESCRIBE / SHOW / SUMMARIZE / PRAGMA table_info statement is
run; anything that would change the tables is refused. "offset" is an SQL keyword: quote it.

Decoded columns of records/latest/state (key_format, value_format, key_decoded, value_decoded as
JSON, schema_id, decode_error) are decoded as klx fetch decodes, for every topic under PATH:
--key-format/--value-format when given, else the format saved in the app for the topic, else auto;
schemas from the _schemas topics under PATH (beside it when PATH is a partition folder) and --schemas.
They are computed when a query reads
them, so cached tables serve any formats without --rebuild.

Examples:
  klx query /var/kafka-logs 'SELECT key_text, value_text FROM state ORDER BY key_text'
  klx query __consumer_offsets-7 'SELECT count(*) FROM records GROUP BY is_tombstone' --json
  klx query ./logs 'SELECT topic, "partition", min("offset"), max("offset") FROM records GROUP BY ALL'
  klx query ./copy "SELECT value_decoded->>'name' FROM records WHERE topic = 'signups'" --schemas 42.avsc
`;

function registerQuery(program: Command): void {
  program
    .command('query')
    .description('run one read-only SQL statement (DuckDB) over the records, latest, state, segments, batches, holes, partitions, damage, aborted_transactions, transactions, cluster_metadata and consumer-group tables of PATH (decoded columns as klx fetch decodes: --key-format/--value-format for every topic, else the formats saved in the app for each topic, else auto; schemas from --schemas and the _schemas topics)')
    .argument('<path>', 'log directory, partition folder or folder of log directories')
    .argument('<sql>', 'one SELECT statement (quote it for the shell)')
    .addOption(new Option('--json', 'print NDJSON: one object per row (BLOB as base64, BIGINT beyond 2^53 as strings)').conflicts('csv'))
    .addOption(new Option('--csv', 'print CSV with a header line (BLOB as base64)').conflicts('json'))
    .option('--limit <n>', 'print at most N rows', (v) => parseNonNegativeInt(v, '--limit'))
    .option('--cache-dir <dir>', `where the built tables are kept (default ${defaultCacheDir()})`)
    .option('--no-cache', 'build the tables in a temporary folder and delete them afterwards')
    .option('--rebuild', 'rebuild the cached tables even when the folder has not changed')
    .option('--value-cap <bytes>', `keep at most this many bytes of each value in records.value (default ${DEFAULT_VALUE_CAP_BYTES})`, (v) => parseNonNegativeInt(v, '--value-cap'))
    .option(
      '--memory-limit <size>',
      `memory DuckDB may use to build the tables and run the query, e.g. 2GiB (K/M/G/KiB/MiB/GiB: powers of 1024, KB/MB/GB: of 1000; from 16 MiB to the machine's memory; default an eighth of the machine's memory, 128 to 512 MiB: ${formatMemorySize(duckdbMemoryLimitBytes())} here); raise it when a query fails with out-of-memory`,
      (v) => {
        try {
          return parseMemorySize(v);
        } catch (err) {
          throw new InvalidArgumentError(err instanceof KlxError ? err.reason : String(err));
        }
      },
    )
    .addOption(decodeOption('query', 'key'))
    .addOption(decodeOption('query', 'value'))
    .addOption(decodeOption('query', 'schemas'))
    .addHelpText('after', QUERY_TABLES_HELP)
    .action(async (path: string, sql: string, opts: QueryCommandOptions) => (await import('./commands/query.ts')).runQuery(path, sql, opts));
}

function registerExport(program: Command): void {
  program
    .command('export')
    .description(
      'write the records of every partition under DIR as Parquet (through DuckDB, one folder per topic and partition), NDJSON or CSV, ' +
        'with the decoded key and value beside the raw bytes, so Spark, Trino, BigQuery or DuckDB read the log without klx',
    )
    .argument('<dir>', 'log directory, partition folder or folder of log directories')
    .addOption(new Option('--format <format>', 'output format').choices(['parquet', 'ndjson', 'csv']).makeOptionMandatory())
    .requiredOption('--out <path>', 'Parquet: a new folder (topic=T/partition=P/data_0.parquet); NDJSON/CSV: a new file. Never inside DIR, never overwritten')
    .option('--where <sql>', 'keep only the records for which this DuckDB condition over the export columns holds, e.g. \'"offset" >= 100 AND NOT is_control\'')
    .addOption(new Option('--isolation <level>', 'read_committed leaves out aborted transactions and stops at the last stable offset, as a consumer does (UnifiedLog, FetchIsolation.TXN_COMMITTED); when an open transaction holds it, a line on stderr (and lastStableStops with --json) names the offset, the transaction (producer id, first offset) and the records after it not exported').choices(['read_uncommitted', 'read_committed']).default('read_uncommitted'))
    .option('--up-to <limit>', 'read_uncommitted: stop at the "high-watermark" (default: where a consumer\'s fetches end, FetchIsolation.HIGH_WATERMARK in UnifiedLog.read; the log end offset when replication-offset-checkpoint has no entry; the records left out are named on stderr and in highWatermarkStops) or at the "log-end" (every record the files hold, also those past damage in the active segment)', parseUpTo, 'high-watermark')
    .option('--no-decode', 'leave key_decoded/value_decoded NULL (raw bytes only)')
    .addOption(decodeOption('export', 'key').conflicts('decode'))
    .addOption(decodeOption('export', 'value').conflicts('decode'))
    .addOption(decodeOption('export', 'schemas').conflicts('decode'))
    .option('--json', 'print the summary as one JSON object')
    .addHelpText(
      'after',
      '\nColumns: topic, partition, offset, timestamp, timestamp_type, key, value (BLOB; CSV: text when UTF-8 text, else base64), headers,\n' +
        'key_format, value_format, key_decoded, value_decoded (JSON), schema_id, decode_error, is_tombstone, is_control, control_type,\n' +
        'is_transactional, aborted, producer_id, batch_base_offset, segment_base_offset, position, crc_valid, past_damage (after damage\n' +
        'in the log, as in klx query), log_dir (the log directory relative to DIR; Parquet gets a log_dir= folder level when DIR holds several).\n' +
        'CSV: NULL is an empty field, an empty string "". Damage and batches not checked (--max-inflated-bytes) whose records are not\n' +
        'exported are named on stderr and in notExported with --json (file, byte position, reason); exit 0, as klx query.\n' +
        'Decoded as klx fetch decodes, for every topic under DIR: --key-format/--value-format when given, else the format saved in the app\n' +
        'for the topic, else auto; schemas from the _schemas topics under DIR (beside it when DIR is a partition folder) and --schemas.\n' +
        'Example: klx export /var/lib/kafka/data --format parquet --out /tmp/orders-pq && duckdb -c "SELECT count(*) FROM \'/tmp/orders-pq/**/*.parquet\'"\n' +
        'Example: klx export ./copy --format ndjson --out /tmp/signups.ndjson --schemas 42.avsc --schemas signups-value=42.avsc',
    )
    .action(async (dir: string, opts: ExportCliOptions) => (await import('./commands/export.ts')).runExport(dir, opts));
}

// ---------------------------------------------------------------------------------------------
// Integrity commands

function registerVerify(program: Command): void {
  program
    .command('verify')
    .description(
      'check every batch (CRC, framing, offsets), every index entry and the checkpoints of the partitions under DIR; ' +
        'prints each finding with file, byte position and reason. Exit 0 when clean, 1 when errors or warnings were found',
    )
    .argument('<dir>', 'log directory, partition folder, or a folder of log directories')
    .option('--json', 'print NDJSON: one {"type":"finding",...} object per finding, then one {"type":"summary",...}')
    .option('--quick', "only the checks that read no .log: file names and leftovers (as LogLoader sorts them at startup), Kafka's index sanity checks (OffsetIndex/TimeIndex/TransactionIndex.sanityCheck; at startup a broker runs only the .txnindex one, LogSegment.sanityCheck) and checkpoints")
    .option('--shallow', 'do not decompress and decode records (CRC, framing, offsets and indexes are still checked)')
    .addHelpText(
      'after',
      '\nSeverities: error = data or an index a reader would trust is wrong; warning = something a broker corrects, works around or\n' +
        'passes over: at every startup leftover .deleted/.cleaned/.swap files, orphan indexes and a missing .index (LogLoader); an untrimmed\n' +
        'index or a zero-filled tail only in a segment it recovers (from the recovery point on, none after a clean shutdown:\n' +
        'LogLoader.recoverLog); a checkpoint outside the log when it loads or uses it (UnifiedLog.updateHighWatermark,\n' +
        'LogCleanerManager); index entries that point past their batch; info = normal facts (older-broker index style...).\n' +
        'Fix what can be fixed with `klx repair DIR` (try --dry-run first).',
    )
    .action(async (dir: string, opts: VerifyCliOptions) => (await import('./commands/verify.ts')).runVerify(dir, opts));
}

const REPAIR_HELP_AFTER = `
What repair does, per partition (as a broker does at startup, Kafka's LogLoader):
  - deletes *.deleted files, incomplete cleaner output (.cleaned, and the .swap files of an
    unfinished split), completes finished swaps (.swap -> final name) (LogLoader.load); also stale
    *.tmp files (klx's own tidying: a broker leaves them and overwrites them at its next write,
    CheckpointFile.write);
  - deletes index files without a .log; rebuilds missing, corrupt, stale or untrimmed indexes
    (a broker rebuilds only those of the segments it recovers, and of a segment whose .index is
    missing; the plan says which);
  - without .kafka_cleanshutdown: re-validates every segment from the one holding the recovery
    point (recovery-point-offset-checkpoint) on, batch by batch, and rebuilds its indexes trimmed,
    exactly as a broker writes them (LogSegment.recover); after a clean shutdown a broker recovers no
    segment (LogLoader.recoverLog);
  - creates an empty segment when none is left; drops leader epochs and producer snapshots that
    lie beyond the new log end.

Damaged .log files:
  default                   only bytes that are not valid batches are cut, and only where a broker
                            would cut them: a partial, zeroed or overwritten TAIL (nothing valid
                            after it) of the last segment, when a broker recovers that segment.
                            Anything else is reported and left in place, with what a broker would
                            do: cut the segment there (LogSegment.recover) and delete every later
                            segment (LogLoader.recoverLog), or cut only that segment when it
                            recovers it alone because its .index is missing (loadSegmentFiles), or
                            not notice it at all (below the recovery point, after a clean shutdown,
                            or inside a complete batch whose size and CRC are valid: recovery
                            checks only those, RecordBatch.ensureValid). Consumers then stop at
                            that offset (CompletedFetch) and followers refuse a batch whose CRC
                            fails (UnifiedLog.analyzeAndValidateRecords). A cut batch ending the
                            last segment after a clean shutdown lies past the log end a broker
                            computes (LogSegment.readNextOffset) until its next append, which it
                            writes after the tail (FileRecords.append):
                            reads from before the tail then frame it with that batch
                            (FileRecords.searchForOffsetWithSize), and the next start after a crash
                            cuts both (LogSegment.recover); the plan gives that sequence for the
                            bytes at hand, and --truncate-at-corruption cuts the tail first.
                            No valid record is dropped and no offset gap is made (exit code 1
                            tells you a decision is needed).
  --truncate-at-corruption  cut the segment at the first invalid batch even when valid batches
                            follow, and delete every later segment: the broker's behaviour for a
                            segment it recovers, your choice for any other. The plan
                            counts the valid batches and records this drops; run --dry-run first.

Log-directory checkpoints (recovery-point-offset-checkpoint, log-start-offset-checkpoint,
replication-offset-checkpoint, cleaner-offset-checkpoint) that cannot be parsed are rewritten from
the partitions: recovery point and log start offset = each partition's first segment base offset,
no entries in the other two. This is your choice, not the broker's: a broker takes the log
directory offline on such a file (CheckpointFileWithFailureHandler.read, LogDirFailureChannel).

Undo: every file repair deletes, replaces or cuts is kept in the trash first (hard links; the cut
bytes of a .log copied): klx undo DIR puts the previous bytes back until klx trash --empty.

Every step is crash-safe: after an interruption, run repair again to finish. A klx retention or
compact run that a crash interrupted is finished too: past its commit point its trash entry is
committed (klx undo then works), before it the entry is removed (the run changed nothing). Stop the broker that
owns DIR first (klx cannot see the lock a broker holds on the directory's .lock, LogManager.lockLogDirs); klx holds <partition>/klx-writer.lock while it writes.`;

function registerRepair(program: Command): void {
  program
    .command('repair')
    .description("run a broker's startup recovery on the partitions under DIR: prints the plan, then applies it (unless --dry-run), keeping the replaced files in the trash for klx undo, and prints what it did")
    .argument('<dir>', 'log directory, partition folder, or a folder of log directories')
    .option('--dry-run', 'print the plan only; nothing is written, not even a lock file')
    .option('--truncate-at-corruption', 'cut at the first invalid batch even when valid batches follow it, and delete later segments (drops valid records): what a broker does to a segment it recovers (LogSegment.recover, LogLoader.recoverLog), your choice for any other')
    .option('--trash-dir <dir>', 'where the replaced files are kept for klx undo, and where interrupted runs are finished (default: $KLX_TRASH_DIR, else $KLX_DATA_DIR/trash, else trash/ in the user data folder)')
    .option('--json', 'print NDJSON: {"type":"plan",...}, {"type":"applied",...} and {"type":"interrupted-run",...} per partition, then {"type":"summary",...}')
    .addHelpText('after', REPAIR_HELP_AFTER)
    .action(async (dir: string, opts: RepairCliOptions) => (await import('./commands/repair.ts')).runRepair(dir, opts));
}

// ---------------------------------------------------------------------------------------------
// Cleaner commands

function registerRetention(program: Command): void {
  program
    .command('retention')
    .description('delete the segments a broker\'s retention would delete (time, size, log start offset), keeping them in the trash for klx undo')
    .argument('<dir>', 'partition folder, log directory or folder of log directories')
    .option('--retention-ms <n>', 'retention.ms: delete a segment once now − its largest timestamp exceeds N ms (−1: never; default 604800000)', configFlag('retention.ms'))
    .option('--retention-bytes <n>', 'retention.bytes: keep each partition below N bytes of .log, whole segments only (−1: unlimited, the default)', configFlag('retention.bytes'))
    .option('--delete-before-offset <n>', 'raise the log start offset to N (DeleteRecords) and delete the segments wholly below it', int64Flag('--delete-before-offset'))
    .option('--now <time>', `the clock to use (default: now): ${TIME_FORMS_HELP}; the output repeats it in UTC`, nowFlag)
    .option('--dry-run', 'print the plan; change nothing')
    .option('--json', 'print the result as JSON')
    .option('--config <k=v>', 'another topic config (repeatable), e.g. cleanup.policy=compact,delete', collectConfig)
    .option('--explain', 'also print the decision of every record, batch or segment touched, with its reason and evidence (with --json: NDJSON rows offset, key, decision, reason, evidence)')
    .option('--explain-limit <n>', 'decisions printed one by one before the rest are summarised per segment and reason (default 10000)', (v) => parseNonNegativeInt(v, '--explain-limit'))
    .option('--trash-dir <dir>', 'where replaced files are kept for undo (default: $KLX_TRASH_DIR, else $KLX_DATA_DIR/trash, else trash/ in the user data folder)')
    .action(async (dir: string, flags: RetentionFlags) => (await import('./commands/retention.ts')).runRetention(dir, flags));
}

function registerCompact(program: Command): void {
  program
    .command('compact')
    .description('compact partitions as a broker\'s log cleaner would (LogCleaner.Cleaner: latest value per key, tombstones, transactions), keeping replaced segments in the trash for klx undo')
    .argument('<dir>', 'partition folder, log directory or folder of log directories')
    .option('--delete-retention-ms <n>', 'delete.retention.ms: how long tombstones and transaction markers survive (default 86400000)', configFlag('delete.retention.ms'))
    .option('--min-compaction-lag-ms <n>', 'min.compaction.lag.ms: records younger than this stay uncompacted (default 0)', configFlag('min.compaction.lag.ms'))
    .option('--max-compaction-lag-ms <n>', 'max.compaction.lag.ms: dirty data older than this is cleaned even below the dirty ratio', configFlag('max.compaction.lag.ms'))
    .option('--segment-bytes <n>', 'segment.bytes: largest cleaned segment (default 1073741824)', configFlag('segment.bytes'))
    .option('--min-cleanable-dirty-ratio <r>', 'min.cleanable.dirty.ratio, used with --like-broker (default 0.5)', configFlag('min.cleanable.dirty.ratio'))
    .option('--rules <rules>', 'kafka (Kafka ≥ 3.1, the default) or classic (the textbook model)', (v: string) => {
      if (v !== 'kafka' && v !== 'classic') throw new InvalidArgumentError(`--rules must be kafka or classic, got "${v}"`);
      return v;
    })
    .option('--like-broker', 'clean only when a broker would (dirty ratio above min.cleanable.dirty.ratio, or cleanable bytes past max.compaction.lag.ms: LogCleanerManager.grabFilthiestCompactedLog)')
    .option('--now <time>', `the clock to use (default: now): ${TIME_FORMS_HELP}; the output repeats it in UTC`, nowFlag)
    .option('--dry-run', 'print the plan; change nothing')
    .option('--json', 'print the result as JSON')
    .option('--config <k=v>', 'another topic config (repeatable), e.g. cleanup.policy=compact,delete', collectConfig)
    .option('--dedupe-buffer-size <n>', 'bytes of the key map (log.cleaner.dedupe.buffer.size, default 134217728); more keys than fit take several passes', (v) => {
      const n = parseNonNegativeInt(v, '--dedupe-buffer-size');
      if (n < 48) throw new InvalidArgumentError(`--dedupe-buffer-size must hold at least 2 keys (48 bytes), got ${n}`);
      return n;
    })
    .option(
      '--key-hash <hash>',
      "the offset map's key digest: murmur3 (MurmurHash3 x86_128, the default, about 7 times cheaper per key than md5: npm run bench -- compaction) or md5 (as a broker's SkimpyOffsetMap: the same survivors as a broker even for keys crafted to collide; MurmurHash3 has seed-independent multicollisions, so crafted keys could make murmur3 drop a record a broker keeps)",
      (v: string) => {
        if (v !== 'murmur3' && v !== 'md5') throw new InvalidArgumentError(`--key-hash must be murmur3 or md5, got "${v}"`);
        return v;
      },
    )
    .option('--explain', 'also print the decision of every record, batch or segment touched, with its reason and evidence (with --json: NDJSON rows offset, key, decision, reason, evidence)')
    .option('--explain-limit <n>', 'decisions printed one by one before the rest are summarised per segment and reason (default 10000)', (v) => parseNonNegativeInt(v, '--explain-limit'))
    .option('--trash-dir <dir>', 'where replaced files are kept for undo (default: $KLX_TRASH_DIR, else $KLX_DATA_DIR/trash, else trash/ in the user data folder)')
    .action(async (dir: string, flags: CompactFlags) => (await import('./commands/compact.ts')).runCompact(dir, flags));
}

function registerUndo(program: Command): void {
  program
    .command('undo')
    .description('undo the latest retention, compaction or repair run on DIR, restoring the replaced files from the trash')
    .argument('<dir>', 'partition folder or log directory the run was given')
    .option('--trash-dir <dir>', 'the trash folder the run used (default: $KLX_TRASH_DIR, else $KLX_DATA_DIR/trash, else trash/ in the user data folder)')
    .option('--json', 'print the result as JSON')
    .action(async (dir: string, flags: { trashDir?: string; json?: boolean }) => (await import('./commands/undo.ts')).runUndo(dir, flags));
}

function registerTrash(program: Command): void {
  program
    .command('trash')
    .description('list the files kept for klx undo, or delete them for good with --empty')
    .option('--empty', 'delete every trash entry (their runs can no longer be undone)')
    .option('--trash-dir <dir>', 'the trash folder (default: $KLX_TRASH_DIR, else $KLX_DATA_DIR/trash, else trash/ in the user data folder)')
    .option('--json', 'print JSON')
    .action(async (flags: { empty?: boolean; trashDir?: string; json?: boolean }) => (await import('./commands/trash.ts')).runTrash(flags));
}

// ---------------------------------------------------------------------------------------------
// Write commands

function registerCreate(program: Command): void {
  program
    .command('create')
    .description('create an empty partition folder <logdir>/<topic>-<partition> as a broker does (empty segment 0, leader epoch 0, random topic id: Partition.makeLeader, PartitionMetadataFile)')
    .argument('<dir>', 'the new partition folder: <logdir>/<topic>-<partition>')
    .option('--config <key=value>', 'topic config kept in klx-topic.properties (repeatable), e.g. cleanup.policy=compact', collect, [])
    .option('--dry-run', 'print what would be created and touch nothing')
    .option('--json', 'print the result as JSON')
    .action(async (dir: string, opts: CreateOptions) => (await import('./commands/create.ts')).runCreate(dir, opts));
}

function registerAppend(program: Command): void {
  program
    .command('append')
    .description('append one batch (one record, or every line of --records) to a partition folder, as a broker writes it (UnifiedLog.append)')
    .argument('<dir>', 'partition folder <logdir>/<topic>-<partition>')
    .option('--key <key>', 'record key (UTF-8); without it the record has no key')
    .option('--value <value>', 'record value (UTF-8)')
    .option('--tombstone', 'write a null value (a delete marker for compacted topics)')
    .option('--header <key=value>', 'record header (repeatable); "key" alone gives a null value', collect, [])
    .option('--timestamp <time>', `CreateTime (default: now; the topic may use LogAppendTime; -1: none): ${TIME_FORMS_HELP}; refused beyond now + 1 h as a Kafka 4.0+ broker refuses it (message.timestamp.after.max.ms, LogValidator)`, parseTimestamp)
    .option('--compression <codec>', `batch codec: ${COMPRESSIONS.join('|')} (default none)`, parseCompression)
    .option('--records <file>', 'NDJSON file: one record per line, all in one batch')
    .option('--producer-id <id>', 'idempotent producer id (int64 ≥ 0): the batch is checked as a leader checks it (epoch, sequence, duplicates: ProducerAppendInfo)', parseInt64Arg('--producer-id'))
    .option(
      '--producer-epoch <n>',
      "producer epoch 0..32767; with records the default is the producer's current epoch (0 for a new one); --commit/--abort need it: a transaction coordinator writes its markers with the epoch it holds for the producer, which a Kafka 4.0+ coordinator with transaction version 2 bumps at every transaction end (KIP-890: the marker carries epoch + 1), so the partition's last epoch is no safe default",
      parseIntArg('--producer-epoch', 0, 32767),
    )
    .option('--sequence <n>', 'base sequence 0..2^31-1 (default: the next one the producer is expected to send)', parseIntArg('--sequence', 0, 2147483647))
    .option('--transactional', "a transactional batch: opens the producer's transaction when none is open")
    .option('--commit', 'write a COMMIT transaction marker (control batch) for --producer-id / --producer-epoch instead of records')
    .option('--abort', 'write an ABORT transaction marker for --producer-id / --producer-epoch (a non-empty transaction gets its .txnindex entry)')
    .option('--coordinator-epoch <n>', 'coordinator epoch in the marker value (default 0)', parseIntArg('--coordinator-epoch', 0, 2147483647))
    .option('--leader-epoch <n>', 'leader epoch to stamp; a higher one starts a new leader-epoch-checkpoint entry at the log end offset', parseIntArg('--leader-epoch', 0, 2147483647))
    .option('--config <key=value>', 'topic config for this run, on top of klx-topic.properties (repeatable)', collect, [])
    .option(
      '--allow-timestamp-out-of-range',
      'write a CreateTime outside [now − message.timestamp.before.max.ms, now + message.timestamp.after.max.ms] (default after: 1 h, as Kafka 4.0+), which a broker refuses (LogValidator.validateTimestamp); the output says which brokers would',
    )
    .option('--dry-run', 'print what would be appended and touch nothing')
    .option('--json', 'print the result as JSON')
    .action(async (dir: string, opts: AppendCliOptions) => (await import('./commands/append.ts')).runAppend(dir, opts));
}

function registerRoll(program: Command): void {
  program
    .command('roll')
    .description('close the active segment of a partition folder and start a new one at the log end offset')
    .argument('<dir>', 'partition folder <logdir>/<topic>-<partition>')
    .option('--dry-run', 'print what would happen and touch nothing')
    .option('--json', 'print the result as JSON')
    .action(async (dir: string, opts: RollOptions) => (await import('./commands/roll.ts')).runRoll(dir, opts));
}

// ---------------------------------------------------------------------------------------------
// The app

function registerServe(program: Command): void {
  program
    .command('serve')
    .description('serve the app on 127.0.0.1 for a browser; prints the URL with its access token')
    .argument('[dirs...]', 'confine the app to these folders (opened at start); with none, any folder can be opened')
    .option('--port <n>', 'TCP port (0: any free port)', (v) => parseNonNegativeInt(v, '--port'), 0)
    .option('--read-only', 'refuse every method that writes to disk')
    .action(async (dirs: string[], opts: ServeOptions) => (await import('./commands/serve.ts')).runServe(dirs, opts));
}
