import { describe, expect, it, onTestFinished } from 'vitest';
import { createLockApp } from '../support/lock-app.js';
import { NODE_REDIS, type NodeRedisVersion, type TestClient } from '../support/node-redis.js';
import { useRedisCluster } from '../support/redis-cluster.js';

/**
 * Found by a defect hunt (drivers), after 80fc762b told a plain node-redis client whose
 * `socket.reconnectStrategy` gave up from one its owner closed. A node-redis Cluster client never
 * ends by itself: when a node connection drops and its reconnect strategy (`defaults.socket`) gives
 * it up, node-redis keeps that closed connection for the master and the Cluster stays open, so every
 * command for that master's slots fails "The client is closed" (`ClientClosedError`) for the
 * application's life. The lock calls there said only "Redis could not be asked (The client is
 * closed)", a plain RedisLockError naming neither the cause nor the option, and app.close() said
 * nothing of the locks left in Redis there. (A node-redis Sentinel client makes its node
 * connections again on the next command, and goes on locking: not this case.)
 */
describe.each([6, 5] as NodeRedisVersion[])('a node-redis %i Cluster client whose node connection reconnectStrategy gave up', (version) => {
  const own = useRedisCluster();

  it('is said to have given up reconnecting to that master, naming defaults.socket.reconnectStrategy, by the calls and at app.close()', { timeout: 30_000 }, async () => {
    const { cluster, admin } = own;
    const client = NODE_REDIS[version].createCluster({
      rootNodes: cluster.nodes.map(({ host, port }) => ({ url: `redis://${host}:${port}` })),
      defaults: { socket: { reconnectStrategy: false } },
    }) as TestClient;
    client.on('error', () => undefined);
    await client.connect();
    onTestFinished(async () => void (client.isOpen ? await client.close() : undefined));
    const app = await createLockApp({ redis: client as never, shutdownTimeout: 600 });
    let closed = false;
    onTestFinished(() => (closed ? undefined : app.close()));
    const held = await app.locks.acquire(`gave-up:${version}`, { ttl: 30_000 });
    // The connections drop (an idle timeout, a proxy, a restart): node-redis gives them up.
    for (const node of admin.nodes('master')) await node.call('CLIENT', 'KILL', 'SKIPME', 'yes', 'TYPE', 'normal');
    const refusal = () =>
      app.locks.tryAcquire(`gave-up:${version}:other`).then(
        () => 'answered',
        (error: Error) => error.message,
      );
    await expect.poll(refusal).not.toBe('answered');
    expect(client.isOpen).toBe(true);
    // Failed: tryAcquire("gave-up:6:other"): Redis could not be asked (The client is closed).
    expect(await refusal()).toMatch(/gave up reconnecting.*defaults\.socket\.reconnectStrategy/);
    expect(await refusal()).not.toMatch(/quit\(\)|onApplicationShutdown/);
    closed = true;
    await app.close();
    const warnings = app.logs.lines.filter((line) => line.level === 'warn').map((line) => line.message);
    const warning = warnings.find((message) => message.includes('The Redis client handed in (redis)'));
    // Failed: no such warning.
    expect(warning, warnings.join('\n')).toMatch(/gave up reconnecting.*defaults\.socket\.reconnectStrategy/);
    expect(warning).not.toMatch(/onModuleDestroy/);
    expect(held.held).toBe(false);
  });
});
