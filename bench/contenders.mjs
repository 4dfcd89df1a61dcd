// The lock implementations the benchmark compares, behind one small interface:
//   lockCycle(key)            acquire then release, nothing in between (uncontended runs)
//   withLock(key, body)       acquire, run (and await) body, release (contended runs); false if not acquired
//   close()
import 'reflect-metadata';
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Cluster, Redis } from 'ioredis';
import Redlock5 from 'redlock';
import { Mutex, Semaphore } from 'redis-semaphore';
import { LockService, Locked, RedisLockModule } from 'nestjs-redis-lock';
import { HANDOFF_FLOORS, createHandoffFloor } from './handoff-floors.mjs';

const require = createRequire(import.meta.url);
const Redlock4 = require('redlock4');

const RAW_RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;
const TTL = 30_000;

export const CONTENDER_NAMES = ['raw ioredis', 'LockService', '@Locked', 'redlock v5', 'redlock v4', 'redis-semaphore'];

/**
 * The contended runs add LockService with `fairness: 'barging'` (non-fair) beside its FIFO
 * default, and the two floors of a message-woken handoff (`handoff-floors.mjs`).
 */
export const CONTENDED_NAMES = [...CONTENDER_NAMES, 'LockService barging', ...HANDOFF_FLOORS];

/**
 * A semaphore nobody waits for (limit 3, a key per pair): ours beside redis-semaphore's
 * `Semaphore`, measured by `bench/family.mjs` (not part of the main table).
 */
export const SEMAPHORE_CONTENDERS = ['LockService semaphore', 'redis-semaphore Semaphore'];
const SEMAPHORE_LIMIT = 3;

/**
 * The raw floor with each pair run inside `AsyncLocalStorage.run()`, as in an application that
 * uses one already (nestjs-cls, OpenTelemetry): on Node 20 that turns on promise hooks for the
 * whole process, which `@Locked` (reentrancy, `current()`) does too. Uncontended runs only.
 */
export const ALS_FLOOR = 'raw ioredis in AsyncLocalStorage';

/**
 * What the protocol alone costs: the library's own acquire and release scripts (the ones
 * `LockService` sends outside a Cluster: fencing counter, queue checks), called from raw ioredis
 * with an owner token as long as the library's (random part and holder record), and nothing
 * else of the library. Its distance to raw ioredis is Redis' share of a lock's cost, which no
 * Node-side work can win back; `LockService`'s distance to it is the library's own.
 */
export const SCRIPTS_FLOOR = 'raw ioredis with the lock scripts';
// The shape of a library owner token: 32 hex characters, the holder record, the time.
const HOLDER_RECORD = `.${Buffer.from(JSON.stringify(['bench-host', 12345, null, null])).toString('base64url')}.${Date.now().toString(36)}`;

/**
 * `LockService` on a node-redis client instead of ioredis (node-redis writes a tick's commands in
 * one write of its own): for `bench/ab.mjs --contenders`, not part of the main table.
 */
export const NODE_REDIS_CONTENDER = 'LockService node-redis';

/** The floor of the Cluster rows: raw ioredis on the same Cluster. */
export const CLUSTER_FLOOR = 'raw ioredis cluster';
/** The peer of the quorum rows, on the same three masters; the floor their ratios are taken to. */
export const QUORUM_FLOOR = 'redlock v5 quorum';
export const QUORUM_NAMES = [QUORUM_FLOOR, 'LockService quorum', 'LockService quorum, no fencing'];

/**
 * `target` is a URL for the single-node contenders; for "LockService cluster" the cluster's
 * nodes (`[{ host, port }]`), for the quorum contenders the URLs of the independent masters.
 * Plain data, so that a contender can be built in a process of its own.
 */
