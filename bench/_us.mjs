import { startRedisServer } from '../scripts/redis-server.mjs';
import { createContender } from './contenders.mjs';
const servers = await Promise.all([0, 1, 2].map(() => startRedisServer()));
const names = ['redlock v5 quorum', 'LockService quorum, no fencing'];
const cs = {};
for (const n of names) cs[n] = await createContender(n, servers.map((s) => s.url));
for (const n of names) for (let i = 0; i < 3000; i++) await cs[n].lockCycle(`w:${n}:${i}`);
for (let rep = 0; rep < 4; rep++) for (const n of names) {
  const c0 = process.cpuUsage(); const t0 = performance.now(); const N = 10000;
  for (let i = 0; i < N; i++) await cs[n].lockCycle(`r${rep}:${i}`);
  const c = process.cpuUsage(c0); const t = performance.now() - t0;
  console.log(n.padEnd(32), 'user', (c.user / N).toFixed(1), 'sys', (c.system / N).toFixed(1), 'wall', (t * 1000 / N).toFixed(1));
}
for (const n of names) await cs[n].close();
await Promise.all(servers.map((s) => s.stop()));
