/**
 * One Monaco editor's life inside a component: Monaco is imported on first use (so the app never
 * waits on its 6 MB), the editor is created in `host` once it has loaded and the component is
 * still mounted, its theme follows the app's light/dark setting, its text, language and options
 * follow the component's, and editor and model are disposed on unmount. Until `ready` is true the
 * component shows its own plain fallback (a <pre> or a <textarea>).
 */
import { onMounted, onUnmounted, ref, shallowRef, watch, type Ref, type ShallowRef } from 'vue';
import type * as Monaco from 'monaco-editor/editor/editor.api';
import { useSettings } from '../stores/settings.ts';

/** The Monaco API (`monaco-editor/editor/editor.api`), as loaded by `monaco-setup.ts`. */
export type MonacoApi = typeof Monaco;

/** Options of {@link useMonacoEditor}. */
export interface MonacoEditorOptions {
  /** The text to show; when it changes from outside, the model's text is replaced (see `replace`). */
  value: () => string;
  /** The model's language (`json`, `plaintext`, `sql`); followed when it changes. */
  language: () => string;
  /**
   * Editor options on top of the shared ones (automatic layout, no minimap, no scrolling past the
   * last line, the app's monospace font, no ambiguous-character highlight, the theme); applied
   * again with `updateOptions` whenever what the function reads changes (e.g. a `wrap` prop).
   */
  options: () => Monaco.editor.IEditorOptions & Monaco.editor.IGlobalEditorOptions;
  /**
   * How an outside change of `value` reaches the model: `set` (`setValue`, the default) or `edit`
   * (one undoable edit, so Ctrl+Z brings the previous text back).
   */
  replace?: 'set' | 'edit';
  /** Called with the model's text after each change of its content (typing, and outside changes). */
  onChange?: (text: string) => void;
  /** Called once the editor exists (before `ready` turns true): add commands, providers, markers. */
  onReady?: (monaco: MonacoApi, editor: Monaco.editor.IStandaloneCodeEditor, model: Monaco.editor.ITextModel) => void;
}

/** What {@link useMonacoEditor} gives the component. */
export interface MonacoEditor {
  /** True once the editor is created (the component then hides its fallback). */
  readonly ready: Ref<boolean>;
  /** The editor, null until ready and after unmount. */
  readonly editor: ShallowRef<Monaco.editor.IStandaloneCodeEditor | null>;
  /** The Monaco API once loaded, else null. */
  monaco(): MonacoApi | null;
  /** The editor's model once created, else null. */
  model(): Monaco.editor.ITextModel | null;
}

const FONT_FAMILY = "ui-monospace, 'SF Mono', 'JetBrains Mono', Menlo, Consolas, 'DejaVu Sans Mono', monospace";

/** Monaco's theme for the app's effective theme. */
function themeOf(effective: 'light' | 'dark'): string {
  return effective === 'dark' ? 'vs-dark' : 'vs';
}

/**
 * Creates a Monaco editor in the element `host` refers to when the component mounts (see the
 * module comment) and disposes it on unmount. Call from a component's `setup`.
 */
export function useMonacoEditor(host: Readonly<Ref<HTMLElement | null>>, options: MonacoEditorOptions): MonacoEditor {
  const settings = useSettings();
  const editor = shallowRef<Monaco.editor.IStandaloneCodeEditor | null>(null);
  const ready = ref(false);
  let api: MonacoApi | null = null;
  let model: Monaco.editor.ITextModel | null = null;
  let disposed = false;

  onMounted(async () => {
    const { monaco } = await import('./monaco-setup.ts');
    if (disposed || !host.value) return;
    api = monaco;
    const m = monaco.editor.createModel(options.value(), options.language());
    model = m;
    const ed = monaco.editor.create(host.value, {
      model: m,
      automaticLayout: true,
      minimap: { enabled: false },
      scrollBeyondLastLine: false,
      unicodeHighlight: { ambiguousCharacters: false },
      fontFamily: FONT_FAMILY,
      ...options.options(),
      theme: themeOf(settings.effectiveTheme),
    });
    if (options.onChange) {
      const onChange = options.onChange;
      m.onDidChangeContent(() => onChange(m.getValue()));
    }
    options.onReady?.(monaco, ed, m);
    editor.value = ed;
    ready.value = true;
  });

  watch(options.value, (v) => {
    if (!model || model.getValue() === v) return;
    if (options.replace === 'edit') {
      editor.value?.pushUndoStop();
      model.pushEditOperations([], [{ range: model.getFullModelRange(), text: v }], () => null);
      editor.value?.pushUndoStop();
    } else {
      model.setValue(v);
    }
  });
  watch(options.language, (l) => {
    if (api && model) api.editor.setModelLanguage(model, l);
  });
  watch(options.options, (o) => editor.value?.updateOptions(o));
  watch(
    () => settings.effectiveTheme,
    (t) => api?.editor.setTheme(themeOf(t)),
  );

  onUnmounted(() => {
    disposed = true;
    editor.value?.dispose();
    editor.value = null;
    model?.dispose();
    model = null;
  });

  return { ready, editor, monaco: () => api, model: () => model };
}
