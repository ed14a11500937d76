/**
 * Security regression tests of the loopback bridge, each named for the exploit it prevents.
 */
import { mkdirSync, realpathSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONTENT_SECURITY_POLICY } from '../../src-shared/csp.ts';
import { METHOD_NAMES, contract } from '../../src-shared/contract.ts';
import { testMethodsFromEnv } from '../../src-main/api/demo/demo.ts';
import { MAX_BODY_BYTES, startBridge, type Bridge, type BridgeOptions } from '../../src-main/bridge/server.ts';
import { openEvents, post, rawRequest, tempDir } from './helpers.ts';

const tmp = tempDir('klx-sec-');
const root = join(tmp.dir, 'root');
const outside = join(tmp.dir, 'outside');
const rendererDir = join(tmp.dir, 'renderer');
const bridges: Bridge[] = [];

async function bridgeWith(options: Partial<BridgeOptions> = {}): Promise<Bridge> {
  const b = await startBridge({ readOnly: false, roots: [], rendererDir, homeDir: tmp.dir, ...options });
  bridges.push(b);
  return b;
}

let open: Bridge; // no fixed root
let confined: Bridge; // klx serve <root>

beforeAll(async () => {
  mkdirSync(join(root, 'topic-0'), { recursive: true });
  mkdirSync(join(outside, 'secret-dir'), { recursive: true });
  mkdirSync(join(tmp.dir, 'root-evil'), { recursive: true }); // shares the root's name as a prefix
  writeFileSync(join(root, 'topic-0', 'a.log'), '');
  writeFileSync(join(outside, 'secret.txt'), 'secret');
  symlinkSync(outside, join(root, 'link-out'));
  symlinkSync(join(outside, 'missing-target'), join(root, 'dangling-out'));
  mkdirSync(join(rendererDir, 'assets'), { recursive: true });
  writeFileSync(join(rendererDir, 'index.html'), '<!doctype html><title>klx</title>');
  writeFileSync(join(rendererDir, 'assets', 'app.js'), 'console.log(1)');
  writeFileSync(join(tmp.dir, 'not-served.txt'), 'private');
  open = await bridgeWith();
  confined = await bridgeWith({ roots: [root] });
});

afterAll(async () => {
  await Promise.all(bridges.map((b) => b.close()));
  tmp.remove();
});

