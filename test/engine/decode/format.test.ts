import { describe, expect, it } from 'vitest';
import { Packr } from 'msgpackr';
import { AUTO, choiceFor, decodeBytes, FormatError } from '../../../src-main/engine/decode/format.ts';
import { defaultFormatRegistry } from '../../../src-main/engine/decode/default-formats.ts';
import { invalidUtf8At } from '../../../src-main/engine/decode/utf8.ts';

const reg = defaultFormatRegistry();
const ctx = { topic: 'orders', side: 'value' as const };
const bytes = (...b: number[]) => new Uint8Array(b);
const text = (s: string) => new TextEncoder().encode(s);

describe('primitives as Kafka serializers write them', () => {
  it('long: 2^63-1 stays exact in JSON text; int/short big-endian', () => {
    const d = decodeBytes(reg, bytes(0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff), ctx, 'long');
    expect(d.json).toBe(9223372036854775807n);
    expect(d.jsonText).toBe('9223372036854775807');
    expect(decodeBytes(reg, bytes(0xff, 0xff, 0xff, 0xfe), ctx, 'int').json).toBe(-2);
    expect(decodeBytes(reg, bytes(0x01, 0x00), ctx, 'short').json).toBe(256);
    expect(decodeBytes(reg, bytes(0, 0, 0, 0, 0, 0, 0x30, 0x39), ctx, 'long').json).toBe(12345);
  });

  it('float/double/boolean/uuid', () => {
    expect(decodeBytes(reg, bytes(0x3f, 0xc0, 0, 0), ctx, 'float').json).toBe(1.5);
    expect(decodeBytes(reg, bytes(0x40, 0x09, 0x21, 0xfb, 0x54, 0x44, 0x2d, 0x18), ctx, 'double').json).toBe(3.141592653589793);
    expect(decodeBytes(reg, bytes(1), ctx, 'boolean').json).toBe(true);
    expect(decodeBytes(reg, bytes(2), ctx, 'boolean').error).toBe('boolean: byte 0x2 is neither 0 nor 1');
    const u = bytes(0x12, 0x3e, 0x45, 0x67, 0xe8, 0x9b, 0x12, 0xd3, 0xa4, 0x56, 0x42, 0x66, 0x14, 0x17, 0x40, 0x00);
    expect(decodeBytes(reg, u, ctx, 'uuid').json).toBe('123e4567-e89b-12d3-a456-426614174000');
    const t = decodeBytes(reg, text('123E4567-E89B-12D3-A456-426614174000'), ctx);
    expect([t.format, t.json]).toEqual(['uuid', '123e4567-e89b-12d3-a456-426614174000']);
  });

  it('a wrong length is a typed error naming what was expected', () => {
    const d = decodeBytes(reg, bytes(1, 2, 3, 4, 5), ctx, 'long');
    expect([d.ok, d.error, d.errorCode, d.errorPosition]).toEqual([false, 'long: needs exactly 8 bytes, got 5', 'truncated', 5]);
  });

  it('invalid UTF-8: typed error with the byte position', () => {
    const d = decodeBytes(reg, bytes(0x61, 0x62, 0xc3, 0x28, 0x63), ctx, 'string');
    expect([d.error, d.errorCode, d.errorPosition]).toEqual(['invalid UTF-8 at byte 2 (0xc3)', 'invalid-utf8', 2]);
    expect(invalidUtf8At(bytes(0xe2, 0x82, 0xac))).toBe(-1); // €
    expect(invalidUtf8At(bytes(0x41, 0xed, 0xa0, 0x80))).toBe(1); // a surrogate
    expect(invalidUtf8At(bytes(0x41, 0xc0, 0x80))).toBe(1); // overlong NUL
    expect(invalidUtf8At(bytes(0x41, 0xf0, 0x9f, 0x98))).toBe(1); // cut 4-byte sequence
  });

  it('hex and base64 show every byte', () => {
    expect(decodeBytes(reg, bytes(0, 0xab, 0x10), ctx, 'hex').text).toBe('00ab10');
    expect(decodeBytes(reg, bytes(0, 0xab, 0x10), ctx, 'base64').text).toBe('AKsQ');
  });
});

