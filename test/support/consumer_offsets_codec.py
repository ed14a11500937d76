#!/usr/bin/python3
"""Independent encoder/decoder of __consumer_offsets keys and values, written from Kafka's message
schemas (group-coordinator/src/main/resources/common/message/*.json, clients'
ConsumerProtocolSubscription/Assignment.json; the streams group records of Apache Kafka 4.1.0) for the tests: it shares no code with the TypeScript
decoder under test.

Usage:
  consumer_offsets_codec.py decode < lines      each line: {"key": b64|null, "value": b64|null}
                                                -> one JSON line per input: {"key": {...}, "value": {...}|null}
                                                   or {"error": "..."}
  consumer_offsets_codec.py encode < lines      each line: {"type": N, "key": {...}, "version": V, "value": {...}|null}
                                                -> {"keyBase64": ..., "valueBase64": ...|null}
JSON out: int64 as numbers (Python ints, exact), bytes as base64, uuids as Kafka's base64url text.
"""
import base64
import json
import struct
import sys


# ----------------------------------------------------------------------------- decoding
class Buf:
    def __init__(self, b):
        self.b = b
        self.p = 0

    def take(self, n):
        if n < 0 or self.p + n > len(self.b):
            raise ValueError('short read at %d (need %d)' % (self.p, n))
        v = self.b[self.p:self.p + n]
        self.p += n
        return v

    def i8(self):
        return struct.unpack('>b', self.take(1))[0]

    def i16(self):
        return struct.unpack('>h', self.take(2))[0]

    def i32(self):
        return struct.unpack('>i', self.take(4))[0]

    def i64(self):
        return struct.unpack('>q', self.take(8))[0]

    def uvar(self):
        shift = 0
        out = 0
        while True:
            c = self.take(1)[0]
            out |= (c & 0x7F) << shift
            if not c & 0x80:
                return out
            shift += 7

    def s(self, compact=False, nullable=False):
        n = self.uvar() - 1 if compact else self.i16()
        if n < 0:
            if not nullable:
                raise ValueError('null string')
            return None
        return self.take(n).decode('utf-8')

    def by(self, compact=False):
        n = self.uvar() - 1 if compact else self.i32()
        if n < 0:
            return None
        return base64.b64encode(self.take(n)).decode()

    def arr(self, f, compact=False):
        n = self.uvar() - 1 if compact else self.i32()
        if n < 0:
            return None
        return [f() for _ in range(n)]

    def uuid(self):
        return base64.urlsafe_b64encode(self.take(16)).decode().rstrip('=')

    def tags(self):
        n = self.uvar()
        out = {}
        for _ in range(n):
            t = self.uvar()
            size = self.uvar()
            out[t] = self.take(size)
        return out

    def done(self):
        if self.p != len(self.b):
            raise ValueError('%d bytes left over' % (len(self.b) - self.p))


def dec_key(b):
    r = Buf(b)
    t = r.i16()
    if t in (0, 1):
        d = {'group': r.s(), 'topic': r.s(), 'partition': r.i32()}
    elif t == 2:
        d = {'group': r.s()}
    elif t in (3, 4, 6, 9, 11, 12, 15):
        d = {'GroupId': r.s()}
    elif t in (5, 7, 8, 10, 13, 14):
        d = {'GroupId': r.s(), 'MemberId': r.s()}
    elif t == 16:
        d = {'GroupId': r.s(), 'RegularExpression': r.s()}
    else:
        raise ValueError('unknown key type %d' % t)
    r.done()
    return {'type': t, 'data': d}


def dec_sub(b):
    r = Buf(base64.b64decode(b))
    v = r.i16()
    d = {'topics': r.arr(r.s), 'userData': r.by()}
    if v >= 1:
        d['ownedPartitions'] = r.arr(lambda: {'topic': r.s(), 'partitions': r.arr(r.i32)})
    if v >= 2:
        d['generationId'] = r.i32()
    if v >= 3:
        d['rackId'] = r.s(nullable=True)
    r.done()
    return d