describe('token', () => {
  it('serves the page without a token (the public bundle; the token comes in the fragment), but no API answer', async () => {
    const res = await fetch(`${open.origin}/`);
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('<title>klx</title>');
  });

  it('refuses an API call without a token (403)', async () => {
    const res = await post(open, 'app.info', {}, { token: null });
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ ok: false, error: { code: 'invalid-argument', details: { reason: 'bridge-token' } } });
  });

  it('refuses the event stream without a token (403)', async () => {
    expect((await fetch(`${open.origin}/api/events`)).status).toBe(403);
  });

  it('refuses a wrong token (403) in the header and in the event stream query', async () => {
    const wrong = 'A'.repeat(open.token.length);
    expect((await post(open, 'app.info', {}, { token: wrong })).status).toBe(403);
    await expect(openEvents(open, { token: wrong })).rejects.toThrow(/403/);
  });

  it('refuses a token that differs only in case or by a prefix', async () => {
    const flipped = open.token.replace(/[a-z]/, (c) => c.toUpperCase());
    if (flipped !== open.token) expect((await post(open, 'app.info', {}, { token: flipped })).status).toBe(403);
    expect((await post(open, 'app.info', {}, { token: open.token.slice(0, -1) })).status).toBe(403);
    expect((await post(open, 'app.info', {}, { token: `${open.token}x` })).status).toBe(403);
  });

  it("refuses another bridge's token", async () => {
    expect((await post(open, 'app.info', {}, { token: confined.token })).status).toBe(403);
  });

  it('the token is never a cookie (issue 17, defect 8): the URL hands it over in the fragment, no answer sets a cookie, a cookie alone is refused', async () => {
    // Cookies ignore ports: one set here would reach every other server on 127.0.0.1.
    expect(open.url).toBe(`${open.origin}/#token=${open.token}`);
    for (const path of ['/', '/assets/app.js', `/?token=${open.token}`]) {
      const res = await fetch(`${open.origin}${path}`);
      expect(res.status, path).toBe(200);
      expect(res.headers.get('set-cookie'), path).toBeNull();
    }
    expect((await fetch(`${open.origin}/assets/app.js`)).headers.get('content-type')).toContain('text/javascript');
    const answered = await post(open, 'app.info', {});
    expect(answered.status).toBe(200);
    for (const name of [`klx-token-${open.port}`, 'klx-token', 'token']) {
      const res = await fetch(`${open.origin}/api/app.info`, { method: 'POST', headers: { 'Content-Type': 'application/json', Cookie: `${name}=${open.token}` }, body: '{}' });
      expect(res.status, name).toBe(403);
      expect(res.headers.get('set-cookie')).toBeNull();
      expect((await fetch(`${open.origin}/api/events`, { headers: { Cookie: `${name}=${open.token}` } })).status).toBe(403);
    }
    // The query carries it only for the event stream (EventSource cannot set a header).
    const viaQuery = await fetch(`${open.origin}/api/app.info?token=${open.token}`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}' });
    expect(viaQuery.status).toBe(403);
    const stream = await openEvents(open);
    stream.close();
  });

  it('a page load still carrying the token cookie of an earlier version has it expired (any port), never renewed', async () => {
    const other = open.port === 65535 ? 1 : open.port + 1;
    const res = await rawRequest(open.port, { path: '/', headers: { Host: `127.0.0.1:${open.port}`, Cookie: `theme=dark; klx-token-${open.port}=${open.token}; klx-token-${other}=x` } });
    expect(res.status).toBe(200);
    expect([res.headers['set-cookie']].flat().sort()).toEqual([
      `klx-token-${open.port}=; Max-Age=0; Path=/; HttpOnly; SameSite=Strict`,
      `klx-token-${other}=; Max-Age=0; Path=/; HttpOnly; SameSite=Strict`,
    ]);
    // other cookies of 127.0.0.1 are not ours to touch
    const plain = await rawRequest(open.port, { path: '/', headers: { Host: `127.0.0.1:${open.port}`, Cookie: 'theme=dark; klx-token=1' } });
    expect(plain.headers['set-cookie']).toBeUndefined();
  });

  it('generates a different random token per bridge, long enough', () => {
    expect(open.token).not.toBe(confined.token);
    expect(open.token.length).toBeGreaterThanOrEqual(43); // 32 random bytes, base64url
  });

  it('rejects a weak token given by the caller', async () => {
    await expect(startBridge({ readOnly: true, roots: [], rendererDir, token: 'short' })).rejects.toMatchObject({ code: 'invalid-argument' });
    await expect(startBridge({ readOnly: true, roots: [], rendererDir, token: 'x'.repeat(20) + ';evil=1' })).rejects.toMatchObject({ code: 'invalid-argument' });
  });
});

