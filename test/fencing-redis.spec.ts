import { Test } from '@nestjs/testing';
import { Cluster, Redis } from 'ioredis';
import { createSentinel as createSentinel6 } from 'redis';
import { createSentinel as createSentinel5 } from 'redis5';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refusedWith } from './support/refused-with.js';
import { startRedisCluster, type RedisCluster } from '../scripts/redis-cluster.mjs';
import { startSentinelDeployment, type SentinelDeployment } from '../scripts/redis-sentinel.mjs';
import { FencedRedis, FencedWriteRefusedError, LockService, RedisLockError, RedisLockModule } from '../lib/index.js';
import { InMemoryLocks, RedisLockTestingModule } from '../lib/testing/index.js';
import { openClient, type HandedClientName } from './support/handed-clients.js';
import { nodeRedisClient, nodeRedisCluster, type Factory, type TestClient } from './support/node-redis.js';
import { startRedisServer, type RedisServer } from './support/redis-server.js';

/** One backend of the fenced writes, opened for one test: the FencedRedis and how to close it. */
interface Opened {
  fenced: FencedRedis;
  /** DEL of a key from the outside (none in memory: there is no outside). */
  del?: (key: string) => Promise<unknown>;
  close(): Promise<unknown>;
}

let n = 0;
/** A key of its own per test, so that backends shared by the tests of a describe never collide. */
const fresh = (name: string) => `${name}:${++n}:${Math.random().toString(36).slice(2, 8)}`;

const refusal = (write: Promise<unknown>) => refusedWith(write, FencedWriteRefusedError);

