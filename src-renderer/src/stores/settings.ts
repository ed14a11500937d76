/**
 * UI settings: theme (system / light / dark, applied as `data-theme` on <html> and following
 * prefers-color-scheme in "system"), the "Open for writing" state mirrored from the main process,
 * and view preferences. Persisted in localStorage.
 */
import { defineStore } from 'pinia';
import { computed, ref, watch } from 'vue';

export type ThemeChoice = 'system' | 'light' | 'dark';

const KEY = 'klx.settings.v1';

/** How the records table shows timestamps: ISO-8601 UTC with milliseconds, epoch ms, or both. */
export type TimestampFormat = 'iso' | 'ms' | 'both';

interface Saved {
  theme?: ThemeChoice;
  hideEmpty?: boolean;
  inspectorOpen?: boolean;
  sideWidth?: number;
  inspectorWidth?: number;
  timestampFormat?: TimestampFormat;
}

function load(): Saved {
  try {
    return JSON.parse(localStorage.getItem(KEY) ?? '{}') as Saved;
  } catch {
    return {};
  }
}

export const useSettings = defineStore('settings', () => {
  const saved = load();
  const theme = ref<ThemeChoice>(saved.theme ?? 'system');
  const hideEmpty = ref(saved.hideEmpty ?? true);
  const inspectorOpen = ref(saved.inspectorOpen ?? true);
  /** Widths in px of the log tree and of the inspector (dragged with the splitters). */
  const sideWidth = ref(saved.sideWidth ?? 264);
  const inspectorWidth = ref(saved.inspectorWidth ?? Math.round(Math.min(420, Math.max(320, window.innerWidth * 0.25))));
  const timestampFormat = ref<TimestampFormat>(saved.timestampFormat ?? 'iso');
  /** "Open for writing" as the main process last reported it (default off; see `session.setWriteMode`). */
  const writeMode = ref(false);
  const systemDark = ref(typeof matchMedia === 'function' && matchMedia('(prefers-color-scheme: dark)').matches);
  if (typeof matchMedia === 'function') {
    matchMedia('(prefers-color-scheme: dark)').addEventListener('change', (e) => (systemDark.value = e.matches));
  }
  const effectiveTheme = computed<'light' | 'dark'>(() => (theme.value === 'system' ? (systemDark.value ? 'dark' : 'light') : theme.value));

  watch(
    effectiveTheme,
    (t) => {
      document.documentElement.dataset.theme = t;
    },
    { immediate: true },
  );
  watch([theme, hideEmpty, inspectorOpen, sideWidth, inspectorWidth, timestampFormat], () => {
    const s: Saved = { theme: theme.value, hideEmpty: hideEmpty.value, inspectorOpen: inspectorOpen.value, sideWidth: sideWidth.value, inspectorWidth: inspectorWidth.value, timestampFormat: timestampFormat.value };
    localStorage.setItem(KEY, JSON.stringify(s));
  });

  /** system → light → dark → system. */
  function cycleTheme(): void {
    theme.value = theme.value === 'system' ? 'light' : theme.value === 'light' ? 'dark' : 'system';
  }

  /** iso → ms → both → iso. */
  function cycleTimestampFormat(): void {
    timestampFormat.value = timestampFormat.value === 'iso' ? 'ms' : timestampFormat.value === 'ms' ? 'both' : 'iso';
  }

  return { theme, effectiveTheme, hideEmpty, inspectorOpen, sideWidth, inspectorWidth, timestampFormat, writeMode, cycleTheme, cycleTimestampFormat };
});
