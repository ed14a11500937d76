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
 *
 * Speed (a 5,000,000-record partition must scroll without a frame over 50 ms, `npm run bench -- ui`):
 * a page becomes rows in well under a millisecond (`DisplayRow` makes its display strings on first
 * use, or ahead of time in idle slices: `warmRows`); the next page is asked for {@link MARGIN} rows
 * before it is needed; `rowBase` keeps a loaded row at the same place of the table's row layer
 * while pages come and go; the inspector follows a selection moved by held keys only once they
 * pause (`SETTLE_MS`).
 */
import { defineStore } from 'pinia';
import { computed, markRaw, ref, shallowRef } from 'vue';
import type { Res } from '../../../../src-shared/contract.ts';
import { HOLE_CAUSE_TEXT, type DecodedSummary, type HoleRow, type ReadProblem, type RecordRow, type TableRow } from '../../../../src-shared/log-types.ts';
import { api } from '../../api/client.ts';
import { fromBase64, previewText } from '../../lib/bytes.ts';
import { bytes, group, isoMs } from '../../lib/format.ts';
import { useExplorer } from '../../stores/explorer.ts';

/** Records per page. */
export const PAGE = 200;
/** Rows kept in memory at most. */
export const MAX_ROWS = 2400;
/** How long after the last key the inspector follows a selection moved by the keyboard, ms. */
export const SETTLE_MS = 120;
/** Load more when fewer than this many rows are left beyond the viewport (a page is asked for well before it is needed: PgDn moves ~35 rows). */
const MARGIN = 160;
/** The most rows a scroll keeps for pages not loaded yet ({@link pendingRows}): half the window. */
const MAX_PENDING_ROWS = MAX_ROWS / 2;

/** A flag shown as a small tag in the Flags column. */
export interface RowFlag {
  text: string;
  kind: 'control' | 'aborted' | 'txn' | 'tomb' | 'crc';
}

/** The display strings of one row (computed once, on first use: see {@link DisplayRow.text}). */
export interface RowText {
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
  /** Flags shown as small tags: COMMIT, ABORT, ABORTED, TXN, TOMBSTONE, CRC. */
  flags: RowFlag[];
  /** The row's classes in the table: `rec` or `hole`, plus `control` / `aborted`. */
  cls: string;
  /** Hole rows: the sentence shown across the row. */
  holeText: string;
}

/**
 * One row of the table: its key and offset range at once (cursors, selection and search need
 * them for every loaded row), its display strings only when first asked for ({@link text}): a
 * page of 200 rows arrives in well under a millisecond and the strings are made for the rows that
 * reach the screen, or ahead of time when the page is idle ({@link warmRows}).
 *
 * Marked raw: Vue never wraps it in a reactive proxy (rows live in a `shallowRef`).
 */
export class DisplayRow {
  /** `r:<offset>` for a record, `h:<from>:<to>:<cause>` for a hole row. */
  readonly key: string;
  readonly kind: 'record' | 'hole';
  /** First and last offset the row covers (a hole of 0 offsets: to = from − 1). */
  readonly from: bigint;
  readonly to: bigint;
  readonly row: TableRow;
  private cached: RowText | null = null;

  constructor(row: TableRow) {
    this.row = row;
    if (row.kind === 'hole') {
      this.kind = 'hole';
      this.key = `h:${row.from}:${row.to}:${row.cause}`;
      this.from = BigInt(row.from);
      this.to = BigInt(row.to);
    } else {
      this.kind = 'record';
      this.key = `r:${row.offset}`;
      this.from = this.to = BigInt(row.offset);
    }
    markRaw(this);
  }

  /** The display strings (made on first use, then kept). */
  get text(): RowText {
    return (this.cached ??= textOf(this.row));
  }

  /** Whether {@link text} was made already. */
  get ready(): boolean {
    return this.cached !== null;
  }
}

/** Characters of a key or value the table shows at most (wider than any Value column; longer text would only cost layout time). */
const CELL_CHARS = 200;

function preview(p: RecordRow['key']): { text: string; cls: RowText['keyClass'] } {
  if (p === null) return { text: '∅ null', cls: 'null' };
  if (p.size === 0) return { text: '(empty)', cls: 'null' };
  const t = previewText(fromBase64(p.base64), p.size, CELL_CHARS);
  return { text: t.text, cls: t.binary ? 'binary' : '' };
}

