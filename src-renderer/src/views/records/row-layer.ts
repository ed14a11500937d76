/**
 * The row elements of the records table, kept by hand rather than by Vue's renderer (issue 16: no
 * frame over 16 ms while the wheel scrolls a 50 M-record partition). A wheel step brings ~16 new
 * rows on screen; what a step costs is what the browser redoes for them, so a step here:
 *
 * - patches, in place, only the row elements whose row changed (text nodes' `data`, the class, a few
 *   attributes, `top`), compared field by field: the other rows are not touched at all, and no
 *   element is created, moved or dropped while scrolling (a moved element is restyled and laid out
 *   again from scratch, and the row layer's first paint chunk changing makes the compositor build
 *   a new layer and raster it whole);
 * - makes no virtual nodes, arrays or closures per row (Vue's render of ~16 rows of 10 elements
 *   per step, and the garbage it leaves, was about a third of a step's script time).
 *
 * Every element stays in its slot (`data-slot`, fixed) and is placed by its row's place in the
 * store's strip of rows (`top: place × rowH`); the row layer is translated by the table. While
 * scrolling, the document order of the elements is therefore a rotation of the order on screen;
 * {@link RowLayer.settle} (called when scrolling pauses) moves the shorter run so that document
 * order is screen order again (text selection, screen readers, tests reading the rows in order).
 *
 * Markup and classes are the ones the table's scoped CSS and the end-to-end tests know:
 * `trow rec|hole …` with `data-testid=record-row|hole-row`, `data-offset`, `data-from/to/cause`.
 */
import { HOLE_CAUSE_TEXT, type HoleRow } from '../../../../src-shared/log-types.ts';
import type { DisplayRow, RowFlag } from './records-store.ts';

/** What the row layer shows; read by {@link RowLayer.render} on every change. */
export interface RowLayerView {
  /** The store's loaded rows (`records.rows`). */
  rows: readonly DisplayRow[];
  /** The place of `rows[0]` in the strip of rows (`records.rowBase`). */
  rowBase: number;
  /** Index in `rows` of the first row on screen (`floor(records.top)`). */
  start: number;
  /** Row elements kept: the rows on screen, a partly visible one included. */
  slots: number;
  selectedKey: string | null;
  /** Whether a record row is in the selection (`records.isPicked`). */
  isPicked: (r: DisplayRow) => boolean;
  /** The partition's high watermark (rows at or above it are dimmed), null when unknown. */
  hw: bigint | null;
  showHeaders: boolean;
  showBatch: boolean;
  /** Characters of a Value cell put in the DOM at most when it is not plain ASCII (see `RecordsTable.valueChars`). */
  valueChars: number;
  /**
   * Characters of plain printable ASCII the Key, Value, Headers and Batch cells show whole (their
   * width over the mono font's advance): such a text that fits needs no clip (see {@link fitCell}).
   */
  cellChars: { key: number; value: number; hdr: number; batch: number };
  timestampFormat: 'iso' | 'ms' | 'both';
}

/** One row element and what it shows now. */
interface Slot {
  el: HTMLElement | null;
  /** Whether `el` is in the row layer (an unused slot's element is taken out). */
  attached: boolean;
  kind: 'record' | 'hole' | null;
  row: DisplayRow | null;
  /** Place in the strip (`rowBase + index`), NaN when unused. */
  pos: number;
  cls: string;
  title: string | null;
  selected: boolean | null;
  /** Record rows: the text nodes and elements patched per row. */
  cells: RecordCells | null;
}

interface RecordCells {
  off: Text;
  tsCell: HTMLElement;
  ts: Text | null;
  tsMs: Text | null;
  flags: HTMLElement;
  flagsKey: string;
  key: HTMLElement;
  keyText: Text;
  value: HTMLElement;
  valueText: Text;
  hdr: HTMLElement | null;
  hdrText: Text | null;
  size: Text;
  batch: HTMLElement | null;
  batchText: Text | null;
}

