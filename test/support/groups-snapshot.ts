/**
 * The whole state {@link loadGroups} loaded, as one canonical JSON text: every group in the store's
 * order with every field (committed offsets with their record's place, classic/KIP-848/share/streams
 * state, pending transactional producers, problems), the store's problems and counts, the offsets
 * topic layout and the bytes read. Two loads are the same when their texts are equal; used to check
 * that the fast replay path gives what the record-by-record path gives.
 */
import { toJsonText } from '../../src-main/engine/decode/json-text.ts';
import type { LoadedGroups } from '../../src-main/engine/groups/groups-load.ts';
import type { CommittedOffset, GroupRecordProblem } from '../../src-main/engine/groups/group-replay.ts';

/** A committed offset's fields (getters of the packed form read), in a fixed order. */
function offsetFields(o: CommittedOffset): Record<string, unknown> {
  return { topic: o.topic, partition: o.partition, offset: o.offset, leaderEpoch: o.leaderEpoch, metadata: o.metadata, commitTimestamp: o.commitTimestamp, expireTimestamp: o.expireTimestamp, valueVersion: o.valueVersion, transactional: o.transactional, place: { ...o.place } };
}

/** Maps and sets as arrays of entries (in their iteration order), recursively. */
function plain(v: unknown): unknown {
  if (v instanceof Map) return [...v].map(([k, x]) => [k, plain(x)]);
  if (v instanceof Set) return [...v].map(plain);
  if (Array.isArray(v)) return v.map(plain);
  if (v instanceof Uint8Array) return v;
  if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, plain(x)]));
  return v;
}

/** Problems with their reasons, or (`reasons: false`) with their places only. */
function problemsOf(list: readonly GroupRecordProblem[], reasons: boolean): unknown {
  return plain(reasons ? list : list.map((p) => ({ ...p, reason: '' })));
}

/**
 * The canonical text of a load (see the module comment).
 * @param opts.reasons keep the problems' reasons (default true); false compares their places only.
 */
export function groupsSnapshot(loaded: LoadedGroups, opts: { reasons?: boolean } = {}): string {
  const reasons = opts.reasons ?? true;
  const groups = [...loaded.store.groups].map(([id, g]) => [
    id,
    {
      groupId: g.groupId,
      type: g.type,
      offsetsPartitions: [...g.offsetsPartitions],
      classic: plain(g.classic),
      modern: plain(g.modern),
      streams: plain(g.streams),
      offsets: [...g.offsets].map(([k, o]) => [k, offsetFields(o)]),
      pendingTransactionalProducers: [...g.pendingTransactionalProducers],
      problems: problemsOf(g.problems, reasons),
    },
  ]);
  return toJsonText({
    groups,
    problems: problemsOf(loaded.store.problems, reasons),
    counts: loaded.store.counts,
    offsetsTopic: loaded.offsetsTopic,
    offsetsLogs: [...loaded.offsetsLogs.keys()],
    partitions: [...loaded.partitions.keys()],
    replicasIgnored: loaded.replicasIgnored,
    bytesRead: loaded.bytesRead,
  });
}
