import { Cluster, Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { FencedRedis, RedisLockError } from '../../lib/index.js';
import { freePort } from '../../scripts/redis-server.mjs';
import { NODE_REDIS } from '../support/node-redis.js';

/**
 * Review (fencing): a client made to fail fast while its connection is down (ioredis
 * `enableOfflineQueue: false`, node-redis `disableOfflineQueue: true`) refuses a command then
 * without sending it. A fenced write or read for update so refused was told as one whose reply
 * never came: "the write to ... may have been applied: Redis did not answer it (Stream isn't
 * writeable and enableOfflineQueue options is false). Read its token with fence() before writing
 * again", sending its caller to reconcile, during an outage, a write that cannot have landed.
 */
describe("a fenced write or read for update refused by its client's disabled offline queue", () => {
  const CLIENTS: Record<string, (url: string) => unknown> = {
    'ioredis, enableOfflineQueue: false': (url) => {
      const client = new Redis(url, { enableOfflineQueue: false, retryStrategy: () => 50, maxRetriesPerRequest: 0 });
      client.on('error', () => undefined);
      return client;
    },
    'ioredis Cluster, enableOfflineQueue: false': (url) => {
      const { hostname, port } = new URL(url);
      const client = new Cluster([{ host: hostname, port: Number(port) }], { enableOfflineQueue: false, clusterRetryStrategy: () => 50 });
      client.on('error', () => undefined);
      return client;
    },
    'node-redis, disableOfflineQueue: true': (url) => {
      const client = NODE_REDIS[6].createClient({ url, disableOfflineQueue: true, socket: { reconnectStrategy: () => 50 } });
      client.on('error', () => undefined);
      void client.connect().catch(() => undefined);
      return client;
    },
  };

  describe.each(Object.keys(CLIENTS))('%s, nothing listening', (name) => {
    it.each([
      ['set', 'the write', (fenced: FencedRedis) => fenced.set('deposit:{7}', '110', 42)],
      ['get', 'the read for update', (fenced: FencedRedis) => fenced.get('deposit:{7}', 42)],
    ] as const)('%s: rejects with a RedisLockError saying it was not sent', async (method, what, call) => {
      const client = CLIENTS[name]!(`redis://127.0.0.1:${await freePort()}`);
      try {
        const outcome = await call(new FencedRedis(client as ConstructorParameters<typeof FencedRedis>[0])).then(
          () => 'answered',
          (error: unknown) => error,
        );
        expect(outcome).toBeInstanceOf(RedisLockError);
        const message = (outcome as Error).message;
        expect(message).toMatch(new RegExp(`^FencedRedis\\.${method}\\(\\): ${what} of "deposit:\\{7\\}" was not sent`));
        expect(message).not.toContain('may have been applied');
        expect((outcome as Error).cause).toBeInstanceOf(Error);
      } finally {
        const closing = client as { disconnect?: () => void; destroy?: () => void };
        if (closing.disconnect) closing.disconnect();
        else closing.destroy?.();
      }
    });
  });
});
