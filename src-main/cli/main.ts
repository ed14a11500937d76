/**
 * `klx`: the Kafka Log Explorer command line. Every command is declared (name, arguments, options,
 * help) in `registry.ts`, which loads a command's implementation, `commands/<name>.ts`, only when
 * that command runs; this file only wires them up and turns errors into exit codes.
 *
 * Exit codes: 0 success; 1 problems found (verify, repair) or an error about the data (not found,
 * corrupt, locked, a partition that needs repair...); 2 the command line is wrong: an unknown option
 * or a bad value (commander), or an `invalid-argument` / `invalid-config` error klx raises about what
 * was asked. Under
 * `--json` an error is also one JSON object on stdout:
 * `{"type":"error","code":…,"message":…,"file":…,"position":…,"details":…}` (absent fields omitted).
 */
import { Command, CommanderError } from 'commander';
import { KlxError, toErrorInfo } from '../engine/errors.ts';
import { followSymlinksByDefault, onRefusedLink } from '../engine/files/symlinks.ts';
import { EXIT_PROBLEMS, EXIT_USAGE, isRefusal } from './exit-codes.ts';
import { isClosedPipe, markStdoutClosed, stdoutClosed } from './output.ts';
import { registerCommands } from './registry.ts';

/**
 * The commands that change files: when their stdout's reader goes they finish what they do (a
 * repair or a cleanup is never cut short by `| head`) without printing, and exit with their own code.
 */
const WRITE_COMMANDS = new Set(['repair', 'retention', 'compact', 'undo', 'trash', 'create', 'append', 'roll']);
/** The command that runs (set before its action). */
let running = '';

// A reader that closed stdout early (`klx dump … | head`) ends a reading command quietly with exit 0, as other
// command-line tools do when their pipe closes: no "write EPIPE" error, no stack trace. A command that changes
// files goes on to the end (review of stop 26: `klx repair … | head` exited 0 between two partitions). Installed
// first, so it runs before a writer waiting for 'drain' (OutputWriter) sees the error.
process.stdout.on('error', (err) => {
  if (stdoutClosed()) return; // later writes into the closed pipe
  if (isClosedPipe(err)) {
    markStdoutClosed();
    if (!WRITE_COMMANDS.has(running)) process.exit(0);
    return;
  }
  throw err;
});

const program = new Command();
program
  .name('klx')
  .description('Kafka Log Explorer: read, verify, repair, compact and clean Apache Kafka log directories on disk.')
  .version('0.1.0')
  .showHelpAfterError()
  .exitOverride()
  .addHelpText('after', '\nExit codes: 0 success; 1 problems found (verify, repair) or an error about the data; 2 the command line is wrong\n(unknown option, bad value, or an invalid-argument/invalid-config refusal of what was asked).')
  .option('--follow-symlinks', 'read symbolic links that lead out of the folder given (by default they are not read: a warning names each)');

registerCommands(program);

// Symlinks out of the folder given (engine/files/symlinks.ts): warned about once each, followed only with --follow-symlinks.
const warnedLinks = new Set<string>();
onRefusedLink(({ link, target }) => {
  if (warnedLinks.has(link)) return;
  warnedLinks.add(link);
  process.stderr.write(`klx: warning: ${link} is a symbolic link to ${target}, outside the folder given: not read (--follow-symlinks reads it)\n`);
});
program.hook('preAction', (_program, command) => {
  running = command.name();
  if (!program.opts<{ followSymlinks?: boolean }>().followSymlinks) return;
  if (command.name() === 'serve') throw new KlxError('invalid-argument', '--follow-symlinks does not apply to klx serve: the bridge never reads a file outside the folders it serves');
  followSymlinksByDefault(true);
});

/** `--json` among the options (before a `--` that ends them). */
const wantsJson = ((args: string[]) => {
  const end = args.indexOf('--');
  return (end < 0 ? args : args.slice(0, end)).includes('--json');
})(process.argv.slice(2));

/** Writes an error as one JSON line on stdout (int64 values as exact numbers or decimal strings). */
function jsonError(info: { code: string; message: string; file?: string; position?: number; details?: unknown }): void {
  const o = { type: 'error', code: info.code, message: info.message, ...(info.file !== undefined ? { file: info.file } : {}), ...(info.position !== undefined ? { position: info.position } : {}), ...(info.details !== undefined ? { details: info.details } : {}) };
  process.stdout.write(JSON.stringify(o, (_k, v) => (typeof v === 'bigint' ? (v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v.toString()) : v)) + '\n');
}

try {
  await program.parseAsync(process.argv);
} catch (err) {
  if (err instanceof CommanderError) {
    process.exitCode = err.exitCode === 0 ? 0 : 2;
    if (wantsJson && err.exitCode !== 0) jsonError({ code: 'invalid-argument', message: err.message.replace(/^error: /, '') });
  } else if (isClosedPipe(err) || (err instanceof KlxError && isClosedPipe(err.cause))) {
    // stdout closed by its reader (see isClosedPipe): nothing to report.
    process.exitCode = 0;
  } else {
    const info = toErrorInfo(err);
    process.stderr.write(`klx: ${info.code}: ${info.message}\n`);
    if (wantsJson) jsonError(info);
    process.exitCode = isRefusal(info) ? EXIT_USAGE : EXIT_PROBLEMS;
  }
}
