import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { KlxError } from '../../../src-main/engine/errors.ts';
import {
  formatMetaProperties,
  formatOffsetCheckpoint,
  formatPartitionMetadata,
  offsetCheckpointMap,
  parseCleanShutdown,
  parseJavaProperties,
  parseLeaderEpochCheckpoint,
  parseMetaProperties,
  parseOffsetCheckpoint,
  parsePartitionMetadata,
  quoteLineBytes,
  readCleanShutdown,
  readLeaderEpochCheckpoint,
  readMetaProperties,
  readOffsetCheckpoint,
  readPartitionMetadata,
  uuidFromBytes,
  uuidToBytes,
  writeCleanShutdown,
  writeLeaderEpochCheckpoint,
  writeMetaProperties,
  writeOffsetCheckpoint,
  writePartitionMetadata,
} from '../../../src-main/engine/files/checkpoint.ts';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'klx-ckpt-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const b = (s: string): Buffer => Buffer.from(s, 'utf8');

/** Runs `f`, expecting a KlxError; returns it. */
function caught(f: () => unknown): KlxError {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(KlxError);
    return e as KlxError;
  }
  throw new Error('expected a KlxError');
}

describe('offset checkpoint files (spec §11.1)', () => {
  it('parses the spec example', () => {
    expect(parseOffsetCheckpoint(b('0\n3\norders 0 1523\norders 1 977\n__consumer_offsets 12 40\n'))).toEqual([
      { topic: 'orders', partition: 0, offset: 1523n },
      { topic: 'orders', partition: 1, offset: 977n },
      { topic: '__consumer_offsets', partition: 12, offset: 40n },
    ]);
  });

  it('an empty file, a version-only file and a zero count mean no entries', () => {
    expect(parseOffsetCheckpoint(b(''))).toEqual([]);
    expect(parseOffsetCheckpoint(b('0\n'))).toEqual([]);
    expect(parseOffsetCheckpoint(b('0\n0\n'))).toEqual([]);
    expect(parseOffsetCheckpoint(b('0'))).toEqual([]);
  });

  it('splits on any whitespace run, accepts CRLF and a missing final newline, keeps int64 offsets exact', () => {
    expect(parseOffsetCheckpoint(b('0\r\n2\r\na.b-c\t3   9223372036854775807\r\nx 0 -1'))).toEqual([
      { topic: 'a.b-c', partition: 3, offset: 9223372036854775807n },
      { topic: 'x', partition: 0, offset: -1n },
    ]);
  });

  it('version other than 0 is corrupt at position 0', () => {
    const e = caught(() => parseOffsetCheckpoint(b('1\n0\n'), 'replication-offset-checkpoint'));
    expect(e).toMatchObject({ code: 'corrupt-checkpoint', file: 'replication-offset-checkpoint', position: 0 });
    expect(e.message).toBe('replication-offset-checkpoint: position 0: unrecognised checkpoint version 1, expected 0');
  });

  it('a line " 0 5" is topic "" partition 0 offset 5, as Kafka reads it (OffsetCheckpointFile.Formatter: "\\s+" split keeps the leading empty field, 3 fields); in leader-epoch-checkpoint it is 3 fields, malformed', () => {
    expect(parseOffsetCheckpoint(b('0\n2\n 0 5\norders 1 7\n'))).toEqual([
      { topic: '', partition: 0, offset: 5n },
      { topic: 'orders', partition: 1, offset: 7n },
    ]);
    expect(caught(() => parseLeaderEpochCheckpoint(b('0\n1\n 0 5\n')))).toMatchObject({ code: 'corrupt-checkpoint', position: 4, details: { kind: 'malformed' } });
    // Written back as it was read, so that updating another partition's line keeps it (Kafka reads " 0 5" back the same).
    expect(formatOffsetCheckpoint([{ topic: '', partition: 0, offset: 5n }])).toBe('0\n1\n 0 5\n');
  });

  it('a malformed line is corrupt at that line\'s byte position', () => {
    // "0\n2\norders 0 5\n" is 15 bytes: the bad line starts at 15.
    // Three fields but Integer.parseInt("x") throws: a NumberFormatException in Kafka (details.kind number-format).
    expect(caught(() => parseOffsetCheckpoint(b('0\n2\norders 0 5\norders x 6\n'), 'f'))).toMatchObject({ code: 'corrupt-checkpoint', file: 'f', position: 15, reason: "malformed line 'orders x 6' (a number that does not parse)", details: { kind: 'number-format' } });
    expect(caught(() => parseOffsetCheckpoint(b('0\n1\norders 0\n')))).toMatchObject({ position: 4, details: { kind: 'malformed' } });
    expect(caught(() => parseLeaderEpochCheckpoint(b('0\n1\n0 x\n')))).toMatchObject({ position: 4, details: { kind: 'number-format' } });
    expect(caught(() => parseLeaderEpochCheckpoint(b('0\n1\n0 1 2\n')))).toMatchObject({ position: 4, details: { kind: 'malformed' } });
    expect(caught(() => parseOffsetCheckpoint(b('0\n1\norders 0 5 7\n')))).toMatchObject({ position: 4 });
    expect(caught(() => parseOffsetCheckpoint(b('0\n1\n orders 0 5\n')))).toMatchObject({ position: 4 }); // Java split keeps a leading empty field
    expect(caught(() => parseOffsetCheckpoint(b('0\n1\norders 0 9223372036854775808\n')))).toMatchObject({ position: 4 });
    expect(caught(() => parseOffsetCheckpoint(b('0\n1\norders 2147483648 1\n')))).toMatchObject({ position: 4 });
    expect(caught(() => parseOffsetCheckpoint(b('0\n2\na 0 1\n\nb 0 2\n')))).toMatchObject({ position: 10, reason: "malformed line ''" });
    // multi-byte UTF-8 before the bad line: positions are bytes, not characters
    expect(caught(() => parseOffsetCheckpoint(b('0\n2\nträd 0 1\nbad\n')))).toMatchObject({ position: 14 }); // 13 characters, 14 bytes
  });

  it('garbage bytes are quoted escaped, never printed raw: NUL as \\u0000, a byte that is not UTF-8 as \\xff', () => {
    const garbage = Buffer.concat([Buffer.from('0\n'), Buffer.from([0xff, 0x00, 0x67, 0x1b, 0x27, 0x5c]), Buffer.from('é\n')]);
    expect(caught(() => parseOffsetCheckpoint(garbage))).toMatchObject({ position: 2, reason: "malformed entry count line '\\xff\\u0000g\\u001b\\'\\\\é'" });
    expect(caught(() => parseOffsetCheckpoint(Buffer.from([0xc3, 0x28, 0x0a])))).toMatchObject({ position: 0, reason: "malformed version line '\\xc3('" });
    expect(quoteLineBytes(Buffer.from([0xe0, 0x80, 0x80, 0xc2, 0x85, 0x09]))).toBe("'\\xe0\\x80\\x80\\u0085\\t'"); // overlong form, C1 control, tab
  });

  it('a malformed version or count line, or a count mismatch, is corrupt at that line', () => {
    expect(caught(() => parseOffsetCheckpoint(b('zero\n0\n')))).toMatchObject({ position: 0 });
    expect(caught(() => parseOffsetCheckpoint(b('0\nthree\n')))).toMatchObject({ position: 2 });
    expect(caught(() => parseOffsetCheckpoint(b('0\n3\na 0 1\nb 0 2\n')))).toMatchObject({ code: 'corrupt-checkpoint', position: 2, reason: 'expected 3 entries but found 2' });
    expect(caught(() => parseOffsetCheckpoint(b('0\n1\na 0 1\nb 0 2\n')))).toMatchObject({ position: 2, reason: 'expected 1 entries but found 2' });
  });

  it('writes exactly what Kafka writes and reads it back', () => {
    const p = join(dir, 'recovery-point-offset-checkpoint');
    const entries = [
      { topic: 'orders', partition: 0, offset: 1523n },
      { topic: '__consumer_offsets', partition: 12, offset: 9007199254740993n },
    ];
    writeOffsetCheckpoint(p, entries);
    expect(readFileSync(p, 'utf8')).toBe('0\n2\norders 0 1523\n__consumer_offsets 12 9007199254740993\n');
    expect(existsSync(`${p}.tmp`)).toBe(false);
    expect(readOffsetCheckpoint(p)).toEqual(entries);
    expect(offsetCheckpointMap(entries).get('__consumer_offsets-12')).toBe(9007199254740993n);
    writeOffsetCheckpoint(p, []);
    expect(readFileSync(p, 'utf8')).toBe('0\n0\n');
  });

  it('a crash before the rename keeps the previous checkpoint whole', () => {
    const p = join(dir, 'cleaner-offset-checkpoint');
    writeOffsetCheckpoint(p, [{ topic: 't', partition: 0, offset: 1n }]);
    expect(() => writeOffsetCheckpoint(p, [{ topic: 't', partition: 0, offset: 2n }], { fault: (s) => { if (s === 'rename') throw new Error('power cut'); } })).toThrow('power cut');
    expect(readOffsetCheckpoint(p)).toEqual([{ topic: 't', partition: 0, offset: 1n }]);
    expect(readFileSync(`${p}.tmp`, 'utf8')).toBe('0\n1\nt 0 2\n');
  });

  it('refuses entries it cannot write back readably', () => {
    expect(() => formatOffsetCheckpoint([{ topic: 'a b', partition: 0, offset: 0n }])).toThrow(expect.objectContaining({ code: 'invalid-argument' }));
    expect(() => formatOffsetCheckpoint([{ topic: 'a', partition: 1.5, offset: 0n }])).toThrow(expect.objectContaining({ code: 'invalid-argument' }));
    expect(() => formatOffsetCheckpoint([{ topic: 'a', partition: 0, offset: 2n ** 63n }])).toThrow(expect.objectContaining({ code: 'invalid-argument' }));
  });

  it('a missing file is not-found', () => {
    expect(caught(() => readOffsetCheckpoint(join(dir, 'nope')))).toMatchObject({ code: 'not-found' });
  });
});

