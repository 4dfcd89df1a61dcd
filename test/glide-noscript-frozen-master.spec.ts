import { Cluster, Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { usePartialCluster } from './support/redis-cluster.js';
import { handedLockApp, openClient } from './support/handed-clients.js';
import { createLockApp, type LockApp } from './support/lock-app.js';

/**
 * Found by review. GLIDE on a Redis Cluster: a master that answers NOSCRIPT (restarted, failed over to a replica
 * with an empty script cache, SCRIPT FLUSH) gets the script from GLIDE's core through a
 * `SCRIPT LOAD` sent to every master (its log: `cmd=SCRIPT node=unknown`), not to the node that
 * answered NOSCRIPT, and the EVALSHA is sent again only once every master answered it. With
 * another master down or frozen (`cluster-require-full-coverage no` keeps the others serving),
 * the call failed (after GLIDE's requestTimeout for a frozen one): the driver used GLIDE's
 * `invokeScript`. It now sends EVALSHA itself and EVAL to the key's node on NOSCRIPT, as the
 * ioredis and node-redis drivers do.
 */
describe('GLIDE Cluster: NOSCRIPT on a healthy master while another master is down', () => {
  const partial = usePartialCluster();
  const { keyOn } = partial;

  async function apps(): Promise<{ glide: LockApp; io: LockApp; close(): Promise<void> }> {
    const glide = await handedLockApp(await openClient('GLIDE', partial.cluster.nodes), { ttl: 10_000 });
    const ioClient = new Cluster(partial.cluster.nodes);
    ioClient.on('error', () => undefined);
    const io = await createLockApp({ redis: ioClient, ttl: 10_000 });
    // Scripts loaded on every master, through both clients.
    for (const index of [0, 1, 2]) {
      const name = await keyOn(index, 'warm');
      await (await glide.locks.acquire(name)).release();
      await (await io.locks.acquire(name)).release();
    }
    return {
      glide,
      io,
      close: async () => {
        await io.close();
        ioClient.disconnect();
        await glide.close();
      },
    };
  }

  it('frozen master: a release on a healthy master that lost its scripts still releases, as with ioredis', { timeout: 60_000 }, async () => {
    const { glide, io, close } = await apps();
    const first = new Redis(partial.cluster.nodes[0]!.port, partial.cluster.nodes[0]!.host);
    try {
      const viaIoredis = await io.locks.acquire(await keyOn(0, 'io'));
      const viaGlide = await glide.locks.acquire(await keyOn(0, 'glide'));
      // Master 2 freezes (a stalled host); master 0 loses its script cache (a restart, a failover).
      partial.cluster.pause(2);
      await first.script('FLUSH');
      await viaIoredis.release();
      expect(await first.exists(`lock:{${viaIoredis.key}}`)).toBe(0);
      await first.script('FLUSH');
      // Failed before: TimeoutError ("timed out") after GLIDE's requestTimeout, the lock left held in Redis.
      const released = await viaGlide.release().then(
        () => 'released',
        (error: unknown) => `${(error as Error).name}: ${(error as Error).message}`,
      );
      expect(released).toBe('released');
      expect(await first.exists(`lock:{${viaGlide.key}}`)).toBe(0);
    } finally {
      partial.cluster.resume(2);
      first.disconnect();
      await close();
    }
  });

  it('frozen master: one attempt (tryAcquire) on a healthy master that lost its scripts takes the lock, as with ioredis', { timeout: 60_000 }, async () => {
    const { glide, io, close } = await apps();
    const first = new Redis(partial.cluster.nodes[0]!.port, partial.cluster.nodes[0]!.host);
    try {
      partial.cluster.pause(2);
      await first.script('FLUSH');
      const viaIoredis = await io.locks.tryAcquire(await keyOn(0, 'io-try'));
      expect(viaIoredis?.held).toBe(true);
      await viaIoredis!.release();
      await first.script('FLUSH');
      // Failed before: the attempt failed after GLIDE's requestTimeout (2 s here).
      const viaGlide = await glide.locks.tryAcquire(await keyOn(0, 'glide-try')).catch((error: unknown) => error);
      expect(viaGlide instanceof Error ? `${viaGlide.name}: ${viaGlide.message}` : (viaGlide as { held: boolean } | null)?.held).toBe(true);
      await (viaGlide as { release(): Promise<void> }).release();
    } finally {
      partial.cluster.resume(2);
      first.disconnect();
      await close();
    }
  });
});