describe('browser-borne attacks', () => {
  it('DNS rebinding: refuses a request whose Host is not the loopback address (403)', async () => {
    const res = await rawRequest(open.port, { path: `/?token=${open.token}`, headers: { Host: `evil.example:${open.port}` } });
    expect(res.status).toBe(403);
    const api = await rawRequest(open.port, { method: 'POST', path: '/api/app.info', headers: { Host: `evil.example:${open.port}`, 'Content-Type': 'application/json', 'X-Klx-Token': open.token }, body: '{}' });
    expect(api.status).toBe(403);
  });

  it('cross-site request: refuses a foreign Origin even with the token (403)', async () => {
    const res = await post(open, 'app.info', {}, { headers: { Origin: 'https://evil.example' } });
    expect(res.status).toBe(403);
  });

  it('CSRF by HTML form: refuses an API call that is not Content-Type application/json (415), and a token in its URL (403)', async () => {
    const res = await rawRequest(open.port, {
      method: 'POST',
      path: '/api/app.info',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'X-Klx-Token': open.token, Host: `127.0.0.1:${open.port}` },
      body: 'a=1',
    });
    expect(res.status).toBe(415);
    // A form cannot set a header; the query does not carry the token for API calls.
    const viaQuery = await rawRequest(open.port, {
      method: 'POST',
      path: `/api/app.info?token=${open.token}`,
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', Host: `127.0.0.1:${open.port}` },
      body: 'a=1',
    });
    expect(viaQuery.status).toBe(403);
  });

  it('memory exhaustion: refuses a request body over MAX_BODY_BYTES (90 MiB) (413) without reading it', async () => {
    // Only the first 64 KiB of the announced body are sent: the answer must come without the rest.
    // (A client that writes all of it races the bridge closing the connection: under load fetch
    // then failed with ECONNRESET before reading the 413.)
    const req = httpRequest({
      host: '127.0.0.1',
      port: open.port,
      method: 'POST',
      path: '/api/fs.complete',
      headers: { 'Content-Type': 'application/json', 'Content-Length': MAX_BODY_BYTES + 1, 'X-Klx-Token': open.token, Host: `127.0.0.1:${open.port}` },
    });
    const answer = new Promise<{ status: number; text: string }>((resolve, reject) => {
      req.on('response', (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
      });
      req.on('error', (e: NodeJS.ErrnoException) => (e.code === 'ECONNRESET' || e.code === 'EPIPE' ? undefined : reject(e)));
    });
    req.write(`{"partial":"${'x'.repeat(64 * 1024)}`);
    const res = await answer;
    req.destroy();
    expect(res.status).toBe(413);
    expect(JSON.parse(res.text)).toEqual({ ok: false, error: { code: 'invalid-argument', message: `request body larger than ${MAX_BODY_BYTES} bytes` } });
  });

  it('refuses a body that is not JSON (400)', async () => {
    const res = await rawRequest(open.port, {
      method: 'POST',
      path: '/api/app.info',
      headers: { 'Content-Type': 'application/json', 'X-Klx-Token': open.token },
      body: '{not json',
    });
    expect(res.status).toBe(400);
    expect(JSON.parse(res.text)).toMatchObject({ ok: false, error: { code: 'invalid-argument' } });
  });

  it('serves the page with the strict CSP and no-referrer (the token never leaks in a Referer)', async () => {
    const res = await fetch(open.url);
    expect(res.headers.get('content-security-policy')).toBe(CONTENT_SECURITY_POLICY);
    expect(res.headers.get('referrer-policy')).toBe('no-referrer');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('x-frame-options')).toBe('DENY');
  });

  it('unknown API method names, including prototype keys, are refused', async () => {
    for (const name of ['nope', 'toString', '__proto__', 'constructor', 'app.info/../x']) {
      const res = await post(open, name, {});
      expect(res.body).toMatchObject({ ok: false, error: { code: 'invalid-argument' } });
    }
  });
});

describe('static files', () => {
  it('path traversal out of the renderer folder (.., %2e%2e, encoded slash, backslash) serves nothing', async () => {
    for (const path of ['/../not-served.txt', '/%2e%2e/not-served.txt', '/..%2fnot-served.txt', '/assets/..%2f..%2fnot-served.txt', '/..\\not-served.txt', '/%00index.html']) {
      const res = await rawRequest(open.port, { path }); // the bundle is served without the token: traversal must fail all the same
      expect(res.status, path).toBeGreaterThanOrEqual(400);
      expect(res.text, path).not.toContain('private');
    }
  });
});

