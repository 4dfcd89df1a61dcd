import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll } from 'vitest';
import { startRedisServer, type RedisServer } from './redis-server.js';

/**
 * A master with one replica of the test file's own, the replica in sync (`state=online`) before
 * the tests run, both stopped after them (the replica resumed first, if a test paused it). Read
 * `master` and `replica` once `beforeAll` ran.
 */
export function useReplicatedServer(): { readonly master: RedisServer; readonly replica: RedisServer } {
  let master: RedisServer | undefined;
  let replica: RedisServer | undefined;
  beforeAll(async () => {
    master = await startRedisServer();
    replica = await startRedisServer(['--replicaof', '127.0.0.1', String(master.port), '--dir', mkdtempSync(join(tmpdir(), 'replica-'))]);
    const probe = new Redis(master.url);
    try {
      const until = Date.now() + 20_000;
      while (!/slave0:.*state=online/.test(await probe.info('replication'))) {
        if (Date.now() > until) throw new Error('the replica did not sync');
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    } finally {
      probe.disconnect();
    }
  }, 60_000);
  afterAll(async () => {
    replica?.resume();
    await replica?.stop({ kill: true });
    await master?.stop();
  });
  return {
    get master() {
      return master!;
    },
    get replica() {
      return replica!;
    },
  };
}
