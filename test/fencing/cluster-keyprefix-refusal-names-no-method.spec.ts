import { Cluster } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { FencedRedis } from '../../lib/index.js';

/**
 * Review (fencing): on a Redis Cluster client with a `keyPrefix`, an untagged key that the prefix
 * moves away from its token's slot is refused with a TypeError that does not name the method
 * (`set` or `hset`), unlike every other refusal of a key.
 *
 * Promise: docs/fencing.md, after listing the refused keys ("as is, on a Cluster, an untagged
 * key whose client `keyPrefix` would move it away from its token"): "Each refusal is a
 * `TypeError` naming the method, before anything is written"; the other refusals read
 * 'FencedRedis.set(): Argument "key" ...' (lib/fencing/fence-key.ts).
 *
 * What happens: `RedisFencedStore.checkSlot` (lib/fencing/fenced-store.ts:51-60) is not told the
 * method and throws 'FencedRedis: key "order:7" with the client's keyPrefix "app:" hashes to
 * another Cluster slot ...' for set() and hset() alike. (test/fencing-redis.spec.ts pins the
 * current wording with /^FencedRedis: key "order:7"/.) The client never connects: the check runs
 * before any command.
 */
describe('FencedRedis on a Cluster client with a keyPrefix: an untagged key in another slot than its token', () => {
  let client: Cluster | undefined;
  afterEach(() => client?.disconnect());

  it.each(['set', 'hset'] as const)('is refused by %s() with a TypeError naming the method', async (method) => {
    client = new Cluster([{ host: '127.0.0.1', port: 1 }], { keyPrefix: 'app:', lazyConnect: true });
    const fenced = new FencedRedis(client);
    const write = method === 'set' ? fenced.set('order:7', 'v', 1) : fenced.hset('order:7', 'f', 'v', 1);
    const error = await write.then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(error).toBeInstanceOf(TypeError);
    expect(error!.message).toMatch(/hashes to another Cluster slot than its fencing token/);
    expect(error!.message).toMatch(new RegExp(`^FencedRedis\\.${method}\\(\\): `));
  });
});
