/**
 * The Cleanup view's state: the retention / compaction form of the selected partition (or of its
 * whole log directory), the preview (`cleanup.plan`), the run (`cleanup.run` with the preview's
 * planId, after a confirmation), Undo (`cleanup.undo`) and the trash (`cleanup.trash`,
 * `cleanup.emptyTrash`).
 *
 * A preview answers for exactly the settings it was made with: the form's request is compared with
 * the preview's, and Run is only offered while they match (the main process checks it again, and
 * also that the files did not change). Errors are kept with their code, file, byte position and
 * details so the view can offer the way forward (preview again, open for writing, fix the value of
 * a config, verify the partition).
 */
import { defineStore } from 'pinia';
import { computed, reactive, ref, shallowRef, watch } from 'vue';
import type { JobResult, Req, Res } from '../../../../src-shared/contract.ts';
import type { CleanupOperation, CleanupPartitionOutcome, CleanupReport, RemovalReason } from '../../../../src-shared/cleanup-types.ts';
import type { ErrorInfo } from '../../../../src-shared/errors.ts';
import { KlxApiError } from '../../../../src-shared/client.ts';
import { api } from '../../api/client.ts';
import { baseName } from '../../lib/format.ts';
import { useExplorer } from '../../stores/explorer.ts';
import { useJobs } from '../../stores/jobs.ts';

/** The config fields of each form, in display order (Kafka's names). */
export const RETENTION_KEYS = ['retention.ms', 'retention.bytes', 'cleanup.policy'] as const;
export const COMPACTION_KEYS = ['delete.retention.ms', 'min.compaction.lag.ms', 'max.compaction.lag.ms', 'min.cleanable.dirty.ratio', 'segment.bytes', 'cleanup.policy'] as const;
/** Retention settings a compaction applies afterwards when cleanup.policy is compact,delete. */
export const COMPACT_DELETE_KEYS = ['retention.ms', 'retention.bytes'] as const;

/** The CSS variable of each removal reason's colour (the hole causes it becomes). */
export const REASON_COLOR: Record<RemovalReason, string> = {
  retention: '--c-below-log-start',
  superseded: '--c-compacted-between-batches',
  tombstone: '--c-compacted-in-batch',
  keyless: '--warn',
  aborted: '--c-aborted-transaction',
  marker: '--c-control-record',
};

/** A failure as the view shows it: the error as the main process sent it, and what was being done. */
export interface CleanupError {
  info: ErrorInfo;
  context: string;
}

/** What the form asks for (everything the preview's answer depends on). */
export interface CleanupForm {
  operation: CleanupOperation;
  /** The selected partition, or its whole log directory. */
  scope: 'partition' | 'logdir';
  /** Typed config values (Kafka name → text); empty means "the effective value". */
  values: Record<string, string>;
  /** `wall`: the clock at preview time; `fixed`: {@link nowText}. */
  nowMode: 'wall' | 'fixed';
  /** `YYYY-MM-DDTHH:mm:ss.SSS`, read as UTC. */
  nowText: string;
  rules: 'kafka' | 'classic';
  likeBroker: boolean;
  /** Retention: "delete records before offset" (DeleteRecords), empty for none. */
  deleteBeforeOffset: string;
}

function freshForm(): CleanupForm {
  return { operation: 'compaction', scope: 'partition', values: {}, nowMode: 'wall', nowText: '', rules: 'kafka', likeBroker: false, deleteBeforeOffset: '' };
}

/** ms → the datetime-local text (UTC) of the form. */
export function nowTextOf(ms: number): string {
  return new Date(ms).toISOString().replace('Z', '');
}

/** The datetime-local text (UTC) → ms, or null. */
export function msOfNowText(text: string): number | null {
  if (!text.trim()) return null;
  const t = /T\d{2}:\d{2}$/.test(text) ? `${text}:00` : text;
  const ms = Date.parse(`${t}Z`);
  return Number.isFinite(ms) ? ms : null;
}

function errorOf(err: unknown, context: string): CleanupError {
  const info: ErrorInfo = err instanceof KlxApiError ? err.info : { code: 'internal', message: err instanceof Error ? err.message : String(err) };
  return { info, context };
}

