/**
 * `klx`: the Kafka Log Explorer command line. Every command is declared (name, arguments, options,
 * help) in `registry.ts`, which loads a command's implementation, `commands/<name>.ts`, only when
 * that command runs; this file only wires them up and turns errors into exit codes.
 *
 * Exit codes: 0 success, 1 "found problems" (verify) or a handled error, 2 usage error.
 */
import { Command, CommanderError } from 'commander';
import { toErrorInfo } from '../engine/errors.ts';
import { registerCommands } from './registry.ts';

const program = new Command();
program
  .name('klx')
  .description('Kafka Log Explorer: read, verify, repair, compact and clean Apache Kafka log directories on disk.')
  .version('0.1.0')
  .showHelpAfterError()
  .exitOverride();

registerCommands(program);

try {
  await program.parseAsync(process.argv);
} catch (err) {
  if (err instanceof CommanderError) {
    process.exitCode = err.exitCode === 0 ? 0 : 2;
  } else {
    const info = toErrorInfo(err);
    process.stderr.write(`klx: ${info.code}: ${info.message}\n`);
    process.exitCode = 1;
  }
}
