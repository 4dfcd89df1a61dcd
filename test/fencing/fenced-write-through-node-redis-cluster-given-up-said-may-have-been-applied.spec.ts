import { describe, expect, it, onTestFinished } from 'vitest';
import { FencedRedis, FencedWriteRefusedError, RedisLockError, RedisUnavailableError } from '../../lib/index.js';
import { NODE_REDIS, type TestClient } from '../support/node-redis.js';
import { useRedisCluster } from '../support/redis-cluster.js';

/**
 * Found by a defect hunt (drivers), beside the lock calls' case
 * (test/topologies/node-redis-cluster-node-connection-gave-up-told-nothing.spec.ts). A node-redis
 * Cluster client whose `defaults.socket.reconnectStrategy` gave a master's connection up after a
 * drop stays open, and refuses every command for that master at once, unsent ("The client is
 * closed"). A fenced write or read for update of a key there said what it says of a write whose
 * reply was lost: "may have been applied: Redis did not answer it (The client is closed). Read its
 * token with fence() before writing again", sending its caller to reconcile a write that cannot
 * have landed, through the same client, and naming neither the cause nor the option. It now says
 * it was not sent, and why.
 */
describe('a fenced write through a node-redis Cluster client whose master connection was given up', () => {
  const own = useRedisCluster();

  it.each([
    ['set', 'the write', (fenced: FencedRedis) => fenced.set('deposit:{given-up}', '110', 42)],
    ['get', 'the read for update', (fenced: FencedRedis) => fenced.get('deposit:{given-up}', 42)],
  ] as const)('%s: says it was not sent, naming defaults.socket.reconnectStrategy', { timeout: 30_000 }, async (method, what, call) => {
    const { cluster, admin } = own;
    const client = NODE_REDIS[6].createCluster({
      rootNodes: cluster.nodes.map(({ host, port }) => ({ url: `redis://${host}:${port}` })),
      defaults: { socket: { reconnectStrategy: false } },
    }) as TestClient;
    client.on('error', () => undefined);
    await client.connect();
    onTestFinished(async () => void (client.isOpen ? await client.close() : undefined));
    const fenced = new FencedRedis(client as unknown as ConstructorParameters<typeof FencedRedis>[0]);
    expect(await fenced.fence('deposit:{given-up}')).toBeNull();
    for (const node of admin.nodes('master')) await node.call('CLIENT', 'KILL', 'SKIPME', 'yes', 'TYPE', 'normal');
    // node-redis gives the connections up.
    await expect.poll(() => fenced.fence('deposit:{given-up}').then(() => 'answered', () => 'refused')).toBe('refused');
    const outcome = await call(fenced).then(
      () => 'answered',
      (error: unknown) => error,
    );
    expect(await new FencedRedis(admin).fence('deposit:{given-up}')).toBeNull();
    expect(outcome).not.toBeInstanceOf(FencedWriteRefusedError);
    expect(outcome).toBeInstanceOf(RedisLockError);
    expect(outcome).not.toBeInstanceOf(RedisUnavailableError);
    const message = (outcome as Error).message;
    // Failed: "FencedRedis.set(): the write to "deposit:{given-up}" may have been applied: Redis did not answer it (The client is closed). ..."
    expect(message).toMatch(new RegExp(`^FencedRedis\\.${method}\\(\\): ${what} of "deposit:\\{given-up\\}" was not sent`));
    expect(message).not.toContain('may have been applied');
    expect(message).toMatch(/gave up reconnecting.*defaults\.socket\.reconnectStrategy/);
  });
});