describe('paths outside the opened folders', () => {
  it('fs.complete on a confined bridge: a folder outside the root is refused with invalid-argument', async () => {
    const res = await post(confined, 'fs.complete', { partial: `${outside}/` });
    expect(res.body).toMatchObject({ ok: false, error: { code: 'invalid-argument', details: { reason: 'outside-served-folders' } } });
  });

  it('fs.complete on a confined bridge: `root/..` is refused', async () => {
    const res = await post(confined, 'fs.complete', { partial: `${root}/../` });
    expect(res.body).toMatchObject({ ok: false, error: { code: 'invalid-argument' } });
  });

  it('fs.complete on a confined bridge: a symlink escape (root/link-out/) is refused and the link is not offered', async () => {
    const res = await post(confined, 'fs.complete', { partial: `${root}/link-out/` });
    expect(res.body).toMatchObject({ ok: false, error: { code: 'invalid-argument' } });
    const list = await post(confined, 'fs.complete', { partial: `${root}/` });
    expect(list.body).toMatchObject({ ok: true, result: { entries: [{ name: 'topic-0' }] } });
  });

  it('fs.complete on a confined bridge: a sibling sharing the root as a name prefix (root-evil) is refused', async () => {
    const res = await post(confined, 'fs.complete', { partial: `${root}-evil/` });
    expect(res.body).toMatchObject({ ok: false, error: { code: 'invalid-argument' } });
  });

  it('fs.complete on a confined bridge: empty input lists only the root', async () => {
    const res = await post(confined, 'fs.complete', { partial: '' });
    expect(res.body).toMatchObject({ ok: true, result: { entries: [{ path: confined.roots[0] }] } });
  });

  it('fs.complete without a fixed root lists anywhere (it only shows folder names)', async () => {
    const res = await post(open, 'fs.complete', { partial: `${outside}/` });
    expect(res.body).toMatchObject({ ok: true, result: { entries: [{ name: 'secret-dir' }] } });
  });

  it('session.open on a confined bridge: outside the root, via `..` and via a symlink are refused', async () => {
    for (const path of [outside, `${root}/../outside`, join(root, 'link-out')]) {
      const res = await post(confined, 'session.open', { path });
      expect(res.body, path).toMatchObject({ ok: false, error: { code: 'invalid-argument', details: { reason: 'outside-served-folders' } } });
      // Says which folder this server serves and how to open another, not "check the value typed".
      const message = (res.body as { error: { message: string } }).error.message;
      expect(message).toContain(`is outside ${confined.roots[0]}: this server was started for that folder`);
      expect(message).toContain('`klx serve` opens any folder');
      expect(message).toContain(`\`klx serve ${confined.roots[0]} `);
    }
    expect((await post(confined, 'session.open', { path: join(root, 'topic-0') })).body).toMatchObject({ ok: true });
  });

  it('a path argument outside the opened folders, via `..`, via a symlink or via a dangling symlink is refused and the file is untouched', async () => {
    const secret = join(outside, 'secret.txt');
    const old = new Date('2001-01-01T00:00:00Z');
    utimesSync(secret, old, old);
    for (const path of [secret, `${root}/../outside/secret.txt`, join(root, 'link-out', 'secret.txt'), join(root, 'dangling-out')]) {
      const res = await post(confined, 'demo.touch', { path });
      expect(res.body, path).toMatchObject({ ok: false, error: { code: 'invalid-argument', details: { reason: 'outside-served-folders' } } });
      // Says which folder this server serves and how to open another, not "check the value typed".
      const message = (res.body as { error: { message: string } }).error.message;
      expect(message).toContain(`is outside ${confined.roots[0]}: this server was started for that folder`);
      expect(message).toContain('`klx serve` opens any folder');
      expect(message).toContain(`\`klx serve ${confined.roots[0]} `);
    }
    expect(statSync(secret).mtimeMs).toBe(old.getTime());
  });

  it('test-only methods: a bridge not started for tests refuses demo.touch and demo.sleepJob (test-only) and touches nothing, even with "Open for writing" on', async () => {
    expect(testMethodsFromEnv({})).toBe(false);
    expect(testMethodsFromEnv({ KLX_TEST_METHODS: '0' })).toBe(false);
    expect(testMethodsFromEnv({ KLX_TEST_METHODS: '1' })).toBe(true);
    const normal = await bridgeWith({ roots: [root], testMethods: false });
    const file = join(root, 'topic-0', 'a.log');
    const old = new Date('2004-04-04T00:00:00Z');
    utimesSync(file, old, old);
    expect((await post(normal, 'session.setWriteMode', { enabled: true })).body).toMatchObject({ ok: true, result: { enabled: true } });
    const touch = await post(normal, 'demo.touch', { path: file });
    expect(touch.body).toMatchObject({ ok: false, error: { code: 'test-only', message: 'demo.touch is a test-only method, not available on this bridge or app (tests start it with testMethods, or KLX_TEST_METHODS=1)' } });
    expect(statSync(file).mtimeMs).toBe(old.getTime());
    expect((await post(normal, 'demo.sleepJob', { ticks: 1, intervalMs: 0 })).body).toMatchObject({ ok: false, error: { code: 'test-only' } });
    // The same call on a bridge started for tests touches the file.
    const forTests = await bridgeWith({ roots: [root], testMethods: true });
    expect((await post(forTests, 'session.setWriteMode', { enabled: true })).body).toMatchObject({ ok: true });
    expect((await post(forTests, 'demo.touch', { path: file })).body).toMatchObject({ ok: true });
    expect(statSync(file).mtimeMs).toBeGreaterThan(old.getTime());
    expect((await post(forTests, 'demo.sleepJob', { ticks: 1, intervalMs: 0 })).body).toMatchObject({ ok: true });
  });

  it('demo.touch follows the write gate: refused (read-only) and nothing touched until "Open for writing" is on (issue 17, defect 11)', async () => {
    const file = join(root, 'topic-0', 'a.log');
    const old = new Date('2003-03-03T00:00:00Z');
    utimesSync(file, old, old);
    const res = await post(confined, 'demo.touch', { path: file });
    expect(res.body).toMatchObject({ ok: false, error: { code: 'read-only', file: realpathSync(file) } });
    expect((res.body as { error: { message: string } }).error.message).toContain('switch on "Open for writing"');
    expect(statSync(file).mtimeMs).toBe(old.getTime());
    expect((await post(confined, 'session.setWriteMode', { enabled: true })).body).toMatchObject({ ok: true, result: { enabled: true } });
    try {
      expect((await post(confined, 'demo.touch', { path: file })).body).toMatchObject({ ok: true });
      expect(statSync(file).mtimeMs).toBeGreaterThan(old.getTime());
    } finally {
      await post(confined, 'session.setWriteMode', { enabled: false });
    }
  });

  it('a relative path argument is refused', async () => {
    const res = await post(confined, 'demo.touch', { path: 'topic-0/a.log' });
    expect(res.body).toMatchObject({ ok: false, error: { code: 'invalid-argument' } });
  });

  it('without a fixed root, nothing is reachable before a folder is opened', async () => {
    const fresh = await bridgeWith();
    const res = await post(fresh, 'demo.touch', { path: join(root, 'topic-0', 'a.log') });
    expect(res.body).toMatchObject({ ok: false, error: { code: 'invalid-argument' } });
  });
});

