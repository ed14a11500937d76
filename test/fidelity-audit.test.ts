/**
 * The fidelity audit (issue 13): every sentence in the code, the UI texts and the README that says
 * what Kafka does ("a broker would …", "the cleaner deletes …", "as kafka-dump-log prints it") names
 * the Kafka class it follows nearby (see test/support/fidelity-audit.ts for what "nearby" means), or
 * is listed in test/fidelity-audit-allowlist.txt with the reason it is not a claim about Kafka's
 * behaviour. A sentence that is neither fails here with file:line; an allowlist entry that matches no
 * sentence any more fails too (delete it), so the list cannot rot.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { allows, auditClaims, claimsIn, parseAllowlist } from './support/fidelity-audit.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const ROOTS = ['src-main', 'src-renderer/src', 'src-shared', 'README.md', 'bench', 'scripts'];

/** [sentence, named] of every claim in a planted file. */
const claims = (file: string, text: string) => claimsIn(file, text).map((c) => [c.sentence, c.named, c.line]);

describe('fidelity audit: the matcher', () => {
  it('finds a claim without a class, passes one with a class, a KIP or a KAFKA reference', () => {
    expect(claims('x.ts', '// At startup a broker deletes the segment.\nconst a = 1;\n')).toEqual([['At startup a broker deletes the segment.', false, 1]]);
    expect(claims('x.ts', '// At startup a broker deletes the segment (LogLoader.recoverLog).\n')).toEqual([
      ['At startup a broker deletes the segment (LogLoader.recoverLog).', true, 1],
    ]);
    expect(claims('x.ts', '/**\n * The cleaner keeps\n * the tombstone until its horizon (KIP-534).\n */\n')).toEqual([
      ['The cleaner keeps the tombstone until its horizon (KIP-534).', true, 2],
    ]);
    expect(claims('x.ts', "const m = 'Kafka drops it since KAFKA-12345';\n")).toEqual([['Kafka drops it since KAFKA-12345', true, 1]]);
    expect(claims('x.ts', "throw new Error('a broker would refuse this batch');\n")).toEqual([['a broker would refuse this batch', false, 1]]);
    expect(claims('x.md', 'Like a broker, klx cuts the log.\n')).toEqual([['Like a broker, klx cuts the log.', false, 1]]);
    expect(claims('x.ts', '// as kafka-dump-log prints it\n')).toEqual([['as kafka-dump-log prints it', false, 1]]);
    expect(claims('x.ts', '/** Size not a multiple of 8 (Kafka: corrupt). */\n')).toEqual([['Size not a multiple of 8 (Kafka: corrupt).', false, 1]]);
    expect(claims('x.ts', "// Kafka's `updateLatestOffset` sets the map's end.\n")).toEqual([["Kafka's `updateLatestOffset` sets the map's end.", false, 1]]);
    expect(claims('x.ts', '// A running broker cannot see it.\n')).toEqual([['A running broker cannot see it.', false, 1]]);
    expect(claims('x.ts', '// Broker behaviour: cut it. Keys are never null, as in Kafka.\n').map((c) => c[0])).toEqual(['Broker behaviour: cut it.', 'Keys are never null, as in Kafka.']);
    expect(claims('x.ts', '// The leader epoch to stamp.\n')).toEqual([]);
    expect(claims('x.ts', '// A sub-folder (ignored by Kafka); a Kafka log folder.\n').map((c) => c[0])).toEqual(['A sub-folder (ignored by Kafka);']);
  });

  it('takes no class name from code, only from prose, and reads the enclosing docstring', () => {
    expect(claims('x.ts', 'const log = new PartitionLog(dir); // a broker deletes it\n')).toEqual([['a broker deletes it', false, 1]]);
    const enclosed = ['/** Startup recovery as LogLoader.recoverLog runs it. */', 'function plan() {', '  if (x) {', "    return 'a broker deletes it';", '  }', '}', ''].join('\n');
    expect(claims('x.ts', enclosed)).toEqual([['a broker deletes it', true, 4]]);
    // A docstring more than the window away from a claim in a later, unrelated function does not count.
    const far = ['/** LogLoader.recoverLog. */', 'function a() {}', 'function b() {', "  return 'a broker deletes it';", '}', ''].join('\n');
    expect(claims('x.ts', far)).toEqual([['a broker deletes it', false, 4]]);
  });

  it('does not take the product, folder names or our own worker for Kafka', () => {
    expect(claims('x.ts', "const PURPOSE = 'Kafka Log Explorer: append'; // kafka-log-explorer only reads ~/kafka-logs\n")).toEqual([]);
    expect(claims('x.ts', "const t = 'Open a Kafka log directory'; // the cleaner worker stopped\n")).toEqual([]);
    expect(claims('x.ts', "const re = /a broker deletes/; const s = `${'x'}`;\n")).toEqual([]);
  });

  it('reads a Vue template as text and its script as code', () => {
    const vue = ['<template>', '  <p class="muted">A consumer with check.crcs=true stops at it.</p>', '</template>', '<script setup lang="ts">', 'const BrokerName = 1; // a broker rolls it', '</script>', ''].join('\n');
    expect(claims('x.vue', vue)).toEqual([
      ['A consumer with check.crcs=true stops at it.', false, 2],
      ['a broker rolls it', false, 5],
    ]);
  });

  it('parses allowlist lines and matches a fragment within the same file only', () => {
    const { entries, errors } = parseAllowlist('# a comment\n\nx.ts\tthe cleaner would\tour own preview\nbad line\n');
    expect(errors).toEqual(['allowlist line 4: expected path<TAB>fragment<TAB>reason: bad line']);
    const c = claimsIn('x.ts', "const t = 'what the cleaner would do';\n")[0]!;
    expect(allows(entries[0]!, c)).toBe(true);
    expect(allows(entries[0]!, { ...c, file: 'y.ts' })).toBe(false);
  });
});

describe('fidelity audit: the repository', () => {
  const all = auditClaims(ROOT, ROOTS);
  const { entries, errors } = parseAllowlist(readFileSync(new URL('./fidelity-audit-allowlist.txt', import.meta.url), 'utf8'));

  it('reads the allowlist', () => {
    expect(errors).toEqual([]);
    expect(all.length).toBeGreaterThan(300);
  });

  it('every claim about Kafka names the class it follows, or is allowlisted', () => {
    const missing = all.filter((c) => !c.named && !entries.some((e) => allows(e, c)));
    expect(missing.map((c) => `${c.file}:${c.line}: ${c.sentence}`)).toEqual([]);
  });

  it('every allowlist entry still matches a sentence without a class', () => {
    const stale = entries.filter((e) => !all.some((c) => !c.named && allows(e, c)));
    expect(stale.map((e) => `fidelity-audit-allowlist.txt:${e.line}: ${e.file}\t${e.fragment}`)).toEqual([]);
  });
});
