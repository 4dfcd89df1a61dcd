// What an uncontended acquire+release costs Redis (INFO commandstats usec, summed) and Node
// (process.cpuUsage) under the protocol as built and under the cheaper designs one could try
// instead, for bench/NOTES.md ("Why the commandstats target is not met"):
//   npm run build && node bench/redis-design-space.mjs [pairs] [repetitions]
// Every design runs on one connection from 50 concurrent loops, each pair on a key of its own
// (so every design that keeps a fencing counter leaves one key per lock, as the protocol does),
// rotated over the repetitions; medians. Only the uncontended path is exercised: the designs
// that skip a check are cheaper precisely because they give up what the check protects.
import { spawnSync } from 'node:child_process';
import os from 'node:os';
import { Redis } from 'ioredis';
import { COMMANDS } from '../dist/core/stores/redis/lock-lua.js';
import { startRedisServer } from '../scripts/redis-server.mjs';
import { median } from './stats.mjs';

const PAIRS = Number(process.argv[2] ?? 20_000);
const REPS = Number(process.argv[3] ?? 5);
const CONCURRENCY = 50;
const TTL = 30_000;

const RAW_RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;
// Release that checks for waiters (the zset alone) and leaves the handoff to a second call.
const RELEASE_2_KEYS = `if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end if redis.call('EXISTS', KEYS[2]) == 1 then return 2 end return redis.call('DEL', KEYS[1])`;
const ACQUIRE_3_KEYS = `if redis.call('EXISTS', KEYS[3]) == 0 and redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return {1, redis.call('INCR', KEYS[2])} end return {0}`;
const ACQUIRE_NO_FENCE = `if redis.call('EXISTS', KEYS[3], KEYS[4]) == 0 and redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return {1, 0} end return {0}`;

const keysOf = (key) => [`{${key}}`, `{${key}}:fence`, `{${key}}:queue`, `{${key}}:waiters`, `{${key}}:released`];

/** Each design: what it keeps, and one acquire+release pair. */
const DESIGNS = [
  {
    name: 'raw ioredis (SET NX PX + owner-checked DEL)',
    keeps: 'floor: no fencing, no queue',
    pair: async (redis, key, token) => {
      await redis.set(key, token, 'PX', TTL, 'NX');
      await redis.rawRelease(key, token);
    },
  },
  {
    name: 'raw + INCR of a per-lock counter, pipelined',
    keeps: 'fencing (not atomic with the SET), no queue',
    pair: async (redis, key, token) => {
      await redis.pipeline().set(key, token, 'PX', TTL, 'NX').incr(`${key}:fence`).exec();
      await redis.rawRelease(key, token);
    },
  },
  {
    name: 'as built, outside a Cluster (the lock key declared, four derived)',
    keeps: 'everything',
    pair: async (redis, key, token) => {
      await redis.asBuiltAcquireOneKey(`{${key}}`, token, TTL, '0:15000:0:0');
      await redis.asBuiltReleaseOneKey(`{${key}}`, token, '0:15000:0');
    },
  },
  {
    name: 'as built, on a Cluster (5 declared keys)',
    keeps: 'everything',
    pair: async (redis, key, token) => {
      await redis.asBuiltAcquire(...keysOf(key), token, TTL, '0:15000:0:0');
      await redis.asBuiltRelease(...keysOf(key), token, '0:15000:0');
    },
  },
  {
    name: 'as built on a Cluster, without the fencing counter',
    keeps: 'queue, no fencing tokens',
    pair: async (redis, key, token) => {
      await redis.noFenceAcquire(...keysOf(key), token, TTL);
      await redis.asBuiltRelease(...keysOf(key), token, '0:15000:0');
    },
  },
  {
    name: '3-key acquire + 2-key release scripts',
    keeps: 'fencing, queue; handoff needs a second call',
    pair: async (redis, key, token) => {
      const [lock, fence, , waiters] = keysOf(key);
      await redis.acquire3(lock, fence, waiters, token, TTL);
      await redis.release2(lock, waiters, token);
    },
  },
  {
    name: 'MULTI (SET NX PX, INCR, EXISTS) + 2-key release',
    keeps: 'fencing; a newcomer must hand back a lock taken past waiters',
    pair: async (redis, key, token) => {
      const [lock, fence, , waiters] = keysOf(key);
      await redis.multi().set(lock, token, 'PX', TTL, 'NX').incr(fence).exists(waiters).exec();
      await redis.release2(lock, waiters, token);
    },
  },
  {
    name: 'plain SET NX PX + INCR, pipelined + 2-key release',
    keeps: 'not FIFO, fencing not atomic with the SET',
    pair: async (redis, key, token) => {
      const [lock, fence, , waiters] = keysOf(key);
      await redis.pipeline().set(lock, token, 'PX', TTL, 'NX').incr(fence).exec();
      await redis.release2(lock, waiters, token);
    },
  },
];