/** Printable ASCII only: every character has the mono font's advance. */
const PLAIN = /^[\x20-\x7e]*$/;

/**
 * What a mono cell `chars` characters wide shows of `text`, and whether it must clip. Plain
 * printable ASCII that fits needs no clip (a clip makes the cell a paint layer with a clip node of
 * its own: ~0.15 ms more per wheel step of 16 rows and per clipped column). Any other text (too
 * long, or with wide or combining characters that a fallback font may draw wider) is clipped by CSS
 * (`clip`: overflow hidden, ellipsis) and kept whole, or cut to `limit` characters by
 * {@link clipCell} when given (the Value: still more than the cell shows, so the ellipsis is drawn).
 */
export function fitCell(text: string, chars: number, limit?: number): { text: string; clip: boolean } {
  if (text.length <= chars && PLAIN.test(text)) return { text, clip: false };
  return { text: limit === undefined ? text : clipCell(text, limit), clip: true };
}

/** `text` cut to `n` characters, a decoding failure's ` ⚠ reason` kept whole (see `RecordsTable.valueChars`). */
export function clipCell(text: string, n: number): string {
  if (text.length <= n) return text;
  const warn = text.indexOf(' ⚠ ');
  return warn > n ? text.slice(0, n) + text.slice(warn) : text.slice(0, n);
}

/** The tooltip of a hole row: its cause, detail and byte position. */
export function holeTitle(r: DisplayRow): string {
  const h = r.row as HoleRow;
  return `${HOLE_CAUSE_TEXT[h.cause]}\n${h.detail}${h.position !== undefined ? `\nbyte position ${h.position}` : ''}`;
}

/** The tooltip of a record row: set only for a record at or above the high watermark. */
export function recordTitle(r: DisplayRow, hw: bigint | null): string | null {
  // Consumers fetch up to the high watermark (FetchIsolation.HIGH_WATERMARK in UnifiedLog.read); it moves once the ISR has the offset (Partition.maybeIncrementLeaderHW).
  if (hw !== null && r.from >= hw) return `offset ${r.from} is at or above the high watermark ${hw}: not yet replicated to every in-sync replica (consumers do not see it)`;
  return null;
}

function setText(t: Text, s: string): void {
  if (t.data !== s) t.data = s;
}

function fill(cell: HTMLElement, t: Text, cls: string, f: { text: string; clip: boolean }): void {
  const c = f.clip ? `${cls} clip` : cls;
  if (cell.className !== c) cell.className = c;
  setText(t, f.text);
}

function flagsKeyOf(flags: readonly RowFlag[]): string {
  if (flags.length === 0) return '';
  let k = '';
  for (const f of flags) k += `${f.kind}:${f.text} `;
  return k;
}

/**
 * The row elements of one table (see the module comment). `container` is the row layer (its
 * children are this class's alone); `scope` is the table's scoped-CSS attribute (`data-v-…`), put on
 * every element made here so the table's styles apply.
 */
export class RowLayer {
  private readonly slots: Slot[] = [];
  /** The columns and formats the elements were made for: a change remakes every row. */
  private shape = '';
  /** The cell widths the texts were cut for: a change patches every row again. */
  private fit = '';
  /** Whether document order may differ from screen order (see {@link settle}). */
  private rotated = false;

  constructor(
    private readonly container: HTMLElement,
    private readonly rowH: number,
    private readonly scope: string | null,
  ) {}

  /** The row shown by a row element (`data-slot`), or undefined. */
  rowOf(el: HTMLElement): DisplayRow | undefined {
    return this.slots[Number(el.dataset.slot)]?.row ?? undefined;
  }

