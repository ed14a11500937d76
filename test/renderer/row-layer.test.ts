/**
 * The records table's cell texts (issue 16): a plain-ASCII text that fits its mono cell needs no CSS
 * clip (a clip costs a paint layer and a clip node per cell and frame); any other text keeps its
 * clip and ellipsis, a Value cut to the characters put in the DOM with a decoding failure's reason.
 */
import { describe, expect, it } from 'vitest';
import { clipCell, fitCell } from '../../src-renderer/src/views/records/row-layer.ts';

const VALUE = '{"id":"o-1","amount":12.5,"qty":3,"big":9223372036854775807}';

describe('fitCell', () => {
  it('keeps a plain ASCII text that fits whole, without a clip (up to exactly as many characters as the cell)', () => {
    expect(fitCell('user-4268', 9)).toEqual({ text: 'user-4268', clip: false });
    expect(fitCell('1900..1999 @97527', 40)).toEqual({ text: '1900..1999 @97527', clip: false });
    expect(fitCell(VALUE, VALUE.length, 20)).toEqual({ text: VALUE, clip: false });
    expect(fitCell('', 0)).toEqual({ text: '', clip: false });
  });

  it('clips a text one character too long, whole, or cut to the limit (a Value: more than the cell shows)', () => {
    expect(fitCell('user-4268', 8)).toEqual({ text: 'user-4268', clip: true });
    expect(fitCell(VALUE, VALUE.length - 1)).toEqual({ text: VALUE, clip: true });
    expect(fitCell(VALUE, 40, 48)).toEqual({ text: '{"id":"o-1","amount":12.5,"qty":3,"big":92233720', clip: true });
  });

  it('clips text other than printable ASCII even when it is short (wide, accented, control characters)', () => {
    expect(fitCell('café', 10)).toEqual({ text: 'café', clip: true });
    expect(fitCell('注文-1007', 20)).toEqual({ text: '注文-1007', clip: true });
    expect(fitCell('a\tb', 10)).toEqual({ text: 'a\tb', clip: true });
    // A decoding failure: the bytes cut to the limit, the reason after ⚠ kept whole.
    expect(fitCell('0a0b0c0d0e0f ⚠ not valid JSON', 6, 8)).toEqual({ text: '0a0b0c0d ⚠ not valid JSON', clip: true });
  });
});

describe('clipCell', () => {
  it('cuts to n characters and keeps a ⚠ reason that starts beyond them', () => {
    expect(clipCell('abcdef', 6)).toBe('abcdef');
    expect(clipCell('abcdefgh', 4)).toBe('abcd');
    expect(clipCell('abcdefgh ⚠ bad', 4)).toBe('abcd ⚠ bad');
    expect(clipCell('ab ⚠ bad', 4)).toBe('ab ⚠');
  });
});
