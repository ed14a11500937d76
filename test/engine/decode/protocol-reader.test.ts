import { describe, expect, it } from 'vitest';
import { DecodeError } from '../../../src-main/engine/decode/decode-error.ts';
import { ProtocolReader, uuidText } from '../../../src-main/engine/decode/protocol-reader.ts';
import { parseJsonExact, toJsonText } from '../../../src-main/engine/decode/json-text.ts';

const hex = (s: string) => Uint8Array.from(Buffer.from(s.replace(/\s+/g, ''), 'hex'));

describe('ProtocolReader', () => {
  it('reads fixed-width fields big-endian, int64 exact', () => {
    const r = new ProtocolReader(hex('0001 fffffffe 7fffffffffffffff 01'));
    expect(r.int16('a')).toBe(1);
    expect(r.int32('b')).toBe(-2);
    expect(r.int64('c')).toBe(9223372036854775807n);
    expect(r.bool('d')).toBe(true);
    r.end('x');
  });

  it('reads varints as Kafka ByteUtils does (zig-zag)', () => {
    // 300 unsigned = ac 02; zig-zag -1 = 01, 1 = 02; varlong -2^63 = ff..ff 01 (10 bytes)
    const r = new ProtocolReader(hex('ac02 01 02 ffffffffffffffffff01'));
    expect(r.uvarint('u')).toBe(300);
    expect(r.varint('v')).toBe(-1);
    expect(r.varint('w')).toBe(1);
    expect(r.varlong('l')).toBe(-9223372036854775808n);
  });

  it('reads classic and compact strings, null only where allowed', () => {
    const r = new ProtocolReader(hex('0002 6869 ffff 03 6f6b 00'));
    expect(r.string('s', false)).toBe('hi');
    expect(r.string('n', false, true)).toBeNull();
    expect(r.string('c', true)).toBe('ok');
    expect(() => r.string('c2', true)).toThrow(/null where a string is required/);
  });

  it('names the field and position when bytes run out', () => {
    const r = new ProtocolReader(hex('0005 6869'));
    try {
      r.string('group', false);
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(DecodeError);
      expect((e as DecodeError).position).toBe(2);
      expect((e as DecodeError).message).toBe('byte 2: group: needs 5 bytes, 2 left');
    }
  });

  it('refuses an array count that cannot fit in the bytes left', () => {
    const r = new ProtocolReader(hex('7fffffff 00'));
    expect(() => r.array('members', false, (x) => x.int8('m'))).toThrow('byte 0: members: array of 2147483647 entries cannot fit in the 1 bytes left');
  });

  it('reads tagged fields, keeping unknown ones raw', () => {
    // 2 tagged fields: tag 0 size 2 = 0x0007, tag 5 size 1 = 0x2a
    const r = new ProtocolReader(hex('02 00 02 0007 05 01 2a'));
    let t0 = -1;
    const unknown = r.taggedFields('v', (tag, sub) => {
      if (tag !== 0) return false;
      t0 = sub.int16('t0');
      return true;
    });
    expect(t0).toBe(7);
    expect(unknown).toHaveLength(1);
    expect(unknown[0]!.tag).toBe(5);
    expect([...unknown[0]!.data]).toEqual([0x2a]);
  });

  it('prints a Uuid as Kafka Uuid.toString does (base64url, no padding)', () => {
    // Kafka's METADATA_TOPIC_ID is Uuid(0, 1): 15 zero bytes then 01 -> "AAAAAAAAAAAAAAAAAAAAAQ"
    expect(uuidText(hex('00000000000000000000000000000001'))).toBe('AAAAAAAAAAAAAAAAAAAAAQ');
    expect(uuidText(hex('fbffffffffffffffffffffffffffffff'))).toBe('-____________________w');
  });
});

describe('toJsonText / parseJsonExact', () => {
  it('keeps int64 beyond 2^53 exact both ways', () => {
    const text = toJsonText({ offset: 9223372036854775807n, small: 5n, s: 'x"1', b: new Uint8Array([1, 2]) });
    expect(text).toBe('{"offset":9223372036854775807,"small":5,"s":"x\\"1","b":"AQI="}');
    expect(parseJsonExact(text)).toEqual({ offset: 9223372036854775807n, small: 5, s: 'x"1', b: 'AQI=' });
  });

  it('writes a Node Buffer (a record key/value read from a segment) as base64 too, not as its toJSON {type, data}', () => {
    expect(toJsonText({ b: Buffer.from([1, 2]), list: [Buffer.from('hi')] })).toBe('{"b":"AQI=","list":["aGk="]}');
  });

  it('finds a bigint or bytes however deep they sit, and writes values without them as JSON.stringify does', () => {
    expect(toJsonText({ a: [{ b: [1, { c: 1n << 60n }] }], s: 'x' })).toBe('{"a":[{"b":[1,{"c":1152921504606846976}]}],"s":"x"}');
    expect(toJsonText([[[new Uint8Array([255])]]])).toBe('[[["/w=="]]]');
    expect(toJsonText({ d: new Date(0), u: undefined, n: null, f: 1.5 }, 2)).toBe('{\n  "d": "1970-01-01T00:00:00.000Z",\n  "n": null,\n  "f": 1.5\n}');
    expect(toJsonText('order-7')).toBe('"order-7"');
  });
});
