// What a semaphore acquire+release with nobody waiting costs Redis, at the Lua level: the
// scripts as built (a holder alone, released by HDEL or by the script) beside two empty scripts
// and redis-semaphore's pair, for bench/NOTES.md ("A holder alone, released by HDEL"):
//   npm run build && node bench/semaphore-design-space.mjs [--loops 50] [--pairs 10000] [--rounds 7] [--base <dist dir>]
// `--base`: the `dist/` of another build (e.g. the previous commit's, built elsewhere), run as
// one more design. Every design runs from one ioredis connection with `loops` concurrent loops,
// each pair on a key of its own (limit 3, one permit), the designs interleaved round by round;
// figures are Redis process CPU per pair (`INFO cpu`, user + sys), medians, with Redis pinned to
// one core and this process to the other where `taskset` exists. Only the path with nobody
// waiting is exercised.
import { spawnSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Redis } from 'ioredis';
import { SEMAPHORE_ACQUIRE, SEMAPHORE_RELEASE } from '../dist/core/semaphore/semaphore-lua.js';
import { startRedisServer } from '../scripts/redis-server.mjs';
import { median } from './stats.mjs';

const option = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const LOOPS = Number(option('loops', 50));
const PAIRS = Number(option('pairs', 10_000));
const ROUNDS = Number(option('rounds', 7));
const BASE = option('base');
const TTL = 30_000;
// The settings argument as the store builds it: no fence retention, 1 s waiter lease, not
// sharded, enqueue, limit 3, 1 permit (acquire); the same without the last three and with the
// limit (release).
const ACQUIRE_ARGS = (token) => [token, TTL, '0:1000:0:1:3:1'];
const RELEASE_ARGS = (token) => [token, '0:1000:0:3'];


/** Each design: its acquire and release, one pair at a time. */
const designs = [
  {
    // A holder alone (docs/redis-data.md): the acquire script, then the client's plain HDEL of its field.
    name: 'this build (holder alone: script, plain HDEL)',
    acquire: SEMAPHORE_ACQUIRE.derived,
    plainRelease: (redis, permit, token) => redis.hdel(permit.slice(0, -token.length - 8) + ':holders', `!${token}`),
  },
  {
    name: 'this build, released by its script (the path after another caller unfolded it)',
    acquire: SEMAPHORE_ACQUIRE.derived,
    release: SEMAPHORE_RELEASE.derived,
  },
  { name: 'two empty scripts', acquire: 'return {1, 1}', release: 'return {1}' },
  {
    name: 'redis-semaphore (its acquire script, ZREM)',
    // redis-semaphore 5.x, lib/semaphore/acquire/lua.js, on its one sorted set.
    acquire: `redis.call('zremrangebyscore', KEYS[1], '-inf', tonumber(ARGV[4]) - tonumber(ARGV[3]))
if redis.call('zcard', KEYS[1]) < tonumber(ARGV[1]) then redis.call('zadd', KEYS[1], ARGV[4], ARGV[2]) redis.call('pexpire', KEYS[1], ARGV[3]) return 1 end return 0`,
    peer: true,
  },
];
if (BASE !== undefined) {
  const base = await import(pathToFileURL(path.resolve(BASE, 'core/semaphore/semaphore-lua.js')).href);
  designs.splice(1, 0, { name: `base (${BASE})`, acquire: base.SEMAPHORE_ACQUIRE.derived, release: base.SEMAPHORE_RELEASE.derived });
}

const pin = spawnSync('taskset', ['-V']).status === 0 && os.cpus().length >= 2;
const server = await startRedisServer();
const redis = new Redis(server.url);
try {
  if (pin) {
    const pid = /process_id:(\d+)/.exec(await redis.info('server'))?.[1];
    if (pid) spawnSync('taskset', ['-a', '-p', '-c', '0', pid]);
    spawnSync('taskset', ['-a', '-p', '-c', '1', String(process.pid)]);
  }
  for (const design of designs) {
    design.acquireSha = await redis.script('LOAD', design.acquire);
    if (design.release !== undefined) design.releaseSha = await redis.script('LOAD', design.release);
    design.usPerPair = [];
  }
  for (let round = 0; round < ROUNDS; round++) {
    for (const design of designs) design.usPerPair.push(await run(design, round));
  }
  const peer = median(designs.find((design) => design.peer).usPerPair);
  console.log(`${LOOPS} loops, ${PAIRS} pairs, ${ROUNDS} rounds, load average ${os.loadavg().map((load) => load.toFixed(1)).join(' ')}`);
  console.table(
    Object.fromEntries(designs.map((design) => [design.name, { 'Redis CPU us/pair': median(design.usPerPair).toFixed(1), 'x redis-semaphore': (median(design.usPerPair) / peer).toFixed(2) }])),
  );
} finally {
  await redis.quit();
  await server.stop();
}

async function redisCpuUs() {
  const info = await redis.info('cpu');
  const field = (name) => Number(new RegExp(`${name}:([\\d.]+)`).exec(info)[1]);
  return (field('used_cpu_sys') + field('used_cpu_user')) * 1e6;
}

async function run(design, round) {
  await redis.flushall();
  const before = await redisCpuUs();
  let next = 0;
  await Promise.all(
    Array.from({ length: LOOPS }, async () => {
      while (next < PAIRS) {
        const i = next++;
        const token = `r${round}t${i}abcdefghijklmnop`;
        const key = `lock:{bench-sem-${round}-${i}}`;
        if (design.peer) {
          if ((await redis.evalsha(design.acquireSha, 1, key, 3, token, TTL, Date.now())) !== 1) throw new Error(`${design.name}: refused`);
          await redis.zrem(key, token);
          continue;
        }
        const permit = `${key}:permit:${token}`;
        const acquired = await redis.evalsha(design.acquireSha, 1, permit, ...ACQUIRE_ARGS(token));
        if (acquired[0] !== 1) throw new Error(`${design.name}: refused`);
        const released = design.plainRelease ? [await design.plainRelease(redis, permit, token)] : await redis.evalsha(design.releaseSha, 1, permit, ...(design.releaseArgs ?? RELEASE_ARGS)(token));
        if (released[0] !== 1) throw new Error(`${design.name}: release refused`);
      }
    }),
  );
  return ((await redisCpuUs()) - before) / PAIRS;
}
