/**
 * Found by review (twenty-ninth session): in quorum mode the board lists a key found on a later node only if no
 * earlier node "holds it now" (`notOnEarlierNodes` in lock-admin.ts), reasoning that such a key
 * "was listed in its turn". That holds only if the earlier node held it when it was scanned. A
 * node that restarted empty lost the lock; the holder's next renewal puts it back there (the
 * quorum store restores a lock renewed on a majority on each node that lost it). When that
 * renewal lands after node 0's page and before node 1's, node 0's page did not list the lock
 * (it was not there), and nodes 1 and 2 leave it out (node 0 has it now): the walk ends
 * `complete: true` without the lock, held by a majority the whole time.
 */
import type { INestApplication } from '@nestjs/common';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { LockService, RedisLockModule } from '../../lib/index.js';
import { RedisLockBoardModule } from '../../lib/board/index.js';
import { AdminHeaderGuard } from '../support/board-guards.js';
import { createHttpApp, listenOnLoopback } from '../support/http-app.js';
import { useQuorumServers } from '../support/quorum-nodes.js';

type Page = { cursor: string; complete: boolean; locks: { key: string }[] };

describe('the lock board walk in quorum mode', () => {
  const servers = useQuorumServers();
  let app: INestApplication | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  it('lists a lock held by a majority for the whole walk that a renewal put back on node 0 after its page', { timeout: 30_000 }, async () => {
    app = await createHttpApp({
      imports: [RedisLockModule.forRoot({ redis: servers.map((server) => server.url), isGlobal: true }), RedisLockBoardModule.register({ guards: [AdminHeaderGuard] })],
    });
    const url = `${await listenOnLoopback(app)}/locks`;
    const page = async (cursor: string): Promise<Page> => {
      const response = await fetch(`${url}/api/locks?cursor=${encodeURIComponent(cursor)}`, { headers: { 'x-admin': 'yes' } });
      expect(response.status).toBe(200);
      return (await response.json()) as Page;
    };

    const lock = await app.get(LockService).acquire('q:restored', { ttl: 30_000, autoRenew: false });
    const nodes = servers.map((server) => new Redis(server.url));
    for (const node of nodes) await expect.poll(() => node.exists('lock:{q:restored}'), { timeout: 10_000 }).toBe(1);
    // Node 0 lost it (restarted empty): nodes 1 and 2, a majority, still hold it.
    await nodes[0]!.del('lock:{q:restored}');

    const listed: string[] = [];
    const first = await page('0');
    listed.push(...first.locks.map((held) => held.key));
    expect(first.cursor).toBe('1-0');
    // The holder renews between two pages: the renewal puts the lock back on node 0.
    await lock.extend();
    expect(await nodes[0]!.exists('lock:{q:restored}')).toBe(1);
    let cursor = first.cursor;
    let complete = false;
    for (let i = 0; i < 10 && !complete; i++) {
      const next = await page(cursor);
      listed.push(...next.locks.map((held) => held.key));
      cursor = next.cursor;
      complete = next.complete;
    }
    for (const node of nodes) node.disconnect();
    expect(lock.held).toBe(true);
    // Listed on the pages of nodes 1 and 2, which held it in their turn (before: on none).
    expect({ complete, listed }).toEqual({ complete: true, listed: ['q:restored', 'q:restored'] });
    await lock.release();
  });
});
