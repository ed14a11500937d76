/**
 * The path guard: a path is reachable only when its real path lies inside an allowed folder.
 */
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventHub } from '../../../src-main/api/core/events.ts';
import { isInsideDir, realpathLenient, resolveInside } from '../../../src-main/api/core/paths.ts';
import { SessionState } from '../../../src-main/api/core/session-state.ts';
import { tempDir } from '../helpers.ts';

const tmp = tempDir('klx-paths-');
const root = join(tmp.dir, 'root');
const outside = join(tmp.dir, 'outside');

beforeAll(() => {
  mkdirSync(join(root, 'a', 'b'), { recursive: true });
  mkdirSync(outside);
  writeFileSync(join(outside, 'secret'), 's');
  symlinkSync(outside, join(root, 'out'));
  symlinkSync(join(root, 'a'), join(root, 'in')); // a link that stays inside
  symlinkSync(join(outside, 'nothing-yet'), join(root, 'dangling'));
  symlinkSync('../outside/new-file', join(root, 'relative-dangling'));
  mkdirSync(join(tmp.dir, 'root2'));
});
afterAll(() => tmp.remove());

describe('isInsideDir', () => {
  it('accepts the folder itself and its descendants', () => {
    expect(isInsideDir('/r', '/r')).toBe(true);
    expect(isInsideDir('/r/a/b', '/r')).toBe(true);
  });
  it('refuses a sibling sharing a name prefix, the parent and a `..` name trick', () => {
    expect(isInsideDir('/r2', '/r')).toBe(false);
    expect(isInsideDir('/r-evil/x', '/r')).toBe(false);
    expect(isInsideDir('/', '/r')).toBe(false);
    expect(isInsideDir('/r/..x', '/r')).toBe(true); // a name that starts with two dots is still inside
  });
});

describe('resolveInside', () => {
  it('returns the real path of a path inside the root (existing or not)', async () => {
    expect(await resolveInside(join(root, 'a', 'b'), [root])).toBe(join(root, 'a', 'b'));
    expect(await resolveInside(join(root, 'a', 'new', 'file'), [root])).toBe(join(root, 'a', 'new', 'file'));
    expect(await resolveInside(join(root, 'in', 'b'), [root])).toBe(join(root, 'a', 'b'));
  });

  it('refuses `..` out of the root', async () => {
    await expect(resolveInside(join(root, '..', 'outside', 'secret'), [root])).rejects.toMatchObject({ code: 'invalid-argument' });
    await expect(resolveInside(`${root}/a/../../outside`, [root])).rejects.toMatchObject({ code: 'invalid-argument' });
  });

  it('refuses a symlink escape, also through a missing file below the link', async () => {
    await expect(resolveInside(join(root, 'out', 'secret'), [root])).rejects.toMatchObject({ code: 'invalid-argument' });
    await expect(resolveInside(join(root, 'out', 'not-there'), [root])).rejects.toMatchObject({ code: 'invalid-argument' });
  });

  it('refuses a dangling symlink that points outside (absolute or relative target)', async () => {
    await expect(resolveInside(join(root, 'dangling'), [root])).rejects.toMatchObject({ code: 'invalid-argument' });
    await expect(resolveInside(join(root, 'relative-dangling'), [root])).rejects.toMatchObject({ code: 'invalid-argument' });
  });

  it('refuses a sibling sharing the name prefix, relative paths and NUL bytes', async () => {
    await expect(resolveInside(join(tmp.dir, 'root2'), [root])).rejects.toMatchObject({ code: 'invalid-argument' });
    await expect(resolveInside('root/a', [root])).rejects.toMatchObject({ code: 'invalid-argument' });
    await expect(resolveInside(`${root}/a\0`, [root])).rejects.toMatchObject({ code: 'invalid-argument' });
  });

  it('compares against the root’s real path (a root given through a symlink still works)', async () => {
    symlinkSync(root, join(tmp.dir, 'root-link'));
    expect(await resolveInside(join(root, 'a'), [join(tmp.dir, 'root-link')])).toBe(join(root, 'a'));
  });

  it('realpathLenient resolves the deepest existing ancestor', async () => {
    expect(await realpathLenient(join(root, 'in', 'x', 'y'))).toBe(join(root, 'a', 'x', 'y'));
  });
});

describe('SessionState', () => {
  it('allows paths only inside opened folders and records recent folders', async () => {
    const s = new SessionState(new EventHub());
    await expect(s.resolve(join(root, 'a'), { readOnly: false })).rejects.toMatchObject({ code: 'invalid-argument' });
    expect(await s.open(join(root, 'a'), { readOnly: false })).toBe(join(root, 'a'));
    expect(await s.resolve(join(root, 'a', 'b'), { readOnly: false })).toBe(join(root, 'a', 'b'));
    await expect(s.resolve(join(root, 'out'), { readOnly: false })).rejects.toMatchObject({ code: 'invalid-argument' });
    expect(s.recent.list()).toEqual([join(root, 'a')]);
  });

  it('opens only existing folders, inside the fixed roots when there are some', async () => {
    const s = new SessionState(new EventHub());
    await expect(s.open(join(root, 'missing'), { readOnly: false })).rejects.toMatchObject({ code: 'not-found' });
    await expect(s.open(join(outside, 'secret'), { readOnly: false })).rejects.toMatchObject({ code: 'invalid-argument' });
    await expect(s.open(outside, { readOnly: false, allowedRoots: [root] })).rejects.toMatchObject({ code: 'invalid-argument' });
    await expect(s.open(join(root, 'out'), { readOnly: false, allowedRoots: [root] })).rejects.toMatchObject({ code: 'invalid-argument' });
  });
});
