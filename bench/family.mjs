// npm run bench:family [-- --quick]: the lock family under contention, beside redis-semaphore's
// Semaphore (which polls): 4 processes x 3 chains on one key with limit 3 (and a read-write
// lock, 7 readers in 10), each call holding 2 ms. Figures per contender (medians over the
// repetitions): acquisitions per second, handoff (from the release that freed a permit to the
// next waiter's start) p50 / p99, fairness (fewest / most acquisitions of a chain), and Redis
// main-thread CPU and command time per acquisition. Every figure goes to
// bench/results/family.json.
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { startRedisServer } from '../scripts/redis-server.mjs';
import { redisMeter } from './redis-stats.mjs';
import { fmt, median, percentile } from './stats.mjs';

const QUICK = process.argv.includes('--quick');
const REPS = QUICK ? 1 : 3;
const DURATION_MS = QUICK ? 1_000 : 3_000;
const WORKERS = 4;
const CHAINS = 3;
const CONTENDERS = ['LockService semaphore', 'redis-semaphore Semaphore', 'LockService read-write'];
const here = (file) => fileURLToPath(new URL(file, import.meta.url));

const server = await startRedisServer();
const admin = new Redis(server.url);
const results = { startedAt: new Date().toISOString(), quick: QUICK, workers: WORKERS, chains: CHAINS, holdMs: 2, runs: {} };
try {
  for (let rep = 0; rep < REPS; rep++) {
    for (const name of CONTENDERS.map((_, i) => CONTENDERS[(i + rep) % CONTENDERS.length])) {
      (results.runs[name] ??= []).push(await run(name));
    }
  }
} finally {
  await admin.quit();
  await server.stop();
}

const table = {};
for (const [name, runs] of Object.entries(results.runs)) {
  const m = (field) => fmt(median(runs.map((r) => r[field])));
  table[name] = {
    'acq/s': m('perSecond'),
    'handoff p50 ms': m('handoffP50Ms'),
    'handoff p99 ms': m('handoffP99Ms'),
    'fairness min/max': m('fairness'),
    'most inside': Math.max(...runs.map((r) => r.mostInside)),
    'Redis CPU us/acq': m('redisCpuUs'),
    'Redis cmd us/acq': m('redisCommandUs'),
  };
}
console.table(table);
mkdirSync(here('./results/'), { recursive: true });
writeFileSync(here('./results/family.json'), JSON.stringify(results, null, 2));
console.log(`Every figure: ${here('./results/family.json')}`);

async function run(name) {
  const workers = Array.from({ length: WORKERS }, () => {
    const child = spawn(process.execPath, [here('./family-worker.mjs'), name, server.url, String(DURATION_MS), String(CHAINS)], { stdio: ['pipe', 'pipe', 'inherit'] });
    return { child, lines: createInterface({ input: child.stdout })[Symbol.asyncIterator]() };
  });
  for (const { lines } of workers) if ((await lines.next()).value !== 'ready') throw new Error(`a ${name} worker did not start`);
  const meter = redisMeter([admin]);
  await meter.begin();
  const go = Date.now() + 200;
  for (const { child } of workers) child.stdin.write(`go ${go}\n`);
  const reports = await Promise.all(workers.map(async ({ lines }) => JSON.parse((await lines.next()).value)));
  const redis = await meter.end();
  await Promise.all(workers.map(({ child }) => new Promise((resolve) => (child.exitCode !== null ? resolve() : child.once('exit', resolve)))));
  const sections = reports.flatMap((report, worker) => report.sections.map((section) => ({ ...section, worker })));
  return { ...summarize(sections), redisCpuUs: redis.processCpuUs / sections.length, redisCommandUs: redis.commandUsec / sections.length };
}

function summarize(sections) {
  // Handoffs: a call that asked while the key was full starts after some release; the delay
  // from the last release before its start is what waiting costs.
  const releases = sections.map((s) => s.releasedAt).sort((a, b) => a - b);
  const handoffs = [];
  for (const s of sections) {
    let lo = 0;
    let hi = releases.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (releases[mid] <= s.acquiredAt) lo = mid + 1;
      else hi = mid;
    }
    const freedBy = releases[lo - 1];
    if (freedBy !== undefined && s.requestedAt < freedBy) handoffs.push(s.acquiredAt - freedBy);
  }
  const edges = sections.flatMap((s) => [[s.acquiredAt, 1], [s.releasedAt, -1]]).sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let inside = 0;
  let mostInside = 0;
  for (const [, step] of edges) mostInside = Math.max(mostInside, (inside += step));
  const perChain = new Map();
  for (const s of sections) perChain.set(`${s.worker}:${s.chain}`, (perChain.get(`${s.worker}:${s.chain}`) ?? 0) + 1);
  const counts = [...perChain.values()];
  return {
    acquisitions: sections.length,
    perSecond: sections.length / (DURATION_MS / 1000),
    handoffP50Ms: percentile(handoffs, 50),
    handoffP99Ms: percentile(handoffs, 99),
    fairness: Math.min(...counts) / Math.max(...counts),
    mostInside,
  };
}
