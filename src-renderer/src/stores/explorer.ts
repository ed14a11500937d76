/**
 * The explorer's state: the app facts, the opened folders and their log directories (from
 * `log.open`), the selected partition with its segments (`log.partition`), what the session learned
 * by jobs (record counts per segment, holes, verify findings), the current view, and the error
 * notices. Every failed call becomes a notice (file, position, way forward); nothing fails silently.
 */
import { defineStore } from 'pinia';
import { computed, ref, shallowRef } from 'vue';
import type { FolderChangedEvent, JobResult, RecentFolder, Res } from '../../../src-shared/contract.ts';
import type { LogDirSummary, PartitionRef, PartitionSummary, SegmentRow } from '../../../src-shared/log-types.ts';
import { KlxApiError } from '../../../src-shared/client.ts';
import { api, client } from '../api/client.ts';
import { toUiError, type UiError } from '../lib/errors.ts';
import { useJobs } from './jobs.ts';
import { useSettings } from './settings.ts';

/** The views of the main area (tabs of the selected partition). */
export type ViewName = 'segments' | 'records' | 'holes' | 'verify' | 'cleanup' | 'edit' | 'sql' | 'groups';

/** What the banner says about changes on disk under one opened folder (`folder.changed` events). */
export interface FolderChangeBanner {
  id: number;
  root: string;
  /** When the watcher last noticed a change, as HH:MM:SS (local time). */
  time: string;
  /** The changes in words, newest first, at most {@link MAX_BANNER_LINES}. */
  lines: string[];
  /** Changes not listed. */
  more: number;
}

/**
 * A folder of more partitions than this opens listed only (`log.open` with `lazyAbove`): the tree
 * paints their names at once, marked "checking…", and their summaries (offsets, sizes, health) fill
 * in from `log.summaries` ({@link fillPending}); the selected one gets its own from `log.partition` right after its first records.
 */
export const LAZY_ABOVE = 32;
/**
 * Partitions per `log.summaries` call while a lazily opened folder fills in: a small first call (the
 * partitions at the top of the tree come quickly), then the largest the contract takes (each call
 * re-renders the tree once).
 */
export const SUMMARY_CHUNK = 25;
export const SUMMARY_CHUNK_LATER = 100;

/**
 * How long a selection waits at most for the first records page ({@link useExplorer}'s
 * `onPartitionSelected` listeners) before it asks for the partition's summary anyway, ms.
 */
export const FIRST_VIEW_WAIT_MS = 1500;

/** How many change lines one banner lists. */
export const MAX_BANNER_LINES = 6;

