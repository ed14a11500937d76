/**
 * The fidelity audit: every sentence of the repository's prose (comments, docstrings, string
 * literals, Vue templates, Markdown) that says what Kafka does ("a broker would …", "the cleaner
 * deletes …", "as kafka-dump-log prints it", "like a broker", "(Kafka: corrupt)", a Kafka method named
 * without its class as in "Kafka's `logSegments(from, to)`") must name the Kafka class it follows
 * (a CamelCase class or `Class.method`, or a KIP-/KAFKA- reference) close by, or be listed in an
 * allowlist with the reason it is not a claim about Kafka's behaviour.
 *
 * How a file is read:
 * - `.ts`/`.mjs`: a small lexer keeps only comment and string text (code is blanked, so a class
 *   name used in code does not count as a reference); `${…}` inside template strings is code.
 * - `.vue`: the `<script>` part as TypeScript; the `<template>` part as text with tag names and
 *   `{{ }}` markers blanked; `<style>` blanked.
 * - `.md`: all text.
 * Consecutive lines holding text form one paragraph; a blank or code-only line ends it. A claim is
 * matched inside a paragraph (so it may span lines); it passes when the same paragraph names a class
 * within {@link CLASS_WINDOW} lines of the claim, or when the docstring of the enclosing
 * declaration (the nearest `/** … *\/` above the first less-indented code line above the claim)
 * names one.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

/** Lines either side of a claim in which its paragraph must name a class. */
export const CLASS_WINDOW = 5;

