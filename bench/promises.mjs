// Promises created per uncontended acquire+release pair, per contender: a count, not a time, so
// it does not move with the machine's load. Each promise costs an allocation and a microtask,
// and on Node 20 also runs the promise hooks an AsyncLocalStorage turns on (see bench/NOTES.md).
// The count is taken with such a hook enabled, the state @Locked puts Node 20 in: V8 then
// allocates one more promise per `await` than without hooks.
//   npm run build && node bench/promises.mjs [contender ...]
// With `--where`, lists where the promises of one contender come from (first three frames).
import { createHook } from 'node:async_hooks';
import { ALS_FLOOR, createContender } from './contenders.mjs';
import { startRedisServer } from '../scripts/redis-server.mjs';

const where = process.argv.includes('--where');
const names = process.argv.slice(2).filter((arg) => arg !== '--where');
const contenders = names.length > 0 ? names : ['raw ioredis', ALS_FLOOR, 'LockService', '@Locked'];
const PAIRS = 2_000;
const CONCURRENCY = 50;

let counting = false;
let created = 0;
const sites = new Map();
createHook({
  init(_id, type) {
    if (!counting || type !== 'PROMISE') return;
    created++;
    if (!where) return;
    const frames = new Error().stack.split('\n').slice(2).map((line) => line.trim()).filter((line) => !line.includes('node:internal/async_hooks'));
    const site = frames.slice(0, 3).join(' < ');
    sites.set(site, (sites.get(site) ?? 0) + 1);
  },
}).enable();
if (where) Error.stackTraceLimit = 12;

// The quorum contenders run on three independent masters, as in bench/ab.mjs --quorum.
const servers = await Promise.all((contenders.some((name) => name.includes('quorum')) ? [0, 1, 2] : [0]).map(() => startRedisServer()));
try {
  for (const name of contenders) {
    const contender = await createContender(name, name.includes('quorum') ? servers.map((node) => node.url) : servers[0].url);
    const run = (tag) =>
      Promise.all(
        Array.from({ length: CONCURRENCY }, async (_, w) => {
          for (let i = 0; i < PAIRS / CONCURRENCY; i++) await contender.lockCycle(`p:${tag}:${w}:${i}`);
        }),
      );
    await run('warm');
    created = 0;
    sites.clear();
    counting = true;
    await run('count');
    counting = false;
    console.log(`${name}: ${(created / PAIRS).toFixed(1)} promises per pair`);
    if (where) {
      for (const [site, count] of [...sites].sort((a, b) => b[1] - a[1])) {
        if (count / PAIRS >= 0.5) console.log(`  ${(count / PAIRS).toFixed(1)}  ${site}`);
      }
    }
    await contender.close();
  }
} finally {
  await Promise.all(servers.map((node) => node.stop()));
}
