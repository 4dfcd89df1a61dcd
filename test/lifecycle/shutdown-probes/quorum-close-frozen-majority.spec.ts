import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLockApp } from '../../support/lock-app.js';
import { startRedisServer, type RedisServer } from '../../support/redis-server.js';

describe('probe: quorum close with a frozen majority', () => {
  const servers: RedisServer[] = [];
  beforeAll(async () => {
    for (let i = 0; i < 3; i++) servers.push(await startRedisServer());
  });
  afterAll(async () => {
    servers.forEach((s) => s.resume());
    await Promise.all(servers.map((server) => server.stop()));
  });

  it('close ends within shutdownTimeout, release settles', { timeout: 30_000 }, async () => {
    const app = await createLockApp({ redis: servers.map((s) => s.url) as never, ttl: 30_000, shutdownTimeout: 500 });
    const held = await app.locks.acquire('q:held');
    const releasing = await app.locks.acquire('q:releasing');
    servers[0]!.pause();
    servers[1]!.pause();
    const out: Record<string, unknown> = {};
    releasing.release().then(() => (out.release = 'resolved'), (e: Error) => (out.release = e.message));
    held.signal.addEventListener('abort', () => (out.aborted = true));
    const t0 = performance.now();
    await app.close();
    out.closeMs = Math.round(performance.now() - t0);
    await new Promise((r) => setTimeout(r, 100));
    out.heldRelease = await held.release().then(() => 'resolved', (e: Error) => e.message);
    expect(out.closeMs).toBeLessThan(1_000);
  });
});