describe('leader-epoch-checkpoint (spec §11.4)', () => {
  it('parses and writes epoch/startOffset pairs', () => {
    expect(parseLeaderEpochCheckpoint(b('0\n3\n0 0\n2 358\n5 1021\n'))).toEqual([
      { epoch: 0, startOffset: 0n },
      { epoch: 2, startOffset: 358n },
      { epoch: 5, startOffset: 1021n },
    ]);
    const p = join(dir, 'leader-epoch-checkpoint');
    writeLeaderEpochCheckpoint(p, [{ epoch: 1, startOffset: 0n }, { epoch: 4, startOffset: 14667n }]);
    expect(readFileSync(p, 'utf8')).toBe('0\n2\n1 0\n4 14667\n');
    expect(readLeaderEpochCheckpoint(p)).toEqual([{ epoch: 1, startOffset: 0n }, { epoch: 4, startOffset: 14667n }]);
    expect(parseLeaderEpochCheckpoint(b(''))).toEqual([]);
  });
  it('needs exactly two numeric fields', () => {
    expect(caught(() => parseLeaderEpochCheckpoint(b('0\n1\norders 0 5\n')))).toMatchObject({ code: 'corrupt-checkpoint', position: 4 });
    expect(caught(() => parseLeaderEpochCheckpoint(b('0\n1\n1 x\n')))).toMatchObject({ position: 4 });
  });
});

