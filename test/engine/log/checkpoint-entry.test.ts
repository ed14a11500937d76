// The one read-modify-write of a partition's line in a log-directory offset checkpoint
// (engine/log/checkpoint-entry.ts), behind both the partition writer and the cleaner.
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { checkpointEntryOf, updateCheckpointEntry, withCheckpointEntry } from '../../../src-main/engine/log/checkpoint-entry.ts';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'klx-ckpt-entry-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const FILE = 'recovery-point-offset-checkpoint';
const read = () => readFileSync(join(dir, FILE), 'utf8');
const put = (text: string) => writeFileSync(join(dir, FILE), text);

describe('withCheckpointEntry / checkpointEntryOf', () => {
  const entries = [
    { topic: 'a', partition: 0, offset: 1n },
    { topic: 'b', partition: 0, offset: 2n },
    { topic: 'a', partition: 0, offset: 3n },
  ];
  it('replaces the first line of the partition and drops its duplicates; appends when absent; removes with null', () => {
    expect(withCheckpointEntry(entries, 'a', 0, 9n)).toEqual([
      { topic: 'a', partition: 0, offset: 9n },
      { topic: 'b', partition: 0, offset: 2n },
    ]);
    expect(withCheckpointEntry(entries, 'c', 1, 5n)).toEqual([...entries, { topic: 'c', partition: 1, offset: 5n }]);
    expect(withCheckpointEntry(entries, 'a', 0, null)).toEqual([{ topic: 'b', partition: 0, offset: 2n }]);
    expect(withCheckpointEntry(entries, 'c', 1, null)).toEqual(entries);
  });
  it('reads the last line listing the partition, or null', () => {
    expect(checkpointEntryOf(entries, 'a', 0)).toBe(3n);
    expect(checkpointEntryOf(entries, 'a', 1)).toBeNull();
  });
});

describe('updateCheckpointEntry', () => {
  it('keeps a line " 0 5" (topic "" as Kafka reads it) when another partition\'s line changes', () => {
    put('0\n2\n 0 5\norders 0 7\n');
    expect(updateCheckpointEntry(dir, FILE, 'orders', 0, 9n)).toMatchObject({ written: true, before: 7n });
    expect(read()).toBe('0\n2\n 0 5\norders 0 9\n');
  });

  it('creates a missing file, keeps the other lines and their order, and reports before / after', () => {
    expect(updateCheckpointEntry(dir, FILE, 't', 0, 7n)).toEqual({ written: true, before: null, textBefore: null, textAfter: '0\n1\nt 0 7\n' });
    put('0\n2\nz 3 1\nt 0 7\n');
    expect(updateCheckpointEntry(dir, FILE, 't', 0, 8n)).toEqual({ written: true, before: 7n, textBefore: '0\n2\nz 3 1\nt 0 7\n', textAfter: '0\n2\nz 3 1\nt 0 8\n' });
    expect(read()).toBe('0\n2\nz 3 1\nt 0 8\n');
    expect(updateCheckpointEntry(dir, FILE, 't', 0, null).textAfter).toBe('0\n1\nz 3 1\n');
    expect(readdirSync(dir).sort()).toEqual([FILE]); // no .tmp, no lock file left behind
  });

  it('onlyIfChanged leaves a file that already lists the partition once with the value alone; a duplicate is rewritten', () => {
    put('0\n1\nt 0 7\n');
    expect(updateCheckpointEntry(dir, FILE, 't', 0, 7n, { onlyIfChanged: true })).toEqual({ written: false, before: 7n, textBefore: '0\n1\nt 0 7\n', textAfter: null });
    expect(updateCheckpointEntry(dir, FILE, 't', 0, 7n).written).toBe(true); // without the option it always writes
    put('0\n2\nt 0 7\nt 0 7\n');
    expect(updateCheckpointEntry(dir, FILE, 't', 0, 7n, { onlyIfChanged: true }).written).toBe(true);
    expect(read()).toBe('0\n1\nt 0 7\n');
  });

  it('onlyIfPresent leaves a file (or its absence) alone when the partition is not listed', () => {
    expect(updateCheckpointEntry(dir, FILE, 't', 0, 7n, { onlyIfPresent: true }).written).toBe(false);
    expect(existsSync(join(dir, FILE))).toBe(false);
    put('0\n1\nu 0 1\n');
    expect(updateCheckpointEntry(dir, FILE, 't', 0, 7n, { onlyIfPresent: true }).written).toBe(false);
    expect(read()).toBe('0\n1\nu 0 1\n');
  });

  it('a corrupt file is left alone (corrupt-checkpoint); the fault hook sees every sub-step of the atomic write', () => {
    put('0\n5\nt 0 7\n');
    expect(() => updateCheckpointEntry(dir, FILE, 't', 0, 8n)).toThrow(expect.objectContaining({ code: 'corrupt-checkpoint' }));
    expect(read()).toBe('0\n5\nt 0 7\n');
    put('0\n1\nt 0 7\n');
    const steps: string[] = [];
    updateCheckpointEntry(dir, FILE, 't', 0, 8n, { fault: (s) => void steps.push(s) });
    expect(steps).toEqual(['write-tmp', 'fsync-tmp', 'rename', 'fsync-dir']);
    expect(() =>
      updateCheckpointEntry(dir, FILE, 't', 0, 9n, {
        fault: (s) => {
          if (s === 'rename') throw new Error('crash');
        },
      }),
    ).toThrow('crash');
    expect(read()).toBe('0\n1\nt 0 8\n');
  });
});
