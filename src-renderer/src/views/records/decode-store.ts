/**
 * The format choices the records table and the inspector decode with (issue 11): per topic and per
 * side (key, value), `auto` by default, persisted per opened folder by main (`decode.setChoice`, in
 * the app's own settings). This store only mirrors them: it reads the choices of the folder holding
 * the shown partition, sends a change to main, and when main announces one (`decode.choices`
 * event: also a change made in another window or through the bridge) it bumps {@link version} and
 * reloads the records table around its position, so summaries and the inspector are decoded again.
 * Schema files given for a topic side (`decode.setSchema`) are kept with the choices the same way.
 * The renderer decodes nothing itself.
 */
import { defineStore } from 'pinia';
import { ref, shallowRef } from 'vue';
import { AUTO_FORMAT, type DecodeSide, type FormatChoicesWire, type FormatInfo, type UserSchemaWire } from '../../../../src-shared/decode-types.ts';
import { api, client } from '../../api/client.ts';
import { useExplorer } from '../../stores/explorer.ts';
import { useRecords } from './records-store.ts';

export const useDecode = defineStore('decode', () => {
  /** Every format main knows, `auto` first (loaded once). */
  const formats = shallowRef<FormatInfo[]>([]);
  /** The opened folder whose choices are shown, and its choices. */
  const root = ref<string | null>(null);
  const choices = shallowRef<FormatChoicesWire>({});
  /** Bumped whenever the choices in force change: decoded views fetch again. */
  const version = ref(0);
  const saving = ref(false);
  let formatsLoading: Promise<void> | null = null;

  function loadFormats(): Promise<void> {
    return (formatsLoading ??= api['decode.formats']({}).then(
      (r) => void (formats.value = r.formats),
      (err: unknown) => {
        formatsLoading = null;
        useExplorer().report(err, 'Reading the decode formats');
      },
    ));
  }

  /** Reads the choices of the folder holding `dir` (a partition folder). */
  async function load(dir: string): Promise<void> {
    void loadFormats();
    try {
      const r = await api['decode.choices']({ path: dir });
      if (useRecords().dir !== dir) return;
      root.value = r.root;
      choices.value = r.choices;
    } catch (err) {
      useExplorer().report(err, `Reading the format choices of ${dir}`);
    }
  }

  /** The choice in force for `topic`'s `side` (`auto` when none). */
  function choiceFor(topic: string | null, side: DecodeSide): string {
    if (topic === null) return AUTO_FORMAT;
    return choices.value[topic]?.[side] ?? AUTO_FORMAT;
  }

  /** Chooses `format` for the shown topic's `side`; the table and inspector follow main's `decode.choices` event. */
  async function choose(side: DecodeSide, format: string): Promise<void> {
    const records = useRecords();
    const dir = records.dir;
    const topic = records.topic;
    if (!dir || !topic) return;
    saving.value = true;
    try {
      const r = await api['decode.setChoice']({ path: dir, topic, side, format });
      apply(r.root, r.choices);
    } catch (err) {
      useExplorer().report(err, `Choosing the ${side} format of ${topic}`);
    } finally {
      saving.value = false;
    }
  }

  /** The schema files given for the shown topic's `side`, or null. */
  function schemaFor(topic: string | null, side: DecodeSide): UserSchemaWire | null {
    if (topic === null) return null;
    return (side === 'key' ? choices.value[topic]?.keySchema : choices.value[topic]?.valueSchema) ?? null;
  }

  /**
   * Gives schema files (the schema first, then what it imports) for the shown topic's `side`, or
   * removes them (`null`); main checks they compile and keeps them with the choices.
   * @returns true when main took them (else the error is reported)
   */
  async function setSchema(side: DecodeSide, schema: UserSchemaWire | null): Promise<boolean> {
    const records = useRecords();
    const dir = records.dir;
    const topic = records.topic;
    if (!dir || !topic) return false;
    saving.value = true;
    try {
      const r = await api['decode.setSchema']({ path: dir, topic, side, schema });
      apply(r.root, r.choices);
      return true;
    } catch (err) {
      useExplorer().report(err, `Giving the ${side} schema of ${topic}`);
      return false;
    } finally {
      saving.value = false;
    }
  }

  /** Takes main's choices of `r`; when they differ from those shown, decodes again. */
  function apply(r: string, next: FormatChoicesWire): void {
    if (root.value !== r) return;
    if (JSON.stringify(next) === JSON.stringify(choices.value)) return;
    choices.value = next;
    version.value++;
    void useRecords().reload();
  }

  client.onEvent((e) => {
    if (e.type === 'decode.choices') apply(e.root, e.choices);
  });

  return { formats, root, choices, version, saving, loadFormats, load, choiceFor, choose, schemaFor, setSchema };
});
