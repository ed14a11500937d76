/**
 * `fs.complete`: folder suggestions for the "open folder" field.
 */
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, sep } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServerApi } from '../../../src-main/api/index.ts';
import { tempDir } from '../helpers.ts';

const tmp = tempDir('klx-complete-');
const base = join(tmp.dir, 'logs');
const server = createServerApi({ version: '1', transport: 'bridge', homeDir: tmp.dir });

async function complete(request: Record<string, unknown>, options = { readOnly: false }) {
  const out = await server.dispatch('fs.complete', request, options);
  if (!out.ok) throw new Error(out.error.message);
  return out.result as { dir: string | null; entries: { name: string; path: string }[]; truncated: boolean };
}

beforeAll(() => {
  for (const d of ['orders-0', 'orders-1', 'payments-0', '.hidden', 'Upper']) mkdirSync(join(base, d), { recursive: true });
  writeFileSync(join(base, 'orders-file.txt'), '');
  symlinkSync(join(base, 'payments-0'), join(base, 'orders-link'));
  symlinkSync(join(base, 'orders-file.txt'), join(base, 'orders-file-link'));
});
afterAll(() => tmp.remove());

describe('fs.complete', () => {
  it('lists the sub-folders of a path ending with a separator, sorted, without hidden ones', async () => {
    const out = await complete({ partial: base + sep });
    expect(out.dir).toBe(base);
    expect(out.entries.map((e) => e.name)).toEqual(['Upper', 'orders-0', 'orders-1', 'orders-link', 'payments-0']);
    expect(out.entries[1].path).toBe(join(base, 'orders-0'));
  });

  it('filters by the typed prefix and lists only folders (symlinks to folders included, to files excluded)', async () => {
    const out = await complete({ partial: join(base, 'orders') });
    expect(out.entries.map((e) => e.name)).toEqual(['orders-0', 'orders-1', 'orders-link']);
  });

  it('shows hidden folders when asked or when the typed part starts with a dot', async () => {
    expect((await complete({ partial: join(base, '.h') })).entries.map((e) => e.name)).toEqual(['.hidden']);
    expect((await complete({ partial: base + sep, hidden: true })).entries.map((e) => e.name)).toContain('.hidden');
  });

  it('stops at the limit and says so', async () => {
    const out = await complete({ partial: base + sep, limit: 2 });
    expect(out.entries).toHaveLength(2);
    expect(out.truncated).toBe(true);
  });

  it('expands ~ and resolves relative input against the home folder', async () => {
    expect((await complete({ partial: '~/lo' })).entries).toEqual([{ name: 'logs', path: base }]);
    expect((await complete({ partial: 'logs/pay' })).entries.map((e) => e.name)).toEqual(['payments-0']);
    expect((await complete({ partial: '~' })).entries.map((e) => e.name)).toEqual(['logs']);
  });

  it('answers no suggestions (not an error) for a missing folder or a file', async () => {
    expect(await complete({ partial: join(base, 'missing', 'x') })).toEqual({ dir: null, entries: [], truncated: false });
    expect(await complete({ partial: join(base, 'orders-file.txt') + sep })).toEqual({ dir: null, entries: [], truncated: false });
  });
});