/** Names that contain "kafka" but are not Kafka: the product, folders, files. Blanked before matching. */
const NOT_KAFKA = /Kafka Log Explorer|kafka-log-explorer|kafka-logs|kafka-real-data|kafka-behaviour-cases|kafka-log-format|python3-kafka|\/var\/lib\/kafka|\/kafka\/data|kafka_\w+|kafka-?python|--rules kafka|["']kafka["']/gi;

/** Who a claim is about. */
const SUBJECT = String.raw`(?:(?:a|the|every|each|any|no)\s+(?:kafka\s+|real\s+|running\s+|new\s+|restarting\s+|started\s+)?(?:broker|log\s+cleaner|cleaner|consumer|coordinator|group\s+coordinator|follower|leader|replica)s?(?:'s?)?|brokers'?|consumers|followers|kafka(?:'s)?|kafka-dump-log(?:\.sh)?|kafka-consumer-groups(?:\.sh)?|DumpLogSegments)(?![-\w])(?<!'s)(?!\s+(?:log|partition|topic|name|config|worker|tasks?|thread|checkpoint|epoch)s?\b)`;

/** What it does: a verb of behaviour. */
const VERB = String.raw`(?:would|does|do|did|will|can(?:not)?|may|must|keeps?|deletes?|removes?|writes?|reads?|stops?|cuts?|truncates?|refuses?|rejects?|ignores?|skips?|fails?|treats?|counts?|sets?|uses?|takes?|returns?|answers?|reports?|logs|throws?|retains?|cleans?|compacts?|drops?|rolls?|prints?|recovers?|rebuilds?|starts?|resets?|commits?|lowers?|raises?|sees?|checks?|accepts?|gives?|makes?|puts?|loads?|renames?|creates?|picks?|fetches?|sends?|serves?|delivers?|applies|apply|expires?|marks?|computes?|clamps?|appends?|knows?|requires?|allows?|never|always|only|not|first|then|also|validates?|re-?validates?|reloads?|adds?|follows?|places?|assigns?|stamps?|trusts?|tolerates?|repairs?|parses?|compares?|flushes?|has\s+\w+ed)`;

/** A claim: subject, then within 50 characters of the same sentence a verb; "as / like / the way" + subject; or "(Kafka: …". */
const CLAIM = new RegExp(String.raw`\b${SUBJECT}\b[^.;!?\n]{0,50}?\b${VERB}\b|\b(?:as|like|the\s+way)\s+(?:in\s+)?${SUBJECT}\b|\(kafka:\s|\bbroker\s+behaviou?r\b|\bby\s+(?:a|the)\s+(?:broker|cleaner|coordinator|consumer)s?\b|\bby\s+kafka\b(?!\s+(?:log|partition|topic|name|config)s?\b)`, 'gi');

/** A Kafka method named without its class ("Kafka's `logSegments(from, to)`"): a claim to name with `Class.method`. */
const METHOD_CLAIM = /\b[Kk]afka(?:'s)?\s+`?[a-z][a-z0-9]*[A-Z]\w*/g;

/** A reference to Kafka's code: CamelCase class (optionally `.method`), KIP-N, KAFKA-N. */
const CLASS_REF = /\b[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+(?:\.[a-zA-Z_]+)?\b|\b[A-Z][A-Za-z0-9]*\.[a-z][a-z0-9]*[A-Z][A-Za-z0-9]*\b|\bKIP-\d+|\bKAFKA-\d+/;

/** One claim found. */
export interface Claim {
  /** Path relative to the scanned root, with `/`. */
  file: string;
  /** 1-based line of the claim's start. */
  line: number;
  /** The sentence holding the claim, whitespace collapsed. */
  sentence: string;
  /** The words that matched (subject … verb). */
  match: string;
  /** Whether a class is named in its paragraph near it, or in the enclosing docstring. */
  named: boolean;
}

/** Blank code in TypeScript/JavaScript source, keeping comment and string text (same length, newlines kept). */
export function proseOfScript(src: string): string {
  // drop[i] = 1: character i is code or a delimiter (blanked in the result; newlines are always kept).
  const drop = new Uint8Array(src.length + 2);
  const blank = (i: number) => {
    drop[i] = 1;
  };
  let i = 0;
  // Stack of template-literal brace depths: inside `${`, code until its matching `}`.
  const tpl: number[] = [];
  let depth = 0;
  let prev = ''; // last significant code character, to tell a regex literal from a division
  while (i < src.length) {
    const c = src[i]!;
    const n = src[i + 1];
    if (c === '/' && n === '/') {
      blank(i);
      blank(i + 1);
      i += 2;
      while (i < src.length && src[i] !== '\n') i++;
      continue;
    }
    if (c === '/' && n === '*') {
      blank(i);
      blank(i + 1);
      i += 2;
      while (src[i] === '*' && src[i + 1] !== '/') blank(i++);
      let lineStart = false;
      while (i < src.length && !(src[i] === '*' && src[i + 1] === '/')) {
        if (src[i] === '\n') lineStart = true;
        else if (lineStart && src[i] === '*') {
          blank(i);
          lineStart = false;
        } else if (lineStart && src[i] !== ' ' && src[i] !== '\t') lineStart = false;
        i++;
      }
      blank(i);
      blank(i + 1);
      i += 2;
      continue;
    }
    if (c === "'" || c === '"') {
      blank(i);
      i++;
      while (i < src.length && src[i] !== c && src[i] !== '\n') {
        if (src[i] === '\\') {
          blank(i);
          i++;
          if (src[i] === 'n') drop[i] = 1;
        }
        i++;
      }
      blank(i);
      i++;
      prev = 'a';
      continue;
    }
    if (c === '`' || (c === '}' && tpl.length > 0 && depth === tpl[tpl.length - 1])) {
      // A template string's text part, up to its end or the next `${`.
      if (c === '}') tpl.pop();
      blank(i);
      i++;
      while (i < src.length && src[i] !== '`' && !(src[i] === '$' && src[i + 1] === '{')) {
        if (src[i] === '\\') {
          blank(i);
          i++;
          if (src[i] === 'n') drop[i] = 1;
        }
        i++;
      }
      if (src[i] === '$') {
        blank(i);
        blank(i + 1);
        i += 2;
        depth++;
        tpl.push(depth);
      } else {
        blank(i);
        i++;
        prev = 'a';
      }
      continue;
    }
    if (c === '/' && (prev === '' || '(,=:[!&|?{};+-*%<>~^'.includes(prev) || /\breturn\s*$/.test(src.slice(Math.max(0, i - 8), i)))) {
      // A regular-expression literal: code.
      blank(i);
      i++;
      let cls = false;
      while (i < src.length && src[i] !== '\n' && (cls || src[i] !== '/')) {
        if (src[i] === '\\') {
          blank(i);
          i++;
        } else if (src[i] === '[') cls = true;
        else if (src[i] === ']') cls = false;
        blank(i);
        i++;
      }
      blank(i);
      i++;
      prev = 'a';
      continue;
    }
    if (c === '{') depth++;
    else if (c === '}') depth--;
    if (c !== ' ' && c !== '\n' && c !== '\t' && c !== '\r') prev = c;
    drop[i] = 1;
    i++;
  }
  // Runs of kept text as they are; runs of dropped characters as spaces, newlines kept.
  const parts: string[] = [];
  let start = 0;
  for (let k = 1; k <= src.length; k++) {
    if (k < src.length && drop[k] === drop[start]) continue;
    const run = src.slice(start, k);
    parts.push(drop[start] ? run.replace(/[^\n]/g, ' ') : run);
    start = k;
  }
  return parts.join('');
}

/** A start or end tag of a Vue template, attributes included (a `>` inside a quoted value does not end it). */
const TAG = /<\/?[A-Za-z][\w.-]*(?:\s+[^\s=>\/]+(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s>]+))?)*\s*\/?>/g;
/** Attributes whose value is text a user reads. */
const PROSE_ATTRIBUTE = /^[:]?(?:title|placeholder|aria-label|alt|label)$/;

/** A tag blanked except the values of its prose attributes (tooltips, placeholders, labels). */
function proseOfTag(tag: string): string {
  const out = tag.replace(/[^\n]/g, ' ').split('');
  for (const a of tag.matchAll(/([^\s=>\/<]+)\s*=\s*("([^"]*)"|'([^']*)')/g)) {
    if (!PROSE_ATTRIBUTE.test(a[1]!)) continue;
    const v = a[3] ?? a[4] ?? '';
    const at = a.index + a[0].length - v.length - 1;
    for (let k = 0; k < v.length; k++) out[at + k] = v[k]!;
  }
  return out.join('');
}

/** Blank code and markup in a Vue single-file component, keeping template text and script prose. */
export function proseOfVue(src: string): string {
  const parts: string[] = [];
  const re = /<(script|template|style)\b[^>]*>([\s\S]*?)<\/\1>/g;
  let last = 0;
  for (const m of src.matchAll(re)) {
    parts.push(src.slice(last, m.index).replace(/[^\n]/g, ' '));
    const open = m[0].indexOf('>') + 1;
    const close = m[0].length - `</${m[1]}>`.length;
    const head = m[0].slice(0, open).replace(/[^\n]/g, ' ');
    const body = m[0].slice(open, close);
    const tail = m[0].slice(close).replace(/[^\n]/g, ' ');
    let prose: string;
    if (m[1] === 'script') prose = proseOfScript(body);
    else if (m[1] === 'style') prose = body.replace(/[^\n]/g, ' ');
    else prose = body.replace(TAG, proseOfTag).replace(/\{\{|\}\}/g, '  ');
    parts.push(head + prose + tail);
    last = m.index + m[0].length;
  }
  parts.push(src.slice(last).replace(/[^\n]/g, ' '));
  return parts.join('');
}

/** The prose of a file by its extension (code and markup blanked, same line count). */
export function proseOf(path: string, src: string): string {
  if (path.endsWith('.vue')) return proseOfVue(src);
  if (path.endsWith('.md')) return src;
  return proseOfScript(src);
}

interface Paragraph {
  text: string;
  /** Line (0-based) of each character of `text`. */
  lineAt: number[];
}

function paragraphs(prose: string): Paragraph[] {
  const lines = prose.replace(NOT_KAFKA, (t) => ' '.repeat(t.length)).split('\n');
  const out: Paragraph[] = [];
  let cur: Paragraph | null = null;
  lines.forEach((l, i) => {
    const t = l.trim().replace(/\s+/g, ' ');
    if (!t) {
      cur = null;
      return;
    }
    if (!cur) {
      cur = { text: '', lineAt: [] };
      out.push(cur);
    } else {
      cur.text += ' ';
      cur.lineAt.push(i);
    }
    cur.text += t;
    for (let k = 0; k < t.length; k++) cur.lineAt.push(i);
  });
  return out;
}

function sentenceAround(text: string, start: number, end: number): string {
  let a = start;
  while (a > 0 && !/^[.;!?]\s/.test(text.slice(a - 1, a + 1))) a--;
  let b = end;
  while (b < text.length && !/^[.;!?](\s|$)/.test(text.slice(b, b + 2))) b++;
  return text.slice(a, Math.min(text.length, b + 1)).trim();
}

/** The docstring of the declaration enclosing line `at` (0-based) of a script, or ''. */
function enclosingDoc(src: string[], at: number): string {
  const indent = (l: string) => l.length - l.trimStart().length;
  const isComment = (l: string) => /^\s*(\/\/|\/\*|\*)/.test(l);
  let k = at;
  while (k >= 0 && (isComment(src[k]!) || !src[k]!.trim())) k--;
  if (k < 0) return '';
  let level = indent(src[k]!);
  // A claim in a docstring belongs to the declaration below it: its own docstring is the one to read.
  if (k !== at && isComment(src[at]!)) level = indent(src[at]!) + 1;
  for (let j = k; j >= 0; j--) {
    const l = src[j]!;
    if (!l.trim() || isComment(l) || indent(l) >= level) continue;
    if (/^\s*[)\]}]/.test(l)) continue;
    level = indent(l);
    let d = j - 1;
    if (d < 0 || !/\*\/\s*$/.test(src[d]!)) {
      if (level === 0) return '';
      continue;
    }
    const doc: string[] = [];
    while (d >= 0) {
      doc.unshift(src[d]!);
      if (/^\s*\/\*\*/.test(src[d]!)) break;
      d--;
    }
    return doc.join('\n');
  }
  return '';
}

