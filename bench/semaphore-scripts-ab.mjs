// The contended semaphore cycle of two builds on one server (limit 3, 3 holders, 9 waiters: a
// release that grants the head, then the released caller queued again at the tail), the builds
// alternated cycle by cycle, each script call timed by SLOWLOG (threshold 0): medians and means
// by build and call, for measuring a script change where `family.mjs` cannot resolve it.
//   npm run build && node bench/semaphore-scripts-ab.mjs <dist A> <dist B> [cycles, default 3000]
// for instance with the build before in /tmp/base (see bench/ab.mjs):
//   node bench/semaphore-scripts-ab.mjs /tmp/base/dist "$PWD/dist"
// `--lone`: the holder-alone cycle instead (nobody waiting: the lone acquisition, released by
// its plain HDEL, so only the acquire script is timed), on fifty keys per build taken again and
// again, so their fencing counters exist (as for most applications' keys).
import { Redis } from 'ioredis';
import { startRedisServer } from '../scripts/redis-server.mjs';
const LONE = process.argv.includes('--lone');
const [distA, distB, cyclesArg = LONE ? '20000' : '3000'] = process.argv.slice(2).filter((arg) => arg !== '--lone');
const CYCLES = Number(cyclesArg);
if (!distA || !distB || !(CYCLES > 0)) throw new Error('usage: node bench/semaphore-scripts-ab.mjs [--lone] <dist A> <dist B> [cycles]');
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
  const key = `cyc-${tag}`;
  const names = (token, of = key) => semaphoreKeys(lockRedisKeys('lock:', of), token, of, 3, 1);
  if (LONE) {
    let n = 0;
    return {
      tag, redis,
      async cycle() {
        const of = `${key}-${n % 50}`;
        const t = `t${n++}`;
        if (!(await sem.acquire(names(t, of), t, 60_000, true, 5000)).acquired) throw new Error(`${tag} lone acquire refused`);
        if (!(await sem.release(names(t, of), t, 5000)).released) throw new Error(`${tag} lone release refused`);
      },
    };
  }
  const holders = [], waiters = [];
  let n = 0;
  for (let i = 0; i < 3; i++) { const t = `h${n++}`; if (!(await sem.acquire(names(t), t, 60_000, true, 5000)).acquired) throw new Error('x'); holders.push(t); }
  for (let i = 0; i < 9; i++) { const t = `w${n++}`; if ((await sem.acquire(names(t), t, 60_000, true, 5000)).acquired) throw new Error('y'); waiters.push(t); }
  return {
    tag, redis,
    async cycle() {
      const h = holders.shift();
      const rel = await sem.release(names(h), h, 5000);
      if (!rel.released || rel.grants.length !== 1 || rel.grants[0].token !== waiters[0]) throw new Error(tag + ' release ' + JSON.stringify(rel));
      holders.push(waiters.shift());
      const t = `w${n++}`;
      if ((await sem.acquire(names(t), t, 60_000, true, 5000)).acquired) throw new Error('acquired');
      waiters.push(t);
    },
  };
}
const builds = [await setup(distA, 'A'), await setup(distB, 'B')];
const durations = { A: { release: [], acquire: [] }, B: { release: [], acquire: [] } };
const drain = async () => {
  const log = await admin.slowlog('GET', 100000);
  await admin.slowlog('RESET');
  for (const [, , usec, args] of log) {
    if (String(args[0]).toLowerCase() !== 'evalsha') continue;
    const key = String(args[3]);
    const tag = key.includes('cyc-A') ? 'A' : key.includes('cyc-B') ? 'B' : undefined;
    if (!tag) continue;
    const kind = String(args.at(-1)).split(':').length === 4 ? 'release' : 'acquire';
    durations[tag][kind].push(Number(usec));
  }
};
await admin.slowlog('RESET');
for (let c = 0; c < CYCLES; c++) {
  const order = c % 2 === 0 ? builds : [...builds].reverse();
  for (const b of order) await b.cycle();
  if (c % 500 === 499) await drain();
}
await drain();
const med = (a) => { const s = [...a].sort((x, y) => x - y); return s[Math.floor(s.length / 2)]; };
const mean = (a) => a.reduce((x, y) => x + y, 0) / a.length;
if (LONE) {
  // The release is a plain HDEL, no script: only the acquisitions are timed.
  for (const tag of ['A', 'B']) console.log(tag, 'lone acquire med', med(durations[tag].acquire), 'mean', mean(durations[tag].acquire).toFixed(2), '| n', durations[tag].acquire.length);
  console.log('acquire ratio B/A (means)', (mean(durations.B.acquire) / mean(durations.A.acquire)).toFixed(3));
} else {
  for (const tag of ['A', 'B']) console.log(tag, 'acquire med', med(durations[tag].acquire), 'mean', mean(durations[tag].acquire).toFixed(1), '| release med', med(durations[tag].release), 'mean', mean(durations[tag].release).toFixed(1), '| n', durations[tag].acquire.length);
  console.log('pair ratio B/A (medians)', ((med(durations.B.acquire) + med(durations.B.release)) / (med(durations.A.acquire) + med(durations.A.release))).toFixed(3), '(means)', ((mean(durations.B.acquire) + mean(durations.B.release)) / (mean(durations.A.acquire) + mean(durations.A.release))).toFixed(3));
}
for (const b of builds) b.redis.disconnect();
await admin.quit(); await server.stop();