export async function createContender(name, target, { contended = false } = {}) {
  const url = target;
  const scaled = await scaleContender(name, target);
  if (scaled !== undefined) return scaled;
  if (HANDOFF_FLOORS.includes(name)) return createHandoffFloor(name, url);
  switch (name) {
    case 'LockService cluster':
    case 'LockService quorum': {
      const redis = name === 'LockService cluster' ? new Cluster(target) : target;
      class ScaleModule {}
      Module({ imports: [RedisLockModule.forRoot({ redis, waitTimeout: 10_000 })] })(ScaleModule);
      const app = await NestFactory.createApplicationContext(ScaleModule, { logger: ['error'] });
      const locks = app.get(LockService);
      return byAcquireRelease(
        (key) => locks.acquire(key),
        (lock) => lock.release(),
        async () => {
          await app.close();
          // A client handed to the module is ours to close.
          if (typeof redis.disconnect === 'function') redis.disconnect();
        },
      );
    }
    case ALS_FLOOR:
    case 'raw ioredis': {
      const redis = new Redis(url);
      const chain = name === ALS_FLOOR ? new AsyncLocalStorage() : undefined;
      redis.defineCommand('benchRelease', { numberOfKeys: 1, lua: RAW_RELEASE });
      const acquire = async (key) => {
        // randomUUID() draws from a cached pool of random bytes: the floor should not pay 1.2 us of
        // Node CPU per pair for randomBytes(16) (measured on Node 20), which no lock needs to.
        const token = randomUUID();
        // Contended: poll every millisecond, the best a client without notifications can do.
        while ((await redis.set(key, token, 'PX', TTL, 'NX')) !== 'OK') {
          if (!contended) throw new Error('busy');
          await new Promise((resolve) => setTimeout(resolve, 1));
        }
        return token;
      };
      const cycle = async (key) => {
        await redis.benchRelease(key, await acquire(key));
      };
      return {
        // The same async function either way: the floor in AsyncLocalStorage differs by the hooks alone.
        lockCycle: chain ? (key) => chain.run(key, cycle, key) : cycle,
        async withLock(key, body) {
          const token = await acquire(key);
          await body();
          await redis.benchRelease(key, token);
          return true;
        },
        close: () => redis.quit(),
      };
    }
    case SCRIPTS_FLOOR: {
      // The build's own scripts (bench/ab.mjs --base runs another build's bench/ beside its dist/).
      const { COMMANDS } = await import(new URL('../dist/core/stores/redis/lock-lua.js', import.meta.url).href);
      const redis = new Redis(url);
      redis.defineCommand('benchLockAcquire', { numberOfKeys: 1, lua: COMMANDS.acquireOneKey.lua });
      redis.defineCommand('benchLockRelease', { numberOfKeys: 1, lua: COMMANDS.releaseOneKey.lua });
      // Settings as the library sends them: no fence retention, 1 s waiter lease, not sharded, do not queue.
      const acquire = async (lockKey) => {
        const token = `${randomUUID().replaceAll('-', '')}${HOLDER_RECORD}`;
        const reply = await redis.benchLockAcquire(lockKey, token, TTL, '0:1000:0:0');
        if (typeof reply !== 'number') throw new Error('busy');
        return token;
      };
      return {
        async lockCycle(key) {
          const lockKey = `lock:{${key}}`;
          await redis.benchLockRelease(lockKey, await acquire(lockKey), '0:1000:0');
        },
        async withLock() {
          throw new Error(`${SCRIPTS_FLOOR} is an uncontended floor only`);
        },
        close: () => redis.quit(),
      };
    }
    case NODE_REDIS_CONTENDER: {
      // The built package loads node-redis only when handed a node-redis client.
      const { createClient } = await import('redis');
      const client = createClient({ url });
      client.on('error', () => undefined);
      await client.connect();
      class NodeRedisModule {}
      Module({ imports: [RedisLockModule.forRoot({ redis: client, waitTimeout: 10_000 })] })(NodeRedisModule);
      const app = await NestFactory.createApplicationContext(NodeRedisModule, { logger: ['error'] });
      const locks = app.get(LockService);
      // A client handed to the module is ours to close.
      return byAcquireRelease((key) => locks.acquire(key), (lock) => lock.release(), async () => {
        await app.close();
        await client.close();
      });
    }
    case 'LockService barging': {
      class BargingModule {}
      Module({ imports: [RedisLockModule.forRoot({ redis: url, waitTimeout: 10_000, fairness: 'barging' })] })(BargingModule);
      const app = await NestFactory.createApplicationContext(BargingModule, { logger: ['error'] });
      const locks = app.get(LockService);
      return byAcquireRelease((key) => locks.acquire(key), (lock) => lock.release(), () => app.close());
    }
    case 'LockService':
    case '@Locked': {
      // Decorators applied by hand: plain JavaScript has no decorator syntax on Node 20.
      class Worker {
        async cycle(_key, body) {
          await body?.();
        }
      }
      const cycle = Object.getOwnPropertyDescriptor(Worker.prototype, 'cycle');
      Locked((key) => key, { waitTimeout: 10_000 })(Worker.prototype, 'cycle', cycle);
      Object.defineProperty(Worker.prototype, 'cycle', cycle);
      Injectable()(Worker);
      class BenchModule {}
      Module({ imports: [RedisLockModule.forRoot({ redis: url, isGlobal: true, waitTimeout: 10_000 })], providers: [Worker] })(BenchModule);
      const app = await NestFactory.createApplicationContext(BenchModule, { logger: ['error'] });
      const locks = app.get(LockService);
      const worker = app.get(Worker);
      if (name === '@Locked') {
        return {
          lockCycle: (key) => worker.cycle(key),
          async withLock(key, body) {
            await worker.cycle(key, body);
            return true;
          },
          close: () => app.close(),
        };
      }
      return byAcquireRelease((key) => locks.acquire(key), (lock) => lock.release(), () => app.close());
    }
    case 'redlock v5': {
      const redis = new Redis(url);
      const redlock = new Redlock5([redis]);
      redlock.on('error', () => undefined);
      return byAcquireRelease((key) => redlock.acquire([key], TTL), (lock) => lock.release(), () => redis.quit());
    }
    case 'redlock v4': {
      const redis = new Redis(url);
      const redlock = new Redlock4([redis]);
      redlock.on('clientError', () => undefined);
      return byAcquireRelease((key) => redlock.lock(key, TTL), (lock) => lock.unlock(), () => redis.quit());
    }
    case SEMAPHORE_CONTENDERS[0]: {
      class SemaphoreModule {}
      Module({ imports: [RedisLockModule.forRoot({ redis: url, waitTimeout: 10_000 })] })(SemaphoreModule);
      const app = await NestFactory.createApplicationContext(SemaphoreModule, { logger: ['error'] });
      const locks = app.get(LockService);
      return byAcquireRelease((key) => locks.acquire(key, { limit: SEMAPHORE_LIMIT }), (lock) => lock.release(), () => app.close());
    }
    case SEMAPHORE_CONTENDERS[1]: {
      const redis = new Redis(url);
      return byAcquireRelease(
        async (key) => {
          const semaphore = new Semaphore(redis, key, SEMAPHORE_LIMIT, { lockTimeout: TTL });
          await semaphore.acquire();
          return semaphore;
        },
        (semaphore) => semaphore.release(),
        () => redis.quit(),
      );
    }
    case 'redis-semaphore': {
      const redis = new Redis(url);
      return byAcquireRelease(
        async (key) => {
          const mutex = new Mutex(redis, key, { lockTimeout: TTL });
          await mutex.acquire();
          return mutex;
        },
        (mutex) => mutex.release(),
        () => redis.quit(),
      );
    }
    default:
      throw new Error(`unknown contender ${name}`);
  }
}