def dec_asg(b):
    r = Buf(base64.b64decode(b))
    r.i16()
    d = {'assignedPartitions': r.arr(lambda: {'topic': r.s(), 'partitions': r.arr(r.i32)}), 'userData': r.by()}
    r.done()
    return d


def dec_value(t, b):
    r = Buf(b)
    v = r.i16()
    if t in (0, 1):
        if not 0 <= v <= 4:
            raise ValueError('offset commit value version %d' % v)
        fx = v >= 4
        d = {'offset': r.i64()}
        if v >= 3:
            d['leaderEpoch'] = r.i32()
        d['metadata'] = r.s(fx)
        d['commitTimestamp'] = r.i64()
        if v == 1:
            d['expireTimestamp'] = r.i64()
        if fx:
            r.tags()
    elif t == 2:
        if not 0 <= v <= 4:
            raise ValueError('group metadata value version %d' % v)
        fx = v >= 4
        d = {'protocolType': r.s(fx), 'generation': r.i32(), 'protocol': r.s(fx, True), 'leader': r.s(fx, True)}
        if v >= 2:
            d['currentStateTimestamp'] = r.i64()

        def member():
            m = {'memberId': r.s(fx)}
            if v >= 3:
                m['groupInstanceId'] = r.s(fx, True)
            m['clientId'] = r.s(fx)
            m['clientHost'] = r.s(fx)
            if v >= 1:
                m['rebalanceTimeout'] = r.i32()
            m['sessionTimeout'] = r.i32()
            m['subscription'] = r.by(fx)
            m['assignment'] = r.by(fx)
            if fx:
                r.tags()
            if d['protocolType'] == 'consumer':
                for f, fn in (('subscription', dec_sub), ('assignment', dec_asg)):
                    try:
                        m[f] = fn(m[f])
                    except Exception:
                        pass
            return m
        d['members'] = r.arr(member, fx)
        if fx:
            r.tags()
    else:
        raise ValueError('value of type %d not handled by this test codec' % t)
    r.done()
    return {'version': v, 'data': d}


# ----------------------------------------------------------------------------- encoding
class Out:
    def __init__(self):
        self.b = bytearray()

    def i8(self, v):
        self.b += struct.pack('>b', v)

    def i16(self, v):
        self.b += struct.pack('>h', v)

    def i32(self, v):
        self.b += struct.pack('>i', v)

    def i64(self, v):
        self.b += struct.pack('>q', v)

    def uvar(self, v):
        while v >= 0x80:
            self.b.append((v & 0x7F) | 0x80)
            v >>= 7
        self.b.append(v)

    def s(self, v, compact=False):
        if v is None:
            if compact:
                self.uvar(0)
            else:
                self.i16(-1)
            return
        e = v.encode('utf-8')
        if compact:
            self.uvar(len(e) + 1)
        else:
            self.i16(len(e))
        self.b += e

    def by(self, v, compact=False):
        if v is None:
            if compact:
                self.uvar(0)
            else:
                self.i32(-1)
            return
        raw = base64.b64decode(v)
        if compact:
            self.uvar(len(raw) + 1)
        else:
            self.i32(len(raw))
        self.b += raw

    def arr(self, items, f, compact=False):
        if compact:
            self.uvar(len(items) + 1)
        else:
            self.i32(len(items))
        for it in items:
            f(it)

    def uuid(self, text):
        raw = base64.urlsafe_b64decode(text + '==')
        assert len(raw) == 16
        self.b += raw

    def notags(self):
        self.uvar(0)


def enc_key(t, d):
    o = Out()
    o.i16(t)
    if t in (0, 1):
        o.s(d['group'])
        o.s(d['topic'])
        o.i32(d['partition'])
    elif t == 2:
        o.s(d['group'])
    else:
        o.s(d['GroupId'])
        if 'MemberId' in d:
            o.s(d['MemberId'])
        if 'RegularExpression' in d:
            o.s(d['RegularExpression'])
    return bytes(o.b)


