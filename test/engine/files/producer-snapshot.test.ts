import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { crc32c } from '../../../src-main/engine/format/crc.ts';
import { encodeProducerSnapshot, parseProducerSnapshot, readProducerSnapshot, writeProducerSnapshot, type ProducerSnapshotEntry } from '../../../src-main/engine/files/producer-snapshot.ts';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'klx-snap-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const entry: ProducerSnapshotEntry = {
  producerId: 9007199254740993n,
  producerEpoch: 3,
  lastSequence: 41,
  lastOffset: 1234567890123n,
  offsetDelta: 4,
  timestamp: 1700000000000n,
  coordinatorEpoch: -1,
  currentTxnFirstOffset: -1n,
};

describe('producer snapshot (spec §9.4)', () => {
  it('CRC-32C check value', () => {
    expect(crc32c(Buffer.from('123456789'))).toBe(0xe3069283);
  });

  it('reads the empty snapshot brokers write (10 bytes: version 1, CRC of the zero count)', () => {
    const s = parseProducerSnapshot(Buffer.from('000148674bc700000000', 'hex'));
    expect(s).toEqual({ offset: -1n, version: 1, crc: 0x48674bc7, computedCrc: 0x48674bc7, crcValid: true, entries: [], fileSize: 10, trailingBytes: 0 });
  });

  it('lays out one 46-byte entry field by field', () => {
    const buf = encodeProducerSnapshot([entry]);
    expect(buf).toHaveLength(56);
    const hex = buf.toString('hex');
    expect(hex.slice(0, 4)).toBe('0001');
    expect(buf.readUInt32BE(2)).toBe(crc32c(buf.subarray(6)));
    expect(hex.slice(12)).toBe(
      [
        '00000001', // count
        '0020000000000001', // producerId 2^53 + 1
        '0003', // epoch
        '00000029', // lastSequence 41
        '0000011f71fb04cb', // lastOffset
        '00000004', // offsetDelta
        '0000018bcfe56800', // timestamp TS
        'ffffffff', // coordinatorEpoch -1
        'ffffffffffffffff', // currentTxnFirstOffset -1
      ].join(''),
    );
    expect(parseProducerSnapshot(buf).entries).toEqual([entry]);
  });

  it('reports a CRC mismatch, or throws it on request with the CRC position', () => {
    const buf = encodeProducerSnapshot([entry, { ...entry, producerId: 5n }]);
    buf[20] ^= 0xff;
    const s = parseProducerSnapshot(buf);
    expect(s.crcValid).toBe(false);
    expect(s.entries).toHaveLength(2);
    expect(() => parseProducerSnapshot(buf, { requireValidCrc: true, file: 'x.snapshot' })).toThrow(expect.objectContaining({ code: 'corrupt-checkpoint', file: 'x.snapshot', position: 2 }));
  });

  it('throws corrupt-checkpoint for an unknown version, a short file or a count that does not fit', () => {
    const bad = encodeProducerSnapshot([]);
    bad.writeInt16BE(2, 0);
    expect(() => parseProducerSnapshot(bad)).toThrow(expect.objectContaining({ code: 'corrupt-checkpoint', position: 0 }));
    expect(() => parseProducerSnapshot(Buffer.alloc(9))).toThrow(expect.objectContaining({ code: 'corrupt-checkpoint', position: 0 }));
    const over = encodeProducerSnapshot([entry]);
    over.writeInt32BE(2, 6);
    expect(() => parseProducerSnapshot(over)).toThrow(expect.objectContaining({ code: 'corrupt-checkpoint', position: 6 }));
  });

  it('round-trips through a file named after its offset', () => {
    const p = join(dir, '00000000000000000046.snapshot');
    writeProducerSnapshot(p, [entry]);
    const s = readProducerSnapshot(p);
    expect(s.offset).toBe(46n);
    expect(s.crcValid).toBe(true);
    expect(s.entries).toEqual([entry]);
    writeFileSync(p, Buffer.concat([encodeProducerSnapshot([]), Buffer.from([1, 2])]));
    expect(readProducerSnapshot(p)).toMatchObject({ crcValid: false, trailingBytes: 2 });
  });
});
