/**
 * The Groups view's state: the consumer groups of the folder holding the selected partition
 * (`groups.list`), the selected group's offsets and members (`groups.describe`), the selected
 * partition row's commit history (`groups.history`), and the controls that change the answers:
 * `now` (offset expiry: the group coordinator's clock, OffsetMetadataManager.cleanupExpiredOffsets) and the
 * consumers' isolation level (record lag up to the high watermark or the last stable offset: FetchIsolation). Every call runs as a job (status bar, Cancel); failures
 * become notices.
 */
import { defineStore } from 'pinia';
import { computed, ref, shallowRef } from 'vue';
import type { JobMethodName, JobResult, Req } from '../../../../src-shared/contract.ts';
import type { GroupOffsetRow } from '../../../../src-shared/groups-types.ts';
import { useExplorer } from '../../stores/explorer.ts';
import { useJobs } from '../../stores/jobs.ts';
import { useRecords } from '../records/records-store.ts';

export const useGroups = defineStore('groups', () => {
  const explorer = useExplorer();
  const jobs = useJobs();

  /** The opened folder holding the selected partition. */
  const root = computed(() => {
    const dir = explorer.partition?.dir;
    if (!dir) return null;
    return explorer.roots.find((r) => r.logDirs.some((d) => d.partitions.some((p) => p.dir === dir) || d.pending.some((p) => p.dir === dir)))?.root ?? null;
  });
  /** Whether that folder holds any `__consumer_offsets` partition. */
  const hasOffsetsTopic = computed(() => explorer.roots.some((r) => r.root === root.value && r.logDirs.some((d) => [...d.partitions, ...d.pending].some((p) => p.topic === '__consumer_offsets'))));

  /** "now" for expiry, ms since the epoch as text; empty = the clock. */
  const now = ref('');
  const isolation = ref<'read_uncommitted' | 'read_committed'>('read_uncommitted');

  const list = shallowRef<JobResult<'groups.list'> | null>(null);
  const listRoot = ref<string | null>(null);
  const selected = ref<string | null>(null);
  const detail = shallowRef<JobResult<'groups.describe'> | null>(null);
  const row = shallowRef<GroupOffsetRow | null>(null);
  const history = shallowRef<JobResult<'groups.history'> | null>(null);
  const listKey = computed(() => `groups-list:${root.value}`);

  /** Runs a job filed under the folder (see sql-store: `dir` is not sent). */
  function runJob<M extends JobMethodName>(method: M, request: Req<M> & { path: string }, label: string, key: string): Promise<JobResult<M>> {
    Object.defineProperty(request, 'dir', { value: request.path, enumerable: false });
    return jobs.run(method, request as unknown as Req<M> & { dir: string }, label, key);
  }

  const options = () => ({ isolation: isolation.value, ...(now.value.trim() ? { now: now.value.trim() } : {}) });

  /** Loads (or reloads) the group list, then the selected group. */
  async function load(): Promise<void> {
    const path = root.value;
    if (!path) return;
    try {
      const r = await runJob('groups.list', { path, ...options() }, `Loading consumer groups of ${path.split(/[\\/]/).pop()}`, listKey.value);
      list.value = r;
      listRoot.value = path;
      if (selected.value && !r.groups.some((g) => g.group === selected.value)) selected.value = null;
      if (!selected.value && r.groups.length > 0) selected.value = [...r.groups].sort((a, b) => (BigInt(b.totalLag) > BigInt(a.totalLag) ? 1 : -1))[0]!.group;
      if (selected.value) await select(selected.value);
    } catch (err) {
      explorer.report(err, `Loading consumer groups of ${path}`);
    }
  }

  /** Selects a group and loads its offsets and members. */
  async function select(group: string): Promise<void> {
    const path = root.value;
    if (!path) return;
    selected.value = group;
    try {
      const r = await runJob('groups.describe', { path, group, ...options() }, `Describing group ${group}`, `groups-describe:${path}`);
      if (selected.value !== group) return;
      detail.value = r;
      const keep = row.value && r.offsets.find((o) => o.topic === row.value!.topic && o.partition === row.value!.partition);
      row.value = keep ?? r.offsets.find((o) => o.committedOffset !== null) ?? null;
      if (row.value) await loadHistory(row.value);
      else history.value = null;
    } catch (err) {
      explorer.report(err, `Describing group ${group}`);
    }
  }

  /** Selects an offsets row and loads its commit history. */
  async function loadHistory(r: GroupOffsetRow): Promise<void> {
    const path = root.value;
    if (!path) return;
    row.value = r;
    try {
      const h = await runJob('groups.history', { path, group: r.group, topic: r.topic, partition: r.partition, maxPoints: 2000 }, `Commit history of ${r.group} on ${r.topic}-${r.partition}`, `groups-history:${path}`);
      if (row.value === r) history.value = h;
    } catch (err) {
      explorer.report(err, `Reading the commit history of ${r.group}`);
    }
  }

  /** Shows the partition's records at the row's committed offset (or where the consumer restarts). */
  async function showRecords(r: GroupOffsetRow): Promise<void> {
    if (!r.dir) return;
    await explorer.select(r.dir);
    explorer.view = 'records';
    const records = useRecords();
    const target: 'start' | 'end' | bigint =
      r.diagnosis === 'below-log-start' ? 'start' : r.diagnosis === 'beyond-log-end' || r.committedOffset === null ? 'end' : BigInt(r.committedOffset);
    const wait = async () => {
      for (let i = 0; i < 100 && records.dir !== r.dir; i++) await new Promise((res) => setTimeout(res, 20));
    };
    await wait();
    await records.jump(target);
  }

  return { root, hasOffsetsTopic, now, isolation, list, listRoot, selected, detail, row, history, listKey, load, select, loadHistory, showRecords };
});
