/**
 * What a broker does at startup with the leftovers of an interrupted cleaner, segment split or
 * retention (`.swap`, `.cleaned`, `.deleted` files; spec §10.3), worked out without touching
 * anything. Kafka's `LogLoader.load` (3.0 and later, KAFKA-12520), first three passes:
 *
 * 1. `removeTempFilesAndCollectSwapFiles`: every `.deleted` file is deleted; every `.swap` whose
 *    base offset is ≥ the smallest `.cleaned` base offset is part of an incomplete split and deleted
 *    (KAFKA-6264); then every `.cleaned` file is deleted. The other `.swap` files are valid.
 * 2. For the valid `N.log.swap` files, min = smallest base offset, max = largest `readNextOffset`
 *    (the offset after the swap's last batch; its base offset when it holds none). Every file whose
 *    name's offset lies in [min, max) and that is not a `.swap` is deleted: the segments the swap
 *    replaces (with their indexes and producer snapshots).
 * 3. Every remaining `.swap` file (log and index) is renamed to its name without `.swap`.
 *
 * Until that happens, a reader of the folder (this explorer, `klx fetch`, `klx query`) sees the
 * pre-swap segments: {@link pendingSwapsOf} says what differs and {@link PendingSwaps.notice} says
 * it in words. `klx repair` (recovery-plan.ts) uses the same classification.
 */
import { segmentFileName, type PartitionListing, type TransientFile } from '../files/file-names.ts';
import { LogSegment } from '../segment/log-segment.ts';

/** A valid `N.log.swap`: cleaner or split output a broker renames to `N.log` at startup (LogLoader.load). */
export interface SwapFileFacts {
  /** File name, e.g. `00000000000000000000.log.swap`. */
  name: string;
  baseOffset: bigint;
  /** Base offset of its first batch (above `baseOffset` when the cleaner removed the first records: Cleaner.cleanSegments names the file after the group's first segment), or null when it holds none. */
  firstOffset: bigint | null;
  /** Offset after its last batch (Kafka's `LogSegment.readNextOffset`); `baseOffset` when it holds no batch. */
  nextOffset: bigint;
  /** `.log.swap` bytes. */
  size: number;
}

/** What `LogLoader.load` passes 1–3 do with a partition folder's leftovers. See the module comment. */
export interface PendingSwaps {
  /** Valid `.log.swap` files, ascending by base offset. */
  swaps: SwapFileFacts[];
  /** [from, to): files of this offset range (not `.swap`) are deleted before the rename; null without a valid `.log.swap`. */
  range: { from: bigint; to: bigint } | null;
  /** Base offsets of the current segments (`.log` files) in `range`: replaced by the swaps. */
  replacedSegments: bigint[];
  /** Base offsets of current segments a swap holding no batch is renamed over (not in `range`, so not deleted first). */
  overwrittenSegments: bigint[];
  /** Valid index `.swap` files (renamed too). */
  indexSwaps: TransientFile[];
  /** `.swap` files of an incomplete split (base offset ≥ `minCleaned`), deleted. */
  incompleteSplit: TransientFile[];
  /** The smallest `.cleaned` base offset, or null. */
  minCleaned: bigint | null;
  /** `.cleaned` files, deleted. */
  cleaned: TransientFile[];
  /** `.deleted` files, deleted. */
  deleted: TransientFile[];
  /** One paragraph for people: what is pending, what a broker does with it (naming `LogLoader`), what is shown meanwhile. */
  notice: string;
}

/**
 * Classifies the `.swap`, `.cleaned` and `.deleted` files of a partition folder as `LogLoader.load`
 * passes 1–3 do (see the module comment). Reads the end of each valid `.log.swap` (from its last
 * `.index.swap` entry, else the whole file); nothing else.
 * @param dir the partition folder (absolute).
 * @returns null when the folder holds none of these files.
 * @throws KlxError `io-error` when a `.log.swap` cannot be read.
 */
