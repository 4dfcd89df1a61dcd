/**
 * Review of 7d05417 (a refused leave is sent again): the fix puts a leave that *rejects* on the
 * unconfirmed list. Checked here while the application runs (not at close), on one server and
 * in quorum mode. An acquire whose caller gave up (no answer within its bound) may have taken
 * the lock in Redis; its leave, refused by a Redis answering READONLY (a failover), must be sent
 * again once Redis takes writes, or the gone caller's lock blocks every other caller for its
 * whole ttl (30 s here). In quorum mode `QuorumStore.leave` never rejects (`ask` collects the
 * nodes' failures as answers), so the engine never learns the leave failed and nothing is resent.
 *
 * Faults: proxies hold Redis's replies (the acquire runs, its answer does not come back), then
 * hold the commands (the leave waits in the proxy) while the server(s) turn READONLY, and let
 * them through; then the server(s) take writes again.
 */
import type { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort } from '../../scripts/redis-server.mjs';
import { createLockApp, sleep, type LockApp } from '../support/lock-app.js';
import { useQuorumNodes } from '../support/quorum-nodes.js';
import { TcpProxy } from '../chaos/support/tcp-proxy.js';

async function refusedEvals(admin: Redis): Promise<number> {
  const stats = await admin.info('commandstats');
  const lines = stats.split('\r\n').filter((entry) => entry.startsWith('cmdstat_eval:') || entry.startsWith('cmdstat_evalsha:'));
  let refused = 0;
  for (const line of lines) {
    const field = (name: string): number => Number(new RegExp(`${name}=(\\d+)`).exec(line)?.[1] ?? 0);
    refused += field('rejected_calls') + field('failed_calls');
  }
  return refused;
}

describe('the leave of an acquire given up while Redis refuses writes, the app running', () => {
  const nodes = useQuorumNodes();
  const proxies: TcpProxy[] = [];
  const admins: Redis[] = [];
  let app: LockApp | undefined;
  afterEach(async () => {
    for (const proxy of proxies) {
      proxy.heal();
      proxy.flushReplies();
    }
    for (const admin of admins) await admin.call('REPLICAOF', 'NO', 'ONE').catch(() => undefined);
    await app?.close();
    app = undefined;
    for (const proxy of proxies.splice(0)) await proxy.close();
    for (const admin of admins.splice(0)) admin.disconnect();
  });

  async function scenario(count: 1 | 3): Promise<{ still: () => Promise<number> }> {
    const { Redis: RedisClient } = await import('ioredis');
    const servers = nodes.servers.slice(0, count);
    for (const server of servers) {
      proxies.push(await TcpProxy.start(Number(new URL(server.url).port)));
      const admin = new RedisClient(server.url);
      await admin.flushall();
      admins.push(admin);
    }
    const urls = proxies.map((proxy) => proxy.url);
    app = await createLockApp({ redis: count === 1 ? urls[0] : urls, ttl: '30s' });
    await (await app.locks.acquire('warm-up')).release();
    for (const proxy of proxies) proxy.holdReplies();
    const call = app.locks.tryAcquire('deploy').then(
      (lock) => (lock === null ? 'busy' : 'acquired'),
      (error: Error) => error.constructor.name,
    );
    // The acquire ran everywhere and took the lock; its replies wait in the proxies.
    await expect.poll(async () => (await Promise.all(admins.map((admin) => admin.exists('lock:{deploy}')))).every((held) => held === 1)).toBe(true);
    for (const proxy of proxies) proxy.cut();
    for (const admin of admins) {
      await admin.config('RESETSTAT');
      await admin.call('REPLICAOF', '127.0.0.1', String(await freePort()));
    }
    for (const proxy of proxies) proxy.heal();
    // The caller gives up (no answer within its bound): its leave goes out, and is refused.
    expect(await call).not.toBe('acquired');
    for (const proxy of proxies) proxy.flushReplies();
    // Every give-back so far was refused (the acquire's reply is in: the leave behind it went too).
    await expect.poll(async () => Math.min(...(await Promise.all(admins.map(refusedEvals))))).toBeGreaterThanOrEqual(2);
    await sleep(300);
    // The mechanism: the gone caller's lock is still there, with most of its 30 s ttl.
    for (const admin of admins) expect(await admin.pttl('lock:{deploy}')).toBeGreaterThan(20_000);
    for (const admin of admins) await admin.call('REPLICAOF', 'NO', 'ONE');
    return { still: async () => (await Promise.all(admins.map((admin) => admin.exists('lock:{deploy}')))).reduce((a, b) => a + b, 0) };
  }

  it('one server: the leave is sent again and the lock is gone long before its ttl', { timeout: 30_000 }, async () => {
    const { still } = await scenario(1);
    await expect.poll(still, { timeout: 10_000 }).toBe(0);
  });

  it('quorum mode: the leave is sent again and the lock is gone long before its ttl', { timeout: 30_000 }, async () => {
    const { still } = await scenario(3);
    await expect.poll(still, { timeout: 10_000 }).toBe(0);
  });
});
