/**
 * Records you can take away (issue 14): the Records view's copy and export actions over the
 * selected records (an offset range: click, shift-click, Ctrl+A; see `records-store.ts`), the
 * context menu's place, and the export dialog's state. Main makes the text and the files
 * (`log.copyRecords`, the `log.export` job: decoded where the decode layer decodes, bytes
 * otherwise); the renderer only puts the text on the clipboard and shows the job's progress.
 */
import { defineStore } from 'pinia';
import { ref } from 'vue';
import type { Req } from '../../../../src-shared/contract.ts';
import { api } from '../../api/client.ts';
import { group } from '../../lib/format.ts';
import { useExplorer } from '../../stores/explorer.ts';
import { useRecords } from './records-store.ts';

/** Clipboard formats, as `log.copyRecords` names them, with their menu labels. */
export const COPY_LABELS = {
  json: 'JSON',
  ndjson: 'NDJSON',
  csv: 'CSV',
  kcat: 'kcat-style text',
  append: 'klx append --records lines',
} as const;
export type CopyFormat = keyof typeof COPY_LABELS;

/** What the export dialog exports. */
export type ExportScope = 'partition' | 'selection' | 'records' | 'range' | 'time';

/** A record of a search result (its partition folder and offset). */
export interface PickedRecord {
  dir: string;
  offset: string;
}

export const useTakeAway = defineStore('take-away', () => {
  /** The context menu's place in the window (px), or null when closed. */
  const menu = ref<{ x: number; y: number } | null>(null);
  /** The export dialog: its first scope and the search result it may export; null when closed. */
  const dialog = ref<{ scope: ExportScope; records: PickedRecord[]; recordsLabel: string } | null>(null);
  /** What the last copy put on the clipboard (the status line under the toolbar). */
  const note = ref<string | null>(null);

  /**
   * Copies the selected records as `format` (at most 10,000 records: main says when more were
   * selected). Rejects only on API errors (reported to the explorer).
   */
  async function copy(format: CopyFormat): Promise<void> {
    menu.value = null;
    const records = useRecords();
    const range = records.selection;
    if (!records.dir || !range) {
      note.value = 'Nothing selected: click a record (Shift+click extends, Ctrl+A selects all), then copy.';
      return;
    }
    try {
      const req: Req<'log.copyRecords'> = { dir: records.dir, from: String(range.from), to: String(range.to), format, isolation: records.isolation };
      const r = await api['log.copyRecords'](req);
      await navigator.clipboard.writeText(r.text);
      const what = `${group(r.records)} record${r.records === 1 ? '' : 's'}`;
      note.value =
        `Copied ${what} as ${COPY_LABELS[format]}` +
        (r.skipped ? ` (${group(r.skipped)} control record${r.skipped === 1 ? '' : 's'} left out: klx append cannot write them)` : '') +
        (r.truncated ? `; the selection holds more: the clipboard takes at most ${group(r.records)}, export the rest to a file.` : '.');
    } catch (err) {
      useExplorer().report(err, 'Copying records');
    }
  }

  /** Opens the export dialog on `scope` (a search result's records for `records`). */
  function openExport(scope: ExportScope, picked: PickedRecord[] = [], label = ''): void {
    menu.value = null;
    dialog.value = { scope, records: picked, recordsLabel: label };
  }

  return { menu, dialog, note, copy, openExport };
});
