/**
 * `npm run bench [-- NAME... ] [--size-mb N] [--iterations N]`
 *
 * Runs every `bench/*.bench.ts` (alphabetical order), or only the ones named (`codec` runs
 * `codec.bench.ts`). A bench is a module exporting `async function run(opts: BenchOptions)` that
 * prints its own table; adding one is adding a file.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { BENCH_DIR, DATA_DIR, loadLine, machineInfo, type BenchModule, type BenchOptions } from './lib.ts';

const USAGE = `usage: npm run bench -- [NAME...] [--size-mb N] [--iterations N]
  NAME            run only bench/NAME.bench.ts (default: all)
  --size-mb N     data size in MiB (default: each bench's own)
  --iterations N  timed iterations after one warm-up; the median is reported (default 3)`;

function fail(msg: string): never {
  console.error(`bench: ${msg}\n${USAGE}`);
  process.exit(2);
}

function positiveNumber(flag: string, v: string | undefined): number {
  const n = Number(v);
  if (v === undefined || !Number.isFinite(n) || n <= 0) fail(`${flag} needs a positive number, got ${v ?? 'nothing'}`);
  return n;
}

function parseArgs(argv: string[]): { names: string[]; opts: BenchOptions } {
  const names: string[] = [];
  const opts: BenchOptions = { iterations: 3, dataDir: DATA_DIR };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const [flag, inline] = a.startsWith('--') && a.includes('=') ? [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)] : [a, undefined];
    const value = () => inline ?? argv[++i];
    switch (flag) {
      case '--size-mb':
        opts.sizeMb = positiveNumber(flag, value());
        break;
      case '--iterations':
        opts.iterations = Math.round(positiveNumber(flag, value()));
        break;
      case '-h':
      case '--help':
        console.log(USAGE);
        process.exit(0);
      default:
        if (a.startsWith('-')) fail(`unknown option ${a}`);
        names.push(a.replace(/\.bench\.ts$/, ''));
    }
  }
  return { names, opts };
}

async function main(): Promise<void> {
  const { names, opts } = parseArgs(process.argv.slice(2));
  const available = readdirSync(BENCH_DIR)
    .filter((f) => f.endsWith('.bench.ts'))
    .map((f) => f.slice(0, -'.bench.ts'.length))
    .sort();
  const unknown = names.filter((n) => !available.includes(n));
  if (unknown.length > 0) fail(`no bench named ${unknown.join(', ')} (available: ${available.join(', ') || 'none'})`);
  const selected = names.length > 0 ? available.filter((n) => names.includes(n)) : available;

  console.log(machineInfo());
  for (const name of selected) {
    console.log(`\n=== ${name} ===`);
    const mod = (await import(pathToFileURL(join(BENCH_DIR, `${name}.bench.ts`)).href)) as Partial<BenchModule>;
    if (typeof mod.run !== 'function') fail(`bench/${name}.bench.ts does not export an async function run(opts)`);
    await mod.run(opts);
  }
  console.log(`\npeak RSS: ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MiB; ${loadLine()}`);
}

await main();
