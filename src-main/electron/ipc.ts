/**
 * Registers one `ipcMain.handle` per contract method (channel `klx:<method>`, see `channels.ts`),
 * and nothing else. Each handler first checks the sender (our renderer's top frame only; anything
 * else gets a rejected promise and no data), then passes the single argument to `dispatch`, which
 * validates it. Answers are {@link Envelope}s, so error codes survive IPC.
 */
import { ipcMain, type IpcMainInvokeEvent } from 'electron';
import { METHOD_NAMES } from '../../src-shared/contract.ts';
import type { Envelope } from '../../src-shared/wire.ts';
import type { Dispatch, DispatchOptions } from '../api/core/dispatch.ts';
import { ipcChannel } from './channels.ts';

/** Options of {@link registerIpc}. */
export interface IpcOptions {
  dispatch: Dispatch;
  /** The options every call is dispatched with (read-only flag, fixed roots). */
  options: DispatchOptions;
  /** Whether the event comes from our renderer (see `security.ts`'s `isTrustedSender`). */
  isTrusted(event: IpcMainInvokeEvent): boolean;
}

/** Registers the handlers; returns the function that removes them. */
export function registerIpc(opts: IpcOptions): () => void {
  for (const method of METHOD_NAMES) {
    ipcMain.handle(ipcChannel(method), async (event, ...args: unknown[]): Promise<Envelope<unknown>> => {
      if (!opts.isTrusted(event)) {
        throw new Error(`klx: refused ${method} from an untrusted frame (${event.senderFrame?.url ?? 'no frame'})`);
      }
      if (args.length > 1) return { ok: false, error: { code: 'invalid-argument', message: `${method} takes one argument, got ${args.length}` } };
      return opts.dispatch(method, args[0], opts.options);
    });
  }
  return () => {
    for (const method of METHOD_NAMES) ipcMain.removeHandler(ipcChannel(method));
  };
}
