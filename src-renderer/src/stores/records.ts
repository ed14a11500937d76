/**
 * The records table's window onto a partition: a contiguous run of rows (records and hole rows, in
 * offset order) fetched page by page around the viewport with `log.records`, and the cursors to
 * extend it both ways. Memory follows what is on screen, not the log: at most {@link MAX_ROWS}
 * rows are kept; scrolling on drops pages from the far side (their cursors are derived again from
 * the rows that stay, since pages cover their offsets exactly).
 *
 * `top` is the fractional index of the first visible row (the view translates by its fraction for
 * smooth pixel scrolling); jumps (to an offset, a time, the start or the end) replace the window.
 * Responses of an older window (a jump happened meanwhile) are dropped by generation number.
 */
import { defineStore } from 'pinia';
import { computed, ref, shallowRef } from 'vue';
import type { Res } from '../../../src-shared/contract.ts';
import { summarizeConsumerOffsetsKey, summarizeConsumerOffsetsValue } from '../../../src-shared/consumer-offsets.ts';
import { HOLE_CAUSE_TEXT, type HoleRow, type ReadProblem, type RecordRow, type TableRow } from '../../../src-shared/log-types.ts';
import { api } from '../api/client.ts';
import { fromBase64, previewText } from '../lib/bytes.ts';
import { bytes, group, isoMs } from '../lib/format.ts';
import { useExplorer } from './explorer.ts';

/** Records per page. */
export const PAGE = 200;
/** Rows kept in memory at most. */
export const MAX_ROWS = 2400;
/** Load more when fewer than this many rows are left beyond the viewport. */
const MARGIN = 80;

/** A row with its display strings computed once, when its page arrives. */
export interface DisplayRow {
  key: string;
  kind: 'record' | 'hole';
  /** First and last offset the row covers (a hole of 0 offsets: to = from − 1). */
  from: bigint;
  to: bigint;
  row: TableRow;
  offset: string;
  ts: string;
  tsMs: string;
  keyText: string;
  keyClass: '' | 'null' | 'binary' | 'decoded';
  valueText: string;
  valueClass: '' | 'null' | 'binary' | 'decoded';
  headersText: string;
  size: string;
  batchText: string;
  /** Flags shown as small tags: COMMIT, ABORT, ABORTED, TXN... */
  flags: { text: string; kind: 'control' | 'aborted' | 'txn' | 'tomb' | 'crc' }[];
  /** Hole rows: the sentence shown across the row. */
  holeText: string;
}

function preview(p: RecordRow['key']): { text: string; cls: DisplayRow['keyClass'] } {
  if (p === null) return { text: '∅ null', cls: 'null' };
  if (p.size === 0) return { text: '(empty)', cls: 'null' };
  const t = previewText(fromBase64(p.base64), p.size);
  return { text: t.text, cls: t.binary ? 'binary' : '' };
}

