/**
 * Found by review (forty-third session). The lock board's refusals (400, 403, 415) name what the
 * request sent: an unknown query parameter, a bad cursor, the Host, Sec-Fetch-Site, Origin and
 * Content-Type headers. They were shown with `JSON.stringify` only, which leaves raw what a
 * terminal, log viewer or browser still acts on (the C1 controls, CSI among them, that a header's
 * byte 0x9b becomes; bidi overrides and line separators from a percent-encoded query), while the
 * library's other messages escape them (`quoteKey`). An admin reading the answer with curl, or a
 * proxy's log of it, saw text reordered or a terminal escape run.
 */
import { request } from 'node:http';
import type { INestApplication } from '@nestjs/common';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { ExpressAdapter } from '@nestjs/platform-express';
import { afterEach, describe, expect, it } from 'vitest';
import { RedisLockModule } from '../../lib/index.js';
import { RedisLockBoardModule, type LockBoardOptions } from '../../lib/board/index.js';
import { createHttpApp, listenOnLoopback } from '../support/http-app.js';
import { redisUrl, useRedis } from '../support/redis.js';

type Reply = { status: number; message: string };

/** One request with raw header bytes of our choosing (each char a byte, as Node sends latin1). */
function send(url: string, init: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<Reply> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request({ host: target.hostname, port: target.port, path: target.pathname + target.search, method: init.method ?? 'GET', headers: init.headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, message: String((JSON.parse(body) as { message: unknown }).message) }));
    });
    req.on('error', reject);
    req.end(init.body);
  });
}

/** What must never reach a message raw: C0 and C1 controls (CSI is U+009B), bidi controls, line separators. */
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

// A header carries bytes: 0x9b is CSI, the start of a terminal escape sequence.
const CSI_HEADER = '\u009b31mred\u0085forged';
// A query is percent-encoded UTF-8: U+202E (right-to-left override), U+2028 (line separator).
const BIDI_QUERY = encodeURIComponent('\u202egnp.exe\u2028forged');

const adapters = [
  ['Express', () => new ExpressAdapter()],
  ['Fastify', () => new FastifyAdapter()],
] as const;

describe.each(adapters)('lock board refusals on %s', (platform, adapter) => {
  useRedis();
  let app: INestApplication | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  async function start(board: LockBoardOptions): Promise<string> {
    app = await createHttpApp({ imports: [RedisLockModule.forRoot({ redis: redisUrl(), isGlobal: true }), RedisLockBoardModule.register(board)] }, { adapter: adapter() });
    return `${await listenOnLoopback(app)}/locks`;
  }

  function expectEscaped(reply: Reply, status: number, shows: string): void {
    expect(reply.status).toBe(status);
    expect(reply.message).toContain(shows);
    // Failed: the message held the raw control, override or separator.
    expect(reply.message).not.toMatch(UNSAFE);
  }

  it('shows an unknown query parameter and a bad cursor escaped', async () => {
    const url = await start({ allowWithoutGuards: true });
    expectEscaped(await send(`${url}/api/locks?${BIDI_QUERY}=1`), 400, 'Unknown query parameter "\\u202egnp.exe\\u2028forged"');
    expectEscaped(await send(`${url}/api/locks?cursor=${BIDI_QUERY}`), 400, '"\\u202egnp.exe\\u2028forged"');
  });

  it('shows the Sec-Fetch-Site, Origin and Content-Type headers escaped', async () => {
    const url = await start({ allowWithoutGuards: true, allowForceRelease: true });
    expectEscaped(await send(`${url}/api/locks`, { headers: { 'sec-fetch-site': CSI_HEADER } }), 403, '\\u009b31mred\\u0085forged');
    expectEscaped(await send(`${url}/api/locks`, { headers: { origin: `http://a${CSI_HEADER}` } }), 403, '\\u009b31mred\\u0085forged');
    const release = { method: 'POST', body: '{}' };
    // Fastify refuses such a body itself (without naming its type); Express lets the board answer.
    const unsupported = await send(`${url}/api/locks/release`, { ...release, headers: { 'content-type': `text/${CSI_HEADER}` } });
    expectEscaped(unsupported, 415, platform === 'Express' ? '31mred' : 'Unsupported Media Type');
  });

  it('shows a Host header outside allowedHosts escaped', async () => {
    const url = await start({ allowWithoutGuards: true, allowedHosts: ['board.internal'] });
    expectEscaped(await send(url, { headers: { host: `evil${CSI_HEADER}` } }), 403, '\\u009b31mred\\u0085forged');
  });
});