const server = await startRedisServer();
const admin = new Redis(server.url);
const redis = new Redis(server.url);
redis.defineCommand('rawRelease', { numberOfKeys: 1, lua: RAW_RELEASE });
redis.defineCommand('asBuiltAcquire', { numberOfKeys: 5, lua: COMMANDS.acquire.lua });
redis.defineCommand('asBuiltRelease', { numberOfKeys: 5, lua: COMMANDS.release.lua });
redis.defineCommand('asBuiltAcquireOneKey', { numberOfKeys: 1, lua: COMMANDS.acquireOneKey.lua });
redis.defineCommand('asBuiltReleaseOneKey', { numberOfKeys: 1, lua: COMMANDS.releaseOneKey.lua });
redis.defineCommand('noFenceAcquire', { numberOfKeys: 5, lua: ACQUIRE_NO_FENCE });
redis.defineCommand('acquire3', { numberOfKeys: 3, lua: ACQUIRE_3_KEYS });
redis.defineCommand('release2', { numberOfKeys: 2, lua: RELEASE_2_KEYS });
if (spawnSync('taskset', ['-V']).status === 0 && os.cpus().length >= 2) {
  const pid = /process_id:(\d+)/.exec(await admin.info('server'))[1];
  spawnSync('taskset', ['-pc', '0', pid]);
  spawnSync('taskset', ['-pc', '1', String(process.pid)]);
}

async function run(design, tag) {
  await admin.flushall();
  await admin.config('RESETSTAT');
  let next = 0;
  const cpu = process.cpuUsage();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < PAIRS) {
        const i = next++;
        await design.pair(redis, `d:${tag}:${i}`, `token-${tag}-${i}`);
      }
    }),
  );
  const node = process.cpuUsage(cpu);
  const info = await admin.info('commandstats');
  let usec = 0;
  for (const [, command, calls, spent] of info.matchAll(/cmdstat_([^:]+):calls=(\d+),usec=(\d+)/g)) {
    if (command !== 'config|resetstat' && Number(calls) > 0) usec += Number(spent);
  }
  return { redisUsecPerPair: usec / PAIRS, nodeCpuUsPerPair: (node.user + node.system) / PAIRS };
}

// Warm-up: script cache, JIT.
for (const design of DESIGNS) await run(design, 'warm');
const runs = DESIGNS.map(() => []);
for (let rep = 0; rep < REPS; rep++) {
  for (let i = 0; i < DESIGNS.length; i++) {
    const index = (i + rep) % DESIGNS.length;
    runs[index].push(await run(DESIGNS[index], `r${rep}`));
  }
}
const raw = runs[0];
console.log(`Redis ${/redis_version:(\S+)/.exec(await admin.info('server'))[1]}, Node ${process.version}; ${PAIRS} pairs x ${REPS}, ${CONCURRENCY} concurrent; medians (x raw: median of per-repetition ratios)\n`);
console.log('| design | keeps | Redis commandstats us/pair | x raw | Node CPU us/pair | x raw |');
console.log('|---|---|---:|---:|---:|---:|');
DESIGNS.forEach((design, i) => {
  const redisUs = median(runs[i].map((r) => r.redisUsecPerPair));
  const redisX = median(runs[i].map((r, rep) => r.redisUsecPerPair / raw[rep].redisUsecPerPair));
  const nodeUs = median(runs[i].map((r) => r.nodeCpuUsPerPair));
  const nodeX = median(runs[i].map((r, rep) => r.nodeCpuUsPerPair / raw[rep].nodeCpuUsPerPair));
  console.log(`| ${design.name} | ${design.keeps} | ${redisUs.toFixed(2)} | ${redisX.toFixed(2)} | ${nodeUs.toFixed(1)} | ${nodeX.toFixed(2)} |`);
});
await redis.quit();
await admin.quit();
await server.stop();
