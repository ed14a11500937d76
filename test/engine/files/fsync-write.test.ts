import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { KlxError } from '../../../src-main/engine/errors.ts';
import { WRITE_STEPS, readFileBytes, tmpPathFor, writeFileAtomic, writeFileDurable, type WriteStep } from '../../../src-main/engine/files/fsync-write.ts';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'klx-fsync-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

class Crash extends Error {}

describe('writeFileAtomic', () => {
  it('writes the content and leaves no .tmp behind', () => {
    const p = join(dir, 'recovery-point-offset-checkpoint');
    writeFileAtomic(p, '0\n0\n');
    expect(readFileSync(p, 'utf8')).toBe('0\n0\n');
    expect(existsSync(`${p}.tmp`)).toBe(false);
    expect(tmpPathFor(p)).toBe(`${p}.tmp`);
  });

  it('replaces an existing file with bytes, including a stale .tmp left by an earlier crash', () => {
    const p = join(dir, 'f');
    writeFileSync(p, 'old content that is longer');
    writeFileSync(`${p}.tmp`, 'stale garbage from a crash, much longer than the new one');
    writeFileAtomic(p, Buffer.from([1, 2, 3]));
    expect([...readFileSync(p)]).toEqual([1, 2, 3]);
    expect(existsSync(`${p}.tmp`)).toBe(false);
  });

  it('calls the fault hook before each step, in order, with the final path', () => {
    const p = join(dir, 'f');
    const seen: [WriteStep, string][] = [];
    writeFileAtomic(p, 'x', { fault: (s, path) => void seen.push([s, path]) });
    expect(seen).toEqual(WRITE_STEPS.map((s) => [s, p]));
    expect(WRITE_STEPS).toEqual(['write-tmp', 'fsync-tmp', 'rename', 'fsync-dir']);
  });

  it('skips the directory fsync (and its hook) when syncDir is false', () => {
    const seen: WriteStep[] = [];
    writeFileAtomic(join(dir, 'f'), 'x', { syncDir: false, fault: (s) => void seen.push(s) });
    expect(seen).toEqual(['write-tmp', 'fsync-tmp', 'rename']);
  });

  // What a crash at each step leaves on disk: the target always holds complete old or new content.
  const cases: [WriteStep, string, string | null][] = [
    ['write-tmp', 'old', null],
    ['fsync-tmp', 'old', 'new content'],
    ['rename', 'old', 'new content'],
    ['fsync-dir', 'new content', null],
  ];
  for (const [step, target, tmp] of cases) {
    it(`a crash before '${step}' leaves target='${target}' and ${tmp === null ? 'no .tmp' : 'a complete .tmp'}`, () => {
      const p = join(dir, 'f');
      writeFileSync(p, 'old');
      const crash = new Crash(step);
      expect(() =>
        writeFileAtomic(p, 'new content', {
          fault: (s) => {
            if (s === step) throw crash;
          },
        }),
      ).toThrow(crash);
      expect(readFileSync(p, 'utf8')).toBe(target);
      if (tmp === null) expect(existsSync(`${p}.tmp`)).toBe(false);
      else expect(readFileSync(`${p}.tmp`, 'utf8')).toBe(tmp);
    });
  }

  it('reports a missing directory as not-found and leaves nothing behind', () => {
    const p = join(dir, 'missing', 'f');
    let err: unknown;
    try {
      writeFileAtomic(p, 'x');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(KlxError);
    expect((err as KlxError).code).toBe('not-found');
    expect((err as KlxError).file).toBe(`${p}.tmp`);
    expect(existsSync(join(dir, 'missing'))).toBe(false);
  });

  it('reports renaming over a directory as io-error and removes the .tmp', () => {
    const p = join(dir, 'adir');
    mkdirSync(join(p, 'child'), { recursive: true });
    let err: unknown;
    try {
      writeFileAtomic(p, 'x');
    } catch (e) {
      err = e;
    }
    expect((err as KlxError).code).toBe('io-error');
    expect((err as KlxError).reason).toContain('rename');
    expect(existsSync(`${p}.tmp`)).toBe(false);
  });
});

describe('readFileBytes', () => {
  it('reads a whole file', () => {
    writeFileSync(join(dir, 'a'), Buffer.from([0, 255, 7]));
    expect([...readFileBytes(join(dir, 'a'))]).toEqual([0, 255, 7]);
  });
  it('throws not-found for a missing file and io-error for a directory, naming the file', () => {
    expect(() => readFileBytes(join(dir, 'nope'))).toThrow(expect.objectContaining({ code: 'not-found', file: join(dir, 'nope') }));
    expect(() => readFileBytes(dir)).toThrow(expect.objectContaining({ code: 'io-error', file: dir }));
  });
});

describe('writeFileDurable (the writer, the cleaner and the segment writer)', () => {
  it('creates or truncates the file with the bytes or UTF-8 text given, in place (no .tmp)', () => {
    const p = join(dir, 'klx-topic.properties');
    writeFileDurable(p, 'cleanup.policy=compact\n');
    expect(readFileSync(p, 'utf8')).toBe('cleanup.policy=compact\n');
    writeFileDurable(p, Buffer.from([0xff, 0]));
    expect([...readFileSync(p)]).toEqual([0xff, 0]);
    writeFileDurable(p, new Uint8Array(0));
    expect(readFileSync(p).length).toBe(0);
    expect(existsSync(`${p}.tmp`)).toBe(false);
  });

  it("throws the operating system's error unwrapped", () => {
    expect(() => writeFileDurable(join(dir, 'no-such-folder', 'f'), 'x')).toThrow(expect.objectContaining({ code: 'ENOENT' }));
    expect(() => writeFileDurable(join(dir, 'no-such-folder', 'f'), 'x')).not.toThrow(KlxError);
  });
});
