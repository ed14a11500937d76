/**
 * Conditions on decoded records, as the records search takes them: `value.amount > 10`,
 * `key.data.group == "g1" && value.data.offset >= 9`, `value.items[0].sku contains "A-"`,
 * `not (value.deleted == true)`, `offset >= 100`.
 *
 * Grammar (whitespace between tokens is free):
 *
 *     condition  := or
 *     or         := and  (('||' | 'or')  and)*
 *     and        := unary (('&&' | 'and') unary)*
 *     unary      := ('!' | 'not') unary | '(' or ')' | comparison
 *     comparison := operand (op operand)?          a path alone: present and not null/false
 *     op         := '==' | '!=' | '<' | '<=' | '>' | '>=' | 'contains'
 *     operand    := path | literal
 *     path       := root ('.' name | '[' integer ']' | '[' string ']')*
 *     root       := 'key' | 'value' | 'offset' | 'timestamp' | 'partition' | 'topic'
 *     literal    := number | string ("…" with JSON escapes, or '…') | 'true' | 'false' | 'null'
 *
 * `key` and `value` are the record's decoded JSON (what the decode layer returns: for
 * `__consumer_offsets` `{type, recordType, data: {group, …}}`, for Avro the datum); `offset`,
 * `timestamp` (ms), `partition` and `topic` are the record's own. A key or value that did not decode
 * has no JSON: every path into it is missing.
 *
 * Comparison rules:
 * - Numbers compare exactly: integers (in the text and in the data, `bigint` beyond ±2^53) as
 *   integers, never through a double, so `value.id == 9223372036854775807` holds only for that long.
 *   A string holding a decimal number (Protobuf's JSON form of int64, `"12"`; an Avro decimal,
 *   `"12345678.90"`) compares as that number against a number literal, exactly: decimal text
 *   against decimal text (`value.price == 0.1` holds for `"0.10"`, not for `"0.1000000001"`),
 *   never through a double.
 * - Strings compare by UTF-16 code units (`<`, `>`), booleans and null by equality only.
 * - A missing path equals `null` and nothing else; ordering comparisons with a missing value, or
 *   between different kinds (a string and a boolean), are false.
 * - `contains`: substring of a string (case-sensitive), or an element of an array (by `==`).
 *
 * A condition that does not parse throws `KlxError('invalid-argument')` naming the character (0-based
 * `index`, 1-based `column` in `details`) and what was expected there.
 *
 * Why not an expression library: jsep 1.6.0 (the small, well-kept candidate) parses every number to
 * a double (int64 comparisons must be exact), keeps its operator tables process-global, and gives no
 * positions for nodes, so an unknown root or a function call could not be reported at its place.
 * This grammar is small enough to carry with its tests (test/engine/decode/decoded-condition.test.ts).
 */
import { KlxError } from '../errors.ts';

/** The names a path can start with. */
export const CONDITION_ROOTS = ['key', 'value', 'offset', 'timestamp', 'partition', 'topic'] as const;
export type ConditionRoot = (typeof CONDITION_ROOTS)[number];

/** What a condition is tested against: one record, its key and value decoded. */
export interface ConditionRecord {
  /** The decoded key's JSON (undefined when it did not decode or was not decoded). */
  key: unknown;
  /** The decoded value's JSON (likewise). */
  value: unknown;
  offset: bigint;
  /** Record timestamp, ms since the epoch. */
  timestamp: bigint;
  partition: number;
  topic: string;
}

type CompareOp = '==' | '!=' | '<' | '<=' | '>' | '>=' | 'contains';

type Node =
  | { kind: 'or' | 'and'; left: Node; right: Node }
  | { kind: 'not'; arg: Node }
  | { kind: 'cmp'; op: CompareOp; left: Operand; right: Operand }
  | { kind: 'truthy'; path: PathOperand };

interface PathOperand {
  kind: 'path';
  root: ConditionRoot;
  steps: (string | number)[];
}
interface LiteralOperand {
  kind: 'literal';
  value: string | number | bigint | boolean | null;
  /** A number literal's text as written (compared exactly with decimal strings, see {@link exactOrder}). */
  raw?: string;
}
type Operand = PathOperand | LiteralOperand;

