/**
 * `klx`: the Kafka Log Explorer command line. Each command lives in `commands/<name>.ts` and
 * exports `register(program)`; this file only wires them up and turns errors into exit codes.
 *
 * Exit codes: 0 success, 1 "found problems" (verify) or a handled error, 2 usage error.
 */
import { Command, CommanderError } from 'commander';
import { toErrorInfo } from '../engine/errors.ts';
import { registerDump } from './commands/dump.ts';
import { registerRetention } from './commands/retention.ts';
import { registerCompact } from './commands/compact.ts';
import { registerUndo } from './commands/undo.ts';
import { registerTrash } from './commands/trash.ts';
import { registerFetch } from './commands/fetch.ts';
import { registerOffsetForTime } from './commands/offset-for-time.ts';
import { registerHoles } from './commands/holes.ts';
import { registerVerify } from './commands/verify.ts';
import { registerRepair } from './commands/repair.ts';
import { registerCreate } from './commands/create.ts';
import { registerAppend } from './commands/append.ts';
import { registerRoll } from './commands/roll.ts';
import { registerServe } from './commands/serve.ts';
import { registerQuery } from './commands/query.ts';

const program = new Command();
program
  .name('klx')
  .description('Kafka Log Explorer: read, verify, repair, compact and clean Apache Kafka log directories on disk.')
  .version('0.1.0')
  .showHelpAfterError()
  .exitOverride();

registerDump(program);
registerRetention(program);
registerCompact(program);
registerUndo(program);
registerTrash(program);
registerFetch(program);
registerOffsetForTime(program);
registerHoles(program);
registerVerify(program);
registerRepair(program);
registerCreate(program);
registerAppend(program);
registerRoll(program);
registerServe(program);
registerQuery(program);

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
