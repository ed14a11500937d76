import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { assertKafkaSane } from '../../../src-main/engine/files/index-file.ts';
import { collectAbortedTxns, encodeTxnIndex, parseTxnIndex, readTxnIndex, writeTxnIndex, type AbortedTxn } from '../../../src-main/engine/files/txn-index.ts';

const VECTOR = '0000' + '00000000000003e8' + '0000000000000014' + '0000000000000019' + '0000000000000014';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'klx-txn-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const txn = (producerId: bigint, firstOffset: bigint, lastOffset: bigint, lastStableOffset: bigint): AbortedTxn => ({ version: 0, producerId, firstOffset, lastOffset, lastStableOffset });

describe('transaction index entry layout (spec §15.10)', () => {
  it('pid 1000, first 20, last 25, LSO 20 is the 34-byte vector', () => {
    const buf = encodeTxnIndex(0n, [{ producerId: 1000n, firstOffset: 20n, lastOffset: 25n, lastStableOffset: 20n }]);
    expect(buf).toHaveLength(34);
    expect(buf.toString('hex')).toBe(VECTOR);
    const idx = parseTxnIndex(Buffer.from(VECTOR, 'hex'), 0n);
    expect(idx).toEqual({ baseOffset: 0n, entries: [txn(1000n, 20n, 25n, 20n)], fileSize: 34, trailingBytes: 0, problems: [] });
  });
});

describe('reading a transaction index', () => {
  it('ignores and reports a trailing partial entry, as Kafka does', () => {
    const buf = Buffer.concat([Buffer.from(VECTOR, 'hex'), Buffer.from(VECTOR, 'hex').subarray(0, 33)]);
    const idx = parseTxnIndex(buf, 0n, { file: 'a.txnindex' });
    expect(idx.entries).toHaveLength(1);
    expect(idx.trailingBytes).toBe(33);
    expect(idx.problems).toEqual([{ kind: 'partial-entry', file: 'a.txnindex', position: 34, reason: '33 trailing bytes do not make a whole 34-byte entry (ignored)', kafkaCorrupt: false }]);
    expect(() => assertKafkaSane(idx)).not.toThrow();
  });

  it('an entry whose last offset is below the segment base offset is corrupt (Kafka sanityCheck)', () => {
    const buf = Buffer.concat([encodeTxnIndex(0n, [{ producerId: 7n, firstOffset: 1n, lastOffset: 5n, lastStableOffset: 6n }]), encodeTxnIndex(0n, [{ producerId: 8n, firstOffset: 9n, lastOffset: 12n, lastStableOffset: 13n }])]);
    const idx = parseTxnIndex(buf, 10n, { file: 'b.txnindex' });
    expect(idx.entries).toHaveLength(2);
    expect(idx.problems).toEqual([
      { kind: 'txn-last-offset-below-base', file: 'b.txnindex', position: 0, reason: 'last offset 5 of aborted transaction entry 0 (producer 7) is less than the base offset 10', kafkaCorrupt: true },
    ]);
    expect(() => assertKafkaSane(idx)).toThrow(expect.objectContaining({ code: 'corrupt-index', file: 'b.txnindex', position: 0 }));
  });

  it('stops at an entry with an unknown version', () => {
    const buf = Buffer.concat([Buffer.from(VECTOR, 'hex'), Buffer.from(VECTOR, 'hex')]);
    buf[34] = 1;
    const idx = parseTxnIndex(buf, 0n);
    expect(idx.entries).toHaveLength(1);
    expect(idx.problems).toEqual([expect.objectContaining({ kind: 'unsupported-version', position: 34, kafkaCorrupt: true })]);
  });

  it('reports last offsets that do not increase', () => {
    const buf = Buffer.concat([encodeTxnIndex(0n, [{ producerId: 1n, firstOffset: 0n, lastOffset: 9n, lastStableOffset: 10n }]), encodeTxnIndex(0n, [{ producerId: 2n, firstOffset: 0n, lastOffset: 9n, lastStableOffset: 10n }])]);
    expect(parseTxnIndex(buf, 0n).problems).toEqual([expect.objectContaining({ kind: 'out-of-order', position: 34, kafkaCorrupt: false })]);
  });

  it('reads a file, with the base offset from its name', () => {
    const p = join(dir, '00000000000000000020.txnindex');
    writeFileSync(p, Buffer.from(VECTOR, 'hex'));
    const idx = readTxnIndex(p);
    expect(idx.baseOffset).toBe(20n);
    expect(idx.problems).toEqual([]);
  });
});

describe('collectAbortedTxns (Kafka TransactionIndex.collectAbortedTxns)', () => {
  const entries = [txn(1n, 0n, 10n, 11n), txn(2n, 5n, 20n, 21n), txn(3n, 30n, 40n, 41n)];
  it('keeps transactions overlapping [fetch, upper) and completes at an LSO >= upper', () => {
    expect(collectAbortedTxns(entries, 11n, 25n)).toEqual({ abortedTransactions: [entries[1]], isComplete: true }); // entry 3's LSO 41 >= 25
    expect(collectAbortedTxns(entries, 0n, 21n)).toEqual({ abortedTransactions: [entries[0], entries[1]], isComplete: true });
    expect(collectAbortedTxns(entries, 0n, 5n)).toEqual({ abortedTransactions: [entries[0]], isComplete: true });
    expect(collectAbortedTxns(entries, 41n, 100n)).toEqual({ abortedTransactions: [], isComplete: false });
  });
});

describe('writing a transaction index', () => {
  it('round-trips entries with int64 values beyond 2^53', () => {
    const p = join(dir, '00000000000000000000.txnindex');
    const list = [txn(9007199254740993n, 1n, 2n, 3n), txn(-1n, 4n, 9223372036854775807n, 9223372036854775807n)];
    writeTxnIndex(p, 0n, list);
    expect(statSync(p).size).toBe(68);
    expect(readTxnIndex(p).entries).toEqual(list);
  });
  it('refuses non-increasing last offsets, offsets below the base and other versions', () => {
    expect(() => encodeTxnIndex(0n, [txn(1n, 0n, 5n, 6n), txn(2n, 0n, 5n, 6n)])).toThrow(expect.objectContaining({ code: 'invalid-argument' }));
    expect(() => encodeTxnIndex(10n, [txn(1n, 0n, 5n, 6n)])).toThrow(expect.objectContaining({ code: 'invalid-argument' }));
    expect(() => encodeTxnIndex(0n, [{ ...txn(1n, 0n, 5n, 6n), version: 1 }])).toThrow(expect.objectContaining({ code: 'invalid-argument' }));
  });
});