  /**
   * Gives a timestamp cell its tooltip (`<ms> ms since the epoch`) when the mouse enters it, rather
   * than on every patch: a `title` set on an element invalidates its style (the UA's `abbr[title]`
   * rule), 16 restyles per wheel step.
   */
  hover(target: EventTarget | null): void {
    const cell = target instanceof HTMLElement ? target.closest<HTMLElement>('.c-ts') : null;
    const rowEl = cell?.parentElement;
    if (!cell || !rowEl?.dataset.slot) return;
    const r = this.rowOf(rowEl);
    if (r?.kind === 'record') {
      const title = `${r.text.tsMs} ms since the epoch`;
      if (cell.title !== title) cell.title = title;
    }
  }

  /** Whether the elements are in screen order in the document (see {@link settle}). */
  get inOrder(): boolean {
    return !this.rotated;
  }

  /**
   * Shows `v`: row elements whose place left the screen take the places that came on it (in place,
   * no element moved); an element whose row, selection or formats changed is patched; the others are
   * left alone.
   */
  render(v: RowLayerView): void {
    const shape = `${v.showHeaders}|${v.showBatch}|${v.timestampFormat}|${v.valueChars}`;
    if (shape !== this.shape) {
      this.shape = shape;
      for (const s of this.slots) this.forget(s);
    }
    const fit = `${v.cellChars.key}|${v.cellChars.value}|${v.cellChars.hdr}|${v.cellChars.batch}`;
    if (fit !== this.fit) {
      this.fit = fit;
      for (const s of this.slots) s.row = null;
    }
    while (this.slots.length < v.slots) {
      this.slots.push({ el: null, attached: false, kind: null, row: null, pos: Number.NaN, cls: '', title: null, selected: null, cells: null });
    }
    while (this.slots.length > v.slots) {
      const s = this.slots.pop()!;
      s.el?.remove();
    }
    const first = v.rowBase + v.start;
    const end = first + v.slots;
    // Places on screen no slot holds yet.
    let needed: number[] | null = null;
    const held = new Uint8Array(v.slots);
    let free: Slot[] | null = null;
    for (const s of this.slots) {
      // A slot keeps its place while it shows the same row there (or none yet): after a jump the
      // rows are new, every slot is free and they are laid out again in document order.
      const same = s.row === null || v.rows[s.pos - v.rowBase] === s.row;
      if (same && s.pos >= first && s.pos < end && !held[s.pos - first]) held[s.pos - first] = 1;
      else (free ??= []).push(s);
    }
    if (free) {
      for (let i = 0; i < v.slots; i++) if (!held[i]) (needed ??= []).push(first + i);
      // Scrolling: the places that left the screen, in order, take the new places in order, so
      // document order stays a rotation of screen order; a jump (no place kept) starts over in
      // document order.
      if (free.length < this.slots.length) {
        free.sort((a, b) => (Number.isNaN(a.pos) ? 1 : Number.isNaN(b.pos) ? -1 : a.pos - b.pos));
        this.rotated = true;
      } else {
        free = this.domOrder(free);
        this.rotated = false;
      }
      for (let i = 0; i < free.length; i++) free[i]!.pos = needed![i] ?? Number.NaN;
    }
    for (const s of this.slots) this.patch(s, Number.isNaN(s.pos) ? undefined : v.rows[s.pos - v.rowBase], v);
  }

  /**
   * Puts the row elements back in screen order in the document, moving the shorter of the two runs
   * of a rotation (a few elements restyled and laid out once, while nothing scrolls).
   */
  settle(): void {
    if (!this.rotated) return;
    this.rotated = false;
    const els = [...this.container.children].filter((e): e is HTMLElement => e instanceof HTMLElement && e.dataset.slot !== undefined);
    const posOf = (e: HTMLElement): number => this.slots[Number(e.dataset.slot)]?.pos ?? Number.NaN;
    const n = els.length;
    let m = 0;
    for (let i = 1; i < n; i++) if (posOf(els[i]!) < posOf(els[m]!)) m = i;
    const rotation = els.every((e, i) => i === 0 || posOf(els[(m + i) % n]!) > posOf(els[(m + i - 1) % n]!));
    if (rotation) {
      if (m === 0) return;
      if (m <= n - m) for (let i = 0; i < m; i++) this.container.appendChild(els[i]!);
      else for (let i = n - 1; i >= m; i--) this.container.insertBefore(els[i]!, this.container.firstChild);
      return;
    }
    const sorted = [...els].sort((a, b) => posOf(a) - posOf(b));
    let at: ChildNode | null = this.container.firstChild;
    for (const e of sorted) {
      if (e === at) at = e.nextSibling;
      else this.container.insertBefore(e, at);
    }
  }

