import { describe, expect, it } from 'vitest';
import { compareNumbers, DecodedCondition, type ConditionRecord } from '../../../src-main/engine/decode/decoded-condition.ts';
import { KlxError } from '../../../src-main/engine/errors.ts';

const rec = (value: unknown, key: unknown = undefined, extra: Partial<ConditionRecord> = {}): ConditionRecord => ({ key, value, offset: 42n, timestamp: 1_700_000_000_000n, partition: 3, topic: 'orders', ...extra });
const holds = (cond: string, r: ConditionRecord): boolean => DecodedCondition.parse(cond).test(r);

function errorOf(cond: string): KlxError {
  try {
    DecodedCondition.parse(cond);
  } catch (e) {
    expect(e).toBeInstanceOf(KlxError);
    return e as KlxError;
  }
  throw new Error(`${cond} parsed`);
}

describe('DecodedCondition', () => {
  const order = { amount: 12.5, qty: 3, id: 9223372036854775807n, status: 'PAID', paid: true, note: null, items: [{ sku: 'A-1' }, { sku: 'B-2' }], tags: ['x', 'y'], 'odd-name': 1, count64: '12' };

  it('compares numbers, strings, booleans and null on paths', () => {
    expect(holds('value.amount > 10', rec(order))).toBe(true);
    expect(holds('value.amount > 12.5', rec(order))).toBe(false);
    expect(holds('value.amount >= 12.5', rec(order))).toBe(true);
    expect(holds('value.qty == 3', rec(order))).toBe(true);
    expect(holds('value.qty != 3', rec(order))).toBe(false);
    expect(holds('value.qty < 3.5', rec(order))).toBe(true);
    expect(holds('value.status == "PAID"', rec(order))).toBe(true);
    expect(holds("value.status == 'PAID'", rec(order))).toBe(true);
    expect(holds('value.status < "Q"', rec(order))).toBe(true);
    expect(holds('value.paid == true', rec(order))).toBe(true);
    expect(holds('value.paid == false', rec(order))).toBe(false);
    expect(holds('value.note == null', rec(order))).toBe(true);
    expect(holds('value.status == null', rec(order))).toBe(false);
  });

  it('compares int64 exactly, also beyond 2^53', () => {
    expect(holds('value.id == 9223372036854775807', rec(order))).toBe(true);
    // As doubles both round to 9223372036854775808: exact comparison tells them apart.
    expect(holds('value.id == 9223372036854775806', rec(order))).toBe(false);
    expect(holds('value.id > 9223372036854775806', rec(order))).toBe(true);
    expect(holds('value.id < 9223372036854775807', rec(order))).toBe(false);
    expect(holds('value.big == 9007199254740993', rec({ big: 9007199254740993n }))).toBe(true);
    expect(holds('value.big == 9007199254740992', rec({ big: 9007199254740993n }))).toBe(false);
    // Protobuf's JSON form of int64 is a string: it compares as the number against a number literal.
    expect(holds('value.count64 == 12', rec(order))).toBe(true);
    expect(holds('value.count64 > 11', rec(order))).toBe(true);
    expect(holds('value.s == 9223372036854775807', rec({ s: '9223372036854775807' }))).toBe(true);
    expect(holds('value.s == 9223372036854775806', rec({ s: '9223372036854775807' }))).toBe(false);
    // …but a string literal compares as a string.
    expect(holds('value.count64 == "12"', rec(order))).toBe(true);
    expect(holds('value.qty == "3"', rec(order))).toBe(false);
  });

  it('compareNumbers orders integers against fractions exactly', () => {
    expect(compareNumbers(3n, 3.5)).toBe(-1);
    expect(compareNumbers(4n, 3.5)).toBe(1);
    expect(compareNumbers(3.5, 3n)).toBe(1);
    expect(compareNumbers(-4n, -3.5)).toBe(-1);
    expect(compareNumbers(2n ** 63n, Infinity)).toBe(-1);
    expect(compareNumbers(-(2n ** 63n), -Infinity)).toBe(1);
    expect(compareNumbers(1.25, 1.5)).toBe(-1);
  });

  it('walks nested paths, indexes and quoted names; a missing path is null only', () => {
    expect(holds('value.items[1].sku == "B-2"', rec(order))).toBe(true);
    expect(holds('value["odd-name"] == 1', rec(order))).toBe(true);
    expect(holds('value.odd-name == 1', rec(order))).toBe(true);
    expect(holds('value.items[2].sku == null', rec(order))).toBe(true);
    expect(holds('value.items[2].sku != "B-2"', rec(order))).toBe(true);
    expect(holds('value.items[2].sku < "Z"', rec(order))).toBe(false);
    expect(holds('value.nope > 0', rec(order))).toBe(false);
    expect(holds('value.status.deeper == null', rec(order))).toBe(true);
    expect(holds('value.items.sku == null', rec(order))).toBe(true);
    // A side that did not decode has no JSON at all.
    expect(holds('value.amount > 0', rec(undefined))).toBe(false);
    expect(holds('value == null', rec(undefined))).toBe(true);
    // A tombstone decodes to JSON null.
    expect(holds('value == null', rec(null))).toBe(true);
  });

  it('contains, and/or/not, parentheses and bare paths', () => {
    expect(holds('value.status contains "AI"', rec(order))).toBe(true);
    expect(holds('value.status contains "ai"', rec(order))).toBe(false);
    expect(holds('value.tags contains "y"', rec(order))).toBe(true);
    expect(holds('value.tags contains "z"', rec(order))).toBe(false);
    expect(holds('value.qty == 3 && value.status == "PAID"', rec(order))).toBe(true);
    expect(holds('value.qty == 4 || value.status == "PAID"', rec(order))).toBe(true);
    expect(holds('value.qty == 4 or value.status == "X"', rec(order))).toBe(false);
    expect(holds('not (value.qty == 3 and value.paid)', rec(order))).toBe(false);
    expect(holds('!value.note', rec(order))).toBe(true);
    expect(holds('value.paid', rec(order))).toBe(true);
    // && binds tighter than ||.
    expect(holds('value.qty == 4 && value.paid || value.status == "PAID"', rec(order))).toBe(true);
    expect(holds('value.qty == 4 && (value.paid || value.status == "PAID")', rec(order))).toBe(false);
  });

  it('reads the key, the record fields and a field named like a keyword', () => {
    const key = { type: 1, recordType: 'OffsetCommit', data: { group: 'g1', topic: 't', partition: 0 } };
    expect(holds('key.data.group == "g1" && value.not == 1', rec({ not: 1 }, key))).toBe(true);
    expect(holds('offset >= 42 && timestamp == 1700000000000 && partition == 3 && topic == "orders"', rec(1))).toBe(true);
    expect(holds('offset > 42', rec(1))).toBe(false);
    const c = DecodedCondition.parse('key.data.group == "g1"');
    expect([c.usesKey, c.usesValue]).toEqual([true, false]);
    const d = DecodedCondition.parse('offset > 3');
    expect([d.usesKey, d.usesValue]).toEqual([false, false]);
  });

  it('a bad condition is invalid-argument naming the character', () => {
    const cases: [string, number, RegExp][] = [
      ['value.amount > ', 15, /expected a path or a value at the end/],
      ['value.amount = 10', 13, /expected == \(a single = is not a comparison\) at character 14/],
      ['valu.amount > 10', 0, /unknown name “valu”: a path starts with key, value, offset, timestamp, partition, topic at character 1/],
      ['value.amount > 10 value.qty', 18, /expected && or \|\| between conditions at character 19/],
      ['(value.a > 1', 12, /expected \) at the end/],
      ['value.a > 1)', 11, /unmatched \) at character 12/],
      ['value.name == "abc', 14, /unclosed string/],
      ['value.items[x] == 1', 12, /expected an index/],
      ['offset.x == 1', 7, /offset has no fields/],
      ['value.a > 1 & value.b', 12, /expected &&/],
      ['value.a # 1', 8, /unexpected character "#"/],
      ['3 == 4', 2, /expected a path .* on one side of at character 3/],
      ['"x"', 3, /expected a comparison operator/],
      ['  ', 0, /expected a condition/],
    ];
    for (const [text, index, message] of cases) {
      const e = errorOf(text);
      expect(e.code, text).toBe('invalid-argument');
      expect(e.details, text).toMatchObject({ condition: text, index, column: index + 1 });
      expect(e.message, text).toMatch(message);
    }
  });
});