describe('read-only', () => {
  it('a read-only bridge refuses every write method with `read-only` and changes nothing', async () => {
    const ro = await bridgeWith({ readOnly: true, roots: [root] });
    const file = join(root, 'topic-0', 'a.log');
    const old = new Date('2002-02-02T00:00:00Z');
    utimesSync(file, old, old);
    const writes = METHOD_NAMES.filter((m) => contract[m].write);
    expect(writes.length).toBeGreaterThan(0);
    for (const method of writes) {
      const res = await post(ro, method, { path: file });
      expect(res.body, method).toMatchObject({ ok: false, error: { code: 'read-only' } });
    }
    expect(statSync(file).mtimeMs).toBe(old.getTime());
    expect((await post(ro, 'app.info', {})).body).toMatchObject({ ok: true, result: { readOnly: true } });
  });

  it('a read-only bridge refuses a write even when its arguments are invalid (no probing)', async () => {
    const ro = await bridgeWith({ readOnly: true });
    expect((await post(ro, 'demo.touch', { bogus: true })).body).toMatchObject({ ok: false, error: { code: 'read-only' } });
  });
});

describe('binding', () => {
  it('listens on 127.0.0.1 only', () => {
    expect(open.origin).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  });

  it('a non-loopback binding is impossible: a `host` option is refused', async () => {
    const sneaky = { readOnly: true, roots: [], rendererDir, host: '0.0.0.0' } as BridgeOptions;
    await expect(startBridge(sneaky)).rejects.toMatchObject({ code: 'invalid-argument' });
  });

  it('is not reachable on the machine’s other addresses', async () => {
    const external = Object.values(networkInterfaces())
      .flat()
      .find((i) => i && i.family === 'IPv4' && !i.internal)?.address;
    if (!external) return; // no other interface in this sandbox
    const reached = await new Promise<boolean>((resolve) => {
      const socket = connect({ host: external, port: open.port });
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    expect(reached).toBe(false);
  });
});