/**
 * The Key and Value cells of a record as the table shows them: main's decoded one-line text where a
 * format other than plain UTF-8 read the bytes (the topic's format choice, `auto` by default), the
 * bytes (text, or hex when binary) followed by ⚠ and main's reason where decoding failed, and the
 * bytes as text otherwise. The renderer decodes nothing itself. Search results use it too, so a
 * key reads the same in both.
 */
export function cellsOf(key: RecordRow['key'], value: RecordRow['value'], keyDecoded?: DecodedSummary, valueDecoded?: DecodedSummary): { key: ReturnType<typeof preview>; value: ReturnType<typeof preview> } {
  let k = preview(key);
  let v = preview(value);
  const dk = keyDecoded;
  const dv = valueDecoded;
  if (dk && key && dk.format !== 'string') k = dk.text !== null ? { text: dk.error ? `${dk.text} ⚠ ${dk.error}` : dk.text, cls: 'decoded' } : { text: `${k.text} ⚠ ${dk.error ?? ''}`, cls: k.cls };
  if (dv && value && dv.format !== 'string') v = dv.text !== null ? { text: dv.error ? `${dv.text} ⚠ ${dv.error}` : dv.text, cls: 'decoded' } : { text: `${v.text} ⚠ ${dv.error ?? ''}`, cls: v.cls };
  else if (dv && value === null && dv.text === '<DELETE>') v = { text: '<DELETE>', cls: 'null' };
  return { key: k, value: v };
}

/** The flags of a record: its control type, ABORTED or TXN, TOMBSTONE (null value), CRC (a batch whose CRC-32C does not match). */
export function flagsOf(r: RecordRow): RowFlag[] {
  const flags: RowFlag[] = [];
  if (r.control) flags.push({ text: r.control.type, kind: 'control' });
  if (r.aborted) flags.push({ text: 'ABORTED', kind: 'aborted' });
  else if (r.transactional && !r.control) flags.push({ text: 'TXN', kind: 'txn' });
  if (!r.control && r.value === null) flags.push({ text: 'TOMBSTONE', kind: 'tomb' });
  if (r.crcValid === false) flags.push({ text: 'CRC', kind: 'crc' });
  return flags;
}

/** Display strings of one row (key and value as {@link cellsOf} makes them). */
export function textOf(row: TableRow): RowText {
  if (row.kind === 'hole') {
    const n = BigInt(row.count);
    const what = n === 0n ? 'no offsets' : n === 1n ? `offset ${group(row.from)} absent` : `offsets ${group(row.from)} – ${group(row.to)} absent (${group(row.count)})`;
    return {
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
      cls: 'hole',
      holeText: `${what}: ${HOLE_CAUSE_TEXT[row.cause]}`,
    };
  }
  const r = row;
  let { key: k, value: v } = cellsOf(r.key, r.value, r.keyDecoded, r.valueDecoded);
  const flags = flagsOf(r);
  if (r.control) {
    k = { text: `control key ${r.control.type} (type ${r.control.typeId})`, cls: 'decoded' };
    v = { text: r.control.coordinatorEpoch !== undefined ? `coordinator epoch ${r.control.coordinatorEpoch}` : '', cls: 'decoded' };
  }
  const h = r.headers;
  const headersText = h.length === 0 ? '' : `${h[0]!.key}${h[0]!.value ? '=' + previewText(fromBase64(h[0]!.value.base64), h[0]!.value.size, 40).text : ''}${h.length > 1 ? ` +${h.length - 1}` : ''}`;
  return {
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
    cls: r.control ? 'rec control' : r.aborted ? 'rec aborted' : 'rec',
    holeText: '',
  };
}

/** A row of the table (its display strings are made on first use). */
export function displayOf(row: TableRow): DisplayRow {
  return new DisplayRow(row);
}

/**
 * Makes the display strings of `rows` ahead of time, in idle slices (`requestIdleCallback`, a few
 * ms each), so the frames that scroll them onto the screen only patch text. `stale()` stops it
 * (a jump replaced the window).
 */
