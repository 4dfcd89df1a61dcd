import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { Cluster, Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Lock } from '../../lib/index.js';
import { clusterSlot } from '../../lib/core/keys/cluster-slot.js';
import { LockScripts } from '../../lib/core/stores/redis/lock-scripts.js';
import type { RenewalOutcome, RenewalRequest } from '../../lib/core/stores/lock-store.js';
import { startRedisCluster, type RedisCluster } from '../../scripts/redis-cluster.mjs';
import { createLockApp, sleep, type LockApp } from '../support/lock-app.js';
import { countAttempts, leaseDeadline, releaseBetweenPolls } from '../support/mechanism.js';
import { isScriptCall, lockScriptKind, watchCommands } from '../support/monitor.js';
import { shardSubscribers } from '../support/redis.js';
import { useRedisCluster } from '../support/redis-cluster.js';

/** `host:port` of the master that serves `redisKey`, from the client's slot map. */
function masterOf(client: Cluster, redisKey: string): string {
  return client.slots[clusterSlot(redisKey)]![0]!;
}

/** Resolves with the time the lock's signal aborts. */
function abortedAt(lock: Lock): Promise<number> {
  if (lock.signal.aborted) return Promise.resolve(performance.now());
  return new Promise((resolve) => lock.signal.addEventListener('abort', () => resolve(performance.now()), { once: true }));
}

/**
 * Waits until every lock of `locks` was renewed (Redis took it) by a renewal sent a renew
 * interval or more after `since`, or was lost: its lease deadline lies past `since` plus an
 * interval and a ttl. A renewal refused or never answered leaves the deadline where it was, and
 * the wait fails. What two ttls of sleep proved, without waiting them out.
 */
async function renewedSince(locks: Lock[], since: number): Promise<void> {
  const behind = () => locks.filter((lock) => lock.held && leaseDeadline(lock) < since + renewInterval + ttl).map((lock) => lock.key);
  await expect.poll(behind, { timeout: 15_000, interval: 100 }).toEqual([]);
}

async function run(command: string, args: string[]): Promise<string> {
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const [code] = (await once(child, 'exit')) as [number];
  if (code !== 0) throw new Error(`${command} ${args.join(' ')} failed: ${output}`);
  return output;
}

/** The node id and slots of every master, from CLUSTER NODES. */
async function masters(client: Cluster): Promise<{ id: string; address: string }[]> {
  const text = String(await client.cluster('NODES'));
  return text
    .split('\n')
    .filter((line) => line.includes('master') && !line.includes('fail'))
    .map((line) => {
      const [id, address] = line.split(' ');
      return { id: id!, address: address!.split('@')[0]! };
    });
}

/** Cluster clients handed to lock apps (the module never closes a client it was given). */
const clients: Cluster[] = [];
function clusterClient(cluster: RedisCluster, options?: ConstructorParameters<typeof Cluster>[1]): Cluster {
  const created = new Cluster(cluster.nodes, options);
  created.on('error', () => undefined);
  clients.push(created);
  return created;
}
afterEach(() => {
  for (const client of clients.splice(0)) client.disconnect();
});

const ttl = 2_000;
const renewInterval = 400;