/** HH:MM:SS of an ISO time, in local time. */
export function clockTime(iso: string): string {
  const d = new Date(iso);
  const p = (n: number) => String(n).padStart(2, '0');
  return `${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

let bannerSeq = 0;

/** An opened folder and what `log.open` found in it. */
export interface OpenedRoot {
  root: string;
  logDirs: LogDirSummary[];
  /** Set when the folder is opened in the session but is not a Kafka log. */
  error: UiError | null;
}

export const useExplorer = defineStore('explorer', () => {
  const info = ref<Res<'app.info'> | null>(null);
  const answered = ref(false);
  const opened = ref<string[]>([]);
  const recent = ref<string[]>([]);
  /** The recent folders with whether each can be opened now (greyed with the reason when not). */
  const recentFolders = ref<RecentFolder[]>([]);
  /** Banners of changes on disk, one per opened folder. */
  const folderChanges = ref<FolderChangeBanner[]>([]);
  /** Partitions whose files changed on disk after their Verify ran: partition folder → HH:MM:SS. */
  const staleVerifies = shallowRef(new Map<string, string>());
  /** Replaced whole on every change (never mutated in place): a shallow ref, so that hundreds of partition summaries are not made deeply reactive. */
  const roots = shallowRef<OpenedRoot[]>([]);
  const opening = ref(false);
  const errors = ref<UiError[]>([]);
  const view = ref<ViewName>('records');
  /** The Lessons view replaces the partition views while open. */
  const lessonsOpen = ref(false);

  const selectedDir = ref<string | null>(null);
  /**
   * The selected partition's summary: the tree's (from `log.open` / `log.summaries`) at once when it
   * has one, then `log.partition`'s. Null while a partition the tree lists as "checking…" is selected
   * and its summary has not arrived: the views then show what they know without it ({@link selectedRef}).
   */
  const partition = shallowRef<PartitionSummary | null>(null);
  const segments = shallowRef<SegmentRow[]>([]);
  /**
   * The partition folder whose {@link segments} are loaded (`log.partition` answered for it), or null:
   * until it equals {@link selectedDir} the segment pane says "checking…" (an empty list would say
   * the partition has no segment).
   */
  const segmentsOf = ref<string | null>(null);
  const partitionLoading = ref(false);
  /**
   * Why the selected partition's summary could not be read (`log.partition` failed) while the tree
   * has none for it: the header and the views say so instead of "checking…" forever; null otherwise.
   */
  const partitionError = ref<{ dir: string; error: UiError } | null>(null);
  /** Results of jobs, by partition folder. */
  const counts = shallowRef(new Map<string, JobResult<'log.countRecords'>>());
  const holes = shallowRef(new Map<string, JobResult<'log.holes'>>());
  const verifies = shallowRef(new Map<string, JobResult<'log.verify'>>());

  const partitions = computed(() => roots.value.flatMap((r) => r.logDirs.flatMap((d) => d.partitions)));
  /** Every partition of the opened folders, summarized or still pending (listed by a lazy `log.open`, not read yet). */
  const partitionRefs = computed<PartitionRef[]>(() => roots.value.flatMap((r) => r.logDirs.flatMap((d) => [...d.partitions, ...d.pending])));
  /** How many partitions of the opened folders are still being read (the tree marks them "checking…"). */
  const pendingCount = computed(() => roots.value.reduce((n, r) => n + r.logDirs.reduce((m, d) => m + d.pending.length, 0), 0));
  /**
   * The selected partition as the tree names it (folder, topic, partition number, kind), known the
   * moment it is selected, summarized or still "checking…"; null when nothing is selected.
   */
  const selectedRef = computed<PartitionRef | null>(() => {
    const dir = selectedDir.value;
    if (dir === null) return null;
    const p = partition.value;
    if (p && p.dir === dir) return { dir: p.dir, name: p.name, topic: p.topic, partition: p.partition, kind: p.kind };
    return partitionRefs.value.find((x) => x.dir === dir) ?? null;
  });
  /** Whether the selected partition's segment rows are still being read (see {@link segmentsOf}). */
  const segmentsChecking = computed(() => selectedDir.value !== null && segmentsOf.value !== selectedDir.value);

  /** Shows an error notice (deduplicated by code + message). */
  function report(err: unknown, context: string): void {
    if (err instanceof KlxApiError && err.code === 'cancelled') return;
    const e = toUiError(err, context);
    if (errors.value.some((x) => x.code === e.code && x.message === e.message)) return;
    errors.value = [...errors.value.slice(-4), e];
  }

  function dismiss(id: number): void {
    errors.value = errors.value.filter((e) => e.id !== id);
  }

  async function refreshFolders(): Promise<void> {
    const f = await api['session.folders']({});
    opened.value = f.opened;
    recent.value = f.recent;
    recentFolders.value = f.recentFolders;
    useSettings().writeMode = f.writeMode;
  }

  /**
   * Switches "Open for writing" in the main process (`session.setWriteMode`); the switch shows what
   * main answered. Errors (a read-only window) become a notice.
   */
  async function setWriteMode(enabled: boolean): Promise<void> {
    try {
      useSettings().writeMode = (await api['session.setWriteMode']({ enabled })).enabled;
    } catch (err) {
      report(err, enabled ? 'Opening for writing' : 'Switching to read-only');
    }
  }

  /** Listeners of {@link onPartitionReloaded}. */
  const partitionReloaded: ((dir: string, topic: string) => Promise<void>)[] = [];

  /**
   * Calls `listener(dir, topic)` (awaited) each time the selected partition's files changed and its
   * summary and segments were reloaded, so that a view reloads what it shows (the records view its
   * rows). A callback, so that this store imports no view store.
   */
  function onPartitionReloaded(listener: (dir: string, topic: string) => Promise<void>): void {
    partitionReloaded.push(listener);
  }

  /** Listeners of {@link onPartitionSelected}. */
  const partitionSelected: ((dir: string, topic: string) => Promise<void>)[] = [];

  /**
   * Calls `listener(dir, topic)` when a partition is selected, before its summary and segment rows
   * are asked for (`log.partition`): the records view asks for its first page here, so that the page
   * is not queued behind the summary (which reads every segment's index files in main). The summary
   * is asked for once the listeners resolved, or after {@link FIRST_VIEW_WAIT_MS} at most.
   */
  function onPartitionSelected(listener: (dir: string, topic: string) => Promise<void>): void {
    partitionSelected.push(listener);
  }

  /**
   * Files of these partition folders changed (a `log.changed` event after a cleanup, an undo, an
   * append or a roll): reloads their summaries in the tree, drops what jobs learned about the old
   * files, and reloads the selected partition's segments and records.
   */
  async function reloadDirs(dirs: readonly string[]): Promise<void> {
    const changed = new Set(dirs);
    const drop = <T,>(m: Map<string, T>): Map<string, T> => new Map([...m].filter(([d]) => !changed.has(d)));
    counts.value = drop(counts.value);
    holes.value = drop(holes.value);
    verifies.value = drop(verifies.value);
    for (const r of roots.value) {
      if (!r.logDirs.some((d) => d.partitions.some((p) => changed.has(p.dir)))) continue;
      try {
        const again = await api['log.open']({ path: r.root });
        roots.value = roots.value.map((x) => (x.root === again.root ? { root: again.root, logDirs: again.logDirs, error: null } : x));
      } catch (err) {
        report(err, `Reloading ${r.root}`);
      }
    }
    const sel = selectedDir.value;
    if (sel && changed.has(sel)) {
      partition.value = partitions.value.find((p) => p.dir === sel) ?? partition.value;
      await refreshPartition();
      void countRecords(sel);
      if (view.value === 'holes') void findHoles(sel);
      if (partition.value) for (const listener of partitionReloaded) await listener(sel, partition.value.topic);
    }
  }

  /** The opened folder holding `dir` (a partition folder), if any. */
  function rootOf(dir: string): string | undefined {
    return roots.value.find((r) => r.root === dir || r.logDirs.some((d) => d.partitions.some((p) => p.dir === dir) || d.pending.some((p) => p.dir === dir)))?.root;
  }

  /** Lists an opened folder again (`log.open`) and replaces it in the tree. */
  async function reloadRoot(root: string): Promise<void> {
    try {
      const again = await api['log.open']({ path: root });
      roots.value = roots.value.map((x) => (x.root === root || x.root === again.root ? { root: again.root, logDirs: again.logDirs, error: null } : x));
    } catch (err) {
      report(err, `Reloading ${root}`);
    }
  }

  /**
   * After files of `dirs` changed: the selected partition, if among them, is read again (summary,
   * segments, record count, and every view through {@link onPartitionReloaded}); if it is gone, the
   * selection is cleared.
   */
  async function refreshSelectedIn(dirs: ReadonlySet<string>): Promise<void> {
    const sel = selectedDir.value;
    if (!sel || !dirs.has(sel)) return;
    const now = partitions.value.find((p) => p.dir === sel);
    if (!now) {
      cancelJobsOf((d) => d === sel);
      selectedDir.value = null;
      partition.value = null;
      segments.value = [];
      return;
    }
    partition.value = now;
    await refreshPartition();
    void countRecords(sel);
    if (view.value === 'holes') void findHoles(sel);
    if (partition.value) for (const listener of partitionReloaded) await listener(sel, partition.value.topic);
  }

  /**
   * Files under an opened folder changed on disk (`folder.changed`): the tree lists the folder
   * again (partitions created or deleted included), what jobs learned about the changed partitions
   * is dropped except Verify's results, which are marked stale, the selected partition and its views
   * reload, and the banner says what changed.
   */
  async function onFolderChanged(e: FolderChangedEvent): Promise<void> {
    if (!roots.value.some((r) => r.root === e.root)) return;
    const changed = new Set(e.dirs);
    const time = clockTime(e.at);
    const drop = <T,>(m: Map<string, T>): Map<string, T> => new Map([...m].filter(([d]) => !changed.has(d)));
    counts.value = drop(counts.value);
    holes.value = drop(holes.value);
    const stale = new Map(staleVerifies.value);
    for (const d of changed) if (verifies.value.has(d)) stale.set(d, time);
    staleVerifies.value = stale;
    const lines = e.changes.map((c) => c.text);
    const old = folderChanges.value.find((b) => b.root === e.root);
    const all = [...lines, ...(old?.lines ?? [])];
    const banner: FolderChangeBanner = {
      id: ++bannerSeq,
      root: e.root,
      time,
      lines: all.slice(0, MAX_BANNER_LINES),
      more: e.more + (old?.more ?? 0) + Math.max(0, all.length - MAX_BANNER_LINES),
    };
    folderChanges.value = [...folderChanges.value.filter((b) => b.root !== e.root), banner];
    await reloadRoot(e.root);
    await refreshSelectedIn(changed);
  }

  /** Hides a change banner. */
  function dismissChange(id: number): void {
    folderChanges.value = folderChanges.value.filter((b) => b.id !== id);
  }

  /**
   * Reads an opened folder again: main drops its caches (`session.reload`), the tree lists it
   * again, the selected partition inside it reloads with its views; its banner goes.
   */
  async function reloadFolder(root: string): Promise<void> {
    try {
      const r = await api['session.reload']({ path: root });
      folderChanges.value = folderChanges.value.filter((b) => b.root !== root);
      await reloadRoot(root);
      const sel = selectedDir.value;
      await refreshSelectedIn(new Set([...r.dirs, ...(sel && rootOf(sel) === root ? [sel] : [])]));
    } catch (err) {
      report(err, `Reloading ${root}`);
    }
  }

  /**
   * Closes an opened folder (`session.close`): it leaves the tree, a selected partition inside it is
   * unselected, its banner goes. Nothing on disk changes; it stays in the recent folders.
   */
  async function closeFolder(root: string): Promise<void> {
    try {
      const r = await api['session.close']({ path: root });
      opened.value = r.opened;
    } catch (err) {
      report(err, `Closing ${root}`);
      return;
    }
    forgetRoot(root);
    await refreshFolders().catch(() => undefined);
  }

  /** Cancels the running UI jobs (counts, holes, verifies...) of partition folders that went. */
  function cancelJobsOf(gone: (dir: string) => boolean): void {
    const jobs = useJobs();
    for (const j of jobs.jobs.values()) if (j.state === 'running' && gone(j.dir)) jobs.cancel(j.key);
  }

  /** Drops a closed folder from the tree (also when closed elsewhere: `session.closed`). */
  function forgetRoot(root: string): void {
    cancelJobsOf((d) => d === root || d.startsWith(`${root}/`) || d.startsWith(`${root}\\`));
    const sel = selectedDir.value;
    const selectedInside = sel !== null && rootOf(sel) === root;
    roots.value = roots.value.filter((r) => r.root !== root);
    folderChanges.value = folderChanges.value.filter((b) => b.root !== root);
    if (selectedInside) {
      selectedDir.value = null;
      partition.value = null;
      segments.value = [];
    }
  }

  /** Loads app facts and opens (in the tree) the folders already opened in the session (e.g. `klx serve DIR`). */
  async function init(): Promise<void> {
    try {
      info.value = await api['app.info']({});
      await refreshFolders();
    } catch (err) {
      report(err, 'Starting');
    } finally {
      answered.value = true;
    }
    const initial = [...opened.value, ...(opened.value.length === 0 && info.value?.fixedRoots.length ? info.value.fixedRoots : [])];
    for (const path of initial) await openFolder(path, { select: false });
    const first = partitions.value.find((p) => p.logSize > 0) ?? partitions.value[0];
    if (first && selectedDir.value === null) void select(first.dir);
  }

  /**
   * Opens a folder: registers it in the session and lists its log directories. A folder of more than
   * {@link LAZY_ABOVE} partitions is painted from the listing and filled in afterwards
   * ({@link fillPending}); with `select`, the first non-empty partition is selected once known.
   */
  async function openFolder(path: string, opts: { select?: boolean } = {}): Promise<void> {
    opening.value = true;
    try {
      const r = await api['log.open']({ path, lazyAbove: LAZY_ABOVE });
      const entry: OpenedRoot = { root: r.root, logDirs: r.logDirs, error: null };
      roots.value = [...roots.value.filter((x) => x.root !== r.root), entry];
      opened.value = r.opened;
      const lazy = r.logDirs.some((d) => d.pending.length > 0);
      if (lazy) void fillPending(r.root, opts.select !== false);
      else if (opts.select !== false) {
        const first = r.logDirs.flatMap((d) => d.partitions).find((p) => p.logSize > 0) ?? r.logDirs[0]?.partitions[0];
        if (first) await select(first.dir);
      }
    } catch (err) {
      report(err, `Opening ${path}`);
      // The folder may be opened in the session even when it is not a log: show it with its error.
      await refreshFolders().catch(() => undefined);
      if (opened.value.includes(path) && !roots.value.some((x) => x.root === path)) {
        roots.value = [...roots.value, { root: path, logDirs: [], error: toUiError(err, `Opening ${path}`) }];
      }
    } finally {
      opening.value = false;
      await refreshFolders().catch(() => undefined);
    }
  }

  /**
   * Puts partition summaries in the tree: each replaces the summary of its partition, or takes the
   * place of its pending entry (kept in name order, as `log.open` lists them); partitions in `gone`
   * leave the pending lists (they could not be read: removed since they were listed).
   */
  function placeSummaries(ps: readonly PartitionSummary[], gone: ReadonlySet<string> = new Set()): void {
    // A summary read without counting (log.summaries, log.partition) keeps the record count a
    // finished count job found: a tree summary landing after the count must not wipe it.
    const by = new Map(
      ps.map((p) => {
        const c = p.counts ? undefined : counts.value.get(p.dir);
        return [p.dir, c ? { ...p, counts: { records: c.records, controlRecords: c.controlRecords, batches: c.batches, emptyBatches: c.emptyBatches } } : p];
      }),
    );
    roots.value = roots.value.map((r) => ({
      ...r,
      logDirs: r.logDirs.map((d) => {
        const arrived = d.pending.filter((x) => by.has(x.dir));
        if (arrived.length === 0 && !d.partitions.some((x) => by.has(x.dir)) && !d.pending.some((x) => gone.has(x.dir))) return d;
        const replaced = d.partitions.map((x) => by.get(x.dir) ?? x);
        const partitions = arrived.length ? [...replaced, ...arrived.map((x) => by.get(x.dir)!)].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)) : replaced;
        return { ...d, partitions, pending: d.pending.filter((x) => !by.has(x.dir) && !gone.has(x.dir)) };
      }),
    }));
    const sel = selectedDir.value;
    if (sel !== null && by.has(sel)) partition.value = by.get(sel)!;
  }

  /** Replaces a partition's summary in the tree (after a job taught us more). */
  function updateSummary(p: PartitionSummary): void {
    placeSummaries([p]);
  }

  /**
   * Fills in the pending partitions of a lazily opened folder: `log.summaries` for
   * {@link SUMMARY_CHUNK}, then {@link SUMMARY_CHUNK_LATER} of them at a time, in tree order with the selected partition last (its
   * own `log.partition` brings its summary right after its first records), until
   * none is pending or the folder was closed or listed again. With `selectFirst`, selects the first
   * non-empty partition (in name order) once it is known, unless the user selected one meanwhile.
   */
  async function fillPending(root: string, selectFirst: boolean): Promise<void> {
    // One fill per folder: it may be opened twice in a row (the folder field, then the `session.opened` event).
    if (filling.has(root)) return;
    filling.add(root);
    try {
      await fillLoop(root, selectFirst);
    } finally {
      filling.delete(root);
    }
  }
  /** The folders whose pending partitions are being filled in. */
  const filling = new Set<string>();

  async function fillLoop(root: string, selectFirst: boolean): Promise<void> {
    let chosen = !selectFirst;
    for (let call = 0; ; call++) {
      const r = roots.value.find((x) => x.root === root);
      if (!r) return;
      const pending = r.logDirs.flatMap((d) => d.pending);
      if (!chosen) {
        if (selectedDir.value !== null) chosen = true;
        else {
          // The first non-empty partition in name order, once every partition before it is known.
          const all = r.logDirs.flatMap((d) => [...d.partitions.map((p) => ({ p, known: true })), ...d.pending.map((p) => ({ p, known: false }))].sort((a, b) => (a.p.name < b.p.name ? -1 : a.p.name > b.p.name ? 1 : 0)));
          const firstUnknown = all.findIndex((x) => !x.known);
          const hit = all.slice(0, firstUnknown < 0 ? all.length : firstUnknown).find((x) => (x.p as PartitionSummary).logSize > 0);
          const pick = hit ?? (firstUnknown < 0 ? all[0] : undefined);
          if (pick) {
            chosen = true;
            void select(pick.p.dir);
          }
        }
      }
      if (pending.length === 0) return;
      // The selected partition last: its summary comes from `log.partition` once its first records are
      // shown (select); summarizing it here first would hold that page back behind its index files.
      const sel = selectedDir.value;
      const order = sel !== null && pending.some((p) => p.dir === sel) ? [...pending.filter((p) => p.dir !== sel), pending.find((p) => p.dir === sel)!] : pending;
      const dirs = order.slice(0, call === 0 ? SUMMARY_CHUNK : SUMMARY_CHUNK_LATER).map((p) => p.dir);
      try {
        const res = await api['log.summaries']({ dirs });
        placeSummaries(res.partitions, new Set(res.failed.map((f) => f.dir)));
        for (const f of res.failed) report(new KlxApiError(f.error), `Reading partition ${f.dir}`);
      } catch (err) {
        report(err, `Reading the partitions of ${root}`);
        return;
      }
    }
  }

  /**
   * Selects a partition: its first records are asked for at once ({@link onPartitionSelected}), then
   * its summary and segment rows (`log.partition`), then its records are counted in the background.
   * Until the summary arrives the header and the segment pane say "checking…" (the tree's summary is
   * shown meanwhile when it has one).
   */
  async function select(dir: string): Promise<void> {
    if (selectedDir.value === dir && partition.value) return;
    selectedDir.value = dir;
    partition.value = partitions.value.find((p) => p.dir === dir) ?? null;
    segments.value = [];
    segmentsOf.value = null;
    const named = selectedRef.value;
    if (named && partitionSelected.length > 0) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const waited = new Promise<void>((resolve) => (timer = setTimeout(resolve, FIRST_VIEW_WAIT_MS)));
      // A listener's failure is its own to report (the records view shows a notice): the summary is asked for regardless.
      await Promise.race([Promise.allSettled(partitionSelected.map((l) => l(dir, named.topic))), waited]);
      clearTimeout(timer);
      if (selectedDir.value !== dir) return;
    }
    await refreshPartition();
    if (selectedDir.value === dir && !counts.value.has(dir)) void countRecords(dir);
  }

  /** Reloads the selected partition's summary and segment rows. */
  async function refreshPartition(): Promise<void> {
    const dir = selectedDir.value;
    if (!dir) return;
    partitionLoading.value = true;
    try {
      const r = await api['log.partition']({ dir });
      if (selectedDir.value !== dir) return;
      segments.value = r.segments;
      segmentsOf.value = dir;
      partitionError.value = null;
      updateSummary(r.partition);
    } catch (err) {
      report(err, `Reading partition ${dir}`);
      // The notice says why there is no segment row: the pane stops saying "checking…".
      if (selectedDir.value === dir) {
        segmentsOf.value = dir;
        if (partition.value === null) partitionError.value = { dir, error: toUiError(err, `Reading partition ${dir}`) };
      }
    } finally {
      partitionLoading.value = false;
    }
  }

  /**
   * The header's Reload: reads the selected partition again (summary, segment rows) and counts its
   * records again (the count it had may be of files that changed since).
   */
  async function reloadSelected(): Promise<void> {
    const dir = selectedDir.value;
    if (!dir) return;
    const kept = new Map(counts.value);
    kept.delete(dir);
    counts.value = kept;
    await refreshPartition();
    if (selectedDir.value === dir) void countRecords(dir);
  }

  /** Starts (or reuses) a record count for a partition. */
  async function countRecords(dir: string): Promise<void> {
    const jobs = useJobs();
    if (jobs.runningFor('log.countRecords', dir)) return;
    try {
      const r = await jobs.run('log.countRecords', { dir }, `Counting records of ${dir.split(/[\\/]/).pop()}`, `count:${dir}`);
      counts.value = new Map(counts.value).set(dir, r);
      const p = partitions.value.find((x) => x.dir === dir);
      if (p) updateSummary({ ...p, counts: { records: r.records, controlRecords: r.controlRecords, batches: r.batches, emptyBatches: r.emptyBatches } });
    } catch (err) {
      report(err, `Counting records of ${dir}`);
    }
  }

  /** Finds the holes of a partition (for the hole map). */
  async function findHoles(dir: string): Promise<void> {
    const jobs = useJobs();
    if (jobs.runningFor('log.holes', dir)) return;
    try {
      const r = await jobs.run('log.holes', { dir, buckets: 2048 }, `Finding holes of ${dir.split(/[\\/]/).pop()}`, `holes:${dir}`);
      holes.value = new Map(holes.value).set(dir, r);
    } catch (err) {
      report(err, `Finding holes of ${dir}`);
    }
  }

  /** Verifies a partition; its health badge is refreshed afterwards. */
  async function verify(dir: string, deep: boolean): Promise<void> {
    const jobs = useJobs();
    if (jobs.runningFor('log.verify', dir)) return;
    try {
      const r = await jobs.run('log.verify', { dir, deep }, `Verifying ${dir.split(/[\\/]/).pop()}`, `verify:${dir}`);
      verifies.value = new Map(verifies.value).set(dir, r);
      if (staleVerifies.value.has(dir)) {
        const stale = new Map(staleVerifies.value);
        stale.delete(dir);
        staleVerifies.value = stale;
      }
      if (selectedDir.value === dir) await refreshPartition();
    } catch (err) {
      report(err, `Verifying ${dir}`);
    }
  }

  /** Time until the selected partition's first records are on screen is measured by the bench. */
  const selectedAt = ref(0);

  return {
    info,
    answered,
    opened,
    recent,
    recentFolders,
    folderChanges,
    staleVerifies,
    onFolderChanged,
    dismissChange,
    reloadFolder,
    closeFolder,
    forgetRoot,
    refreshFolders,
    roots,
    opening,
    errors,
    view,
    selectedDir,
    selectedRef,
    partition,
    segments,
    segmentsOf,
    segmentsChecking,
    partitionLoading,
    partitionError,
    counts,
    holes,
    verifies,
    partitions,
    partitionRefs,
    pendingCount,
    selectedAt,
    report,
    dismiss,
    init,
    openFolder,
    lessonsOpen,
    select,
    refreshPartition,
    reloadSelected,
    countRecords,
    findHoles,
    verify,
    setWriteMode,
    reloadDirs,
    onPartitionReloaded,
    onPartitionSelected,
    client,
  };
});
