/**
 * Issue 13, finding 12: `klx append --producer-id/--producer-epoch/--sequence/--transactional`,
 * `--commit|--abort` control batches, `--leader-epoch`, and `klx roll` writing the producer snapshot
 * (`ProducerStateManager.takeSnapshot`). What lands on disk is decoded by kafkajs' own RecordBatch
 * decoder and CRC-32C (no code shared with ours); `.txnindex` and `.snapshot` bytes are laid out
 * here by hand from the format description, with CRC-32C computed by kafkajs.
 */
import { readFileSync, readdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { PartitionLog } from '../../src-main/engine/log/partition-log.ts';
import { verifyPartition } from '../../src-main/engine/log/verify.ts';
import { fetch } from '../../src-main/engine/log/fetch.ts';
import { tempDir } from '../support/log-builder.ts';
import { klx } from '../support/klx-cli.ts';

const require = createRequire(import.meta.url);
const Decoder = require('kafkajs/src/protocol/decoder') as new (b: Buffer) => unknown;
const decodeRecordBatch = require('kafkajs/src/protocol/recordBatch/v0/decoder') as (d: unknown) => Promise<{
  firstOffset: string;
  partitionLeaderEpoch: number;
  producerId: string;
  producerEpoch: number;
  firstSequence: number;
  inTransaction: boolean;
  isControlBatch: boolean;
  records: { offset: string; key: Buffer | null; value: Buffer | null; timestamp: string }[];
}>;
const crc32c = require('kafkajs/src/protocol/recordBatch/crc32C') as (b: Buffer) => number;

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});


/** Splits a `.log` by the length field and decodes each batch with kafkajs; checks each CRC-32C independently. */
async function batches(log: string) {
  const buf = readFileSync(log);
  const out = [];
  for (let p = 0; p < buf.length; ) {
    const size = 12 + buf.readInt32BE(p + 8);
    const b = buf.subarray(p, p + size);
    expect(b.readUInt32BE(17)).toBe(crc32c(b.subarray(21)) >>> 0);
    out.push({ ...(await decodeRecordBatch(new Decoder(b))), attributes: b.readInt16BE(21) });
    p += size;
  }
  return out;
}

/** One `.txnindex` entry: version int16 0, producerId, firstOffset, lastOffset, lastStableOffset (int64 each). */
function txnEntry(pid: bigint, first: bigint, last: bigint, lso: bigint): Buffer {
  const b = Buffer.alloc(34);
  b.writeInt16BE(0, 0);
  b.writeBigInt64BE(pid, 2);
  b.writeBigInt64BE(first, 10);
  b.writeBigInt64BE(last, 18);
  b.writeBigInt64BE(lso, 26);
  return b;
}

