/**
 * Argument helpers shared by the hand-run harnesses (`npm run fuzz`, `npm run crash-test`), on top
 * of `node:util` `parseArgs`.
 */

/**
 * The whole number given to `--name` (`raw`), or `fallback` when absent.
 * @throws Error naming the option and the value when it is not a safe integer ≥ `min`.
 */
export function wholeNumber(name: string, raw: string | undefined, fallback: number, min = 0): number {
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < min) throw new Error(`--${name} needs a whole number ≥ ${min}, got "${raw}"`);
  return n;
}

/**
 * Runs `parse`; on an error prints its message and `usage` on stderr and exits with code 2 (a wrong
 * command line, as klx does).
 */
export function parseOrExit<T>(usage: string, parse: () => T): T {
  try {
    return parse();
  } catch (err) {
    console.error(`${(err as Error).message}\n${usage}`);
    process.exit(2);
  }
}