describe('Redis Cluster: one master fails (issue 9, item 9)', () => {
  let cluster: RedisCluster;
  let app: LockApp | undefined;
  beforeEach(async () => {
    cluster = await startRedisCluster(3, { requireFullCoverage: false });
  }, 60_000);
  afterEach(async () => {
    await app?.close();
    app = undefined;
    await cluster?.stop();
  });

  it.each(['killed', 'frozen'] as const)('keeps renewing the locks of the healthy masters while one is %s; its own are lost only at their deadline', { timeout: 45_000 }, async (fault) => {
    const client = clusterClient(cluster);
    app = await createLockApp({ redis: client, ttl, renewInterval, shutdownTimeout: 1_000 });
    const locks = await Promise.all(Array.from({ length: 60 }, (_, i) => app!.locks.acquire(`node-${fault}:${i}`)));
    const owner = locks.map((lock) => masterOf(client, `lock:{${lock.key}}`));
    const victimIndex = 0;
    const victim = `${cluster.nodes[victimIndex]!.host}:${cluster.nodes[victimIndex]!.port}`;
    const onVictim = locks.filter((_, i) => owner[i] === victim);
    const onHealthy = locks.filter((_, i) => owner[i] !== victim);
    expect(onVictim.length).toBeGreaterThan(5);
    expect(onHealthy.length).toBeGreaterThan(5);
    const lostAt = onVictim.map(abortedAt);
    await sleep(renewInterval); // a renewal of every lock after they were all acquired
    // The lease each lock had when the master failed; a renewal answered after this only moves it later.
    const deadlines = onVictim.map(leaseDeadline);
    const healthyDeadlines = onHealthy.map(leaseDeadline);
    if (fault === 'killed') await cluster.kill(victimIndex);
    else cluster.pause(victimIndex);
    try {
      // Until the failed master's locks ran out, and past every lease the healthy ones had at the
      // fault (with a margin for Redis' own expiry): only renewals since can have kept those.
      await Promise.all(lostAt);
      await sleep(Math.max(0, Math.max(...healthyDeadlines) + 100 - performance.now()));
      // Every lock of the healthy masters is still held, and Redis agrees (renewed past the ttl).
      expect(onHealthy.filter((lock) => !lock.held).map((lock) => lock.signal.reason?.message)).toEqual([]);
      // Plain connections to the healthy masters, each asked about its own keys: a Cluster
      // client would send its ready check (CLUSTER INFO) to any node, the frozen one included,
      // and wait for it for ever.
      const healthy = new Map<string, Redis>(cluster.nodes.filter((_, i) => i !== victimIndex).map(({ host, port }) => [`${host}:${port}`, new Redis(port, host)]));
      try {
        for (const lock of onHealthy) expect(await healthy.get(masterOf(client, `lock:{${lock.key}}`))!.pttl(`lock:{${lock.key}}`)).toBeGreaterThan(0);
      } finally {
        for (const node of healthy.values()) node.disconnect();
      }
      // The failed master's locks ran out at their own deadlines, not before (not when a renewal
      // failed): on the lease deadline each had at the fault, not on a wall-clock bound that a
      // renewal timer delayed by a loaded machine breaks.
      (await Promise.all(lostAt)).forEach((at, i) => expect(at).toBeGreaterThanOrEqual(deadlines[i]!));
      for (const lock of onVictim) expect(lock.signal.reason).toMatchObject({ reason: 'expired' });
    } finally {
      if (fault === 'frozen') cluster.resume(victimIndex);
    }
  });
});

