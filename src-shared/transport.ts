/**
 * How the renderer reaches the main process, independent of the transport:
 * - {@link KlxPreloadApi} is what the Electron preload exposes as `window.klx` (one function per
 *   contract method answering an {@link Envelope}, plus `onEvent`);
 * - {@link Transport} is what the client (`client.ts`) needs; the renderer builds one over
 *   `window.klx` or over HTTP to the loopback bridge.
 *
 * No Node or DOM imports.
 */
import type { KlxEvent, MethodName, Res } from './contract.ts';
import type { Envelope } from './wire.ts';

/** Listener of main-process events; returns nothing. */
export type EventListener = (event: KlxEvent) => void;

/**
 * `window.klx` in Electron: exactly one function per contract method (the key is the method name)
 * and `onEvent`. Functions answer envelopes (errors are data, so their code survives IPC);
 * `onEvent` returns the function that unsubscribes.
 */
export type KlxPreloadApi = { readonly [M in MethodName]: (req: unknown) => Promise<Envelope<Res<M>>> } & {
  readonly onEvent: (listener: EventListener) => () => void;
};

/** A way to call methods and receive events. Implementations never throw from `call`: failures are envelopes. */
export interface Transport {
  /** Sends one call; resolves with the envelope (transport failures become `io-error` envelopes). */
  call(method: MethodName, request: unknown): Promise<Envelope<unknown>>;
  /** Subscribes to events; returns the unsubscribe function. */
  subscribe(listener: EventListener): () => void;
  /** Resolves once events sent from now on will be received (the bridge's event stream is connected). */
  ready(): Promise<void>;
}