export const useCleanup = defineStore('cleanup', () => {
  const explorer = useExplorer();
  const jobs = useJobs();
  const form = reactive<CleanupForm>(freshForm());
  /** The partition folder the state belongs to. */
  const dir = ref<string | null>(null);
  const plan = shallowRef<JobResult<'cleanup.plan'> | null>(null);
  /** The request key the preview was made for. */
  const planKey = ref('');
  const result = shallowRef<JobResult<'cleanup.run'> | null>(null);
  /** The preview the result came from (for the differences). */
  const resultPlan = shallowRef<JobResult<'cleanup.plan'> | null>(null);
  const undone = shallowRef<Res<'cleanup.undo'> | null>(null);
  const trash = shallowRef<Res<'cleanup.trash'> | null>(null);
  /** The run history of the selected partition (`cleanup.history`), reloaded with the trash. */
  const history = shallowRef<Res<'cleanup.history'> | null>(null);
  /** The partition's delete horizons (`cleanup.horizons`), for the `now` preset just after the earliest. */
  const horizons = shallowRef<Res<'cleanup.horizons'> | null>(null);
  const error = shallowRef<CleanupError | null>(null);
  /** Set after a cancel (not an error). */
  const notice = ref<string | null>(null);
  const busy = ref<'plan' | 'run' | 'undo' | 'empty' | null>(null);
  /** The outcome shown in detail (partition folder), for a whole-folder preview. */
  const focus = ref<string | null>(null);

  /** The folder the operation is given: the partition, or its log directory. */
  const target = computed(() => {
    const d = dir.value;
    if (!d) return null;
    return form.scope === 'partition' ? d : d.replace(/[\\/][^\\/]+$/, '');
  });

  /** The request the form makes now. Throws a message for a malformed `now` or offset. */
  function request(): Req<'cleanup.plan'> & { dir: string } {
    const t = target.value;
    if (!t) throw new Error('no partition selected');
    const keys: readonly string[] = form.operation === 'retention' ? RETENTION_KEYS : [...COMPACTION_KEYS, ...COMPACT_DELETE_KEYS];
    const config: Record<string, string> = {};
    for (const k of keys) {
      const v = (form.values[k] ?? '').trim();
      if (v !== '') config[k] = v;
    }
    const req: Req<'cleanup.plan'> & { dir: string } = { dir: t, operation: form.operation, config };
    // The decision of every record, batch and segment, for one partition (over a whole log
    // directory the reports per partition say what goes; the decisions would be per partition too).
    if (form.scope === 'partition') req.explain = true;
    if (form.nowMode === 'fixed') {
      const ms = msOfNowText(form.nowText);
      if (ms === null) throw new Error('set the time `now` stands for, or choose "the clock at preview time"');
      req.now = String(ms);
    }
    if (form.operation === 'retention') {
      const d = form.deleteBeforeOffset.trim();
      if (d !== '') {
        if (!/^\d{1,19}$/.test(d)) throw new Error(`delete records before offset: "${d}" is not an offset`);
        req.deleteBeforeOffset = d;
      }
    } else {
      req.rules = form.rules;
      req.likeBroker = form.likeBroker;
    }
    return req;
  }

  /** The request as a comparable key ('' when the form is not valid). */
  const requestKey = computed(() => {
    try {
      return JSON.stringify(request());
    } catch {
      return '';
    }
  });

  /** The preview answers the form as it is now (Run is possible). */
  const planCurrent = computed(() => plan.value !== null && planKey.value === requestKey.value && requestKey.value !== '');

  const planJob = computed(() => (dir.value ? jobs.runningFor('cleanup.plan', target.value ?? '') : undefined));
  const runJob = computed(() => (dir.value ? jobs.runningFor('cleanup.run', target.value ?? '') : undefined));

  /** The outcome shown in detail: the focused partition, else the selected one, else the first. */
  function outcomeOf(r: { partitions: CleanupPartitionOutcome[] } | null): CleanupPartitionOutcome | null {
    if (!r) return null;
    return r.partitions.find((p) => p.partitionDir === focus.value) ?? r.partitions.find((p) => p.partitionDir === dir.value) ?? r.partitions[0] ?? null;
  }

  /** Follows the selected partition: a new partition starts from a fresh form (its config differs). */
  function attach(partitionDir: string | null): void {
    if (partitionDir === dir.value) return;
    dir.value = partitionDir;
    // A fixed `now` is never carried to another partition: chosen for one, it could make every
    // segment of another look expired (the preview would delete them all).
    const keep = { operation: form.operation, rules: form.rules };
    Object.assign(form, freshForm(), keep);
    plan.value = null;
    planKey.value = '';
    result.value = null;
    resultPlan.value = null;
    undone.value = null;
    error.value = null;
    notice.value = null;
    focus.value = null;
    void loadTrash();
  }

  watch(
    () => explorer.partition?.dir ?? null,
    (d) => attach(d),
    { immediate: true },
  );

  // Nor to the other mode (retention ↔ compaction): back to the clock at preview time.
  watch(
    () => form.operation,
    () => {
      form.nowMode = 'wall';
      form.nowText = '';
    },
  );

  /** The preview shown was made with a fixed `now` (the report says so prominently). */
  const planNowFixed = ref(false);

  /** Runs `cleanup.plan` for the form (progress and Cancel in the view and the status bar). */
  async function preview(): Promise<void> {
    let req;
    try {
      req = request();
    } catch (err) {
      error.value = { info: { code: 'invalid-argument', message: (err as Error).message }, context: 'Preview' };
      return;
    }
    const key = JSON.stringify(req);
    const forDir = dir.value;
    error.value = null;
    notice.value = null;
    undone.value = null;
    busy.value = 'plan';
    try {
      const r = await jobs.run('cleanup.plan', req, `Previewing ${form.operation} of ${baseName(req.dir)}`, `cleanup-plan:${req.dir}`);
      if (dir.value !== forDir) return; // another partition was selected meanwhile
      plan.value = r;
      planKey.value = key;
      planNowFixed.value = req.now !== undefined;
      result.value = null;
      resultPlan.value = null;
    } catch (err) {
      if (dir.value !== forDir) explorer.report(err, `Previewing ${form.operation} of ${baseName(req.dir)}`);
      else if (err instanceof KlxApiError && err.code === 'cancelled') notice.value = 'Preview cancelled. Nothing was changed (a preview never changes anything).';
      else error.value = errorOf(err, `Previewing ${form.operation}`);
    } finally {
      busy.value = null;
    }
  }

  /** Runs the previewed operation (the view confirms first). */
  async function run(): Promise<void> {
    const p = plan.value;
    if (!p || !planCurrent.value) return;
    const req = { ...request(), planId: p.planId };
    const forDir = dir.value;
    error.value = null;
    notice.value = null;
    undone.value = null;
    busy.value = 'run';
    try {
      const r = await jobs.run('cleanup.run', req, `Running ${form.operation} of ${baseName(req.dir)}`, `cleanup-run:${req.dir}`);
      if (dir.value !== forDir) return; // another partition was selected meanwhile (the tree reloads by log.changed)
      result.value = r;
      resultPlan.value = p;
      plan.value = null;
      planKey.value = '';
    } catch (err) {
      if (dir.value !== forDir) explorer.report(err, `Running ${form.operation} of ${baseName(req.dir)}`);
      else if (err instanceof KlxApiError && err.code === 'cancelled') {
        notice.value =
          form.scope === 'partition'
            ? `${form.operation === 'retention' ? 'Retention' : 'Compaction'} cancelled before its commit point: nothing was changed.`
            : 'Cancelled: the partition being cleaned was left as it was; partitions already done stay done (Undo restores them).';
        plan.value = null;
        planKey.value = '';
      } else error.value = errorOf(err, `Running ${form.operation}`);
    } finally {
      busy.value = null;
      await loadTrash();
    }
  }

  /** Undoes the latest run under the target folder. */
  async function undo(): Promise<void> {
    const t = target.value;
    if (!t) return;
    error.value = null;
    notice.value = null;
    busy.value = 'undo';
    try {
      undone.value = await api['cleanup.undo']({ dir: t });
      result.value = null;
      resultPlan.value = null;
      plan.value = null;
      planKey.value = '';
    } catch (err) {
      error.value = errorOf(err, 'Undoing the latest run');
    } finally {
      busy.value = null;
      await loadTrash();
    }
  }

  /** Reloads the trash facts for the target folder. */
  async function loadTrash(): Promise<void> {
    const t = target.value;
    if (!t) {
      trash.value = null;
      return;
    }
    try {
      const r = await api['cleanup.trash']({ dir: t });
      if (target.value === t) trash.value = r;
    } catch (err) {
      explorer.report(err, 'Reading the trash');
    }
    const d = dir.value;
    if (!d) return;
    try {
      const h = await api['cleanup.history']({ dir: d });
      if (dir.value === d) history.value = h;
      const z = await api['cleanup.horizons']({ dir: d });
      if (dir.value === d) horizons.value = z;
    } catch (err) {
      explorer.report(err, 'Reading the run history');
    }
  }

  /** Deletes the trash entries of the target folder for good (the view confirms first). */
  async function emptyTrash(): Promise<void> {
    const t = target.value;
    if (!t) return;
    busy.value = 'empty';
    error.value = null;
    try {
      const r = await api['cleanup.emptyTrash']({ dir: t });
      notice.value = `Trash emptied: ${r.removed.length} entr${r.removed.length === 1 ? 'y' : 'ies'} deleted. Those runs can no longer be undone.`;
    } catch (err) {
      error.value = errorOf(err, 'Emptying the trash');
    } finally {
      busy.value = null;
      await loadTrash();
    }
  }

  /** Cancels the running preview or run. */
  function cancel(): void {
    const j = planJob.value ?? runJob.value;
    if (j) jobs.cancel(j.key);
  }

  watch(target, () => void loadTrash());

  return {
    form,
    dir,
    target,
    plan,
    planNowFixed,
    result,
    resultPlan,
    undone,
    trash,
    error,
    notice,
    busy,
    focus,
    planJob,
    runJob,
    planCurrent,
    requestKey,
    request,
    outcomeOf,
    preview,
    run,
    undo,
    loadTrash,
    history,
    horizons,
    emptyTrash,
    cancel,
  };
});