describe('Redis Cluster: a master frozen from the start (issue 23, item 4)', () => {
  let cluster: RedisCluster;
  let app: LockApp | undefined;
  let other: LockApp | undefined;
  beforeAll(async () => {
    cluster = await startRedisCluster(3, { requireFullCoverage: false });
  }, 60_000);
  afterEach(async () => {
    await Promise.all([app?.close(), other?.close()]);
    app = other = undefined;
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  it('acquires, hands over and releases a key of a healthy master before the frozen one ever answered', { timeout: 45_000 }, async () => {
    const probe = clusterClient(cluster);
    await probe.ping();
    const victimIndex = 0;
    const victim = `${cluster.nodes[victimIndex]!.host}:${cluster.nodes[victimIndex]!.port}`;
    let n = 0;
    while (masterOf(probe, `lock:{healthy:${n}}`) === victim) n++;
    const key = `healthy:${n}`;
    const [host, port] = masterOf(probe, `lock:{${key}}`).split(':');
    const owner = new Redis(Number(port), host!);
    probe.disconnect();
    cluster.pause(victimIndex);
    try {
      // New clients, so nothing was learnt from the frozen master before it froze. ioredis' own
      // ready check (CLUSTER INFO) goes to any node, the frozen one included, and would keep the
      // client from ever being ready: that one is ioredis', turned off here.
      const options = { enableReadyCheck: false };
      app = await createLockApp({ redis: clusterClient(cluster, options), ttl, shutdownTimeout: 1_000 });
      other = await createLockApp({ redis: clusterClient(cluster, options), ttl, shutdownTimeout: 1_000 });
      const held = await app.locks.acquire(key, { waitTimeout: 5_000 });
      expect(held.fencingToken).toBeGreaterThan(0);
      const waiting = other.locks.acquire(key, { waitTimeout: 20_000 });
      // The waiter subscribed sharded, on the master that owns the lock (which publishes with SPUBLISH).
      const subscribed = performance.now() + 10_000;
      while ((await shardSubscribers(owner, `lock:{${key}}:released`)) !== 1 && performance.now() < subscribed) await sleep(50);
      expect(await owner.call('PUBSUB', 'SHARDNUMSUB', `lock:{${key}}:released`)).toEqual([`lock:{${key}}:released`, 1]);
      await held.release();
      const next = await waiting;
      expect(next.fencingToken).toBe(held.fencingToken + 1);
      await next.release();
      for (const logs of [app.logs, other.logs]) expect(logs.lines.filter((line) => /did not answer/.test(line.message))).toEqual([]);
    } finally {
      owner.disconnect();
      cluster.resume(victimIndex);
    }
  });
});

describe('Redis Cluster: slots move and memory runs out while locks are held (item 11)', () => {
  const own = useRedisCluster();
  let app: LockApp | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  it('declares all five keys of a lock in acquire and release (only declared keys follow a slot migration)', async () => {
    app = await createLockApp({ redis: clusterClient(own.cluster), ttl, renewInterval });
    // Scripts cached on every node first (a NOSCRIPT reply makes one more call).
    await Promise.all(Array.from({ length: 12 }, async (_, i) => (await app!.locks.acquire(`declared:warm:${i}`)).release()));
    const key = 'declared:keys';
    const [host, port] = masterOf(own.admin, `lock:{${key}}`).split(':');
    const commands = await watchCommands(`lock:{${key}}`, `redis://${host}:${port}`);
    await (await app.locks.acquire(key)).release();
    await commands.stop();
    const calls = commands.seen.filter(isScriptCall);
    expect(calls.map(lockScriptKind)).toEqual(['acquire', 'release']);
    for (const call of calls) {
      expect(call.args[2]).toBe('5');
      expect(call.args.slice(3, 8)).toEqual(['', ':fence', ':queue', ':waiters', ':released'].map((suffix) => `lock:{${key}}${suffix}`));
    }
  });

  it('keeps every lock through `redis-cli --cluster reshard`', { timeout: 60_000 }, async () => {
    app = await createLockApp({ redis: clusterClient(own.cluster), ttl, renewInterval });
    const locks = await Promise.all(Array.from({ length: 150 }, (_, i) => app!.locks.acquire(`reshard:${i}`)));
    const [from, to] = await masters(own.admin);
    // Moves a third of the source's slots, with their keys, while the watchdog renews.
    await run('redis-cli', ['--cluster', 'reshard', from!.address, '--cluster-from', from!.id, '--cluster-to', to!.id, '--cluster-slots', '2000', '--cluster-yes']);
    await renewedSince(locks, performance.now());
    expect(locks.filter((lock) => !lock.held).map((lock) => `${lock.key}: ${lock.signal.reason?.message}`)).toEqual([]);
    const fresh = new Cluster(own.cluster.nodes);
    try {
      for (const lock of locks) expect(await fresh.pttl(`lock:{${lock.key}}`)).toBeGreaterThan(0);
    } finally {
      fresh.disconnect();
    }
  });

  it('keeps a lock whose slot stays half-migrated (ASK) for longer than its ttl', { timeout: 30_000 }, async () => {
    app = await createLockApp({ redis: clusterClient(own.cluster), ttl, renewInterval });
    const locks = await Promise.all(Array.from({ length: 60 }, (_, i) => app!.locks.acquire(`ask:${i}`)));
    const view = clusterClient(own.cluster); // the slot map as it is now, after the reshard above
    await view.ping();
    const all = await masters(view);
    // Pick a lock that is not the first of its master's batch, on any master.
    const lock = locks[locks.length - 1]!;
    const key = `lock:{${lock.key}}`;
    const slot = clusterSlot(key);
    const sourceAddress = masterOf(view, key);
    const source = all.find((node) => node.address === sourceAddress)!;
    const target = all.find((node) => node.address !== sourceAddress)!;
    const connect = (address: string) => new Redis(Number(address.split(':')[1]), address.split(':')[0]!);
    const [src, dst] = [connect(source.address), connect(target.address)];
    try {
      await dst.cluster('SETSLOT', slot, 'IMPORTING', source.id);
      await src.cluster('SETSLOT', slot, 'MIGRATING', target.id);
      const [host, port] = target.address.split(':');
      await src.migrate(host!, port!, key, 0, 5_000); // the lock alone: its fencing counter stays behind
      await renewedSince(locks, performance.now());
      expect(locks.filter((held) => !held.held).map((held) => `${held.key}: ${held.signal.reason?.message}`)).toEqual([]);
      await dst.call('ASKING'); // the target serves an importing slot only to a client that asks
      expect(await dst.pttl(key)).toBeGreaterThan(ttl / 2);
    } finally {
      const [host, port] = target.address.split(':');
      const left = (await src.cluster('GETKEYSINSLOT', slot, 100)) as string[];
      if (left.length > 0) await src.migrate(host!, port!, '', 0, 5_000, 'KEYS', ...left);
      for (const node of [dst, src]) await node.cluster('SETSLOT', slot, 'NODE', target.id);
      src.disconnect();
      dst.disconnect();
    }
  });

  it('keeps a lock that is first in its renewal batch while its slot is half-migrated, and the lock of the same slot not yet moved', { timeout: 30_000 }, async () => {
    // The batch of the source's locks is routed by its first lock; that one has moved, so
    // ioredis resends the whole batch to the importing node with ASKING, where another lock of
    // the same slot, not migrated yet, is an undeclared key that reads as missing.
    const first = 'ask-first';
    const slot = clusterSlot(`lock:{${first}}`);
    let n = 0;
    while (clusterSlot(`lock:{ask-sibling:${n}}`) !== slot) n++;
    const sibling = `ask-sibling:${n}`;
    app = await createLockApp({ redis: clusterClient(own.cluster), ttl, renewInterval });
    // Acquired in this order, so the first lock leads its master's batch.
    const lead = await app.locks.acquire(first);
    const locks = [lead, await app.locks.acquire(sibling), ...(await Promise.all(Array.from({ length: 30 }, (_, i) => app!.locks.acquire(`ask-rest:${i}`))))];
    const view = clusterClient(own.cluster);
    await view.ping();
    const all = await masters(view);
    const key = `lock:{${first}}`;
    const sourceAddress = masterOf(view, key);
    const source = all.find((node) => node.address === sourceAddress)!;
    const target = all.find((node) => node.address !== sourceAddress)!;
    const connect = (address: string) => new Redis(Number(address.split(':')[1]), address.split(':')[0]!);
    const [src, dst] = [connect(source.address), connect(target.address)];
    try {
      await dst.cluster('SETSLOT', slot, 'IMPORTING', source.id);
      await src.cluster('SETSLOT', slot, 'MIGRATING', target.id);
      const [host, port] = target.address.split(':');
      await src.migrate(host!, port!, key, 0, 5_000); // the first lock alone; its sibling stays on the source
      await renewedSince(locks, performance.now());
      expect(locks.filter((held) => !held.held).map((held) => `${held.key}: ${held.signal.reason?.message}`)).toEqual([]);
      expect(await src.pttl(`lock:{${sibling}}`)).toBeGreaterThan(ttl / 2);
      await dst.call('ASKING');
      expect(await dst.pttl(key)).toBeGreaterThan(ttl / 2);
    } finally {
      const [host, port] = target.address.split(':');
      const left = (await src.cluster('GETKEYSINSLOT', slot, 100)) as string[];
      if (left.length > 0) await src.migrate(host!, port!, '', 0, 5_000, 'KEYS', ...left);
      for (const node of [dst, src]) await node.cluster('SETSLOT', slot, 'NODE', target.id);
      src.disconnect();
      dst.disconnect();
    }
  });

  it('keeps renewing under a full `maxmemory`', { timeout: 30_000 }, async () => {
    app = await createLockApp({ redis: clusterClient(own.cluster), ttl, renewInterval });
    const locks = await Promise.all(Array.from({ length: 60 }, (_, i) => app!.locks.acquire(`oom:${i}`)));
    const nodes = own.admin.nodes('master');
    await Promise.all(nodes.map((node) => node.config('SET', 'maxmemory', '1')));
    try {
      // Writes that add memory are refused now...
      await expect(own.admin.set('oom:probe', 'x')).rejects.toThrow(/OOM/);
      await renewedSince(locks, performance.now());
      // ...but renewals add none and still run.
      expect(locks.filter((lock) => !lock.held).map((lock) => `${lock.key}: ${lock.signal.reason?.message}`)).toEqual([]);
    } finally {
      await Promise.all(nodes.map((node) => node.config('SET', 'maxmemory', '0')));
    }
  });
});

describe('Redis Cluster client with its own keyPrefix (item 10)', () => {
  const own = useRedisCluster();
  let app: LockApp | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  const shardChannels = async () => (await Promise.all(own.admin.nodes('master').map((node) => node.call('PUBSUB', 'SHARDCHANNELS') as Promise<string[]>))).flat();

  /**
   * Of `rounds` handoffs, how many woke the waiter without an attempt between the release and
   * its acquisition (the release message); a poll makes one. Each release follows one of the
   * waiter's polls, so the next poll is 250 ms away.
   */
  async function handoffsByMessage(holder: LockApp, waiter: LockApp, key: string, rounds: number): Promise<number> {
    let byMessage = 0;
    const attempts = countAttempts(waiter.locks);
    for (let i = 0; i < rounds; i++) {
      const held = await holder.locks.acquire(key);
      const waiting = waiter.locks.acquire(key, { waitTimeout: 10_000 });
      await sleep(120);
      const { lock, attemptsSinceRelease } = await releaseBetweenPolls(attempts, held, waiting);
      if (attemptsSinceRelease === 0) byMessage++;
      await lock.release();
    }
    attempts.stop();
    return byMessage;
  }

  it('wakes waiters by the release message, on the channel Redis publishes', { timeout: 30_000 }, async () => {
    const options = { ttl: 30_000, keyPrefix: 'locks:' };
    app = await createLockApp({ redis: clusterClient(own.cluster, { keyPrefix: 'app:' }), ...options });
    const other = await createLockApp({ redis: clusterClient(own.cluster, { keyPrefix: 'app:' }), ...options });
    try {
      const held = await app.locks.acquire('prefixed');
      const waiting = other.locks.acquire('prefixed', { waitTimeout: 10_000 });
      // The subscription is made in the background: a loaded machine may take over 150 ms.
      await expect.poll(shardChannels, { timeout: 5_000 }).toEqual(['app:locks:{prefixed}:released']);
      await held.release();
      await (await waiting).release();
      // Every one woken by the message on the channel Redis publishes, none by its poll.
      expect(await handoffsByMessage(app, other, 'prefixed', 7)).toBe(7);
    } finally {
      await other.close();
    }
  });

  it('retries a SSUBSCRIBE that failed, while waiters stay on the channel', { timeout: 30_000 }, async () => {
    const nodes = own.admin.nodes('master');
    await Promise.all(nodes.map((node) => node.acl('SETUSER', 'default', '-ssubscribe')));
    app = await createLockApp({ redis: clusterClient(own.cluster), ttl: 30_000 });
    const other = await createLockApp({ redis: clusterClient(own.cluster), ttl: 30_000 });
    try {
      const held = await app.locks.acquire('resubscribe');
      const waiting = other.locks.acquire('resubscribe', { waitTimeout: 15_000 }).then((lock) => ({ lock }));
      const failed = performance.now() + 5_000;
      while (!other.logs.has('warn', 'Subscribing to "lock:{resubscribe}:released" failed') && performance.now() < failed) await sleep(20);
      expect(other.logs.has('warn', 'Subscribing to "lock:{resubscribe}:released" failed')).toBe(true);
      expect(await shardChannels()).toEqual([]);
      await Promise.all(nodes.map((node) => node.acl('SETUSER', 'default', '+ssubscribe')));
      // The waiter is subscribed again without leaving its wait.
      const deadline = performance.now() + 5_000;
      while ((await shardChannels()).length === 0 && performance.now() < deadline) await sleep(50);
      expect(await shardChannels()).toEqual(['lock:{resubscribe}:released']);
      await held.release();
      const { lock } = await waiting;
      expect(lock.fencingToken).toBe(held.fencingToken + 1);
      await lock.release();
    } finally {
      await Promise.all(nodes.map((node) => node.acl('SETUSER', 'default', '+ssubscribe')));
      await other.close();
    }
  });
});

describe('Redis Cluster: renewing 100,000 locks (item 12)', () => {
  let cluster: RedisCluster;
  beforeAll(async () => {
    cluster = await startRedisCluster(3);
  }, 60_000);
  afterAll(async () => {
    await cluster?.stop();
  });

  it('bounds the arguments of every renewal call, and renews them all', { timeout: 60_000 }, async () => {
    const client = clusterClient(cluster);
    await client.ping();
    const count = 100_000;
    const requests = Array.from({ length: count }, (_, i) => ({ lockKey: `lock:{big:${i}}`, token: `t${i}`, ttl: 120_000 }));
    // Pre-set the keys straight on their masters, 5,000 per pipeline.
    const byMaster = new Map<string, number[]>();
    requests.forEach(({ lockKey }, i) => {
      const master = masterOf(client, lockKey);
      let indexes = byMaster.get(master);
      if (indexes === undefined) byMaster.set(master, (indexes = []));
      indexes.push(i);
    });
    const masters = client.nodes('master');
    const nodeOf = (address: string) => masters.find((node) => `${node.options.host}:${node.options.port}` === address)!;
    for (const [address, indexes] of byMaster) {
      const node = nodeOf(address);
      for (let from = 0; from < indexes.length; from += 5_000) {
        const pipeline = node.pipeline();
        for (const i of indexes.slice(from, from + 5_000)) pipeline.set(requests[i]!.lockKey, requests[i]!.token, 'PX', 60_000);
        await pipeline.exec();
      }
    }
    const scripts = new LockScripts(client);
    await scripts.perMasterRenewals(); // learns that the masters run Redis 7: one call per node
    await renewAll(scripts, requests); // loads the scripts (EVALSHA, NOSCRIPT, EVAL)
    for (const node of masters) {
      await node.config('SET', 'slowlog-log-slower-than', '0');
      // The commands a script runs are logged too: room for all of them.
      await node.config('SET', 'slowlog-max-len', '150000');
      await node.slowlog('RESET');
    }
    const outcomes = await renewAll(scripts, requests);
    expect(outcomes.filter((outcome) => outcome !== true)).toHaveLength(0);
    expect(outcomes).toHaveLength(count);
    for (const i of [0, 4_242, 99_999]) expect(await client.pttl(requests[i]!.lockKey)).toBeGreaterThan(60_000);
    // Every script call carried at most 10,000 locks (3 arguments each, and a few more).
    for (const [address, indexes] of byMaster) {
      const entries = (await nodeOf(address).slowlog('GET', -1)) as [number, number, number, (string | Buffer)[]][];
      const calls = entries.map(([, , , args]) => args).filter((args) => String(args[0]).toLowerCase() === 'evalsha');
      const argc = calls.map((args) => args.length < 32 ? args.length : args.length - 1 + Number(/\((\d+) more arguments\)/.exec(String(args.at(-1)))?.[1] ?? 0));
      expect(calls.length).toBeGreaterThanOrEqual(Math.ceil(indexes.length / 10_000));
      for (const n of argc) expect(n).toBeLessThanOrEqual(3 * 10_000 + 4);
      await nodeOf(address).config('SET', 'slowlog-log-slower-than', '10000');
      await nodeOf(address).config('SET', 'slowlog-max-len', '128');
      await nodeOf(address).slowlog('RESET');
    }
  });
});

/** Drives LockScripts.renewBatch as the watchdog does, and gathers the outcomes in order. */
async function renewAll(scripts: LockScripts, requests: RenewalRequest[]): Promise<RenewalOutcome[]> {
  const outcomes: RenewalOutcome[] = new Array(requests.length);
  await Promise.all(
    scripts.renewBatch(requests).map(async ({ indexes, outcomes: part }) => {
      const replies = await part;
      indexes.forEach((index, i) => (outcomes[index] = replies[i]));
    }),
  );
  return outcomes;
}
