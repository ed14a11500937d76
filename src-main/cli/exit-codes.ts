/**
 * `klx` exit codes, as the README states them: 0 success; 1 problems found (verify, repair) or an
 * error about the data (not found, corrupt, locked, a partition that must be repaired first...); 2
 * the command line is wrong: an unknown option or a bad value (commander), or a refusal of what was
 * asked, i.e. an `invalid-argument` / `invalid-config` error, whether it ends the command or is one
 * partition's outcome of a multi-partition run (`klx retention`, `klx compact`).
 */

/** Success. */
export const EXIT_OK = 0;
/** Problems found, or an error about the data. */
export const EXIT_PROBLEMS = 1;
/** The command line is wrong, or what was asked is refused. */
export const EXIT_USAGE = 2;

/**
 * Whether an error refuses what was asked (exit 2): klx's `invalid-argument` / `invalid-config`
 * (a bad value, a missing option, an SQL condition that does not parse, an output that exists, a
 * DeleteRecords a compacted topic's policy forbids), but not one that reports the state of a
 * partition that must be repaired first (`details.needsRepair`, exit 1).
 * @param info an error's code and details (`toErrorInfo` shape).
 */
export function isRefusal(info: { code: string; details?: Record<string, unknown> }): boolean {
  return (info.code === 'invalid-argument' || info.code === 'invalid-config') && info.details?.needsRepair !== true;
}

/**
 * The exit code of a run whose items failed with `errors` (none: {@link EXIT_OK}): {@link EXIT_USAGE}
 * when every one is a refusal of what was asked ({@link isRefusal}), else {@link EXIT_PROBLEMS} (an
 * error about the data outweighs refusals).
 */
export function exitCodeOfErrors(errors: readonly { code: string; details?: Record<string, unknown> }[]): number {
  if (errors.length === 0) return EXIT_OK;
  return errors.every(isRefusal) ? EXIT_USAGE : EXIT_PROBLEMS;
}