function fencedBehaviour(open: () => Promise<Opened>): void {
  it('writes a string with the highest token, accepts the same token again, refuses a lower one and keeps the newer value', async () => {
    const { fenced, close } = await open();
    try {
      const key = fresh('balance');
      await fenced.set(key, '100', 1);
      await fenced.set(key, '110', 2);
      await fenced.set(key, 120, 2); // a reentrant holder: the same token twice
      const refused = await refusal(fenced.set(key, '90', 1));
      expect(refused).toMatchObject({ key, fencingToken: 1, highestToken: 2 });
      expect(refused).toBeInstanceOf(RedisLockError);
      expect(refused.message).toContain(`${JSON.stringify(key)} refused: its fencing token 1 is lower than 2`);
      expect(await fenced.get(key)).toBe('120');
      expect(await fenced.fence(key)).toBe(2);
    } finally {
      await close();
    }
  });

  it('compares tokens as numbers, not as text (10 is higher than 9)', async () => {
    const { fenced, close } = await open();
    try {
      const key = fresh('numeric');
      await fenced.set(key, 'nine', 9);
      await fenced.set(key, 'ten', 10);
      await refusal(fenced.set(key, 'nine again', 9));
      expect(await fenced.get(key)).toBe('ten');
      const big = Number.MAX_SAFE_INTEGER;
      await fenced.set(key, 'big', big - 1);
      await refusal(fenced.set(key, 'lower', big - 2));
      await fenced.set(key, 'max', big);
      expect(await fenced.fence(key)).toBe(big);
    } finally {
      await close();
    }
  });

  it('writes hash fields under one token per hash, in one field or several, and refuses a lower token for any field', async () => {
    const { fenced, close } = await open();
    try {
      const key = fresh('account');
      expect(await fenced.fence(key)).toBeNull();
      await fenced.hset(key, 'balance', 100, 3);
      await fenced.hset(key, { balance: 80, updatedBy: 'api-2' }, 4);
      await fenced.hset(key, 'note', 'same holder', 4);
      const refused = await refusal(fenced.hset(key, 'updatedBy', 'paused', 3));
      expect(refused).toMatchObject({ key, fencingToken: 3, highestToken: 4 });
      await refusal(fenced.hset(key, { balance: 1 }, 2));
      expect(await fenced.hget(key, 'balance')).toBe('80');
      expect(await fenced.hget(key, 'updatedBy')).toBe('api-2');
      expect(await fenced.hget(key, 'note')).toBe('same holder');
      expect(await fenced.fence(key)).toBe(4);
    } finally {
      await close();
    }
  });

  it('keeps one token per resource: keys of one hash tag, and keys without one, do not fence each other', async () => {
    const { fenced, close } = await open();
    try {
      const tag = fresh('customer');
      await fenced.set(`orders:{${tag}}`, 'a', 50);
      await fenced.set(`profile:{${tag}}`, 'b', 2);
      await fenced.hset(`cart:{${tag}}`, 'items', 3, 1);
      const plain = fresh('plain');
      await fenced.set(plain, 'x', 7);
      await fenced.set(`{${plain}}`, 'y', 1); // the key whose tag is the other's whole name
      expect([await fenced.fence(`orders:{${tag}}`), await fenced.fence(`profile:{${tag}}`), await fenced.fence(`cart:{${tag}}`)]).toEqual([50, 2, 1]);
      expect([await fenced.fence(plain), await fenced.fence(`{${plain}}`)]).toEqual([7, 1]);
    } finally {
      await close();
    }
  });

  it('reads for update: a read with a token claims the key, so that an older holder\'s write landing after it is refused (no lost update)', async () => {
    const { fenced, close } = await open();
    try {
      const key = fresh('counter');
      await fenced.set(key, 10, 1);
      // Holder 1 reads 10 and stalls; holder 2, the lock's next, reads 10 too; holder 1's write lands late.
      expect(await fenced.get(key, 1)).toBe('10');
      expect(await fenced.get(key, 2)).toBe('10');
      expect(await refusal(fenced.set(key, 11, 1))).toMatchObject({ key, fencingToken: 1, highestToken: 2, operation: 'write' });
      await fenced.set(key, 11, 2);
      expect(await fenced.get(key)).toBe('11');
      // An older holder's read for update is refused, and changes nothing.
      const read = await refusal(fenced.get(key, 1));
      expect(read).toMatchObject({ key, fencingToken: 1, highestToken: 2, operation: 'read' });
      expect(read.message).toContain(`Fenced read of ${JSON.stringify(key)} refused: its fencing token 1 is lower than 2`);
      expect(await fenced.fence(key)).toBe(2);
      // A hash never written: the claim alone keeps the token.
      const hash = fresh('account');
      expect(await fenced.hget(hash, 'balance', 3)).toBeNull();
      expect(await fenced.fence(hash)).toBe(3);
      await refusal(fenced.hset(hash, 'balance', 5, 2));
      expect(await refusal(fenced.hget(hash, 'balance', 2))).toMatchObject({ key: hash, highestToken: 3, operation: 'read' });
      expect(await fenced.hget(hash, 'balance', 3)).toBeNull();
      // A token given but undefined (a lock without fencing) fails as a write's does: never a read without its claim.
      await expect(fenced.get(key, undefined as never)).rejects.toThrow(/^FencedRedis\.get\(\): Argument "fencingToken" of the read for update of ".*" must be a lock's fencing token/);
      await expect(fenced.hget(hash, 'balance', 0)).rejects.toThrow(/^FencedRedis\.hget\(\): Argument "fencingToken" of the read for update of ".*" must be a lock's fencing token/);
      expect(await fenced.fence(hash)).toBe(3);
    } finally {
      await close();
    }
  });

  it('refuses bad input with a TypeError naming the method and the argument, before anything is written', async () => {
    const { fenced, close } = await open();
    try {
      const key = fresh('input');
      for (const token of [0, -1, 1.5, Number.NaN, Number.MAX_SAFE_INTEGER + 1, '3', undefined]) {
        await expect(fenced.set(key, 'v', token as number)).rejects.toThrow(/^FencedRedis\.set\(\): Argument "fencingToken" of the write to ".*" must be a lock's fencing token/);
      }
      await expect(fenced.set('', 'v', 1)).rejects.toThrow('FencedRedis.set(): Argument "key" must be a non-empty string, got an empty string.');
      await expect(fenced.set('a}b', 'v', 1)).rejects.toThrow(/^FencedRedis\.set\(\): Argument "key" "a}b" has a "}" but no hash tag/);
      await expect(fenced.set(key, { v: 1 } as never, 1)).rejects.toThrow('FencedRedis.set(): Argument "value" must be a string or a finite number, got an object.');
      await expect(fenced.hset(key, {}, 1)).rejects.toThrow('FencedRedis.hset(): Argument "fields" must be a field name or an object with at least one field, got an empty object.');
      await expect(fenced.hset(key, { 'x\n': Number.POSITIVE_INFINITY }, 1)).rejects.toThrow('FencedRedis.hset(): Argument fields["x\\n"] must be a string or a finite number, got Infinity.');
      await expect(fenced.hset(key, 'f', 'v', 0)).rejects.toThrow(/^FencedRedis\.hset\(\): Argument "fencingToken"/);
      expect(await fenced.fence(key)).toBeNull();
    } finally {
      await close();
    }
  });
}

function redisOnlyBehaviour(open: () => Promise<Opened>): void {
  it('keeps the token when the data is deleted: a late write after a DEL is still refused', async () => {
    const { fenced, del, close } = await open();
    try {
      const key = fresh('deleted');
      await fenced.set(key, 'new', 5);
      await del!(key);
      await refusal(fenced.set(key, 'late', 4));
      expect(await fenced.get(key)).toBeNull();
    } finally {
      await close();
    }
  });
}

const ioredisTarget = (client: Redis | Cluster): Opened => ({ fenced: new FencedRedis(client), del: (key) => client.del(key), close: async () => client.disconnect() });
const nodeRedisTarget = (client: TestClient): Opened => ({
  fenced: new FencedRedis(client as never),
  del: (key) => (client.sendCommand as unknown as (...args: unknown[]) => Promise<unknown>)(...sendArgs(client, key)),
  close: () => client.close(),
});
/** A client of another package the module accepts (iovalkey, ioredis 6, Valkey GLIDE), handed to FencedRedis. */
const handedTarget = async (name: HandedClientName, target: string | { host: string; port: number }[]): Promise<Opened> => {
  const handed = await openClient(name, target);
  return { fenced: new FencedRedis(handed.client as never), close: async () => handed.close() };
};
/** DEL through node-redis' `sendCommand`, whose arguments differ for a cluster (routing key first). */
const sendArgs = (client: TestClient, key: string): unknown[] => ('masters' in client ? [key, false, ['DEL', key]] : [['DEL', key]]);

describe('FencedRedis on one Redis server', () => {
  let server: RedisServer;
  beforeAll(async () => {
    server = await startRedisServer();
  });
  afterAll(() => server?.stop());

  describe('through ioredis', () => {
    const open = async () => ioredisTarget(new Redis(server.url));
    fencedBehaviour(open);
    redisOnlyBehaviour(open);

    it('sends its scripts by SHA and falls back to EVAL after SCRIPT FLUSH', async () => {
      const admin = new Redis(server.url);
      const { fenced, close } = await open();
      try {
        await admin.script('FLUSH');
        const key = fresh('flushed');
        await fenced.set(key, 'v', 1);
        await fenced.hset(`${key}:h`, 'f', 'v', 1);
        expect(await admin.get(key)).toBe('v');
        expect(await admin.hget(`{${key}}:fence`, key)).toBe('1');
        expect(await admin.hget(`{${key}:h}:fence`, `${key}:h`)).toBe('1');
      } finally {
        admin.disconnect();
        await close();
      }
    });

    it('adds the client keyPrefix to the data and its token, as to any command of that client', async () => {
      const admin = new Redis(server.url);
      const { fenced, close } = ioredisTarget(new Redis(server.url, { keyPrefix: 'app:' }));
      try {
        const key = fresh('prefixed');
        await fenced.set(key, 'v', 3);
        expect(await admin.get(`app:${key}`)).toBe('v');
        expect(await admin.hget(`app:{${key}}:fence`, key)).toBe('3');
      } finally {
        admin.disconnect();
        await close();
      }
    });
  });

  describe.each([6, 5] as const)('through node-redis %i', (version) => {
    const open = async () => nodeRedisTarget(await nodeRedisClient(server.url, version));
    fencedBehaviour(open);
    redisOnlyBehaviour(open);
  });

  describe.each(['iovalkey', 'ioredis 6', 'GLIDE'] as const)('through %s', (name) => {
    fencedBehaviour(() => handedTarget(name, server.url));

    it('keeps the data and the token where a plain client reads them', async () => {
      const { fenced, close } = await handedTarget(name, server.url);
      const admin = new Redis(server.url);
      try {
        const key = fresh('handed');
        await fenced.hset(key, 'balance', 5, 6);
        expect(await admin.hget(key, 'balance')).toBe('5');
        expect(await admin.hget(`{${key}}:fence`, key)).toBe('6');
      } finally {
        admin.disconnect();
        await close();
      }
    });
  });

  it("RedisLockModule provides it on the module's connection: a holder whose lease ran out is refused once the next holder wrote", async () => {
    const open = async () => {
      const moduleRef = await Test.createTestingModule({ imports: [RedisLockModule.forRoot({ redis: server.url })] }).compile();
      await moduleRef.init();
      return moduleRef;
    };
    const [a, b] = await Promise.all([open(), open()]);
    try {
      const key = fresh('account');
      // A takes the lock and stops renewing (as a paused process does); its lease runs out.
      const first = await a.get(LockService).acquire(key, { ttl: 200, autoRenew: false });
      const second = await b.get(LockService).acquire(key, { waitTimeout: 5_000 });
      expect(second.fencingToken).toBeGreaterThan(first.fencingToken);
      await b.get(FencedRedis).hset(`balance:{${key}}`, 'amount', 70, second.fencingToken);
      const refused = await refusal(a.get(FencedRedis).hset(`balance:{${key}}`, 'amount', 130, first.fencingToken));
      expect(refused).toMatchObject({ fencingToken: first.fencingToken, highestToken: second.fencingToken });
      expect(await a.get(FencedRedis).hget(`balance:{${key}}`, 'amount')).toBe('70');
      await second.release();
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('in quorum mode the injected one says to make one on the Redis of the data; the application starts all the same', async () => {
    // Three independent masters (quorum mode refuses one listed twice).
    const others = await Promise.all([startRedisServer(), startRedisServer()]);
    const moduleRef = await Test.createTestingModule({ imports: [RedisLockModule.forRoot({ redis: [server.url, ...others.map((other) => other.url)] })] }).compile();
    await moduleRef.init();
    try {
      await expect(moduleRef.get(FencedRedis).set('q', 'v', 1)).rejects.toThrow(
        "The injected FencedRedis writes through the module's Redis connection, and this module has 3 (quorum mode): data belongs on one Redis, not on independent lock masters. Make one for the Redis that holds the data: new FencedRedis(client).",
      );
    } finally {
      await moduleRef.close();
      await Promise.all(others.map((other) => other.stop()));
    }
  });
});

describe('FencedRedis on a Redis Cluster (3 masters)', () => {
  let cluster: RedisCluster;
  beforeAll(async () => {
    cluster = await startRedisCluster(3);
  }, 60_000);
  afterAll(() => cluster?.stop());

  describe('through ioredis', () => {
    const open = async () => ioredisTarget(new Cluster(cluster.nodes));
    fencedBehaviour(open);
    redisOnlyBehaviour(open);

    it('writes keys of every slot, with and without a hash tag, each in one script call (no CROSSSLOT), the token in the key\'s slot', async () => {
      const client = new Cluster(cluster.nodes);
      const { fenced } = ioredisTarget(client);
      try {
        const keys = Array.from({ length: 60 }, (_, i) => (i % 2 === 0 ? `order:${i}` : `order:{customer-${i}}:total`));
        await Promise.all(keys.map((key, i) => fenced.set(key, String(i), i + 1)));
        for (const [i, key] of keys.entries()) {
          expect(await client.get(key)).toBe(String(i));
          const tag = /\{([^}]+)\}/.exec(key)?.[1] ?? key;
          expect(await client.cluster('KEYSLOT', `{${tag}}:fence`)).toBe(await client.cluster('KEYSLOT', key));
        }
      } finally {
        client.disconnect();
      }
    });

    it('refuses an untagged key that the client keyPrefix moves to another slot than its token, saying why', async () => {
      const client = new Cluster(cluster.nodes, { keyPrefix: 'app:' });
      try {
        await expect(new FencedRedis(client).set('order:7', 'v', 1)).rejects.toThrow(/^FencedRedis.set\(\): Argument "key" "order:7" with the client's keyPrefix "app:" hashes to another Cluster slot than its fencing token; give the key a hash tag/);
        await new FencedRedis(client).set('order:{7}', 'v', 1);
        expect(await client.get('order:{7}')).toBe('v');
      } finally {
        client.disconnect();
      }
    });
  });

  describe.each([6, 5] as const)('through node-redis %i', (version) => {
    const open = async () => nodeRedisTarget(await nodeRedisCluster(cluster.nodes, version));
    fencedBehaviour(open);
    redisOnlyBehaviour(open);
  });

  describe.each(['iovalkey', 'GLIDE'] as const)('through %s', (name) => {
    fencedBehaviour(() => handedTarget(name, cluster.nodes));
  });
});

describe('FencedRedis through Redis Sentinel (master, replica, 3 sentinels)', () => {
  let deployment: SentinelDeployment;
  beforeAll(async () => {
    deployment = await startSentinelDeployment();
  }, 60_000);
  afterAll(() => deployment?.stop());

  describe('through ioredis', () => {
    const open = async () => ioredisTarget(new Redis({ sentinels: deployment.sentinels, name: deployment.name }));
    fencedBehaviour(open);
    redisOnlyBehaviour(open);
  });

  describe.each([
    [6, createSentinel6 as unknown as Factory],
    [5, createSentinel5 as unknown as Factory],
  ] as const)('through node-redis %i', (_version, create) => {
    const open = async (): Promise<Opened> => {
      const client = create({ name: deployment.name, sentinelRootNodes: deployment.sentinels });
      client.on('error', () => undefined);
      await client.connect();
      return { fenced: new FencedRedis(client as never), close: () => client.close() };
    };
    fencedBehaviour(open);

    it('writes on the master, where a plain client reads the data and the token', async () => {
      const { fenced, close } = await open();
      const master = new Redis(await deployment.masterPortNow(), '127.0.0.1');
      try {
        const key = fresh('sentinel');
        await fenced.set(key, 'v', 8);
        expect(await master.get(key)).toBe('v');
        expect(await master.hget(`{${key}}:fence`, key)).toBe('8');
      } finally {
        master.disconnect();
        await close();
      }
    });
  });
});

describe('FencedRedis in memory (nestjs-redis-lock/testing)', () => {
  const locks = new InMemoryLocks();
  fencedBehaviour(async () => ({ fenced: new FencedRedis(locks), close: async () => undefined }));

  it('RedisLockTestingModule provides one on its store, shared by modules on the same store and emptied by clear()', async () => {
    const shared = new InMemoryLocks({ clock: 'manual' });
    const open = () => Test.createTestingModule({ imports: [RedisLockTestingModule.forRoot({ locks: shared })] }).compile();
    const [a, b] = await Promise.all([open(), open()]);
    try {
      const first = await a.get(LockService).acquire('account', { ttl: 1_000, autoRenew: false });
      await shared.manualClock.advance(1_001);
      const second = await b.get(LockService).acquire('account', { waitTimeout: 0 });
      await b.get(FencedRedis).set('balance:{account}', '70', second.fencingToken);
      await refusal(a.get(FencedRedis).set('balance:{account}', '130', first.fencingToken));
      expect(await a.get(FencedRedis).get('balance:{account}')).toBe('70');
      await second.release();
      shared.clear();
      expect(await a.get(FencedRedis).get('balance:{account}')).toBeNull();
      expect(await a.get(FencedRedis).fence('balance:{account}')).toBeNull();
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('answers WRONGTYPE as Redis does: hset on a string, get of a hash', async () => {
    const fenced = new FencedRedis(new InMemoryLocks());
    await fenced.set('s', 'v', 1);
    await fenced.hset('h', 'f', 'v', 1);
    await expect(fenced.hset('s', 'f', 'v', 2)).rejects.toThrow(/^WRONGTYPE/);
    await expect(fenced.get('h')).rejects.toThrow(/^WRONGTYPE/);
    // A read for update of a key of another type claims nothing.
    await expect(fenced.get('h', 5)).rejects.toThrow(/^WRONGTYPE/);
    await expect(fenced.hget('s', 'f', 5)).rejects.toThrow(/^WRONGTYPE/);
    expect([await fenced.fence('h'), await fenced.fence('s')]).toEqual([1, 1]);
    await fenced.set('h', 'now a string', 2); // SET replaces a key of any type
    expect(await fenced.get('h')).toBe('now a string');
  });
});

describe('FencedRedis on a real server answers WRONGTYPE as memory does', () => {
  let server: RedisServer;
  beforeAll(async () => {
    server = await startRedisServer();
  });
  afterAll(() => server?.stop());

  it('hset on a string, get of a hash; SET replaces a hash', async () => {
    const client = new Redis(server.url);
    try {
      const fenced = new FencedRedis(client);
      await fenced.set('s', 'v', 1);
      await fenced.hset('h', 'f', 'v', 1);
      await expect(fenced.hset('s', 'f', 'v', 2)).rejects.toThrow(/WRONGTYPE/);
      await expect(fenced.get('h')).rejects.toThrow(/WRONGTYPE/);
      await expect(fenced.get('h', 5)).rejects.toThrow(/WRONGTYPE/);
      await expect(fenced.hget('s', 'f', 5)).rejects.toThrow(/WRONGTYPE/);
      expect([await fenced.fence('h'), await fenced.fence('s')]).toEqual([1, 1]);
      await fenced.set('h', 'now a string', 2);
      expect(await fenced.get('h')).toBe('now a string');
      expect(await fenced.fence('s')).toBe(1);
    } finally {
      client.disconnect();
    }
  });
});
