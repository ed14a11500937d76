/**
 * The Edit view's state: the batch being composed (records with key, value, headers, timestamp,
 * tombstone; the batch's codec and timestamp type), its preview (`edit.preview`), the append
 * (`edit.append`, sending back exactly the previewed request with the preview's clock and
 * fingerprint), and the segment roll (`edit.rollPreview` → `edit.roll`).
 *
 * A preview is "current" only while nothing in the batch changed since it was taken
 * (`revision`) and the same partition is selected; only a current preview can be appended, so what
 * is written is what was shown. Errors of previews and writes are kept here and shown in the
 * preview panel, where the user acts on them (a stale preview: preview again; a held lock: close the
 * other writer); nothing fails silently.
 */
import { defineStore } from 'pinia';
import { computed, nextTick, ref, shallowRef, watch } from 'vue';
import { KlxApiError } from '../../../../src-shared/client.ts';
import type { Req } from '../../../../src-shared/contract.ts';
import { BASE64_PATTERN, EDIT_LIMITS, type EditAppendResult, type EditBytes, type EditCompression, type EditPreview, type EditRecord, type EditRollResult, type EditTimestampType } from '../../../../src-shared/edit-types.ts';
import { api, client } from '../../api/client.ts';
import { toBase64 } from '../../lib/bytes.ts';
import { toUiError, type UiError } from '../../lib/errors.ts';
import { parseTimestamp } from '../../lib/format.ts';
import { useCleanup } from '../cleanup/cleanup-store.ts';
import { useExplorer } from '../../stores/explorer.ts';
import { useRecords } from '../records/records-store.ts';

/** How a key is typed: UTF-8 text, hex digits, base64, or no key at all. */
export type KeyMode = 'text' | 'hex' | 'base64' | 'null';
/** How a value is typed: UTF-8 text, JSON (validated, sent as typed), hex digits or base64. A null value is the tombstone switch. */
export type ValueMode = 'text' | 'json' | 'hex' | 'base64';

/** One header row of the composer. */
export interface DraftHeader {
  id: number;
  key: string;
  value: string;
  /** A header without value (Kafka allows null header values: DefaultRecord writes its length as −1). */
  isNull: boolean;
}

/** One record of the batch as the composer holds it. */
export interface DraftRecord {
  id: number;
  keyMode: KeyMode;
  key: string;
  valueMode: ValueMode;
  value: string;
  /** A delete marker: the value is null and the editor is disabled. */
  tombstone: boolean;
  headers: DraftHeader[];
  /** `now`: the preview's clock; `set`: the typed `timestamp` (ISO-8601, UTC without zone, or epoch ms). */
  tsMode: 'now' | 'set';
  timestamp: string;
}

/** What is wrong with a draft record, per field (null: fine), and its size in bytes. */
export interface DraftCheck {
  key: string | null;
  value: string | null;
  timestamp: string | null;
  /** Key + value + header bytes (what the 16 MiB limit counts). */
  bytes: number;
  /** The parsed timestamp (ms) when set and valid. */
  timestampMs: string | null;
  ok: boolean;
}

let nextId = 1;

/** A blank record: text key, JSON value, no header, timestamp now. */
export function blankRecord(): DraftRecord {
  return { id: nextId++, keyMode: 'text', key: '', valueMode: 'json', value: '', tombstone: false, headers: [], tsMode: 'now', timestamp: '' };
}

function copyRecord(r: DraftRecord): DraftRecord {
  return { ...r, id: nextId++, headers: r.headers.map((h) => ({ ...h, id: nextId++ })) };
}

/** Creates a header row. */
export function blankHeader(): DraftHeader {
  return { id: nextId++, key: '', value: '', isNull: false };
}

const utf8 = new TextEncoder();