export function pendingSwapsOf(dir: string, listing: PartitionListing): PendingSwaps | null {
  const t = listing.transient.filter((f) => f.suffix !== 'tmp');
  if (t.length === 0) return null;
  const cleaned = t.filter((f) => f.suffix === 'cleaned');
  const deleted = t.filter((f) => f.suffix === 'deleted');
  const minCleaned = cleaned.reduce<bigint | null>((m, f) => (f.baseOffset !== undefined && (m === null || f.baseOffset < m) ? f.baseOffset : m), null);
  const swapFiles = t.filter((f) => f.suffix === 'swap' && f.baseOffset !== undefined);
  const incompleteSplit = swapFiles.filter((f) => minCleaned !== null && f.baseOffset! >= minCleaned);
  const valid = swapFiles.filter((f) => !incompleteSplit.includes(f));
  const swaps: SwapFileFacts[] = valid
    .filter((f) => f.kind === 'log')
    .map((f) => {
      const seg = new LogSegment(dir, f.baseOffset!, undefined, '.swap');
      return { name: f.name, baseOffset: f.baseOffset!, firstOffset: seg.firstBatch()?.baseOffset ?? null, nextOffset: seg.nextOffset(), size: f.size };
    })
    .sort((a, b) => (a.baseOffset < b.baseOffset ? -1 : a.baseOffset > b.baseOffset ? 1 : 0));
  let range: PendingSwaps['range'] = null;
  for (const s of swaps) {
    if (range === null) range = { from: s.baseOffset, to: s.nextOffset };
    else range = { from: s.baseOffset < range.from ? s.baseOffset : range.from, to: s.nextOffset > range.to ? s.nextOffset : range.to };
  }
  const inRange = (o: bigint) => range !== null && o >= range.from && o < range.to;
  const replacedSegments = listing.segments.map((s) => s.baseOffset).filter(inRange);
  const segmentBases = new Set(listing.segments.map((s) => s.baseOffset));
  const overwrittenSegments = swaps.filter((s) => s.nextOffset === s.baseOffset && segmentBases.has(s.baseOffset) && !inRange(s.baseOffset)).map((s) => s.baseOffset);
  const facts = { swaps, range, replacedSegments, overwrittenSegments, indexSwaps: valid.filter((f) => f.kind !== 'log'), incompleteSplit, minCleaned, cleaned, deleted };
  return { ...facts, notice: noticeOf(facts) };
}

const seg = (b: bigint) => segmentFileName(b, '.log');
const names = (fs: { name: string }[], max = 4) => (fs.length <= max ? fs.map((f) => f.name).join(', ') : `${fs.slice(0, max).map((f) => f.name).join(', ')} and ${fs.length - max} more`);
const segs = (bs: bigint[], max = 4) => (bs.length <= max ? bs.map(seg).join(', ') : `${bs.slice(0, max).map(seg).join(', ')} and ${bs.length - max} more`);

function noticeOf(p: Omit<PendingSwaps, 'notice'>): string {
  const parts: string[] = [];
  if (p.swaps.length > 0) {
    const what = p.swaps.map((s) => `${s.name} (${s.nextOffset === s.baseOffset || s.firstOffset === null ? 'no batch' : `offsets ${s.firstOffset}..${s.nextOffset - 1n}`})`).join(', ');
    let text = `Pending swap of an interrupted cleaner or segment split: ${what}. At startup a broker completes it (LogLoader.load): `;
    text += p.replacedSegments.length > 0 ? `it deletes the files of the segments with base offsets in [${p.range!.from}, ${p.range!.to}) (${segs(p.replacedSegments)}) and renames` : 'it renames';
    text += p.swaps.length + p.indexSwaps.length === 1 ? ' the .swap file to its final name' : ' the .swap files to their final names';
    if (p.overwrittenSegments.length > 0) text += `; a .swap holding no batch is renamed over ${segs(p.overwrittenSegments)}, which then holds nothing (klx repair keeps that segment instead)`;
    text += `. Until then the records shown here are those of the pre-swap segments${p.replacedSegments.length > 0 ? `, not the swap's` : ''}; klx repair completes the swap as the broker does.`;
    parts.push(text);
  }
  if (p.incompleteSplit.length > 0) {
    parts.push(`${names(p.incompleteSplit)} ${p.incompleteSplit.length === 1 ? 'is' : 'are'} part of an incomplete split (base offset ≥ ${p.minCleaned}, the smallest .cleaned base offset): a broker deletes ${p.incompleteSplit.length === 1 ? 'it' : 'them'} at startup (LogLoader.removeTempFilesAndCollectSwapFiles, KAFKA-6264) and keeps the original segment, the one shown here.`);
  }
  const gone = [...p.cleaned, ...p.deleted];
  if (gone.length > 0) {
    const kinds = [p.cleaned.length > 0 && `${p.cleaned.length} .cleaned (unfinished cleaner or split output)`, p.deleted.length > 0 && `${p.deleted.length} .deleted (already removed from the log by the cleaner or retention)`].filter(Boolean).join(' and ');
    parts.push(`Leftover ${kinds}: ${names(gone)}. A broker deletes ${gone.length === 1 ? 'it' : 'them'} at startup (LogLoader.removeTempFilesAndCollectSwapFiles); ${gone.length === 1 ? 'it holds' : 'they hold'} no record a broker serves, and none is shown here. klx repair deletes ${gone.length === 1 ? 'it' : 'them'} too.`);
  }
  return parts.join(' ');
}