export function warmRows(rows: readonly DisplayRow[], stale: () => boolean, fromEnd = false): void {
  const order = fromEnd ? [...rows].reverse() : rows;
  let i = 0;
  const idle: (cb: (d: { timeRemaining(): number }) => void) => void =
    typeof requestIdleCallback === 'function' ? (cb) => requestIdleCallback(cb, { timeout: 250 }) : (cb) => setTimeout(() => cb({ timeRemaining: () => 4 }), 16);
  const step = (d: { timeRemaining(): number }): void => {
    if (stale()) return;
    const t0 = performance.now();
    // At most ~4 ms per slice even when the browser offers more: a frame may be due meanwhile.
    while (i < order.length && d.timeRemaining() > 1 && performance.now() - t0 < 4) void order[i++]!.text;
    performance.measure('klx:warm-rows', { start: t0, end: performance.now() });
    if (i < order.length) idle(step);
  };
  idle(step);
}

/** The offset after a row (for cursors): record → offset + 1, hole → to + 1. */
function endOf(r: DisplayRow): bigint {
  return r.to + 1n;
}

/** Joins two runs of rows, merging a hole cut in two by the page boundary. */
function join(a: DisplayRow[], b: DisplayRow[]): DisplayRow[] {
  const last = a[a.length - 1];
  const first = b[0];
  if (last && first && last.kind === 'hole' && first.kind === 'hole') {
    const x = last.row as HoleRow;
    const y = first.row as HoleRow;
    if (x.cause === y.cause && BigInt(x.count) > 0n && BigInt(y.count) > 0n && last.to + 1n === first.from) {
      const merged: HoleRow = { ...x, to: y.to, count: String(first.to - last.from + 1n) };
      return [...a.slice(0, -1), displayOf(merged), ...b.slice(1)];
    }
  }
  return a.concat(b);
}

