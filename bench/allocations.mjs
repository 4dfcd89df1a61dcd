// Bytes allocated per uncontended acquire+release pair, per contender: like the promise count
// (bench/promises.mjs), an amount rather than a time, so it hardly moves with the machine's load,
// and what a pair allocates the garbage collector pays for. Taken with V8's sampling heap
// profiler (every 256 bytes on average, objects the GC already collected included), after a
// warm-up, each contender in a process of its own (an AsyncLocalStorage one contender enables
// must not weigh on the next).
//   npm run build && node bench/allocations.mjs [--concurrency 50] [--where] [contender ...]
// (a contender named '... quorum...' gets three independent masters)
// With `--where`, lists the functions that allocate the most per pair.
import { spawnSync } from 'node:child_process';
import { Session } from 'node:inspector/promises';
import { fileURLToPath } from 'node:url';
import { ALS_FLOOR, createContender } from './contenders.mjs';
import { startRedisServer } from '../scripts/redis-server.mjs';

const args = process.argv.slice(2);
const at = args.indexOf('--concurrency');
const CONCURRENCY = at === -1 ? 50 : Number(args[at + 1]);
const where = args.includes('--where');
const child = args.includes('--child');
const names = args.filter((arg, i) => !arg.startsWith('--') && args[i - 1] !== '--concurrency');
const PAIRS = 20_000;

if (!child) {
  for (const name of names.length > 0 ? names : ['raw ioredis', ALS_FLOOR, 'LockService', '@Locked']) {
    const run = spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--child', '--concurrency', String(CONCURRENCY), ...(where ? ['--where'] : []), name], { stdio: 'inherit' });
    if (run.status !== 0) process.exit(run.status ?? 1);
  }
} else {
  const name = names[0];
  // The quorum contenders run on three independent masters, as in bench/ab.mjs --quorum.
  const servers = await Promise.all((name.includes('quorum') ? [0, 1, 2] : [0]).map(() => startRedisServer()));
  try {
    const contender = await createContender(name, servers.length > 1 ? servers.map((node) => node.url) : servers[0].url);
    const run = (tag, pairs) =>
      Promise.all(
        Array.from({ length: CONCURRENCY }, async (_, w) => {
          for (let i = 0; i < pairs / CONCURRENCY; i++) await contender.lockCycle(`a:${tag}:${w}:${i}`);
        }),
      );
    await run('warm', 10_000);
    const session = new Session();
    session.connect();
    await session.post('HeapProfiler.startSampling', { samplingInterval: 256, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
    await run('count', PAIRS);
    const { profile } = await session.post('HeapProfiler.stopSampling');
    session.disconnect();
    const bySite = new Map();
    let total = 0;
    const walk = (node) => {
      if (node.selfSize > 0) {
        total += node.selfSize;
        const { functionName, url, lineNumber } = node.callFrame;
        const site = `${functionName || '(anonymous)'} ${url.replace(/^.*node_modules\//, '').replace(/^file:\/\/.*?\/(dist|bench)\//, '$1/')}:${lineNumber + 1}`;
        bySite.set(site, (bySite.get(site) ?? 0) + node.selfSize);
      }
      for (const next of node.children) walk(next);
    };
    walk(profile.head);
    console.log(`${name}, ${CONCURRENCY} loops, Node ${process.version}: ${Math.round(total / PAIRS)} bytes per pair`);
    if (where) {
      for (const [site, bytes] of [...bySite].sort((a, b) => b[1] - a[1]).slice(0, 25)) console.log(`  ${String(Math.round(bytes / PAIRS)).padStart(6)}  ${site}`);
    }
    await contender.close();
  } finally {
    await Promise.all(servers.map((node) => node.stop()));
  }
}