/** Display strings of one row. `consumerOffsets`: decode keys/values of `__consumer_offsets`. */
export function displayOf(row: TableRow, consumerOffsets: boolean): DisplayRow {
  if (row.kind === 'hole') {
    const from = BigInt(row.from);
    const to = BigInt(row.to);
    const n = BigInt(row.count);
    const what = n === 0n ? 'no offsets' : n === 1n ? `offset ${group(row.from)} absent` : `offsets ${group(row.from)} – ${group(row.to)} absent (${group(row.count)})`;
    return {
      key: `h:${row.from}:${row.to}:${row.cause}`,
      kind: 'hole',
      from,
      to,
      row,
      offset: n === 0n ? '' : group(row.from),
      ts: '',
      tsMs: '',
      keyText: '',
      keyClass: '',
      valueText: '',
      valueClass: '',
      headersText: '',
      size: '',
      batchText: '',
      flags: [],
      holeText: `${what}: ${HOLE_CAUSE_TEXT[row.cause]}`,
    };
  }
  const r = row;
  let k = preview(r.key);
  let v = preview(r.value);
  if (consumerOffsets && !r.control && r.key) {
    const kb = fromBase64(r.key.base64);
    const sk = kb.length === r.key.size ? summarizeConsumerOffsetsKey(kb) : null;
    if (sk) {
      k = { text: sk.text, cls: 'decoded' };
      const vb = r.value ? fromBase64(r.value.base64) : null;
      const complete = r.value === null || vb!.length === r.value.size;
      const sv = complete ? summarizeConsumerOffsetsValue(sk.key, vb) : null;
      if (sv !== null) v = { text: sv, cls: r.value === null ? 'null' : 'decoded' };
      else if (r.value) v = { text: `${sk.key.type === 'group-metadata' ? 'group metadata' : 'value'} (${r.value.size} B: see the inspector)`, cls: 'decoded' };
    }
  }
  const flags: DisplayRow['flags'] = [];
  if (r.control) flags.push({ text: r.control.type, kind: 'control' });
  if (r.aborted) flags.push({ text: 'ABORTED', kind: 'aborted' });
  else if (r.transactional && !r.control) flags.push({ text: 'TXN', kind: 'txn' });
  if (!r.control && r.value === null) flags.push({ text: 'TOMBSTONE', kind: 'tomb' });
  if (r.crcValid === false) flags.push({ text: 'CRC', kind: 'crc' });
  if (r.control) {
    k = { text: `control key ${r.control.type} (type ${r.control.typeId})`, cls: 'decoded' };
    v = { text: r.control.coordinatorEpoch !== undefined ? `coordinator epoch ${r.control.coordinatorEpoch}` : '', cls: 'decoded' };
  }
  const h = r.headers;
  const headersText = h.length === 0 ? '' : `${h[0]!.key}${h[0]!.value ? '=' + previewText(fromBase64(h[0]!.value.base64), h[0]!.value.size, 40).text : ''}${h.length > 1 ? ` +${h.length - 1}` : ''}`;
  const offset = BigInt(r.offset);
  return {
    key: `r:${r.offset}`,
    kind: 'record',
    from: offset,
    to: offset,
    row,
    offset: r.offset,
    ts: isoMs(r.timestamp),
    tsMs: r.timestamp,
    keyText: k.text,
    keyClass: k.cls,
    valueText: v.text,
    valueClass: v.cls,
    headersText,
    size: r.size < 100_000 ? String(r.size) : bytes(r.size),
    batchText: `${r.batchBaseOffset === r.batchLastOffset ? r.batchBaseOffset : `${r.batchBaseOffset}..${r.batchLastOffset}`} @${r.position}${r.compression !== 'none' ? ' ' + r.compression : ''}`,
    flags,
    holeText: '',
  };
}

/** The offset after a row (for cursors): record → offset + 1, hole → to + 1. */
function endOf(r: DisplayRow): bigint {
  return r.to + 1n;
}

/** Joins two runs of rows, merging a hole cut in two by the page boundary. */
function join(a: DisplayRow[], b: DisplayRow[], co: boolean): DisplayRow[] {
  const last = a[a.length - 1];
  const first = b[0];
  if (last && first && last.kind === 'hole' && first.kind === 'hole') {
    const x = last.row as HoleRow;
    const y = first.row as HoleRow;
    if (x.cause === y.cause && BigInt(x.count) > 0n && BigInt(y.count) > 0n && last.to + 1n === first.from) {
      const merged: HoleRow = { ...x, to: y.to, count: String(first.to - last.from + 1n) };
      return [...a.slice(0, -1), displayOf(merged, co), ...b.slice(1)];
    }
  }
  return a.concat(b);
}