/** Every claim about Kafka's behaviour in one file's text. */
export function claimsIn(file: string, src: string): Claim[] {
  const prose = proseOf(file, src);
  const srcLines = src.split('\n');
  const proseLines = prose.split('\n');
  const out: Claim[] = [];
  for (const p of paragraphs(prose)) {
    const matches = [...p.text.matchAll(CLAIM), ...p.text.matchAll(METHOD_CLAIM)].sort((a, b) => a.index - b.index);
    for (const m of matches) {
      const line = p.lineAt[m.index]!;
      const window = proseLines.slice(Math.max(0, line - CLASS_WINDOW), line + CLASS_WINDOW + 1);
      const inParagraph = p.lineAt.length > 0 ? window.filter((_, k) => {
        const ln = Math.max(0, line - CLASS_WINDOW) + k;
        return ln >= p.lineAt[0]! && ln <= p.lineAt[p.lineAt.length - 1]!;
      }) : [];
      const named = CLASS_REF.test(inParagraph.join('\n')) || (!file.endsWith('.md') && CLASS_REF.test(enclosingDoc(srcLines, line)));
      out.push({ file, line: line + 1, sentence: sentenceAround(p.text, m.index, m.index + m[0].length), match: m[0], named });
    }
  }
  // One entry per sentence: a sentence with two matches is one claim.
  return out.filter((c, k) => k === 0 || out[k - 1]!.sentence !== c.sentence || out[k - 1]!.file !== c.file);
}

