/**
 * The bridge's event stream (`/api/events`) across `close()`: close() ends every stream, then waits
 * for running jobs to stop, and those jobs (or anything else) may still emit events before each
 * stream's 'close' event unsubscribes it. A write to an ended response raised "write after end" in
 * the emitter (seen in the e2e runs as an error of the test process).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { RENDERER_DIR } from '../../src-main/bridge/build.ts';
import { startBridge } from '../../src-main/bridge/server.ts';
import { openEvents } from './helpers.ts';

const tmp = mkdtempSync(join(tmpdir(), 'klx-bridge-events-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('bridge event stream', () => {
  it('an event emitted while close() ends the streams is dropped, not written after the end', async () => {
    const bridge = await startBridge({ readOnly: true, roots: [], rendererDir: RENDERER_DIR, dataDir: tmp, homeDir: tmp });
    const stream = await openEvents(bridge);
    bridge.api.ctx.events.emit({ type: 'log.changed', dirs: [], reason: 'before close' });
    await stream.waitFor((e) => e.type === 'log.changed');
    const errors: unknown[] = [];
    const onError = (e: unknown): void => void errors.push(e);
    process.on('uncaughtException', onError);
    try {
      const closing = bridge.close(); // ends the streams synchronously, then awaits the jobs
      bridge.api.ctx.events.emit({ type: 'log.changed', dirs: [], reason: 'during close' });
      await closing;
      await new Promise((r) => setTimeout(r, 50));
    } finally {
      process.off('uncaughtException', onError);
    }
    expect(errors).toEqual([]);
    expect(stream.events.map((e) => (e.type === 'log.changed' ? e.reason : e.type))).toEqual(['before close']);
  });
});