type Token =
  | { t: 'punct'; v: '(' | ')' | '[' | ']' | '.'; at: number }
  | { t: 'op'; v: CompareOp | '&&' | '||' | '!'; at: number }
  | { t: 'name'; v: string; at: number }
  | { t: 'number'; v: number | bigint; raw: string; at: number }
  | { t: 'string'; v: string; at: number }
  | { t: 'end'; at: number };

function fail(text: string, at: number, what: string): never {
  const near = at >= text.length ? 'at the end' : `at character ${at + 1} (“${text.slice(at, at + 12)}”)`;
  throw new KlxError('invalid-argument', `condition: ${what} ${near} of “${text}”`, { details: { condition: text, index: at, column: at + 1, expected: what } });
}

const NAME_START = /[A-Za-z_$]/;
const NAME_PART = /[A-Za-z0-9_$-]/;
const NUMBER = /^-?(?:0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/;

function tokenize(text: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r') {
      i++;
      continue;
    }
    const two = text.slice(i, i + 2);
    if (two === '==' || two === '!=' || two === '<=' || two === '>=' || two === '&&' || two === '||') {
      out.push({ t: 'op', v: two, at: i });
      i += 2;
      continue;
    }
    if (c === '<' || c === '>' || c === '!') {
      out.push({ t: 'op', v: c, at: i });
      i++;
      continue;
    }
    if (c === '=') fail(text, i, 'expected == (a single = is not a comparison)');
    if (c === '&' || c === '|') fail(text, i, `expected ${c}${c}`);
    if (c === '(' || c === ')' || c === '[' || c === ']' || c === '.') {
      out.push({ t: 'punct', v: c, at: i });
      i++;
      continue;
    }
    if (c === '"' || c === "'") {
      let j = i + 1;
      while (j < text.length && text[j] !== c) j += text[j] === '\\' ? 2 : 1;
      if (j >= text.length) fail(text, i, `unclosed string (no closing ${c})`);
      const body = text.slice(i + 1, j);
      let v: string;
      try {
        // Single-quoted: the same escapes, with \' allowed and a bare " kept.
        v = JSON.parse(c === '"' ? `"${body}"` : `"${body.replace(/\\'/g, "'").replace(/(^|[^\\])((?:\\\\)*)"/g, '$1$2\\"')}"`) as string;
      } catch {
        fail(text, i, 'invalid string (JSON escapes only: \\" \\\\ \\n \\t \\uXXXX …)');
      }
      out.push({ t: 'string', v, at: i });
      i = j + 1;
      continue;
    }
    if (c === '-' || (c >= '0' && c <= '9')) {
      const m = NUMBER.exec(text.slice(i));
      if (!m) fail(text, i, 'expected a number');
      const raw = m[0];
      if (i + raw.length < text.length && NAME_PART.test(text[i + raw.length]!) && text[i + raw.length] !== '-') fail(text, i + raw.length, 'expected an operator after the number');
      out.push({ t: 'number', v: m[1] === undefined && m[2] === undefined ? BigInt(raw) : Number(raw), raw, at: i });
      i += raw.length;
      continue;
    }
    if (NAME_START.test(c)) {
      let j = i + 1;
      while (j < text.length && NAME_PART.test(text[j]!)) j++;
      const name = text.slice(i, j);
      const prev = out[out.length - 1];
      if (prev && prev.t === 'punct' && prev.v === '.') out.push({ t: 'name', v: name, at: i }); // a field named like a keyword (value.not)
      else if (name === 'contains') out.push({ t: 'op', v: 'contains', at: i });
      else if (name === 'and') out.push({ t: 'op', v: '&&', at: i });
      else if (name === 'or') out.push({ t: 'op', v: '||', at: i });
      else if (name === 'not') out.push({ t: 'op', v: '!', at: i });
      else out.push({ t: 'name', v: name, at: i });
      i = j;
      continue;
    }
    fail(text, i, `unexpected character ${JSON.stringify(c)}`);
  }
  out.push({ t: 'end', at: text.length });
  return out;
}

class Parser {
  private i = 0;
  constructor(
    private readonly text: string,
    private readonly tokens: Token[],
  ) {}

  private peek(): Token {
    return this.tokens[this.i]!;
  }

  private next(): Token {
    return this.tokens[this.i++]!;
  }