export const useRecords = defineStore('records', () => {
  const dir = ref<string | null>(null);
  /** The topic of the partition shown (its format choices apply). */
  const topic = ref<string | null>(null);
  const isolation = ref<'read_uncommitted' | 'read_committed'>('read_uncommitted');
  const rows = shallowRef<DisplayRow[]>([]);
  const startCursor = ref<string | null>(null);
  const endCursor = ref<string | null>(null);
  const top = ref(0);
  /**
   * The place of `rows[0]` in an endless strip of rows that only changes on a jump: dropping k rows
   * from the front adds k, adding k rows in front takes k away, so `rowBase + i` of a row stays the
   * same while it is loaded. The table lays rows out by it, so a row that stays on screen never
   * moves in its layer (it is not painted again) while the strip scrolls.
   */
  const rowBase = ref(0);
  /** Rows the viewport shows, rounded up (partly visible rows count), and exactly (fractional). */
  const viewportRows = ref(30);
  const viewportExact = ref(30);
  const selectedKey = ref<string | null>(null);
  /**
   * The selected records as an offset range (issue 14): a click selects one record, Shift+click or
   * Shift+↑/↓ extends from the anchor (the last record clicked), Ctrl+A takes [logStartOffset,
   * logEndOffset − 1]. Offsets, not rows: a selection may reach far beyond the loaded window (copy
   * and export ask main for the range). Hole rows are never selected; null: nothing selected.
   */
  const selection = ref<{ from: bigint; to: bigint; all: boolean } | null>(null);
  let anchor: bigint | null = null;
  const loadingForward = ref(false);
  const loadingBackward = ref(false);
  const jumping = ref(false);
  const problems = shallowRef<ReadProblem[]>([]);
  const logStart = ref(0n);
  const logEnd = ref(0n);
  const firstBase = ref(0n);
  /** Wall time (performance.now) when the first page of the current partition arrived. */
  const firstPageAt = ref(0);
  /**
   * The flag sets (e.g. `ABORTED TOMBSTONE`) seen in the pages of the current partition, so the
   * Flags column is wide enough for them; it only grows while the partition is shown (no column
   * jumping while scrolling). Likewise {@link hasHeaders}: a loaded record had headers.
   */
  const flagSets = shallowRef<readonly string[]>([]);
  const hasHeaders = ref(false);
  /** The largest record size (bytes) seen in the pages of the current partition, as the Size column shows it. */
  const maxSize = ref(0);
  /**
   * About how many characters the longest key preview seen in this partition has (bytes of the key,
   * at most 64; the fixed texts of null keys and control keys; main's decoded key text):
   * the Key column is made no wider than keys need, leaving the room to values.
   */
  const maxKeyChars = ref(0);
  const maxSizeText = computed(() => (maxSize.value < 100_000 ? String(maxSize.value) : bytes(maxSize.value)));
  let gen = 0;
  /**
   * Rows the wheel or keys asked to scroll past the loaded end of the window (positive) or its start
   * (negative) while the next page was not there yet: applied when it arrives, so that a fast wheel
   * is not cut short by a slow page (rows; at most {@link MAX_PENDING_ROWS} either way; dropped on a jump).
   */
  let pendingRows = 0;
  /** Bytes of each key/value sent with a page: enough for a table cell (main sends the decoded text beside them). */
  const previewBytes = () => 256;

  const selectedIndex = computed(() => (selectedKey.value === null ? -1 : rows.value.findIndex((r) => r.key === selectedKey.value)));
  /**
   * The key of the row the inspector shows ({@link selected}): the selection, taken at once on a
   * click or a jump, and {@link SETTLE_MS} after the last key while the keyboard moves it. The
   * inspector renders the record's bytes in an editor on every change, which would otherwise cost
   * every PgDn / ↓ of a held key more than the table's own frame.
   */
  const inspectedKey = ref<string | null>(null);
  let settleTimer: ReturnType<typeof setTimeout> | undefined;
  function settle(now: boolean): void {
    clearTimeout(settleTimer);
    if (now) inspectedKey.value = selectedKey.value;
    else settleTimer = setTimeout(() => (inspectedKey.value = selectedKey.value), SETTLE_MS);
  }
  /** The row the inspector shows (see {@link inspectedKey}); null when it is not loaded. */
  const selected = computed(() => (inspectedKey.value === null ? null : (rows.value.find((r) => r.key === inspectedKey.value) ?? null)));
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

  /**
   * A page's rows (display strings are made later: on screen or when idle); notes the page's flag
   * sets and headers. Timed as the `klx:page-rows` measure (read by the UI bench).
   */
  const toRows = (p: Res<'log.records'>, backward = false): DisplayRow[] => {
    const t0 = performance.now();
    const out = p.rows.map((r) => displayOf(r));
    let sets: string[] | null = null;
    let big = maxSize.value;
    let keyChars = maxKeyChars.value;
    for (const r of p.rows) {
      if (r.kind !== 'record') continue;
      if (r.size > big) big = r.size;
      const decodedKey = r.keyDecoded && r.keyDecoded.format !== 'string' ? (r.keyDecoded.text ?? '').length : null;
      const k = r.control ? 18 : r.key === null ? 6 : Math.min(64, Math.max(7, decodedKey ?? r.key.size));
      if (k > keyChars) keyChars = k;
      if (!hasHeaders.value && r.headers.length > 0) hasHeaders.value = true;
      if (r.control === null && !r.aborted && !r.transactional && r.value !== null && r.crcValid !== false) continue;
      const set = flagsOf(r).map((f) => f.text).join(' ');
      if (!(sets ?? flagSets.value).includes(set)) (sets ??= [...flagSets.value]).push(set);
    }
    if (sets) flagSets.value = sets;
    noteCrcFailures(p);
    if (big > maxSize.value) maxSize.value = big;
    if (keyChars > maxKeyChars.value) maxKeyChars.value = keyChars;
    const mine = gen;
    warmRows(out, () => mine !== gen, backward);
    performance.measure('klx:page-rows', { start: t0, end: performance.now() });
    return out;
  };

  /** Batch positions of CRC failures already told to the partition header (see {@link noteCrcFailures}). */
  let crcTold = new Set<number>();
  /**
   * A page met a batch failing its CRC that the partition's health (from main, before a verify) may
   * not list yet: the summary is read again, main having remembered what the page met, so the
   * header and the tree show the CRC error beside the flagged row.
   */
  function noteCrcFailures(p: Res<'log.records'>): void {
    const explorer = useExplorer();
    const part = explorer.partition;
    if (!part || part.dir !== dir.value || part.health.verifiedAt !== null) return;
    let fresh = false;
    for (const r of p.rows) {
      if (r.kind !== 'record' || r.crcValid !== false || crcTold.has(r.position)) continue;
      crcTold.add(r.position);
      fresh = true;
    }
    if (fresh) void explorer.refreshPartition();
  }

  /**
   * Shows no partition (its folder was closed or deleted): pages still being read for it are
   * dropped without a notice.
   */
  function close(): void {
    gen++;
    pendingRows = 0;
    dir.value = null;
    topic.value = null;
    rows.value = [];
    rowBase.value = 0;
    selectedKey.value = null;
    selection.value = null;
    anchor = null;
  }

  /** Shows a partition from its first record. */
  async function open(partitionDir: string, partitionTopic: string): Promise<void> {
    // Pages asked for the previous partition are stale: their answers are dropped (generation), and
    // its cursors must not be used for this one (a page load between now and the first page would
    // ask the new partition for the old partition's offset).
    gen++;
    pendingRows = 0;
    startCursor.value = null;
    endCursor.value = null;
    dir.value = partitionDir;
    topic.value = partitionTopic;
    problems.value = [];
    rows.value = [];
    rowBase.value = 0;
    selectedKey.value = null;
    selection.value = null;
    anchor = null;
    settle(true);
    firstPageAt.value = 0;
    flagSets.value = [];
    crcTold = new Set();
    hasHeaders.value = false;
    maxSize.value = 0;
    maxKeyChars.value = 0;
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
    pendingRows = 0;
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
        next = toRows(p, true);
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
        next = join(toRows(back, true), toRows(fwd));
        start = back.prevCursor;
        end = fwd.nextCursor;
        focus = next.findIndex((r) => r.from <= target && target <= r.to && r.to >= r.from);
        if (focus < 0) focus = next.findIndex((r) => r.from >= target);
        if (focus < 0) focus = next.length - 1;
      }
      rows.value = next;
      rowBase.value = 0;
      startCursor.value = start;
      endCursor.value = end;
      if (firstPageAt.value === 0) firstPageAt.value = performance.now();
      if (target === 'end') top.value = maxTop();
      else if (target === 'start') top.value = 0;
      else top.value = Math.min(maxTop(), Math.max(0, focus - Math.floor(viewportRows.value / 4)));
      selectedKey.value = next[focus]?.key ?? null;
      pick(next[focus], false);
      settle(true);
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
      let next = join(rows.value, toRows(p));
      endCursor.value = p.nextCursor;
      const excess = next.length - MAX_ROWS;
      if (excess > 0 && top.value > excess + MARGIN) {
        next = next.slice(excess);
        top.value -= excess;
        // Far down the strip: start it again (one repaint) before its pixel positions grow huge.
        rowBase.value = rowBase.value + excess > 100_000 ? 0 : rowBase.value + excess;
        startCursor.value = String(next[0]!.from);
      }
      rows.value = next;
      if (pendingRows > 0) applyPending();
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
      const before = toRows(p, true);
      const joined = join(before, rows.value);
      const added = joined.length - rows.value.length;
      let next = joined;
      top.value += added;
      rowBase.value = rowBase.value - added < -100_000 ? 0 : rowBase.value - added;
      startCursor.value = p.prevCursor;
      const excess = next.length - MAX_ROWS;
      if (excess > 0 && next.length - (top.value + viewportRows.value) > excess + MARGIN) {
        next = next.slice(0, next.length - excess);
        endCursor.value = String(endOf(next[next.length - 1]!));
      }
      rows.value = next;
      if (pendingRows < 0) applyPending();
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

  let ensureQueued = false;
  /**
   * {@link ensure} after the current task: a scroll step or a key runs inside the frame that shows
   * it, and starting a page request there (~0.6-3 ms) would lengthen that frame.
   */
  function ensureSoon(): void {
    if (ensureQueued) return;
    ensureQueued = true;
    setTimeout(() => {
      ensureQueued = false;
      void ensure();
    }, 0);
  }

  /** Scrolls by a number of rows (fractional for pixel scrolling). */
  function scrollBy(deltaRows: number): void {
    const t = top.value + deltaRows;
    const max = maxTop();
    top.value = Math.min(max, Math.max(0, t));
    // Past the loaded rows with more to load: kept for when the page arrives (see pendingRows).
    if (t > max && endCursor.value !== null) pendingRows = Math.min(MAX_PENDING_ROWS, Math.max(0, pendingRows) + (t - max));
    else if (t < 0 && startCursor.value !== null) pendingRows = Math.max(-MAX_PENDING_ROWS, Math.min(0, pendingRows) + t);
    else pendingRows = 0;
    ensureSoon();
  }

  /** Scrolls by the rows kept in {@link pendingRows} as far as the rows now loaded allow. */
  function applyPending(): void {
    if (pendingRows === 0) return;
    const want = pendingRows;
    pendingRows = 0;
    scrollBy(want);
  }

  /**
   * Makes `row` the selection (a record; a hole row clears it), or with `extend` stretches the
   * selection from the anchor to it.
   */
  function pick(row: DisplayRow | undefined, extend: boolean): void {
    if (!row) return;
    if (row.kind !== 'record') {
      if (!extend) {
        selection.value = null;
        anchor = null;
      }
      return;
    }
    if (extend && anchor !== null) {
      selection.value = { from: anchor < row.from ? anchor : row.from, to: anchor > row.from ? anchor : row.from, all: false };
      return;
    }
    anchor = row.from;
    selection.value = { from: row.from, to: row.from, all: false };
  }

  /** Whether a row is in the selection (records only). */
  function isPicked(row: DisplayRow): boolean {
    const s = selection.value;
    return s !== null && row.kind === 'record' && row.from >= s.from && row.from <= s.to;
  }

  /** Ctrl+A: every record of the partition, [logStartOffset, logEndOffset − 1]. */
  function selectAll(): void {
    if (logEnd.value <= logStart.value) return;
    selection.value = { from: logStart.value, to: logEnd.value - 1n, all: true };
  }

  /** Moves the selection by `delta` rows, keeping it on screen (`extend`: Shift held, the selection grows from its anchor). */
  function moveSelection(delta: number, extend = false): void {
    const n = rows.value.length;
    if (n === 0) return;
    // A selection scrolled off screen: move from the first row on screen instead.
    const sel = selectedIndex.value;
    const onScreen = sel >= Math.floor(top.value) && sel < top.value + viewportRows.value;
    const cur = onScreen ? sel : Math.floor(top.value) + (delta < 0 ? viewportRows.value : 0);
    const i = Math.min(n - 1, Math.max(0, cur + delta));
    selectedKey.value = rows.value[i]!.key;
    pick(rows.value[i], extend);
    settle(false);
    reveal(i);
    ensureSoon();
  }

  /** Scrolls so that row `i` is fully visible. */
  function reveal(i: number): void {
    const full = viewportExact.value;
    if (i < top.value) top.value = i;
    else if (i + 1 > top.value + full) top.value = Math.min(maxTop(), i + 1 - full);
  }

  /** Selects the row of `key` (`extend`: Shift+click, the selection grows from its anchor). */
  function select(key: string, extend = false): void {
    selectedKey.value = key;
    pick(rows.value.find((r) => r.key === key), extend);
    settle(true);
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
    const at = (selectedIndex.value >= 0 ? rows.value[selectedIndex.value]!.from : null) ?? topOffset.value;
    await jump(at <= logStart.value ? 'start' : at);
  }

  // A partition was selected: its first page is asked for before its summary (explorer.select waits for it).
  useExplorer().onPartitionSelected(async (d, topic) => {
    if (dir.value !== d) await open(d, topic);
  });

  // The selected partition's files changed (a cleanup, an undo, an append): show it again from its first record.
  useExplorer().onPartitionReloaded(async (d, topic) => {
    if (dir.value === d) await open(d, topic);
  });

  return {
    dir,
    topic,
    isolation,
    rows,
    rowBase,
    startCursor,
    endCursor,
    top,
    viewportRows,
    selectedKey,
    selection,
    isPicked,
    selectAll,
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
    flagSets,
    hasHeaders,
    maxSizeText,
    maxKeyChars,
    open,
    close,
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