  /** Takes every element out (the table is unmounted or its columns changed). */
  clear(): void {
    for (const s of this.slots) this.forget(s);
    this.slots.length = 0;
  }

  private domOrder(free: Slot[]): Slot[] {
    const rank = new Map<Element, number>();
    let i = 0;
    for (const c of this.container.children) rank.set(c, i++);
    return free.sort((a, b) => (a.el && a.attached ? (rank.get(a.el) ?? 1e9) : 1e9) - (b.el && b.attached ? (rank.get(b.el) ?? 1e9) : 1e9));
  }

  private forget(s: Slot): void {
    s.el?.remove();
    s.el = null;
    s.attached = false;
    s.kind = null;
    s.row = null;
    s.cells = null;
    s.cls = '';
    s.title = null;
    s.selected = null;
  }

  private make(tag: string, cls: string, parent: Node | null): HTMLElement {
    const el = document.createElement(tag);
    if (cls) el.className = cls;
    if (this.scope) el.setAttribute(this.scope, '');
    parent?.appendChild(el);
    return el;
  }

  private text(parent: Node, s = ''): Text {
    const t = document.createTextNode(s);
    parent.appendChild(t);
    return t;
  }

  /** Puts an unused slot's element back, before the element of the next place (document order). */
  private attach(s: Slot): void {
    const el = s.el!;
    let next: HTMLElement | null = null;
    let nextPos = Number.POSITIVE_INFINITY;
    for (const o of this.slots) {
      if (o !== s && o.attached && o.el && o.pos > s.pos && o.pos < nextPos) {
        next = o.el;
        nextPos = o.pos;
      }
    }
    this.container.insertBefore(el, next);
    s.attached = true;
  }