def enc_sub(d, v=1):
    o = Out()
    o.i16(v)
    o.arr(d['topics'], o.s)
    o.by(d.get('userData'))
    if v >= 1:
        o.arr(d.get('ownedPartitions', []), lambda tp: (o.s(tp['topic']), o.arr(tp['partitions'], o.i32)))
    if v >= 2:
        o.i32(d.get('generationId', -1))
    if v >= 3:
        o.s(d.get('rackId'))
    return base64.b64encode(bytes(o.b)).decode()


def enc_asg(d, v=1):
    o = Out()
    o.i16(v)
    o.arr(d['assignedPartitions'], lambda tp: (o.s(tp['topic']), o.arr(tp['partitions'], o.i32)))
    o.by(d.get('userData'))
    return base64.b64encode(bytes(o.b)).decode()


def enc_topic_ids(o, items):
    def one(tp):
        o.uuid(tp['TopicId'])
        o.arr(tp['Partitions'], o.i32, True)
        o.notags()
    o.arr(items, one, True)


def enc_value(t, v, d):
    o = Out()
    o.i16(v)
    if t in (0, 1):
        fx = v >= 4
        o.i64(d['offset'])
        if v >= 3:
            o.i32(d.get('leaderEpoch', -1))
        o.s(d.get('metadata', ''), fx)
        o.i64(d['commitTimestamp'])
        if v == 1:
            o.i64(d.get('expireTimestamp', -1))
        if fx:
            o.notags()
    elif t == 2:
        fx = v >= 4
        o.s(d['protocolType'], fx)
        o.i32(d['generation'])
        o.s(d.get('protocol'), fx)
        o.s(d.get('leader'), fx)
        if v >= 2:
            o.i64(d.get('currentStateTimestamp', -1))

        def member(m):
            o.s(m['memberId'], fx)
            if v >= 3:
                o.s(m.get('groupInstanceId'), fx)
            o.s(m['clientId'], fx)
            o.s(m['clientHost'], fx)
            if v >= 1:
                o.i32(m.get('rebalanceTimeout', -1))
            o.i32(m['sessionTimeout'])
            sub = m['subscription']
            asg = m['assignment']
            o.by(enc_sub(sub) if isinstance(sub, dict) else sub, fx)
            o.by(enc_asg(asg) if isinstance(asg, dict) else asg, fx)
            if fx:
                o.notags()
        o.arr(d['members'], member, fx)
        if fx:
            o.notags()
    elif t == 3:
        o.i32(d['Epoch'])
        o.notags()
    elif t == 11:
        # ShareGroupMetadataValue as of Kafka 4.1 (KIP-1101): MetadataHash is a plain int64 field
        o.i32(d['Epoch'])
        o.i64(d['MetadataHash'])
        o.notags()
    elif t in (6, 12):
        o.i32(d['AssignmentEpoch'])
        o.notags()
    elif t == 5:
        o.s(d.get('InstanceId'), True)
        o.s(d.get('RackId'), True)
        o.s(d['ClientId'], True)
        o.s(d['ClientHost'], True)
        o.arr(d['SubscribedTopicNames'], lambda x: o.s(x, True), True)
        o.s(d.get('SubscribedTopicRegex'), True)
        o.i32(d.get('RebalanceTimeoutMs', -1))
        o.s(d.get('ServerAssignor'), True)
        o.notags()
    elif t in (7, 13):
        enc_topic_ids(o, d['TopicPartitions'])
        o.notags()
    elif t in (8, 14):
        o.i32(d['MemberEpoch'])
        o.i32(d['PreviousMemberEpoch'])
        o.i8(d['State'])
        enc_topic_ids(o, d['AssignedPartitions'])
        if t == 8:
            enc_topic_ids(o, d['PartitionsPendingRevocation'])
        o.notags()
    elif t == 10:
        o.s(d.get('RackId'), True)
        o.s(d['ClientId'], True)
        o.s(d['ClientHost'], True)
        o.arr(d['SubscribedTopicNames'], lambda x: o.s(x, True), True)
        o.notags()
    # Streams groups (KIP-1071), from Apache Kafka 4.1.0's StreamsGroup*Value.json (all v0, flexible:
    # compact strings and arrays, a tagged-field section after every struct).
    elif t == 17:
        o.i32(d['Epoch'])
        o.i64(d['MetadataHash'])
        o.notags()
    elif t == 19:
        o.s(d.get('InstanceId'), True)
        o.s(d.get('RackId'), True)
        o.s(d['ClientId'], True)
        o.s(d['ClientHost'], True)
        o.i32(d.get('RebalanceTimeoutMs', -1))
        o.i32(d['TopologyEpoch'])
        o.s(d['ProcessId'], True)
        ep = d.get('UserEndpoint')
        if ep is None:
            o.i8(-1)
        else:
            o.i8(1)
            o.s(ep['Host'], True)
            o.b += struct.pack('>H', ep['Port'])
            o.notags()

        def tag(kv):
            o.s(kv['Key'], True)
            o.s(kv['Value'], True)
            o.notags()
        o.arr(d.get('ClientTags', []), tag, True)
        o.notags()
    elif t == 20:
        o.i32(d['AssignmentEpoch'])
        o.notags()
    elif t in (21, 22):
        def tasks(items):
            def one(ti):
                o.s(ti['SubtopologyId'], True)
                o.arr(ti['Partitions'], o.i32, True)
                o.notags()
            o.arr(items, one, True)
        if t == 22:
            o.i32(d['MemberEpoch'])
            o.i32(d['PreviousMemberEpoch'])
            o.i8(d['State'])
        names = ['ActiveTasks', 'StandbyTasks', 'WarmupTasks']
        if t == 22:
            names += ['ActiveTasksPendingRevocation', 'StandbyTasksPendingRevocation', 'WarmupTasksPendingRevocation']
        for n in names:
            tasks(d.get(n, []))
        o.notags()
    elif t == 23:
        o.i32(d['Epoch'])

        def topic_info(ti):
            o.s(ti['Name'], True)
            o.i32(ti['Partitions'])
            o.i16(ti['ReplicationFactor'])

            def cfg(c):
                o.s(c['key'], True)
                o.s(c['value'], True)
                o.notags()
            o.arr(ti.get('TopicConfigs', []), cfg, True)
            o.notags()

        def sub(st):
            o.s(st['SubtopologyId'], True)
            o.arr(st.get('SourceTopics', []), lambda x: o.s(x, True), True)
            o.arr(st.get('SourceTopicRegex', []), lambda x: o.s(x, True), True)
            o.arr(st.get('StateChangelogTopics', []), topic_info, True)
            o.arr(st.get('RepartitionSinkTopics', []), lambda x: o.s(x, True), True)
            o.arr(st.get('RepartitionSourceTopics', []), topic_info, True)

            def cg(g):
                for n in ('SourceTopics', 'SourceTopicRegex', 'RepartitionSourceTopics'):
                    o.arr(g.get(n, []), o.i16, True)
                o.notags()
            o.arr(st.get('CopartitionGroups', []), cg, True)
            o.notags()
        o.arr(d['Subtopologies'], sub, True)
        o.notags()
    else:
        raise ValueError('encoding type %d not supported' % t)
    return bytes(o.b)


def main():
    mode = sys.argv[1]
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        req = json.loads(line)
        if mode == 'decode':
            try:
                k = dec_key(base64.b64decode(req['key']))
                val = None if req['value'] is None else dec_value(k['type'], base64.b64decode(req['value']))
                out = {'key': k, 'value': val}
            except Exception as e:  # noqa: BLE001
                out = {'error': str(e)}
        else:
            kb = enc_key(req['type'], req['key'])
            vb = None if req.get('value') is None else enc_value(req['type'], req['version'], req['value'])
            out = {'keyBase64': base64.b64encode(kb).decode(), 'valueBase64': None if vb is None else base64.b64encode(vb).decode()}
        sys.stdout.write(json.dumps(out) + '\n')


if __name__ == '__main__':
    main()
