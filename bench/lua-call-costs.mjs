// What a script call costs Redis apart from the commands it runs, for bench/NOTES.md ("Where
// the contended semaphore's server time goes"): an empty EVALSHA, one defining 30 closures,
// 30 redis.call()s of small commands, and the semaphore's queueing attempt (a waiter asking
// again while the semaphore is full: the refresh path), each timed by INFO commandstats over
// many calls on a server of its own.
//   npm run build && node bench/lua-call-costs.mjs [calls, default 3000]
import { Redis } from 'ioredis';
import { startRedisServer } from '../scripts/redis-server.mjs';
import { SEMAPHORE_ACQUIRE } from '../dist/core/semaphore/semaphore-lua.js';

const CALLS = Number(process.argv[2] ?? 3000);
const server = await startRedisServer();
const redis = new Redis(server.url);
const OWN = new Set(['evalsha', 'script', 'config', 'info', 'flushall', 'set']);

/** usec per EVALSHA, and the commands it ran (calls and usec per EVALSHA). */
async function measure(label, lua, args) {
  const sha = await redis.script('LOAD', lua);
  await redis.config('RESETSTAT');
  for (let i = 0; i < CALLS; i++) await redis.evalsha(sha, ...args(i));
  const info = await redis.info('commandstats');
  const [, calls, usec] = /cmdstat_evalsha:calls=(\d+),usec=(\d+)/.exec(info).map(Number);
  const inner = [...info.matchAll(/cmdstat_(\w+):calls=(\d+),usec=(\d+)/g)].filter(([, name]) => !OWN.has(name));
  const commands = inner.reduce((sum, [, , n]) => sum + Number(n), 0) / calls;
  const commandUsec = inner.reduce((sum, [, , , us]) => sum + Number(us), 0) / calls;
  console.log(`${label.padEnd(36)} ${(usec / calls).toFixed(2).padStart(6)} us per call; ${commands.toFixed(1)} commands in it, ${commandUsec.toFixed(2)} us`);
}

await redis.set('x', '1');
const loop = (n, body) => `for i = 1, ${n} do ${body} end return 1`;
await measure('empty', 'return 1', () => [0]);
await measure('30 closures defined', `${Array.from({ length: 30 }, (_, i) => `local function f${i}(a) return a end`).join('\n')}\nreturn 1`, () => [0]);
await measure('30 x EXISTS', loop(30, "redis.call('EXISTS', 'x')"), () => [0]);
await measure('30 x PTTL', loop(30, "redis.call('PTTL', 'x')"), () => [0]);
await measure('30 x HSET', loop(30, "redis.call('HSET', 'h', 'f', 'v')"), () => [0]);

// The semaphore: limit 1, held by A, 50 waiters queued; each call is a waiter asking again.
await redis.flushall();
const permit = (token) => `lock:{s}:permit:${token}`;
const semaphore = (token) => [1, permit(token), token, 30_000, '0:5000:0:1:1:1'];
const acquire = await redis.script('LOAD', SEMAPHORE_ACQUIRE.derived);
await redis.evalsha(acquire, ...semaphore('A'));
for (let i = 0; i < 50; i++) await redis.evalsha(acquire, ...semaphore(`B${i}`));
await measure('semaphore queueing attempt', SEMAPHORE_ACQUIRE.derived, (i) => semaphore(`B${i % 50}`));

redis.disconnect();
await server.stop();
