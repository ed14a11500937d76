/**
 * Shared helpers of the `klx` commands: buffered stdout that respects back-pressure (a dump of a
 * 10 GB partition must not pile up in memory), and argument parsers with clear messages.
 */
import type { Writable } from 'node:stream';
import { InvalidArgumentError } from 'commander';

/**
 * Whether `err` is a write to a pipe its reader has closed (EPIPE: `klx … | head`): a command that
 * reads ends quietly with exit 0; one that changes files finishes without printing (main.ts).
 */
export function isClosedPipe(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === 'EPIPE';
}

/** Set once stdout's reader has gone (main.ts): {@link OutputWriter}s on stdout then drop what they are given. */
let stdoutGone = false;

/** Notes that stdout's reader has gone (see {@link stdoutGone}). */
export function markStdoutClosed(): void {
  stdoutGone = true;
}

/** Whether stdout's reader has gone. */
export function stdoutClosed(): boolean {
  return stdoutGone;
}

/** Resolves on 'drain', or when the stream errs or closes (a closed pipe never drains). */
function drainedOrGone(stream: Writable): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      stream.off('drain', done);
      stream.off('error', done);
      stream.off('close', done);
      resolve();
    };
    stream.on('drain', done);
    stream.on('error', done);
    stream.on('close', done);
  });
}

/** Buffers lines into ~64 KiB writes and waits for 'drain' when the stream is full. */
export class OutputWriter {
  private pending: string[] = [];
  private pendingBytes = 0;
  constructor(private readonly stream: Writable, private readonly flushAt = 64 * 1024) {}

  /** Queues one line (a newline is added). */
  async line(s: string): Promise<void> {
    this.pending.push(s);
    this.pendingBytes += s.length + 1;
    if (this.pendingBytes >= this.flushAt) await this.flush();
  }

  async flush(): Promise<void> {
    if (this.pending.length === 0) return;
    const chunk = this.pending.join('\n') + '\n';
    this.pending = [];
    this.pendingBytes = 0;
    if (stdoutGone && this.stream === process.stdout) return;
    if (!this.stream.write(chunk)) await drainedOrGone(this.stream);
  }

  async end(): Promise<void> {
    await this.flush();
  }
}

/** Parses a non-negative integer option; commander prints the message on failure. */
export function parseNonNegativeInt(v: string, name: string): number {
  if (!/^\d+$/.test(v)) throw new InvalidArgumentError(`${name} must be a non-negative integer, got "${v}"`);
  const n = Number(v);
  if (!Number.isSafeInteger(n)) throw new InvalidArgumentError(`${name} is too large: ${v}`);
  return n;
}

/** A one-line progress display on a terminal (nothing when the stream is not a terminal): `klx query`, `klx export`. */
export class ProgressLine {
  private shown = false;
  private last = 0;
  constructor(private readonly stream: NodeJS.WriteStream) {}
  show(text: string): void {
    if (!this.stream.isTTY) return;
    const now = Date.now();
    if (now - this.last < 100) return;
    this.last = now;
    this.stream.write(`\r${text.slice(0, (this.stream.columns || 80) - 1).padEnd(Math.min(this.stream.columns || 80, 80) - 1)}`);
    this.shown = true;
  }
  clear(): void {
    if (this.shown) this.stream.write(`\r${' '.repeat(Math.min(this.stream.columns || 80, 80) - 1)}\r`);
    this.shown = false;
  }
}