/**
 * The contenders of the Cluster and quorum rows, each compared with its own floor on the same
 * servers: raw ioredis on the same Cluster (`SET NX PX` and an owner-checked release through
 * `defineCommand`), and redlock v5 on the same three masters. `undefined` for other names.
 */
async function scaleContender(name, target) {
  switch (name) {
    case CLUSTER_FLOOR: {
      const cluster = new Cluster(target);
      cluster.defineCommand('benchRelease', { numberOfKeys: 1, lua: RAW_RELEASE });
      return byAcquireRelease(
        async (key) => {
          const token = randomUUID();
          if ((await cluster.set(key, token, 'PX', TTL, 'NX')) !== 'OK') throw new Error('busy');
          return { key, token };
        },
        ({ key, token }) => cluster.benchRelease(key, token),
        () => cluster.quit(),
      );
    }
    case QUORUM_FLOOR: {
      const clients = target.map((url) => new Redis(url));
      const redlock = new Redlock5(clients);
      redlock.on('error', () => undefined);
      return byAcquireRelease(
        (key) => redlock.acquire([key], TTL),
        (lock) => lock.release(),
        () => Promise.all(clients.map((client) => client.quit())),
      );
    }
    case 'LockService quorum, no fencing': {
      class QuorumModule {}
      Module({ imports: [RedisLockModule.forRoot({ redis: target, waitTimeout: 10_000 })] })(QuorumModule);
      const app = await NestFactory.createApplicationContext(QuorumModule, { logger: ['error'] });
      const locks = app.get(LockService);
      const options = Object.freeze({ fencing: false });
      return byAcquireRelease((key) => locks.acquire(key, options), (lock) => lock.release(), () => app.close());
    }
    default:
      return undefined;
  }
}

/** A contender from an acquire and a release; a failed acquire counts as not acquired. */
function byAcquireRelease(acquire, release, close) {
  return {
    async lockCycle(key) {
      await release(await acquire(key));
    },
    async withLock(key, body) {
      let lock;
      try {
        lock = await acquire(key);
      } catch {
        return false;
      }
      await body();
      await release(lock);
      return true;
    },
    close,
  };
}