describe('partition.metadata (spec §11.5)', () => {
  const text = 'version: 0\ntopic_id: 3kmNQ1cFR7ee0vxuXdx9Lw';
  it('parses and formats the two lines, with no final newline', () => {
    expect(parsePartitionMetadata(b(text))).toEqual({ version: 0, topicId: '3kmNQ1cFR7ee0vxuXdx9Lw' });
    expect(parsePartitionMetadata(b(`${text}\n`))).toEqual({ version: 0, topicId: '3kmNQ1cFR7ee0vxuXdx9Lw' });
    expect(formatPartitionMetadata('3kmNQ1cFR7ee0vxuXdx9Lw')).toBe(text);
    const p = join(dir, 'partition.metadata');
    writePartitionMetadata(p, 'AAAAAAAAAAAAAAAAAAAAAQ');
    expect(readFileSync(p, 'utf8')).toBe('version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAQ');
    expect(readPartitionMetadata(p).topicId).toBe('AAAAAAAAAAAAAAAAAAAAAQ');
  });
  it('converts topic ids to and from their 16 bytes', () => {
    const bytes = uuidToBytes('AAAAAAAAAAAAAAAAAAAAAQ')!;
    expect([...bytes]).toEqual([...Array(15).fill(0), 1]);
    expect(uuidFromBytes(bytes)).toBe('AAAAAAAAAAAAAAAAAAAAAQ');
    expect(uuidFromBytes(uuidToBytes('3kmNQ1cFR7ee0vxuXdx9Lw')!)).toBe('3kmNQ1cFR7ee0vxuXdx9Lw');
    expect(uuidToBytes('too-short')).toBeUndefined();
  });
  it('reports the line at fault', () => {
    expect(caught(() => parsePartitionMetadata(b('version: 1\ntopic_id: 3kmNQ1cFR7ee0vxuXdx9Lw'), 'pm'))).toMatchObject({ code: 'corrupt-checkpoint', file: 'pm', position: 0 });
    expect(caught(() => parsePartitionMetadata(b('version:0\ntopic_id: 3kmNQ1cFR7ee0vxuXdx9Lw')))).toMatchObject({ position: 0 });
    expect(caught(() => parsePartitionMetadata(b('version: 0\ntopic_id: not-a-uuid')))).toMatchObject({ position: 11 });
    expect(caught(() => parsePartitionMetadata(b('version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAA')))).toMatchObject({ position: 11, reason: 'invalid topic id (the zero UUID)' });
    expect(caught(() => parsePartitionMetadata(b('version: 0\n')))).toMatchObject({ position: 11 });
    expect(caught(() => parsePartitionMetadata(b('')))).toMatchObject({ position: 0 });
  });
});