  private patch(s: Slot, r: DisplayRow | undefined, v: RowLayerView): void {
    if (!r) {
      if (s.attached) {
        s.el!.remove();
        s.attached = false;
      }
      s.row = null;
      return;
    }
    if (s.kind !== r.kind) {
      const old = s.el;
      s.el = r.kind === 'record' ? this.makeRecord(s) : this.makeHole(s);
      s.kind = r.kind;
      s.row = null;
      s.cls = '';
      s.title = null;
      s.selected = null;
      s.el.dataset.slot = String(this.slots.indexOf(s));
      if (old && s.attached) old.replaceWith(s.el);
      else s.attached = false;
    }
    const el = s.el!;
    const top = `${s.pos * this.rowH}px`;
    if (el.style.top !== top) el.style.top = top;
    const selected = r.key === v.selectedKey;
    if (r.kind === 'record') {
      const picked = v.isPicked(r);
      const above = v.hw !== null && r.from >= v.hw;
      const t = r.text;
      const cls = `trow ${t.cls}${selected ? ' selected' : ''}${picked ? ' picked' : ''}${above ? ' above' : ''}`;
      if (cls !== s.cls) {
        el.className = cls;
        s.cls = cls;
      }
      if (picked !== (el.getAttribute('aria-selected') === 'true')) el.setAttribute('aria-selected', String(picked));
      if (s.row !== r) {
        const c = s.cells!;
        el.dataset.offset = t.offset;
        setText(c.off, t.offset);
        if (c.ts) setText(c.ts, t.ts);
        if (c.tsMs) setText(c.tsMs, t.tsMs);
        const fk = flagsKeyOf(t.flags);
        if (fk !== c.flagsKey) {
          c.flagsKey = fk;
          c.flags.textContent = '';
          for (const f of t.flags) {
            const span = this.make('span', `flag ${f.kind}`, c.flags);
            span.dataset.testid = 'flag';
            span.textContent = f.text;
          }
        }
        const cc = v.cellChars;
        fill(c.key, c.keyText, `c-key mono v-${t.keyClass}`, fitCell(t.keyText, cc.key));
        fill(c.value, c.valueText, `c-value mono v-${t.valueClass}`, fitCell(t.valueText, cc.value, v.valueChars));
        if (c.hdr) fill(c.hdr, c.hdrText!, 'c-hdr mono hdr', fitCell(t.headersText, cc.hdr));
        setText(c.size, t.size);
        if (c.batch) fill(c.batch, c.batchText!, 'c-batch mono batch', fitCell(t.batchText, cc.batch));
      }
      const title = recordTitle(r, v.hw);
      if (title !== s.title) {
        if (title === null) el.removeAttribute('title');
        else el.title = title;
        s.title = title;
      }
    } else {
      const cls = `trow hole${selected ? ' selected' : ''}`;
      if (cls !== s.cls) {
        el.className = cls;
        s.cls = cls;
      }
      if (s.row !== r) {
        const h = r.row as HoleRow;
        el.dataset.from = h.from;
        el.dataset.to = h.to;
        el.dataset.cause = h.cause;
        el.title = holeTitle(r);
        el.style.setProperty('--cause', `var(--c-${h.cause})`);
        el.children[1]!.textContent = r.text.offset;
        const text = el.children[2]!;
        text.children[0]!.textContent = h.cause;
        text.children[1]!.textContent = r.text.holeText;
        text.children[2]!.textContent = h.detail;
      }
    }
    s.row = r;
    s.selected = selected;
    if (!s.attached) this.attach(s);
  }

  private makeRecord(s: Slot): HTMLElement {
    const el = this.make('div', 'trow', null);
    el.dataset.testid = 'record-row';
    el.setAttribute('aria-selected', 'false');
    const off = this.text(this.make('div', 'c-off mono num off', el));
    const tsCell = this.make('div', 'c-ts mono', el);
    const fmt = this.shape.split('|')[2];
    const ts = fmt !== 'ms' ? this.text(tsCell) : null;
    const tsMs = fmt !== 'iso' ? this.text(this.make('span', fmt === 'both' ? 'ms' : '', tsCell)) : null;
    const flags = this.make('div', 'c-flags', el);
    flags.dataset.testid = 'record-flags';
    const key = this.make('div', 'c-key mono', el);
    const keyText = this.text(key);
    const value = this.make('div', 'c-value mono', el);
    const valueText = this.text(value);
    const [showHeaders, showBatch] = this.shape.split('|');
    const hdr = showHeaders === 'true' ? this.make('div', 'c-hdr mono hdr', el) : null;
    const hdrText = hdr ? this.text(hdr) : null;
    const size = this.text(this.make('div', 'c-size mono num', el));
    const batch = showBatch === 'true' ? this.make('div', 'c-batch mono batch', el) : null;
    const batchText = batch ? this.text(batch) : null;
    s.cells = { off, tsCell, ts, tsMs, flags, flagsKey: '', key, keyText, value, valueText, hdr, hdrText, size, batch, batchText };
    return el;
  }

  private makeHole(s: Slot): HTMLElement {
    const el = this.make('div', 'trow hole', null);
    el.dataset.testid = 'hole-row';
    this.make('div', 'stripe', el);
    this.make('div', 'mono num off hole-off', el);
    const text = this.make('div', 'hole-text', el);
    this.make('span', 'cause-chip', text);
    this.make('span', '', text);
    this.make('span', 'detail', text);
    s.cells = null;
    return el;
  }
}