  private isOp(v: string): boolean {
    const t = this.peek();
    return t.t === 'op' && t.v === v;
  }

  parse(): Node {
    const node = this.or();
    const t = this.peek();
    if (t.t !== 'end') fail(this.text, t.at, t.t === 'punct' && t.v === ')' ? 'unmatched )' : 'expected && or || between conditions');
    return node;
  }

  private or(): Node {
    let left = this.and();
    while (this.isOp('||')) {
      this.next();
      left = { kind: 'or', left, right: this.and() };
    }
    return left;
  }

  private and(): Node {
    let left = this.unary();
    while (this.isOp('&&')) {
      this.next();
      left = { kind: 'and', left, right: this.unary() };
    }
    return left;
  }

  private unary(): Node {
    const t = this.peek();
    if (t.t === 'op' && t.v === '!') {
      this.next();
      return { kind: 'not', arg: this.unary() };
    }
    if (t.t === 'punct' && t.v === '(') {
      this.next();
      const inner = this.or();
      const close = this.next();
      if (close.t !== 'punct' || close.v !== ')') fail(this.text, close.at, 'expected )');
      return inner;
    }
    return this.comparison();
  }

  private comparison(): Node {
    const left = this.operand();
    const t = this.peek();
    if (t.t === 'op' && t.v !== '&&' && t.v !== '||' && t.v !== '!') {
      this.next();
      const right = this.operand();
      if (left.kind === 'literal' && right.kind === 'literal') fail(this.text, t.at, 'expected a path (key…, value…, offset, timestamp, partition, topic) on one side of');
      return { kind: 'cmp', op: t.v, left, right };
    }
    if (left.kind === 'literal') fail(this.text, t.at, 'expected a comparison operator (== != < <= > >= contains)');
    return { kind: 'truthy', path: left };
  }

  private operand(): Operand {
    const t = this.next();
    if (t.t === 'number') return { kind: 'literal', value: t.v, raw: t.raw };
    if (t.t === 'string') return { kind: 'literal', value: t.v };
    if (t.t === 'name') {
      if (t.v === 'true' || t.v === 'false') return { kind: 'literal', value: t.v === 'true' };
      if (t.v === 'null') return { kind: 'literal', value: null };
      if (!(CONDITION_ROOTS as readonly string[]).includes(t.v)) fail(this.text, t.at, `unknown name “${t.v}”: a path starts with ${CONDITION_ROOTS.join(', ')}`);
      return this.path(t.v as ConditionRoot);
    }
    fail(this.text, t.at, t.t === 'end' ? 'expected a path or a value' : 'expected a path or a value, not this');
  }

  private path(root: ConditionRoot): PathOperand {
    const steps: (string | number)[] = [];
    for (;;) {
      const t = this.peek();
      if (t.t !== 'punct' || (t.v !== '.' && t.v !== '[')) break;
      this.next();
      const s = this.next();
      if (t.v === '.') {
        if (s.t === 'name') steps.push(s.v);
        else fail(this.text, s.at, 'expected a field name after .');
      } else {
        if (s.t === 'number' && typeof s.v === 'bigint' && s.v >= 0n) steps.push(Number(s.v));
        else if (s.t === 'string') steps.push(s.v);
        else fail(this.text, s.at, 'expected an index (0, 1, …) or a quoted field name inside [ ]');
        const close = this.next();
        if (close.t !== 'punct' || close.v !== ']') fail(this.text, close.at, 'expected ]');
      }
    }
    if (root !== 'key' && root !== 'value' && steps.length > 0) fail(this.text, this.tokens[this.i - 1]!.at, `${root} has no fields`);
    return { kind: 'path', root, steps };
  }
}

/** A missing value (path absent, or the side did not decode). */
const MISSING = Symbol('missing');

function resolvePath(p: PathOperand, rec: ConditionRecord): unknown {
  let v: unknown;
  switch (p.root) {
    case 'key':
      v = rec.key;
      break;
    case 'value':
      v = rec.value;
      break;
    case 'offset':
      return rec.offset;
    case 'timestamp':
      return rec.timestamp;
    case 'partition':
      return rec.partition;
    case 'topic':
      return rec.topic;
  }
  if (v === undefined) return MISSING;
  for (const s of p.steps) {
    if (v === null || typeof v !== 'object' || v instanceof Uint8Array) return MISSING;
    if (Array.isArray(v)) {
      if (typeof s !== 'number' || s >= v.length) return MISSING;
      v = v[s];
    } else {
      if (!Object.prototype.hasOwnProperty.call(v, s)) return MISSING;
      v = (v as Record<string, unknown>)[String(s)];
    }
    if (v === undefined) return MISSING;
  }
  return v;
}