describe('meta.properties (spec §11.6)', () => {
  it('reads the v0 and v1 files brokers write', () => {
    expect(parseMetaProperties(b('#\n#Sun Jan 09 14:02:46 CST 2022\ncluster.id=3d1XOGWUQq-2TaCwWvBALA\nversion=0\nbroker.id=0\n'))).toEqual({
      version: 0,
      brokerId: 0,
      clusterId: '3d1XOGWUQq-2TaCwWvBALA',
      properties: { 'cluster.id': '3d1XOGWUQq-2TaCwWvBALA', version: '0', 'broker.id': '0' },
    });
    expect(parseMetaProperties(b('#\n#Wed Jun 11 00:53:30 UTC 2025\nnode.id=1\ndirectory.id=xtV8ykyou77J3v7TiYexPA\nversion=1\ncluster.id=WnLkTHhkQaiJbwP8FClPhw\n'))).toMatchObject({
      version: 1,
      nodeId: 1,
      clusterId: 'WnLkTHhkQaiJbwP8FClPhw',
      directoryId: 'xtV8ykyou77J3v7TiYexPA',
    });
    expect(parseMetaProperties(b('broker.id=3\n'))).toMatchObject({ version: 0, brokerId: 3 }); // version defaults to 0
  });

  it('parses Java properties syntax: separators, comments, escapes, continuations', () => {
    const props = parseJavaProperties(b('! bang comment\n  # hash comment\na = 1\nb:2\nc 3\nd\\=x=4\ne=multi\\\n    line\nf=\\u0041\\tB\ng\n'));
    expect(props.map((p) => [p.key, p.value])).toEqual([
      ['a', '1'],
      ['b', '2'],
      ['c', '3'],
      ['d=x', '4'],
      ['e', 'multiline'],
      ['f', 'A\tB'],
      ['g', ''],
    ]);
    expect(props[0]!.position).toBe(32); // after the two comment lines (15 + 17 bytes)
  });

  it('validates like Kafka MetaProperties, pointing at the offending line', () => {
    expect(caught(() => parseMetaProperties(b('#\nversion=2\n'), 'meta.properties'))).toMatchObject({ code: 'corrupt-checkpoint', file: 'meta.properties', position: 2 });
    expect(caught(() => parseMetaProperties(b('version=1\nnode.id=1\n')))).toMatchObject({ reason: 'cluster.id was not found (required in version 1)', position: 0 });
    expect(caught(() => parseMetaProperties(b('version=1\ncluster.id=x\n')))).toMatchObject({ reason: 'node.id was not found (required in version 1)' });
    expect(caught(() => parseMetaProperties(b('version=0\nbroker.id=one\n')))).toMatchObject({ position: 10 });
    expect(caught(() => parseMetaProperties(b('version=0\ndirectory.id=nope\n')))).toMatchObject({ position: 10 });
    expect(caught(() => parseJavaProperties(b('a=\\u12\n')))).toMatchObject({ code: 'corrupt-checkpoint', position: 0 });
  });

  it('writes the layout Properties.store produces and reads it back', () => {
    const date = new Date(Date.UTC(2025, 5, 11, 0, 53, 30));
    expect(formatMetaProperties({ version: 1, nodeId: 1, clusterId: 'WnLkTHhkQaiJbwP8FClPhw', directoryId: 'xtV8ykyou77J3v7TiYexPA' }, date)).toBe(
      '#\n#Wed Jun 11 00:53:30 UTC 2025\nversion=1\nnode.id=1\ncluster.id=WnLkTHhkQaiJbwP8FClPhw\ndirectory.id=xtV8ykyou77J3v7TiYexPA\n',
    );
    const p = join(dir, 'meta.properties');
    writeMetaProperties(p, { version: 0, brokerId: 1001, clusterId: 'a:b=c d' }, { date });
    expect(readFileSync(p, 'utf8')).toBe('#\n#Wed Jun 11 00:53:30 UTC 2025\nversion=0\nbroker.id=1001\ncluster.id=a\\:b\\=c d\n');
    expect(readMetaProperties(p)).toMatchObject({ version: 0, brokerId: 1001, clusterId: 'a:b=c d' });
    expect(() => formatMetaProperties({ version: 1, nodeId: 1 })).toThrow(expect.objectContaining({ code: 'invalid-argument' }));
  });
});

describe('.kafka_cleanshutdown (spec §11.3)', () => {
  it('absent, empty (older brokers), JSON with an int64 epoch, and unreadable content', () => {
    expect(readCleanShutdown(dir)).toEqual({ present: false });
    writeFileSync(join(dir, '.kafka_cleanshutdown'), '');
    expect(readCleanShutdown(dir)).toEqual({ present: true, size: 0 });
    expect(parseCleanShutdown(b('{"version":0,"brokerEpoch":9007199254740993}'))).toEqual({ present: true, size: 44, version: 0, brokerEpoch: 9007199254740993n });
    expect(parseCleanShutdown(b('garbage'))).toMatchObject({ present: true, size: 7, problem: expect.stringContaining('not JSON') });
  });
  it('writes the JSON Kafka writes', () => {
    writeCleanShutdown(dir, 42n);
    expect(readFileSync(join(dir, '.kafka_cleanshutdown'), 'utf8')).toBe('{"version":0,"brokerEpoch":42}');
    expect(readCleanShutdown(dir)).toEqual({ present: true, size: 30, version: 0, brokerEpoch: 42n });
  });
});
