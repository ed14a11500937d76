/**
 * Issue 17, defect 9: the bridge's body cap holds across concurrent requests. With limits made
 * small (per request 1 MiB, in flight 1.5 MiB): a body declared over the per-request cap is
 * refused before it is read (413); while one request's 1 MiB body is being read, a second one
 * that would pass the in-flight budget is refused with 503 and Retry-After; once the first is
 * answered its bytes are released and the same second body is accepted.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBridge, type Bridge } from '../../src-main/bridge/server.ts';
import { tempDir } from './helpers.ts';

const tmp = tempDir('klx-budget-');
let bridge: Bridge;
const MiB = 1024 * 1024;

beforeAll(async () => {
  const rendererDir = join(tmp.dir, 'renderer');
  mkdirSync(rendererDir, { recursive: true });
  writeFileSync(join(rendererDir, 'index.html'), '<!doctype html><title>klx</title>');
  bridge = await startBridge({ readOnly: true, roots: [], rendererDir, homeDir: tmp.dir, bodyLimits: { perRequest: MiB, inFlight: 1.5 * MiB } });
});

afterAll(async () => {
  await bridge.close();
  tmp.remove();
});

/** Starts a POST to fs.complete whose JSON body is `size` bytes; the body is written by the caller. */
function begin(size: number): { req: ClientRequest; body: Buffer; answer: Promise<{ status: number; headers: IncomingMessage['headers']; text: string }> } {
  const body = Buffer.from(JSON.stringify({ partial: 'x'.repeat(size - 14) }));
  expect(body.length).toBe(size);
  let req!: ClientRequest;
  const answer = new Promise<{ status: number; headers: IncomingMessage['headers']; text: string }>((resolve, reject) => {
    req = httpRequest(
      { host: '127.0.0.1', port: bridge.port, method: 'POST', path: '/api/fs.complete', headers: { 'Content-Type': 'application/json', 'Content-Length': size, 'X-Klx-Token': bridge.token, Host: `127.0.0.1:${bridge.port}` } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
      },
    );
    req.on('error', (e) => ((e as NodeJS.ErrnoException).code === 'ECONNRESET' || (e as NodeJS.ErrnoException).code === 'EPIPE' ? undefined : reject(e)));
  });
  return { req, body, answer };
}

describe('request body budget', () => {
  it('a body declared over the per-request cap is refused before it is read (413)', async () => {
    const big = begin(MiB + 100);
    big.req.write(big.body.subarray(0, 1000));
    const a = await big.answer;
    expect(a.status).toBe(413);
    expect(JSON.parse(a.text)).toEqual({ ok: false, error: { code: 'invalid-argument', message: `request body larger than ${MiB} bytes` } });
    big.req.destroy();
  });

  it('concurrent bodies share one in-flight budget: 503 while the first is read, accepted once it is answered', async () => {
    const first = begin(MiB);
    first.req.write(first.body.subarray(0, MiB - 10)); // held open: the first body is not complete
    await new Promise((r) => setTimeout(r, 300));
    const second = begin(MiB - 1000);
    second.req.end(second.body);
    const refused = await second.answer;
    expect(refused.status).toBe(503);
    expect(refused.headers['retry-after']).toBe('1');
    expect(JSON.parse(refused.text).error.message).toMatch(/^the bridge is already reading \d+ bytes of other requests' bodies \(at most 1572864 at once\): try again$/);
    first.req.end(first.body.subarray(MiB - 10));
    expect((await first.answer).status).toBe(200);
    const third = begin(MiB - 1000);
    third.req.end(third.body);
    expect((await third.answer).status).toBe(200);
  });
});