/** A report's removed records per reason, as `{reason: records}`. */
export function removedByReason(r: CleanupReport): Partial<Record<RemovalReason, number>> {
  return Object.fromEntries(r.removed.map((x) => [x.reason, x.records]));
}

const MS_UNITS: [number, string][] = [
  [86_400_000, 'd'],
  [3_600_000, 'h'],
  [60_000, 'min'],
  [1000, 's'],
];

/** A duration in ms (decimal text) for people: "7 d", "1.5 h", "250 ms"; −1 and Long.MAX_VALUE "never". */
export function durationText(ms: string): string {
  const t = ms.trim();
  if (!/^-?\d+$/.test(t)) return '';
  const v = BigInt(t);
  if (v === -1n) return 'never';
  if (v === 9223372036854775807n) return 'never';
  if (v < 0n) return '';
  const n = Number(v);
  for (const [size, unit] of MS_UNITS) {
    if (n >= size) {
      const x = n / size;
      return `${Number.isInteger(x) ? x : x >= 100 ? Math.round(x) : Number(x.toFixed(2))} ${unit}`;
    }
  }
  return `${n} ms`;
}

/** A size in bytes (decimal text) for people: "1 GiB", "4.2 KiB"; −1 "unlimited". */
export function sizeText(b: string): string {
  const t = b.trim();
  if (!/^-?\d+$/.test(t)) return '';
  const v = Number(t);
  if (v === -1) return 'unlimited';
  if (v < 0) return '';
  if (v < 1024) return `${v} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB', 'PiB', 'EiB'];
  let x = v / 1024;
  let u = 0;
  while (x >= 1024 && u < units.length - 1) {
    x /= 1024;
    u++;
  }
  return `${Number.isInteger(x) ? x : Number(x.toFixed(x >= 100 ? 0 : 2))} ${units[u]}`;
}

/** The human unit text of a config value ('' when none applies). */
export function unitText(key: string, value: string): string {
  if (key.endsWith('.ms')) return durationText(value);
  if (key.endsWith('.bytes')) return sizeText(value);
  if (key === 'min.cleanable.dirty.ratio') {
    const r = Number(value);
    return value.trim() !== '' && Number.isFinite(r) ? `${(r * 100).toFixed(r * 100 % 1 === 0 ? 0 : 1)} % dirty` : '';
  }
  return '';
}