const DECIMAL = /^-?(?:0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/;

/** A numeric view of `v` (number, bigint, or a decimal string when `fromString`), else null. */
function numeric(v: unknown, fromString: boolean): number | bigint | null {
  if (typeof v === 'bigint') return v;
  if (typeof v === 'number') return Number.isNaN(v) ? null : v;
  if (fromString && typeof v === 'string' && DECIMAL.test(v)) {
    const int = !v.includes('.') && !/[eE]/.test(v);
    return int ? BigInt(v) : Number(v);
  }
  return null;
}

/** -1, 0 or 1 comparing two numbers exactly (integers as integers; a fraction against its floor). */
export function compareNumbers(a: number | bigint, b: number | bigint): -1 | 0 | 1 {
  const exact = (x: number | bigint): bigint | null => (typeof x === 'bigint' ? x : Number.isInteger(x) ? BigInt(x) : null);
  const ea = exact(a);
  const eb = exact(b);
  if (ea !== null && eb !== null) return ea < eb ? -1 : ea > eb ? 1 : 0;
  if (ea === null && eb === null) {
    const x = a as number;
    const y = b as number;
    return x < y ? -1 : x > y ? 1 : 0;
  }
  // One integer, one non-integer (or ±Infinity) double.
  const int = (ea ?? eb)!;
  const frac = (ea === null ? a : b) as number;
  if (!Number.isFinite(frac)) return (ea === null) === frac > 0 ? 1 : -1;
  // int <= floor(frac) means int < frac; otherwise int >= floor(frac)+1 > frac.
  const sign = int <= BigInt(Math.floor(frac)) ? -1 : 1;
  return (ea === null ? -sign : sign) as -1 | 1;
}

/** `m × 10^e`: a decimal number held exactly. */
interface ExactDecimal {
  m: bigint;
  e: number;
}
const DECIMAL_PARTS = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/;

/** The exact value of decimal text (a number literal as written, a decimal string, a bigint), else null (exponents beyond ±1000 too). */
function exactDecimal(v: unknown, raw: string | undefined, isString: boolean): ExactDecimal | null {
  const text = raw ?? (typeof v === 'bigint' ? v.toString() : isString && typeof v === 'string' ? v : null);
  if (text === null) return null;
  const m = DECIMAL_PARTS.exec(text);
  if (!m) return null;
  const e = (m[4] !== undefined ? Number(m[4]) : 0) - (m[3]?.length ?? 0);
  if (Math.abs(e) > 1000) return null;
  const mant = BigInt(m[2]! + (m[3] ?? ''));
  return { m: m[1] ? -mant : mant, e };
}

/**
 * -1, 0 or 1 comparing `a` and `b` exactly when both are decimal text (a number literal's `raw`, a
 * path's decimal string that {@link numeric} reads, or a bigint); null when either is a double
 * from the data (then {@link compareNumbers} decides).
 */
function exactOrder(a: unknown, b: unknown, ra: string | undefined, rb: string | undefined, aString: boolean, bString: boolean): -1 | 0 | 1 | null {
  const x = exactDecimal(a, ra, aString);
  if (x === null) return null;
  const y = exactDecimal(b, rb, bString);
  if (y === null) return null;
  const e = Math.min(x.e, y.e);
  const p = x.m * 10n ** BigInt(x.e - e);
  const q = y.m * 10n ** BigInt(y.e - e);
  return p < q ? -1 : p > q ? 1 : 0;
}

function equal(a: unknown, b: unknown, aPath: boolean, bPath: boolean, ra?: string, rb?: string): boolean {
  if (a === MISSING || b === MISSING) return (a === MISSING || a === null) && (b === MISSING || b === null);
  if (a === null || b === null) return a === b;
  // A path's decimal string equals a number literal; two paths compare as they are.
  const aString = aPath && !bPath && typeof b !== 'string';
  const bString = bPath && !aPath && typeof a !== 'string';
  const na = numeric(a, aString);
  const nb = numeric(b, bString);
  if (na !== null && nb !== null) return (exactOrder(a, b, ra, rb, aString, bString) ?? compareNumbers(na, nb)) === 0;
  if (typeof a !== typeof b) return false;
  if (typeof a === 'string' || typeof a === 'boolean') return a === b;
  return false; // objects, arrays, bytes: only compared with null
}

function order(a: unknown, b: unknown, aPath: boolean, bPath: boolean, ra?: string, rb?: string): -1 | 0 | 1 | null {
  if (a === MISSING || b === MISSING || a === null || b === null) return null;
  const aString = aPath && !bPath && typeof b !== 'string';
  const bString = bPath && !aPath && typeof a !== 'string';
  const na = numeric(a, aString);
  const nb = numeric(b, bString);
  if (na !== null && nb !== null) return exactOrder(a, b, ra, rb, aString, bString) ?? compareNumbers(na, nb);
  if (typeof a === 'string' && typeof b === 'string') return a < b ? -1 : a > b ? 1 : 0;
  return null;
}

function evaluate(n: Node, rec: ConditionRecord): boolean {
  switch (n.kind) {
    case 'or':
      return evaluate(n.left, rec) || evaluate(n.right, rec);
    case 'and':
      return evaluate(n.left, rec) && evaluate(n.right, rec);
    case 'not':
      return !evaluate(n.arg, rec);
    case 'truthy': {
      const v = resolvePath(n.path, rec);
      return v !== MISSING && v !== null && v !== false;
    }
    case 'cmp': {
      const a = n.left.kind === 'path' ? resolvePath(n.left, rec) : n.left.value;
      const b = n.right.kind === 'path' ? resolvePath(n.right, rec) : n.right.value;
      const ap = n.left.kind === 'path';
      const bp = n.right.kind === 'path';
      const ra = n.left.kind === 'literal' ? n.left.raw : undefined;
      const rb = n.right.kind === 'literal' ? n.right.raw : undefined;
      switch (n.op) {
        case '==':
          return equal(a, b, ap, bp, ra, rb);
        case '!=':
          return !equal(a, b, ap, bp, ra, rb);
        case 'contains':
          if (typeof a === 'string' && typeof b === 'string') return a.includes(b);
          if (Array.isArray(a)) return a.some((x) => equal(x, b, true, bp, undefined, rb));
          return false;
        default: {
          const c = order(a, b, ap, bp, ra, rb);
          if (c === null) return false;
          return n.op === '<' ? c < 0 : n.op === '<=' ? c <= 0 : n.op === '>' ? c > 0 : c >= 0;
        }
      }
    }
  }
}

function rootsOf(n: Node, into: Set<ConditionRoot>): void {
  if (n.kind === 'or' || n.kind === 'and') {
    rootsOf(n.left, into);
    rootsOf(n.right, into);
  } else if (n.kind === 'not') rootsOf(n.arg, into);
  else if (n.kind === 'truthy') into.add(n.path.root);
  else {
    if (n.left.kind === 'path') into.add(n.left.root);
    if (n.right.kind === 'path') into.add(n.right.root);
  }
}

/** A parsed condition (see the module comment). */
export class DecodedCondition {
  /** Whether the condition reads the decoded key / value (so a search decodes only those sides). */
  readonly usesKey: boolean;
  readonly usesValue: boolean;

  private constructor(
    /** The condition's text as given. */
    readonly text: string,
    private readonly root: Node,
  ) {
    const roots = new Set<ConditionRoot>();
    rootsOf(root, roots);
    this.usesKey = roots.has('key');
    this.usesValue = roots.has('value');
  }

  /**
   * Parses a condition.
   * @throws KlxError `invalid-argument` naming the character (details `{condition, index, column, expected}`).
   */
  static parse(text: string): DecodedCondition {
    if (text.trim() === '') fail(text, 0, 'expected a condition, e.g. value.amount > 10,');
    return new DecodedCondition(text, new Parser(text, tokenize(text)).parse());
  }

  /** Whether `rec` satisfies the condition. Never throws. */
  test(rec: ConditionRecord): boolean {
    return evaluate(this.root, rec);
  }
}