/** Hex digits (spaces, newlines and a `0x` prefix allowed) to bytes; null when not hex. */
export function hexToBytes(text: string): Uint8Array | null {
  const t = text.replace(/0x/gi, '').replace(/[\s:,-]/g, '');
  if (!/^[0-9a-fA-F]*$/.test(t) || t.length % 2 !== 0) return null;
  const out = new Uint8Array(t.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(t.slice(i * 2, i * 2 + 2), 16);
  return out;
}

/** Base64 as typed (whitespace allowed, URL-safe alphabet accepted, padding added) in the standard padded form; null when invalid. */
export function normalizeBase64(text: string): string | null {
  let t = text.replace(/\s+/g, '').replace(/-/g, '+').replace(/_/g, '/');
  if (t.length % 4 === 1) return null;
  if (!t.includes('=')) t += '='.repeat((4 - (t.length % 4)) % 4);
  return BASE64_PATTERN.test(t) ? t : null;
}

function base64Bytes(b64: string): number {
  const pad = b64.endsWith('==') ? 2 : b64.endsWith('=') ? 1 : 0;
  return (b64.length / 4) * 3 - pad;
}

/** The typed text as wire bytes in the given mode, or an error sentence. */
function encode(mode: KeyMode | ValueMode, text: string): { bytes: EditBytes; size: number } | { error: string } {
  switch (mode) {
    case 'null':
      return { bytes: null, size: 0 };
    case 'hex': {
      const b = hexToBytes(text);
      return b === null ? { error: 'not hex: pairs of 0–9 a–f digits (spaces allowed)' } : { bytes: { base64: toBase64(b) }, size: b.length };
    }
    case 'base64': {
      const b = normalizeBase64(text);
      return b === null ? { error: 'not base64 (A–Z a–z 0–9 + / or - _, optional = padding)' } : { bytes: { base64: b }, size: base64Bytes(b) };
    }
    default:
      return { bytes: { text }, size: utf8.encode(text).length };
  }
}

/** Where JSON.parse failed, as "line L, column C: reason". */
function jsonError(text: string): string | null {
  if (text.trim() === '') return 'empty: JSON needs a value (switch to text for an empty value)';
  try {
    JSON.parse(text);
    return null;
  } catch (err) {
    const msg = (err as Error).message;
    const m = /position (\d+)/.exec(msg);
    if (!m) return msg;
    const pos = Number(m[1]);
    const before = text.slice(0, pos).split('\n');
    return `line ${before.length}, column ${before[before.length - 1]!.length + 1}: ${msg.replace(/ in JSON at position \d+.*$/, '').replace(/\s*\(line \d+ column \d+\)$/, '')}`;
  }
}

/** Checks one draft record. */
export function checkRecord(r: DraftRecord): DraftCheck {
  let bytes = 0;
  const k = encode(r.keyMode, r.key);
  const keyErr = 'error' in k ? k.error : null;
  if (!('error' in k)) bytes += k.size;
  let valueErr: string | null = null;
  if (!r.tombstone) {
    const v = encode(r.valueMode, r.value);
    if ('error' in v) valueErr = v.error;
    else {
      bytes += v.size;
      if (r.valueMode === 'json') valueErr = jsonError(r.value);
    }
  }
  for (const h of r.headers) bytes += utf8.encode(h.key).length + (h.isNull ? 0 : utf8.encode(h.value).length);
  let tsErr: string | null = null;
  let timestampMs: string | null = null;
  if (r.tsMode === 'set') {
    timestampMs = parseTimestamp(r.timestamp);
    if (timestampMs === null) tsErr = 'a date-time (2024-05-29 16:26:40.000, UTC unless a zone is given) or epoch ms';
    else if (BigInt(timestampMs) < -1n || BigInt(timestampMs) > 9223372036854775807n) {
      tsErr = 'epoch ms must be −1 (none) or 0 and above';
      timestampMs = null;
    }
  }
  if (bytes > EDIT_LIMITS.recordBytes) valueErr ??= `the record holds ${bytes} bytes; at most 16 MiB per record`;
  return { key: keyErr, value: valueErr, timestamp: tsErr, bytes, timestampMs, ok: keyErr === null && valueErr === null && tsErr === null };
}

/** The draft as the wire record (assumes {@link checkRecord} passed). */
function toWire(r: DraftRecord): EditRecord {
  const k = encode(r.keyMode, r.key);
  const v = r.tombstone ? { bytes: null } : encode(r.valueMode, r.value);
  const out: EditRecord = {
    key: 'error' in k ? null : k.bytes,
    value: 'error' in v ? null : v.bytes,
    headers: r.headers.map((h) => ({ key: h.key, value: h.isNull ? null : { text: h.value } })),
    tombstone: r.tombstone,
  };
  if (r.tsMode === 'set') out.timestamp = parseTimestamp(r.timestamp) ?? undefined;
  return out;
}

/** An error shown in the preview panel, with what the user can do about it. */
export interface PanelError extends UiError {
  /** The partition changed since the preview: offer "Preview again". */
  stale: boolean;
}

function panelError(err: unknown, context: string): PanelError {
  const e = toUiError(err, context);
  const stale = err instanceof KlxApiError && err.info.details?.stale === true;
  if (e.code === 'locked') e.hint = 'Another writer has this partition open: a klx command or another Kafka Log Explorer window. Let it finish (or close it), then preview again. Never write to the folder of a running broker.';
  if (stale) e.hint = 'Preview again to see what the append would do now.';
  // invalid-record: the engine's checks follow LogValidator / UnifiedLog.analyzeAndValidateRecords (RecordTooLargeException, keyless records on a compacted topic)
  if (e.code === 'invalid-record') e.hint = 'A broker would refuse this batch too. Change the records, or the topic config in klx-topic.properties (max.message.bytes, cleanup.policy).';
  if (e.code === 'invalid-config') e.hint = 'Fix the value in the partition folder\'s klx-topic.properties.';
  if (err instanceof KlxApiError && err.info.details?.status === 413) {
    e.hint = 'The request is larger than the bridge accepts (90 MiB): append at most 64 MiB of records per batch, or use `klx append DIR --records FILE.ndjson`.';
  }
  return { ...e, stale };
}

export const useEdit = defineStore('edit', () => {
  const records = ref<DraftRecord[]>([blankRecord()]);
  const selectedId = ref<number>(records.value[0]!.id);
  const compression = ref<EditCompression>('none');
  /** null: the topic's message.timestamp.type. */
  const timestampType = ref<EditTimestampType | null>(null);
  /** Write a CreateTime a broker refuses (LogValidator.validateTimestamp), as `klx append --allow-timestamp-out-of-range`. */
  const allowTimestampOutOfRange = ref(false);

  /** Bumped on every change of the batch: a preview is current only for the revision it was taken at. */
  const revision = ref(0);
  watch([records, compression, timestampType, allowTimestampOutOfRange], () => revision.value++, { deep: true });

  const preview = shallowRef<EditPreview | null>(null);
  const previewRevision = ref(-1);
  /** The exact request the preview was computed for (sent again, with `now` and `fingerprint`, by append). */
  let previewedRequest: Req<'edit.preview'> | null = null;
  const previewing = ref(false);
  const appending = ref(false);
  const error = shallowRef<PanelError | null>(null);
  const result = shallowRef<EditAppendResult | null>(null);
  /** The records view shows the partition as it is after the append (the reload after log.changed finished). */
  const resultReady = ref(false);

  const roll = shallowRef<EditRollResult | null>(null);
  const rollOpen = ref(false);
  const rolling = ref(false);
  const rollError = shallowRef<PanelError | null>(null);
  const rollDone = shallowRef<EditRollResult | null>(null);

  const explorer = useExplorer();
  const dir = computed(() => explorer.partition?.dir ?? null);

  const selected = computed(() => records.value.find((r) => r.id === selectedId.value) ?? records.value[0]!);
  const checks = computed(() => new Map(records.value.map((r) => [r.id, checkRecord(r)])));
  const allValid = computed(() => [...checks.value.values()].every((c) => c.ok));
  const totalBytes = computed(() => [...checks.value.values()].reduce((s, c) => s + c.bytes, 0));
  /** A `log.changed` event named the previewed partition after the preview (a cleanup, another window): its fingerprint no longer holds. */
  const changedOnDisk = ref(false);
  const current = computed(() => preview.value !== null && previewRevision.value === revision.value && preview.value.dir === dir.value && !changedOnDisk.value);
  client.onEvent((event) => {
    if (event.type !== 'log.changed') return;
    if (preview.value && event.dirs.includes(preview.value.dir)) changedOnDisk.value = true;
    // A roll preview shown for a partition that changed under it: preview the roll again.
    if (rollOpen.value && !rolling.value && roll.value && event.dirs.includes(roll.value.dir)) void previewRollNow();
  });
  const canAppend = computed(() => current.value && !appending.value && preview.value!.lock?.stale !== false);

  // A different partition: previews and results belong to the old one.
  watch(dir, () => {
    preview.value = null;
    error.value = null;
    result.value = null;
    roll.value = null;
    rollOpen.value = false;
    rollError.value = null;
    rollDone.value = null;
  });

  function select(id: number): void {
    selectedId.value = id;
  }

  function addRecord(): void {
    const r = blankRecord();
    const cur = selected.value;
    // Keep the modes of the record being edited: a batch is usually uniform.
    r.keyMode = cur.keyMode;
    r.valueMode = cur.valueMode;
    records.value = [...records.value, r];
    selectedId.value = r.id;
  }

  function duplicate(id = selectedId.value): void {
    const i = records.value.findIndex((r) => r.id === id);
    if (i < 0) return;
    const c = copyRecord(records.value[i]!);
    records.value = [...records.value.slice(0, i + 1), c, ...records.value.slice(i + 1)];
    selectedId.value = c.id;
  }

  function remove(id = selectedId.value): void {
    if (records.value.length === 1) {
      const r = blankRecord();
      records.value = [r];
      selectedId.value = r.id;
      return;
    }
    const i = records.value.findIndex((r) => r.id === id);
    if (i < 0) return;
    records.value = records.value.filter((r) => r.id !== id);
    if (selectedId.value === id) selectedId.value = records.value[Math.min(i, records.value.length - 1)]!.id;
  }

  /** Starts a new, empty batch; its record keeps the key and value formats of the record being edited. */
  function clear(): void {
    const r = blankRecord();
    r.keyMode = selected.value.keyMode;
    r.valueMode = selected.value.valueMode;
    records.value = [r];
    selectedId.value = r.id;
    result.value = null;
    error.value = null;
  }

  /** The preview request of the batch as composed (null when a record is invalid). */
  function request(): Req<'edit.preview'> | null {
    const d = dir.value;
    if (!d || !allValid.value) return null;
    const req: Req<'edit.preview'> = { dir: d, records: records.value.map(toWire), compression: compression.value };
    if (timestampType.value) req.timestampType = timestampType.value;
    if (allowTimestampOutOfRange.value) req.allowTimestampOutOfRange = true;
    return req;
  }

  /** Previews the batch as composed. */
  async function runPreview(): Promise<void> {
    const req = request();
    if (!req) {
      const bad = records.value.findIndex((r) => !checks.value.get(r.id)!.ok);
      if (bad >= 0) selectedId.value = records.value[bad]!.id;
      return;
    }
    const rev = revision.value;
    previewing.value = true;
    error.value = null;
    result.value = null;
    // Previewing an append leaves the roll panel (the append preview is what the user asked for).
    rollOpen.value = false;
    try {
      const p = await api['edit.preview'](req);
      if (rev !== revision.value || req.dir !== dir.value) return;
      preview.value = p;
      changedOnDisk.value = false;
      previewRevision.value = rev;
      previewedRequest = req;
    } catch (err) {
      preview.value = null;
      error.value = panelError(err, 'Preview of the append');
    } finally {
      previewing.value = false;
    }
  }

  /** Appends the current preview's batch. */
  async function runAppend(): Promise<void> {
    const p = preview.value;
    if (!current.value || !p || !previewedRequest) return;
    appending.value = true;
    error.value = null;
    try {
      const r = await api['edit.append']({ ...previewedRequest, now: p.now, fingerprint: p.fingerprint });
      result.value = r;
      resultReady.value = false;
      preview.value = null;
      void waitForReload(r);
    } catch (err) {
      error.value = panelError(err, 'Append');
      if (error.value.stale) preview.value = null;
    } finally {
      appending.value = false;
    }
  }

  /**
   * Waits until the views show the partition after the append (the `log.changed` reload updated the
   * header and the records table); reloads them itself if that has not happened within 3 s.
   */
  async function waitForReload(r: EditAppendResult): Promise<void> {
    const recs = useRecords();
    const leo = BigInt(r.logEndOffset);
    const done = () => explorer.partition?.dir === r.dir && explorer.partition.logEndOffset === r.logEndOffset && recs.dir === r.dir && recs.logEnd === leo && !recs.jumping;
    const start = Date.now();
    let nudged = false;
    while (!done()) {
      if (result.value !== r) return;
      if (!nudged && Date.now() - start > 3000) {
        nudged = true;
        await explorer.reloadDirs([r.dir]);
      }
      if (Date.now() - start > 15000) break;
      await new Promise((res) => setTimeout(res, 50));
    }
    if (result.value === r) resultReady.value = true;
  }

  /** Opens the records view at the first appended offset. */
  async function showInRecords(): Promise<void> {
    const r = result.value;
    if (!r) return;
    explorer.view = 'records';
    await nextTick();
    await useRecords().jump(BigInt(r.baseOffset));
  }

  /**
   * The way back from an append: the Cleanup view with retention selected and, after an append,
   * "delete records before offset" set to the offset after the appended records (it removes them
   * with everything before them: no Kafka request removes a log's end; only a replica truncates its own tail, UnifiedLog.truncateTo).
   */
  function gotoCleanup(): void {
    const c = useCleanup();
    c.form.operation = 'retention';
    c.form.scope = 'partition';
    if (result.value && result.value.dir === dir.value) c.form.deleteBeforeOffset = (BigInt(result.value.lastOffset) + 1n).toString();
    explorer.view = 'cleanup';
  }

  /** Ctrl+Enter: append a current preview, else preview. */
  async function submit(): Promise<void> {
    if (previewing.value || appending.value) return;
    if (canAppend.value) await runAppend();
    else await runPreview();
  }

  /** Opens the roll panel with a fresh roll preview. */
  async function previewRollNow(): Promise<void> {
    const d = dir.value;
    if (!d) return;
    rollOpen.value = true;
    rollDone.value = null;
    rollError.value = null;
    roll.value = null;
    try {
      const r = await api['edit.rollPreview']({ dir: d });
      if (d === dir.value) roll.value = r;
    } catch (err) {
      rollError.value = panelError(err, 'Preview of the roll');
    }
  }

  /** Rolls the active segment as previewed. */
  async function runRoll(): Promise<void> {
    const r = roll.value;
    const d = dir.value;
    if (!r || !d || !r.rolled) return;
    rolling.value = true;
    rollError.value = null;
    try {
      rollDone.value = await api['edit.roll']({ dir: d, fingerprint: r.fingerprint });
      roll.value = null;
      // Done: back to composing (the result stays shown above the append preview).
      rollOpen.value = false;
      // Any append preview was taken before the roll.
      preview.value = null;
    } catch (err) {
      rollError.value = panelError(err, 'Roll');
      if (rollError.value.stale) roll.value = null;
    } finally {
      rolling.value = false;
    }
  }

  function closeRoll(): void {
    rollOpen.value = false;
    roll.value = null;
    rollError.value = null;
    rollDone.value = null;
  }

  return {
    records,
    selectedId,
    selected,
    compression,
    timestampType,
    allowTimestampOutOfRange,
    revision,
    checks,
    allValid,
    totalBytes,
    preview,
    current,
    changedOnDisk,
    canAppend,
    previewing,
    appending,
    error,
    result,
    resultReady,
    roll,
    rollOpen,
    rolling,
    rollError,
    rollDone,
    select,
    addRecord,
    duplicate,
    remove,
    clear,
    runPreview,
    runAppend,
    submit,
    showInRecords,
    gotoCleanup,
    previewRollNow,
    runRoll,
    closeRoll,
  };
});