/** An allowlist entry: a claim-looking sentence that is not a claim about Kafka's behaviour. */
export interface AllowEntry {
  file: string;
  fragment: string;
  reason: string;
  /** 1-based line in the allowlist file. */
  line: number;
}

/** Parse the allowlist (`path<TAB>fragment<TAB>reason` lines; `#` comments and blank lines skipped). */
export function parseAllowlist(text: string): { entries: AllowEntry[]; errors: string[] } {
  const entries: AllowEntry[] = [];
  const errors: string[] = [];
  text.split('\n').forEach((l, i) => {
    if (!l.trim() || l.startsWith('#')) return;
    const f = l.split('\t');
    if (f.length !== 3 || !f[0] || !f[1]?.trim() || !f[2]?.trim()) errors.push(`allowlist line ${i + 1}: expected path<TAB>fragment<TAB>reason: ${l}`);
    else entries.push({ file: f[0], fragment: f[1].replace(/\s+/g, ' ').trim(), reason: f[2], line: i + 1 });
  });
  return { entries, errors };
}

/** Whether an allowlist entry covers a claim (same file, fragment inside its sentence). */
export function allows(e: AllowEntry, c: Claim): boolean {
  return e.file === c.file && c.sentence.includes(e.fragment);
}

/** The files the audit reads under `root`: `.ts`, `.vue`, `.mjs`, `.md` of the given roots. */
export function auditedFiles(root: string, roots: string[]): string[] {
  const out: string[] = [];
  const walk = (p: string) => {
    const s = statSync(p);
    if (s.isDirectory()) {
      for (const e of readdirSync(p).sort()) if (e !== 'node_modules' && !e.startsWith('.')) walk(join(p, e));
    } else if (/\.(ts|vue|mjs|md)$/.test(p) && !p.endsWith('.d.ts')) out.push(relative(root, p).split('\\').join('/'));
  };
  for (const r of roots) walk(join(root, r));
  return out;
}

/** Every claim of the audited files. */
export function auditClaims(root: string, roots: string[]): Claim[] {
  return auditedFiles(root, roots).flatMap((f) => claimsIn(f, readFileSync(join(root, f), 'utf8')));
}
