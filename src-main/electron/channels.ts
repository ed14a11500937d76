/**
 * IPC channel names shared by the main process and the preload: one `invoke` channel per contract
 * method (`klx:<method>`, e.g. `klx:app.info`) and one channel for main → renderer events.
 * No Electron import (the preload and the tests import this file).
 */
import type { MethodName } from '../../src-shared/contract.ts';

/** Prefix of every klx channel. */
export const CHANNEL_PREFIX = 'klx:';

/** The channel main sends {@link KlxEvent}s on (`webContents.send`). */
export const EVENT_CHANNEL = 'klx:event';

/** The `invoke` channel of a method. */
export function ipcChannel(method: MethodName): string {
  return `${CHANNEL_PREFIX}${method}`;
}
