#!/usr/bin/python3
"""Writes NDJSON lines for `klx append --records` holding __transaction_state records, encoded with
Python's struct module straight from Kafka's TransactionLogKey / TransactionLogValue schemas (key:
int16 type 0 + int16-length string; value: int16 version, v0 classic encoding, v1 flexible with
compact lengths and a tagged-field section). Independent of the TypeScript decoders under test."""
import base64
import json
import struct
import sys


def uvarint(n):
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def classic_str(s):
    b = s.encode()
    return struct.pack('>h', len(b)) + b


def compact_str(s):
    b = s.encode()
    return uvarint(len(b) + 1) + b


def key(txn_id):
    return struct.pack('>h', 0) + classic_str(txn_id)


def value_v0(pid, epoch, timeout, status, partitions, last_update, start):
    out = struct.pack('>hqhib', 0, pid, epoch, timeout, status)
    if partitions is None:
        out += struct.pack('>i', -1)
    else:
        out += struct.pack('>i', len(partitions))
        for topic, ids in partitions:
            out += classic_str(topic) + struct.pack('>i', len(ids)) + b''.join(struct.pack('>i', i) for i in ids)
    return out + struct.pack('>qq', last_update, start)


def value_v1(pid, epoch, timeout, status, partitions, last_update, start, tags):
    out = struct.pack('>hqhib', 1, pid, epoch, timeout, status)
    if partitions is None:
        out += uvarint(0)
    else:
        out += uvarint(len(partitions) + 1)
        for topic, ids in partitions:
            out += compact_str(topic) + uvarint(len(ids) + 1) + b''.join(struct.pack('>i', i) for i in ids) + uvarint(0)
    out += struct.pack('>qq', last_update, start)
    out += uvarint(len(tags))
    for tag, data in sorted(tags):
        out += uvarint(tag) + uvarint(len(data)) + data
    return out


def line(k, v, ts):
    o = {'keyBase64': base64.b64encode(k).decode(), 'timestamp': ts}
    o['valueBase64' if v is not None else 'value'] = base64.b64encode(v).decode() if v is not None else None
    return json.dumps(o)


T = 1700000000000
lines = [
    # payments-1: Ongoing (v0) -> PrepareCommit (v1, tagged ClientTransactionVersion 2 and NextProducerEpoch 1,
    # tag 3 of Kafka 4.1+) -> CompleteCommit (v1, tagged PreviousProducerId)
    line(key('payments-1'), value_v0(4001, 0, 60000, 1, [('orders', [0, 2]), ('audit', [1])], T + 10, T + 5), T + 10),
    line(key('payments-1'), value_v1(4001, 0, 60000, 2, [('orders', [0, 2]), ('audit', [1])], T + 20, T + 5, [(2, struct.pack('>h', 2)), (3, struct.pack('>h', 1))]), T + 20),
    line(key('payments-1'), value_v1(4001, 1, 60000, 4, [], T + 30, T + 5, [(0, struct.pack('>q', 4000)), (2, struct.pack('>h', 2))]), T + 30),
    # reports-7: Empty with null partitions, a producer id beyond 2^53 and a tagged field 9 that no
    # Kafka version defines, then its tombstone
    line(key('reports-7'), value_v1(2**60 + 1, 3, 900000, 0, None, T + 40, -1, [(9, b'\x01\x02')]), T + 40),
    line(key('reports-7'), None, T + 50),
]
sys.stdout.write('\n'.join(lines) + '\n')
