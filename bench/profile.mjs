// Profiles one contender on uncontended acquire+release, for bench/NOTES.md:
//   node --cpu-prof --cpu-prof-dir=bench/results/profiles bench/profile.mjs [contender] [concurrency] [pairs]
// (a contender named '... quorum...' gets three independent masters)
// then `node bench/profile-top.mjs <file.cpuprofile>` lists where the time went.
import { Redis } from 'ioredis';
import { startRedisServer } from '../scripts/redis-server.mjs';
import { createContender } from './contenders.mjs';
import { redisMeter } from './redis-stats.mjs';

const [name = 'LockService', concurrency = '50', pairs = '30000'] = process.argv.slice(2);
// The quorum contenders run on three independent masters (the first one's SLOWLOG is shown).
const quorum = name.includes('quorum');
const servers = await Promise.all((quorum ? [0, 1, 2] : [0]).map(() => startRedisServer()));
const server = servers[0];
const admins = servers.map((node) => new Redis(node.url));
const admin = admins[0];
const contender = await createContender(name, quorum ? servers.map((node) => node.url) : server.url);
const meter = redisMeter(admins);
await admin.config('SET', 'slowlog-log-slower-than', '0');
await meter.begin();
await admin.slowlog('RESET');
const perLoop = Math.ceil(Number(pairs) / Number(concurrency));
await Promise.all(
  Array.from({ length: Number(concurrency) }, async (_, w) => {
    for (let i = 0; i < perLoop; i++) await contender.lockCycle(`p:${w}:${i}`);
  }),
);
const stats = await meter.end();
const slow = await admin.slowlog('GET', 5);
console.log(JSON.stringify({ name, pairs: perLoop * Number(concurrency), commandUsecPerPair: stats.commandUsec / (perLoop * Number(concurrency)), commands: stats.commands }, null, 1));
console.log('SLOWLOG (last 5):', JSON.stringify(slow.map(([, , usec, args]) => [usec, args.slice(0, 3)])));
await contender.close();
await Promise.all(admins.map((client) => client.quit()));
await Promise.all(servers.map((node) => node.stop()));
