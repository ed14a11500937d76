/**
 * `klx serve` as a user runs it (spawned): the one URL it prints carries the token in the fragment
 * (`#token=`, never sent to a server), that token opens the API in the `X-Klx-Token` header, and no
 * answer sets a cookie nor does a cookie alone open anything (issue 17, defect 8: cookies ignore
 * ports, so any other server on 127.0.0.1 would receive one).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from '../support/log-builder.ts';
import { REPO_ROOT } from '../support/real-data.ts';

const children: ChildProcess[] = [];
const tmp = realpathSync(tempDir('klx-serve-'));
afterAll(() => {
  for (const c of children) c.kill('SIGTERM');
  rmSync(tmp, { recursive: true, force: true });
});

/** Starts `klx serve ARGS...` and resolves with its stdout's first line and the stderr so far. */
function serve(args: string[], env: NodeJS.ProcessEnv): Promise<{ url: string; stderr: string }> {
  const child = spawn(process.execPath, [join(REPO_ROOT, 'bin/klx.mjs'), 'serve', ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const nl = out.indexOf('\n');
      if (nl >= 0) resolve({ url: out.slice(0, nl), stderr: err });
    });
    child.on('exit', (code) => reject(new Error(`klx serve exited with ${code}: ${err}`)));
  });
}

describe('klx serve', () => {
  it('prints http://127.0.0.1:PORT/#token=…; the token works as a header, never as a cookie', async () => {
    const dir = join(tmp, 'kafka-logs');
    mkdirSync(join(dir, 'orders-0'), { recursive: true });
    writeFileSync(join(dir, 'orders-0', '00000000000000000000.log'), '');
    const { url } = await serve([dir, '--read-only'], { KLX_DATA_DIR: join(tmp, 'data') });

    const m = /^http:\/\/127\.0\.0\.1:(\d+)\/#token=([A-Za-z0-9_-]{43})$/.exec(url);
    expect(m, url).not.toBeNull();
    const origin = `http://127.0.0.1:${m![1]}`;
    const token = m![2]!;

    const page = await fetch(`${origin}/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('set-cookie')).toBeNull();

    const call = (headers: Record<string, string>): Promise<Response> =>
      fetch(`${origin}/api/app.info`, { method: 'POST', headers: { 'Content-Type': 'application/json', ...headers }, body: '{}' });
    const ok = await call({ 'X-Klx-Token': token });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('set-cookie')).toBeNull();
    expect(await ok.json()).toMatchObject({ ok: true, result: { readOnly: true, transport: 'bridge', fixedRoots: [dir] } });
    expect((await call({ Cookie: `klx-token-${m![1]}=${token}` })).status).toBe(403);
    expect((await call({})).status).toBe(403);
  }, 180_000);
});
