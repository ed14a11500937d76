/**
 * The event hub both transports subscribe to: the Electron main process forwards events to its
 * window, the bridge to its server-sent-event streams. Listeners run synchronously; one that throws
 * does not stop the others.
 */
import type { KlxEvent } from '../../../src-shared/contract.ts';

/** A synchronous fan-out of {@link KlxEvent}s. */
export class EventHub {
  private readonly listeners = new Set<(event: KlxEvent) => void>();

  /** Adds a listener; returns the function that removes it. */
  subscribe(listener: (event: KlxEvent) => void): () => void {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }

  /** Sends an event to every listener. */
  emit(event: KlxEvent): void {
    for (const listener of [...this.listeners]) {
      try {
        listener(event);
      } catch {
        // A broken listener (closed window, closed socket) must not break the job that emits.
      }
    }
  }

  /** How many listeners are subscribed (for tests and leak checks). */
  get size(): number {
    return this.listeners.size;
  }
}
