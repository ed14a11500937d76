/**
 * A {@link LineSink} writing to a new file (flag `wx`: an existing file is never overwritten), in
 * ~64 KiB writes that wait for 'drain', so an export of millions of rows never piles up in memory.
 * Shared by the app's `sql.export`, the records export (`record-export.ts`) and `klx export`.
 * Errors: KlxError `io-error` naming the file (on the write after the failure, or on close).
 */
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { KlxError } from '../errors.ts';
import type { LineSink } from './sql-format.ts';

/** See the module comment. */
export class FileLineSink implements LineSink {
  private readonly stream;
  private pending: string[] = [];
  private pendingChars = 0;
  private failure: Error | null = null;
  /** Bytes handed to the file so far. */
  written = 0;

  constructor(readonly file: string) {
    this.stream = createWriteStream(file, { flags: 'wx' });
    this.stream.on('error', (err) => (this.failure = err));
  }

  async line(text: string): Promise<void> {
    this.pending.push(text);
    this.pendingChars += text.length + 1;
    if (this.pendingChars >= 64 * 1024) await this.flush();
  }

  private async flush(): Promise<void> {
    this.check();
    if (this.pending.length === 0) return;
    const chunk = Buffer.from(this.pending.join('\n') + '\n', 'utf8');
    this.pending = [];
    this.pendingChars = 0;
    this.written += chunk.length;
    // `once` rejects when the stream emits 'error' while waiting.
    if (!this.stream.write(chunk)) await once(this.stream, 'drain').catch((err: Error) => (this.failure ??= err));
    this.check();
  }

  async close(): Promise<void> {
    await this.flush();
    const finished = once(this.stream, 'finish').catch((err: Error) => (this.failure ??= err));
    this.stream.end();
    await finished;
    this.check();
  }

  /** Closes without flushing (after a failure or cancel). */
  destroy(): void {
    this.stream.destroy();
  }

  private check(): void {
    if (this.failure) throw new KlxError('io-error', `cannot write the export: ${this.failure.message}`, { file: this.file, cause: this.failure });
  }
}