export const useRecords = defineStore('records', () => {
  const dir = ref<string | null>(null);
  const isolation = ref<'read_uncommitted' | 'read_committed'>('read_uncommitted');
  const rows = shallowRef<DisplayRow[]>([]);
  const startCursor = ref<string | null>(null);
  const endCursor = ref<string | null>(null);
  const top = ref(0);
  /** Rows the viewport shows, rounded up (partly visible rows count), and exactly (fractional). */
  const viewportRows = ref(30);
  const viewportExact = ref(30);
  const selectedKey = ref<string | null>(null);
  const loadingForward = ref(false);
  const loadingBackward = ref(false);
  const jumping = ref(false);
  const problems = shallowRef<ReadProblem[]>([]);
  const logStart = ref(0n);
  const logEnd = ref(0n);
  const firstBase = ref(0n);
  /** Wall time (performance.now) when the first page of the current partition arrived. */
  const firstPageAt = ref(0);
  let gen = 0;
  let consumerOffsets = false;
  /** Bytes of each key/value sent with a page: enough for a table cell, or to decode `__consumer_offsets` records. */
  const previewBytes = () => (consumerOffsets ? 2048 : 256);

  const selectedIndex = computed(() => (selectedKey.value === null ? -1 : rows.value.findIndex((r) => r.key === selectedKey.value)));
  const selected = computed(() => (selectedIndex.value >= 0 ? rows.value[selectedIndex.value]! : null));
  /** First offset on screen (for the scrollbar). */
  const topOffset = computed(() => rows.value[Math.min(rows.value.length - 1, Math.max(0, Math.floor(top.value)))]?.from ?? logStart.value);
  const atStart = computed(() => startCursor.value === null);
  const atEnd = computed(() => endCursor.value === null);

  function noteProblems(p: Res<'log.records'>): void {
    if (p.problems.length === 0) return;
    const seen = new Set(problems.value.map((x) => `${x.file}:${x.position}`));
    const fresh = p.problems.filter((x) => !seen.has(`${x.file}:${x.position}`));
    if (fresh.length > 0) problems.value = [...problems.value, ...fresh].slice(-20);
  }

  function bounds(p: Res<'log.records'>): void {
    logStart.value = BigInt(p.logStartOffset);
    logEnd.value = BigInt(p.logEndOffset);
    firstBase.value = p.firstSegmentBaseOffset !== null && BigInt(p.firstSegmentBaseOffset) < logStart.value ? BigInt(p.firstSegmentBaseOffset) : logStart.value;
  }

  /** A page's rows with their display strings; timed as the `klx:page-rows` measure (read by the UI bench). */
  const toRows = (p: Res<'log.records'>): DisplayRow[] => {
    const t0 = performance.now();
    const out = p.rows.map((r) => displayOf(r, consumerOffsets));
    performance.measure('klx:page-rows', { start: t0, end: performance.now() });
    return out;
  };

  /** Shows a partition from its first record. */
  async function open(partitionDir: string, topic: string): Promise<void> {
    dir.value = partitionDir;
    consumerOffsets = topic === '__consumer_offsets';
    problems.value = [];
    rows.value = [];
    selectedKey.value = null;
    firstPageAt.value = 0;
    await jump('start');
  }

  function maxTop(): number {
    return Math.max(0, rows.value.length - viewportExact.value);
  }

  /**
   * Replaces the window: the first page (`start`), the last page (`end`), or pages around an
   * offset (the row holding it selected and shown a few rows from the top).
   */
  async function jump(target: 'start' | 'end' | bigint): Promise<void> {
    const d = dir.value;
    if (!d) return;
    const mine = ++gen;
    jumping.value = true;
    const explorer = useExplorer();
    try {
      let next: DisplayRow[];
      let start: string | null;
      let end: string | null;
      let focus: number;
      if (target === 'start') {
        const p = await api['log.records']({ dir: d, from: 'start', limit: PAGE, isolation: isolation.value, previewBytes: previewBytes() });
        if (mine !== gen) return;
        bounds(p);
        noteProblems(p);
        next = toRows(p);
        start = p.prevCursor;
        end = p.nextCursor;
        focus = 0;
      } else if (target === 'end') {
        const p = await api['log.records']({ dir: d, from: 'end', direction: 'backward', limit: PAGE, isolation: isolation.value, previewBytes: previewBytes() });
        if (mine !== gen) return;
        bounds(p);
        noteProblems(p);
        next = toRows(p);
        start = p.prevCursor;
        end = p.nextCursor;
        focus = next.length - 1;
      } else {
        const at = String(target);
        const [back, fwd] = await Promise.all([
          api['log.records']({ dir: d, from: at, direction: 'backward', limit: Math.ceil(PAGE / 2), isolation: isolation.value, previewBytes: previewBytes() }),
          api['log.records']({ dir: d, from: at, direction: 'forward', limit: PAGE, isolation: isolation.value, previewBytes: previewBytes() }),
        ]);
        if (mine !== gen) return;
        bounds(fwd);
        noteProblems(back);
        noteProblems(fwd);
        next = join(toRows(back), toRows(fwd), consumerOffsets);
        start = back.prevCursor;
        end = fwd.nextCursor;
        focus = next.findIndex((r) => r.from <= target && target <= r.to && r.to >= r.from);
        if (focus < 0) focus = next.findIndex((r) => r.from >= target);
        if (focus < 0) focus = next.length - 1;
      }
      rows.value = next;
      startCursor.value = start;
      endCursor.value = end;
      if (firstPageAt.value === 0) firstPageAt.value = performance.now();
      if (target === 'end') top.value = maxTop();
      else if (target === 'start') top.value = 0;
      else top.value = Math.min(maxTop(), Math.max(0, focus - Math.floor(viewportRows.value / 4)));
      selectedKey.value = next[focus]?.key ?? null;
      void ensure();
    } catch (err) {
      if (mine === gen) explorer.report(err, `Reading records of ${d}`);
    } finally {
      if (mine === gen) jumping.value = false;
    }
  }

  /** Loads the next page forward. */
  async function loadForward(): Promise<void> {
    const d = dir.value;
    const cursor = endCursor.value;
    if (!d || cursor === null || loadingForward.value) return;
    const mine = gen;
    loadingForward.value = true;
    try {
      const p = await api['log.records']({ dir: d, from: cursor, direction: 'forward', limit: PAGE, isolation: isolation.value, previewBytes: previewBytes() });
      if (mine !== gen || endCursor.value !== cursor) return;
      bounds(p);
      noteProblems(p);
      let next = join(rows.value, toRows(p), consumerOffsets);
      endCursor.value = p.nextCursor;
      const excess = next.length - MAX_ROWS;
      if (excess > 0 && top.value > excess + MARGIN) {
        next = next.slice(excess);
        top.value -= excess;
        startCursor.value = String(next[0]!.from);
      }
      rows.value = next;
    } catch (err) {
      if (mine === gen) useExplorer().report(err, `Reading records of ${d}`);
    } finally {
      loadingForward.value = false;
    }
    if (mine === gen) void ensure();
  }

  /** Loads the previous page. */
  async function loadBackward(): Promise<void> {
    const d = dir.value;
    const cursor = startCursor.value;
    if (!d || cursor === null || loadingBackward.value) return;
    const mine = gen;
    loadingBackward.value = true;
    try {
      const p = await api['log.records']({ dir: d, from: cursor, direction: 'backward', limit: PAGE, isolation: isolation.value, previewBytes: previewBytes() });
      if (mine !== gen || startCursor.value !== cursor) return;
      bounds(p);
      noteProblems(p);
      const before = toRows(p);
      const joined = join(before, rows.value, consumerOffsets);
      const added = joined.length - rows.value.length;
      let next = joined;
      top.value += added;
      startCursor.value = p.prevCursor;
      const excess = next.length - MAX_ROWS;
      if (excess > 0 && next.length - (top.value + viewportRows.value) > excess + MARGIN) {
        next = next.slice(0, next.length - excess);
        endCursor.value = String(endOf(next[next.length - 1]!));
      }
      rows.value = next;
    } catch (err) {
      if (mine === gen) useExplorer().report(err, `Reading records of ${d}`);
    } finally {
      loadingBackward.value = false;
    }
    if (mine === gen) void ensure();
  }

  /** Loads pages when the viewport nears either end of the window. */
  async function ensure(): Promise<void> {
    if (top.value < MARGIN && startCursor.value !== null && !loadingBackward.value) void loadBackward();
    if (rows.value.length - (top.value + viewportRows.value) < MARGIN && endCursor.value !== null && !loadingForward.value) void loadForward();
  }

  /** Scrolls by a number of rows (fractional for pixel scrolling). */
  function scrollBy(deltaRows: number): void {
    const t = top.value + deltaRows;
    top.value = Math.min(maxTop(), Math.max(0, t));
    void ensure();
  }

  /** Moves the selection by `delta` rows, keeping it on screen. */
  function moveSelection(delta: number): void {
    const n = rows.value.length;
    if (n === 0) return;
    // A selection scrolled off screen: move from the first row on screen instead.
    const sel = selectedIndex.value;
    const onScreen = sel >= Math.floor(top.value) && sel < top.value + viewportRows.value;
    const cur = onScreen ? sel : Math.floor(top.value) + (delta < 0 ? viewportRows.value : 0);
    const i = Math.min(n - 1, Math.max(0, cur + delta));
    selectedKey.value = rows.value[i]!.key;
    reveal(i);
    void ensure();
  }

  /** Scrolls so that row `i` is fully visible. */
  function reveal(i: number): void {
    const full = viewportExact.value;
    if (i < top.value) top.value = i;
    else if (i + 1 > top.value + full) top.value = Math.min(maxTop(), i + 1 - full);
  }

  function select(key: string): void {
    selectedKey.value = key;
  }

  /** The viewport's height in rows (fractional). */
  function setViewport(n: number): void {
    viewportExact.value = Math.max(1, n);
    viewportRows.value = Math.max(1, Math.ceil(n));
    top.value = Math.min(top.value, maxTop());
    void ensure();
  }

  /** Reloads around the current position (after an isolation change). */
  async function reload(): Promise<void> {
    const at = selected.value?.from ?? topOffset.value;
    await jump(at <= logStart.value ? 'start' : at);
  }

  return {
    dir,
    isolation,
    rows,
    startCursor,
    endCursor,
    top,
    viewportRows,
    selectedKey,
    selectedIndex,
    selected,
    loadingForward,
    loadingBackward,
    jumping,
    problems,
    logStart,
    logEnd,
    firstBase,
    topOffset,
    atStart,
    atEnd,
    firstPageAt,
    open,
    jump,
    scrollBy,
    moveSelection,
    reveal,
    select,
    setViewport,
    reload,
    ensure,
  };
});
