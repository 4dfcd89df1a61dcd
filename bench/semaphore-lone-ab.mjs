// The semaphore's holder-alone acquisition of two builds on one server (nobody waiting: the
// lone path, then its release), the builds alternated pair by pair, each acquire script timed
// by SLOWLOG (threshold 0): means and medians by build, for a change of that path too small for
// `family.mjs` to resolve.
//   npm run build && node bench/semaphore-lone-ab.mjs <dist A> <dist B> [pairs, default 20000]
// Fifty keys per build, taken again and again, so their fencing counters exist (as for most
// applications' keys).
import { Redis } from 'ioredis';
import { startRedisServer } from '../scripts/redis-server.mjs';
const [, , distA, distB, cyclesArg = '20000'] = process.argv;
const CYCLES = Number(cyclesArg);
const server = await startRedisServer();
const admin = new Redis(server.url);
await admin.config('SET', 'slowlog-log-slower-than', '0');
await admin.config('SET', 'slowlog-max-len', '100000');
async function setup(dist, tag) {
  const { LockScripts } = await import(`${dist}/core/stores/redis/lock-scripts.js`);
  const { lockRedisKeys } = await import(`${dist}/core/keys/lock-key.js`);
  const { semaphoreKeys } = await import(`${dist}/core/semaphore/semaphore-keys.js`);
  const redis = new Redis(server.url);
  const sem = new LockScripts(redis).semaphores;
  let n = 0;
  return { tag, async cycle() {
    const key = `lone-${tag}-${n % 50}`;
    const t = `t${tag}${n++}`;
    const names = semaphoreKeys(lockRedisKeys('lock:', key), t, key, 3, 1);
    const r = await sem.acquire(names, t, 60_000, true, 5000);
    if (!r.acquired) throw new Error('not acquired');
    const rel = await sem.release(names, t, 5000);
    if (!rel.released) throw new Error('not released');
  } };
}
const builds = [await setup(distA, 'A'), await setup(distB, 'B')];
const d = { A: [], B: [] };
const drain = async () => {
  const log = await admin.slowlog('GET', 100000);
  await admin.slowlog('RESET');
  for (const [, , usec, args] of log) {
    if (String(args[0]).toLowerCase() !== 'evalsha') continue;
    const key = String(args[3]);
    const tag = key.includes('lone-A') ? 'A' : key.includes('lone-B') ? 'B' : undefined;
    if (tag) d[tag].push(Number(usec));
  }
};
await admin.slowlog('RESET');
for (let c = 0; c < CYCLES; c++) {
  for (const b of c % 2 ? builds : [...builds].reverse()) await b.cycle();
  if (c % 2000 === 1999) await drain();
}
await drain();
const mean = (a) => a.reduce((x, y) => x + y, 0) / a.length;
const med = (a) => { const s = [...a].sort((x, y) => x - y); return s[Math.floor(s.length / 2)]; };
for (const t of ['A', 'B']) console.log(t, 'acquire evalsha n', d[t].length, 'mean', mean(d[t]).toFixed(2), 'med', med(d[t]));
const cs = await admin.info('commandstats');
console.log(cs.split('\n').filter(l => /exists|hdel|evalsha/.test(l)).join('\n'));
await admin.quit(); await server.stop(); process.exit(0);