describe('JSON and MessagePack', () => {
  it('JSON keeps int64 exact and reports where it breaks', () => {
    const d = decodeBytes(reg, text('{"id":9223372036854775807,"n":1.5,"s":"é"}'), ctx, 'json');
    expect(d.json).toEqual({ id: 9223372036854775807n, n: 1.5, s: 'é' });
    expect(d.jsonText).toBe('{"id":9223372036854775807,"n":1.5,"s":"é"}');
    const bad = decodeBytes(reg, text('{"a":1,}'), ctx, 'json');
    expect(bad.errorCode).toBe('invalid');
    expect(bad.errorPosition).toBe(7);
    expect(decodeBytes(reg, text('{"a":[1,'), ctx, 'json').ok).toBe(false);
  });

  it('MessagePack (bytes written by msgpackr\'s packer): maps, int64 beyond 2^53 exact, truncation', () => {
    const packed = new Packr({ useRecords: false }).pack({ a: 1, b: [true, 'x'], big: 9223372036854775807n });
    const d = decodeBytes(reg, new Uint8Array(packed), ctx);
    expect(d.format).toBe('msgpack');
    expect(d.jsonText).toBe('{"a":1,"b":[true,"x"],"big":9223372036854775807}');
    // Hand-written: fixmap(1) "k" -> uint8 200
    expect(decodeBytes(reg, bytes(0x81, 0xa1, 0x6b, 0xcc, 200), ctx, 'msgpack').json).toEqual({ k: 200 });
    const cut = decodeBytes(reg, bytes(0x82, 0xa1, 0x6b, 0xcc), ctx, 'msgpack');
    expect([cut.errorCode, cut.error]).toEqual(['truncated', 'MessagePack: read past the end of the 4 bytes']);
  });
});

describe('auto detection and its explanation', () => {
  it('picks JSON for objects, string for text, long for 8 binary bytes, int for 4', () => {
    const j = decodeBytes(reg, text(' {"x":1}'), ctx);
    expect([j.format, j.reason]).toEqual(['json', 'JSON: starts with {: JSON text']);
    const s = decodeBytes(reg, text('hello world'), ctx);
    expect([s.format, s.text, s.reason]).toEqual(['string', 'hello world', 'String (UTF-8): printable UTF-8 text']);
    expect(decodeBytes(reg, bytes(0, 0, 0, 0, 0, 0, 1, 0), ctx).json).toBe(256);
    expect(decodeBytes(reg, bytes(0, 0, 0, 7), ctx).format).toBe('int');
    expect(decodeBytes(reg, bytes(0x01, 0x02, 0x03), ctx).format).toBe('hex');
  });

  it('falls past a candidate that does not decode and says why', () => {
    const d = decodeBytes(reg, text('{not json'), ctx);
    expect(d.format).toBe('string');
    expect(d.reason).toMatch(/^String \(UTF-8\): printable UTF-8 text \(not json: JSON: /);
  });

  it('topics claimed by name: _schemas and Connect storage topics are JSON', () => {
    const d = decodeBytes(reg, text('{"magic":0,"keytype":"NOOP"}'), { topic: '_schemas', side: 'key' });
    expect([d.format, d.reason]).toEqual(['json', "JSON: _schemas is Schema Registry's storage topic: JSON keys"]);
    expect(decodeBytes(reg, text('["c",{"f":1}]'), { topic: 'docker-connect-offsets', side: 'key' }).reason).toContain('Kafka Connect storage topic');
  });

  it('null is a tombstone; a value above the cap is not decoded ("too large")', () => {
    expect(decodeBytes(reg, null, ctx).jsonText).toBe('null');
    const big = new Uint8Array(50 * 1024 * 1024).fill(0x61);
    const d = decodeBytes(reg, big, ctx);
    expect([d.ok, d.error, d.errorCode]).toEqual([false, 'too large', 'too-large']);
    expect(decodeBytes(reg, big, ctx, 'string').error).toBe('too large');
    expect(decodeBytes(reg, text('abc'), { ...ctx, maxBytes: 2 }, 'string').error).toBe('too large');
  });

  it('an unknown format name is an error; choices default to auto', () => {
    expect(() => decodeBytes(reg, text('x'), ctx, 'nope')).toThrow(FormatError);
    expect(choiceFor({ orders: { value: 'json' } }, 'orders', 'value')).toBe('json');
    expect(choiceFor({ orders: { value: 'json' } }, 'orders', 'key')).toBe(AUTO);
    expect(reg.names()).toContain('msgpack');
  });
});