describe('klx append: producer fields, transaction markers, leader epoch; klx roll: producer snapshot', () => {
  const ld = tempDir('klx-cli-txn-');
  dirs.push(ld);
  const dir = join(ld, 'payments-0');
  const seg0 = join(dir, '00000000000000000000.log');

  it('a transactional batch, then COMMIT: the bytes a broker writes, read_committed sees the data', async () => {
    expect(klx('create', dir).status).toBe(0);
    const recs = join(ld, 'recs.ndjson');
    require('node:fs').writeFileSync(recs, '{"key":"a","value":"1"}\n{"key":"b","value":"2"}\n');
    const r = klx('append', dir, '--records', recs, '--producer-id', '7', '--producer-epoch', '3', '--transactional', '--timestamp', '1700000000000');
    expect(r.stderr).toBe('');
    expect(r.stdout.split('\n')[2]).toBe('  producer: id 7, epoch 3, sequences 0..1, transactional (transaction open since offset 0)');
    // The next data batch of the same producer gets the next sequence by default.
    const r2 = klx('append', dir, '--key', 'c', '--value', '3', '--producer-id', '7', '--transactional', '--timestamp', '1700000000001');
    expect(r2.stdout.split('\n')[2]).toBe('  producer: id 7, epoch 3, sequences 2..2, transactional (transaction open since offset 0)');
    const c = klx('append', dir, '--commit', '--producer-id', '7', '--producer-epoch', '3', '--coordinator-epoch', '4', '--timestamp', '1700000000002');
    expect(c.stderr).toBe('');
    expect(c.stdout).toBe(
      'appended COMMIT marker at offset 3 to payments-0 for producer 7 epoch 3 (coordinator epoch 4): segment 00000000000000000000.log, position 149, 78 bytes\n' +
        '  ends the transaction of offsets 0..3\n' +
        '  log end offset: 4\n',
    );
    const b = await batches(seg0);
    expect(b.map((x) => [x.firstOffset, x.producerId, x.producerEpoch, x.firstSequence, x.inTransaction, x.isControlBatch, x.attributes])).toEqual([
      ['0', '7', 3, 0, true, false, 0x10],
      ['2', '7', 3, 2, true, false, 0x10],
      ['3', '7', 3, -1, true, true, 0x30],
    ]);
    // Sizes: 61-byte header + two 9-byte records = 79, + one = 70, marker 61 + 17 = 78, so it starts at 149.
    // Control record: key (version 0, type COMMIT = 1), value (version 0, coordinatorEpoch 4).
    expect(b[2]!.records[0]!.key!.toString('hex')).toBe('00000001');
    expect(b[2]!.records[0]!.value!.toString('hex')).toBe('000000000004');
    expect(b[2]!.records[0]!.timestamp).toBe('1700000000002');
    const log = PartitionLog.open(dir);
    const f = await fetch(log, { offset: 0n, isolation: 'read_committed' });
    expect([f.lastStableOffset, f.records.map((r) => r.offset), f.nextOffset]).toEqual([4n, [0n, 1n, 2n], 4n]);
  });

  it('refusals carry Kafka\'s messages: out-of-order sequence, older epoch, non-transactional write in an open transaction, duplicate, zombie coordinator', () => {
    const oo = klx('append', dir, '--key', 'x', '--value', 'y', '--producer-id', '7', '--sequence', '9', '--transactional');
    expect(oo.status).toBe(1);
    expect(oo.stderr).toBe('klx: invalid-record: Out of order sequence number for producer 7 at offset 4 in partition payments-0: 9 (incoming seq. number), 2 (current end sequence number) (a broker answers OutOfOrderSequenceException)\n');
    const old = klx('append', dir, '--key', 'x', '--value', 'y', '--producer-id', '7', '--producer-epoch', '2');
    expect(old.stderr).toBe('klx: invalid-record: Epoch of producer 7 at offset 4 in payments-0 is 2, which is smaller than the last seen epoch 3 (a broker answers InvalidProducerEpochException)\n');
    const dup = klx('append', dir, '--key', 'c', '--value', '3', '--producer-id', '7', '--sequence', '2', '--transactional');
    expect(dup.stderr).toBe('klx: invalid-record: duplicate of the batch at offsets 2..2 (producer 7, epoch 3, sequences 2..2): a broker acknowledges it with those offsets and appends nothing\n');
    expect(klx('append', dir, '--key', 'd', '--value', '4', '--producer-id', '7', '--transactional', '--timestamp', '1700000000003').status).toBe(0);
    const nonTxn = klx('append', dir, '--key', 'e', '--value', '5', '--producer-id', '7');
    expect(nonTxn.stderr).toBe('klx: invalid-record: Expected transactional write from producer 7 at offset 5 in partition payments-0: its transaction started at offset 4 is still open (a broker answers InvalidTxnStateException; end it with --commit or --abort)\n');
    const zombie = klx('append', dir, '--abort', '--producer-id', '7', '--producer-epoch', '3', '--coordinator-epoch', '1');
    expect(zombie.stderr).toBe('klx: invalid-record: Invalid coordinator epoch for producerId 7 at offset 5 in partition payments-0: 1 (zombie), 4 (current) (a broker answers TransactionCoordinatorFencedException)\n');
    expect(klx('append', dir, '--abort', '--producer-id', '7').stderr).toBe('klx: invalid-argument: --commit/--abort need --producer-id and --producer-epoch\n');
  });

  it('ABORT of a non-empty transaction writes its .txnindex entry (LSO = first offset of the other open transaction); an empty one writes none', async () => {
    // Producer 9 opens a transaction at offset 5 while producer 7's (from offset 4) is open.
    expect(klx('append', dir, '--key', 'p9', '--value', 'x', '--producer-id', '9', '--transactional', '--timestamp', '1700000000004').status).toBe(0);
    const a = klx('append', dir, '--abort', '--producer-id', '7', '--producer-epoch', '3', '--coordinator-epoch', '4', '--timestamp', '1700000000005');
    expect(a.stdout.split('\n')[1]).toBe('  ends the transaction of offsets 4..6; add .txnindex entry (producer 7, first 4, last 6, last stable offset 5)');
    const empty = klx('append', dir, '--abort', '--producer-id', '11', '--producer-epoch', '0', '--timestamp', '1700000000006');
    expect(empty.stdout.split('\n')[1]).toBe('  the producer has no open transaction: an empty transaction (no .txnindex entry, as a broker writes none)');
    expect(readFileSync(join(dir, '00000000000000000000.txnindex')).equals(txnEntry(7n, 4n, 6n, 5n))).toBe(true);
    const b = await batches(seg0);
    expect(b.at(-2)!.records[0]!.key!.toString('hex')).toBe('00000000'); // ABORT = 0
    // A full verification agrees with the .txnindex and finds nothing wrong.
    const report = await verifyPartition(PartitionLog.open(dir));
    expect(report.findings.filter((f) => f.severity !== 'info')).toEqual([]);
  });

  it('--leader-epoch stamps the batch and starts a leader-epoch-checkpoint entry; a lower epoch is refused', async () => {
    const r = klx('append', dir, '--key', 'k', '--value', 'v', '--leader-epoch', '5', '--timestamp', '1700000000007');
    expect(r.stdout).toContain('  leader-epoch-checkpoint: add epoch 5 at offset 8\n');
    expect(readFileSync(join(dir, 'leader-epoch-checkpoint'), 'utf8')).toBe('0\n2\n0 0\n5 8\n');
    expect((await batches(seg0)).at(-1)!.partitionLeaderEpoch).toBe(5);
    // Later appends keep epoch 5.
    expect(klx('append', dir, '--key', 'k', '--value', 'w', '--timestamp', '1700000000008', '--json').stdout).toContain('"partitionLeaderEpoch":5');
    expect(klx('append', dir, '--key', 'k', '--value', 'v', '--leader-epoch', '4').stderr).toBe(
      "klx: invalid-argument: leader epoch 4 is below the partition's current leader epoch 5: a leader stamps its own epoch, and epochs only grow (leader-epoch-checkpoint)\n",
    );
  });

  it('klx roll writes the producer snapshot at the new base offset with every producer, as takeSnapshot does', () => {
    const r = klx('roll', dir);
    expect(r.stdout.split('\n')[2]).toBe('  wrote producer snapshot 00000000000000000010.snapshot (3 producers)');
    // Producer 7: epoch 3, last data batch 4..4 (seq 3), last timestamp = the ABORT's 1700000000005, coordinator epoch 4, no open txn.
    // Producer 9: epoch 0, batch 5..5 (seq 0), txn open since 5, coordinator epoch −1.
    // Producer 11: only an ABORT marker: epoch 0, lastSequence −1, lastOffset −1, offsetDelta 0, coordinator epoch 0.
    const entry = (pid: bigint, epoch: number, lastSeq: number, lastOffset: bigint, delta: number, ts: bigint, coord: number, txnFirst: bigint) => {
      const b = Buffer.alloc(46);
      b.writeBigInt64BE(pid, 0);
      b.writeInt16BE(epoch, 8);
      b.writeInt32BE(lastSeq, 10);
      b.writeBigInt64BE(lastOffset, 14);
      b.writeInt32BE(delta, 22);
      b.writeBigInt64BE(ts, 26);
      b.writeInt32BE(coord, 34);
      b.writeBigInt64BE(txnFirst, 38);
      return b;
    };
    const count = Buffer.alloc(4);
    count.writeInt32BE(3);
    const body = Buffer.concat([
      count,
      entry(7n, 3, 3, 4n, 0, 1700000000005n, 4, -1n),
      entry(9n, 0, 0, 5n, 0, 1700000000004n, -1, 5n),
      entry(11n, 0, -1, -1n, 0, 1700000000006n, 0, -1n),
    ]);
    const head = Buffer.alloc(6);
    head.writeInt16BE(1, 0);
    head.writeUInt32BE(crc32c(body) >>> 0, 2);
    expect(readFileSync(join(dir, '00000000000000000010.snapshot')).toString('hex')).toBe(Buffer.concat([head, body]).toString('hex'));
    expect(readdirSync(dir).filter((n) => n.endsWith('.snapshot'))).toEqual(['00000000000000000010.snapshot']);
    // A writer opened later loads the state from that snapshot: producer 9's transaction is still open.
    const nonTxn = klx('append', dir, '--key', 'z', '--value', 'z', '--producer-id', '9');
    expect(nonTxn.stderr).toContain('Expected transactional write from producer 9 at offset 10 in partition payments-0: its transaction started at offset 5 is still open');
  });
});

describe('--json errors (issue 13 finding 10)', () => {
  it('an error is one JSON object on stdout besides the exit code and the stderr line', () => {
    const ld = tempDir('klx-cli-jsonerr-');
    dirs.push(ld);
    const missing = join(ld, 'nothing-0');
    const r = klx('append', missing, '--key', 'k', '--value', 'v', '--json');
    expect(r.status).toBe(1);
    expect(JSON.parse(r.stdout)).toEqual({ type: 'error', code: 'not-found', message: `${missing}: no such partition folder`, file: missing });
    expect(r.stderr).toBe(`klx: not-found: ${missing}: no such partition folder\n`);
    const usage = klx('append', missing, '--json', '--compression', 'brotli');
    expect(usage.status).toBe(2);
    expect(JSON.parse(usage.stdout)).toMatchObject({ type: 'error', code: 'invalid-argument' });
    expect(JSON.parse(usage.stdout).message).toContain('--compression must be one of none, gzip, snappy, lz4, zstd, got "brotli"');
  });
});
