// npm run bench:family [-- --quick] [-- --only contended|limit100|nobody]: the lock family beside
// redis-semaphore's Semaphore (which polls), in three sections.
// - Contended: 4 processes x 3 chains on one key with limit 3 (and a read-write lock, 7 readers
//   in 10, and a mutex), each call holding 2 ms.
// - Limit 100: 4 processes x 30 chains on one key with limit 100, so that every acquisition
//   finds 100 holders (and 20 waiters), each call holding 2 ms.
// Figures per contender (medians over the repetitions): acquisitions per second, handoff (from
// the release that freed a permit to the next waiter's start) p50 / p99, fairness (fewest /
// most acquisitions of a chain), and Redis main-thread CPU and command time per acquisition.
// - Nobody waiting: acquire + release of a limit-3 semaphore on a key per pair (nobody ever
//   waits), with 1 and 50 concurrent loops, each contender in a process of its own (pinned to
//   one core and Redis to the other where `taskset` exists), as the uncontended section of
//   `npm run bench` measures locks: pairs/s, Node and Redis CPU per pair, ratios to
//   redis-semaphore's run of the same repetition.
// Every figure goes to bench/results/family.json.
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { startRedisServer } from '../scripts/redis-server.mjs';
import { SEMAPHORE_CONTENDERS } from './contenders.mjs';
import { redisMeter } from './redis-stats.mjs';
import { fmt, median, percentile } from './stats.mjs';

const QUICK = process.argv.includes('--quick');
const ONLY = /--only[= ](\S+)/.exec(process.argv.join(' '))?.[1];
const REPS = QUICK ? 1 : 3;
const NOBODY_REPS = QUICK ? 1 : 5;
const DURATION_MS = QUICK ? 1_000 : 3_000;
const PAIRS = QUICK ? 2_000 : 10_000;
const WORKERS = 4;
const PEER = 'redis-semaphore Semaphore';
const CONTENDED = [
  { name: 'contended', title: 'limit 3, 4 x 3 chains', limit: 3, chains: 3, contenders: ['LockService semaphore', PEER, 'LockService read-write', 'LockService mutex'] },
  { name: 'limit100', title: 'limit 100, 4 x 30 chains (100 holders, 20 waiting)', limit: 100, chains: 30, contenders: ['LockService semaphore', PEER] },
];
const here = (file) => fileURLToPath(new URL(file, import.meta.url));
const TASKSET = spawnSync('taskset', ['-V']).status === 0 && os.cpus().length >= 2;

const server = await startRedisServer();
const admin = new Redis(server.url);
const results = { startedAt: new Date().toISOString(), quick: QUICK, loadAverage: os.loadavg(), workers: WORKERS, holdMs: 2, contended: {}, nobodyWaiting: {} };
try {
  if (TASKSET) {
    const pid = /process_id:(\d+)/.exec(await admin.info('server'))?.[1];
    if (pid) spawnSync('taskset', ['-a', '-p', '-c', '0', pid]);
  }
  for (const section of CONTENDED) {
    if (ONLY !== undefined && ONLY !== section.name) continue;
    const runs = (results.contended[section.title] = {});
    for (let rep = 0; rep < REPS; rep++) {
      for (const name of section.contenders.map((_, i) => section.contenders[(i + rep) % section.contenders.length])) {
        (runs[name] ??= []).push(await contended(name, section));
      }
    }
    printContended(section.title, runs);
  }
  if (ONLY === undefined || ONLY === 'nobody') {
    await nobodyWaiting();
    printNobodyWaiting(results.nobodyWaiting);
  }
} finally {
  await admin.quit();
  await server.stop();
}
results.loadAverageAfter = os.loadavg();
mkdirSync(here('./results/'), { recursive: true });
writeFileSync(here(`./results/family${ONLY ? `-${ONLY}` : ''}.json`), JSON.stringify(results, null, 2));
console.log(`Every figure: ${here(`./results/family${ONLY ? `-${ONLY}` : ''}.json`)}`);

function printContended(title, runs) {
  const table = {};
  const peer = runs[PEER];
  for (const [name, list] of Object.entries(runs)) {
    const m = (field) => fmt(median(list.map((r) => r[field])));
    // Ratio to the peer's run of the same repetition.
    const ratio = (field) => (peer ? fmt(median(list.map((r, i) => r[field] / peer[i][field]))) : '-');
    table[name] = {
      'acq/s': m('perSecond'),
      'handoff p50 ms': m('handoffP50Ms'),
      'handoff p99 ms': m('handoffP99Ms'),
      'fairness min/max': m('fairness'),
      'most inside': Math.max(...list.map((r) => r.mostInside)),
      'Redis CPU us/acq': m('redisCpuUs'),
      'x peer': ratio('redisCpuUs'),
      'Redis cmd us/acq': m('redisCommandUs'),
      'EVALSHA/acq': m('evalshaPerAcq'),
      'cmds/acq': m('commandsPerAcq'),
    };
  }
  console.log(`\n${title}`);
  console.table(table);
}

async function contended(name, { limit, chains }) {
  const workers = Array.from({ length: WORKERS }, () => {
    const child = spawn(process.execPath, [here('./family-worker.mjs'), name, server.url, String(DURATION_MS), String(chains), String(limit)], { stdio: ['pipe', 'pipe', 'inherit'] });
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
  // Script calls (redis-semaphore's are EVALSHA too), and every command the contender sent.
  const calls = (command) => redis.commands[command]?.calls ?? 0;
  const commands = Object.values(redis.commands).reduce((sum, { calls }) => sum + calls, 0);
  return {
    ...summarize(sections),
    redisCpuUs: redis.processCpuUs / sections.length,
    redisCommandUs: redis.commandUsec / sections.length,
    evalshaPerAcq: (calls('evalsha') + calls('eval')) / sections.length,
    commandsPerAcq: commands / sections.length,
    // Per command (scripts' own commands included): calls and usec per acquisition.
    perCommand: Object.fromEntries(Object.entries(redis.commands).map(([command, { calls: n, usec }]) => [command, { calls: n / sections.length, usec: usec / sections.length }])),
  };
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

/** The nobody-waiting section: uncontended-worker.mjs processes, as `npm run bench` runs them. */
async function nobodyWaiting() {
  const runs = results.nobodyWaiting;
  for (let rep = 0; rep < NOBODY_REPS; rep++) {
    for (const name of SEMAPHORE_CONTENDERS.map((_, i) => SEMAPHORE_CONTENDERS[(i + rep) % SEMAPHORE_CONTENDERS.length])) {
      const args = [here('./uncontended-worker.mjs'), name, JSON.stringify(server.url)];
      const child = TASKSET ? spawn('taskset', ['-c', '1', process.execPath, ...args], { stdio: ['pipe', 'pipe', 'inherit'] }) : spawn(process.execPath, args, { stdio: ['pipe', 'pipe', 'inherit'] });
      const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
      if ((await lines.next()).value !== 'ready') throw new Error(`the ${name} process did not start`);
      const meter = redisMeter([admin]);
      for (const concurrency of rep % 2 === 0 ? [1, 50] : [50, 1]) {
        await meter.begin();
        child.stdin.write(JSON.stringify({ pairs: PAIRS, concurrency, tag: `r${rep}c${concurrency}` }) + '\n');
        const reply = JSON.parse((await lines.next()).value);
        const redis = await meter.end();
        ((runs[name] ??= {})[concurrency] ??= []).push({
          pairsPerSecond: reply.pairs / reply.seconds,
          nodeCpuUsPerPair: reply.nodeCpuUs / reply.pairs,
          redisProcessCpuUsPerPair: redis.processCpuUs / reply.pairs,
          redisUsecPerPair: redis.commandUsec / reply.pairs,
          commandsPerPair: Object.fromEntries(Object.entries(redis.commands).map(([command, { calls, usec }]) => [command, { calls: calls / reply.pairs, usec: usec / reply.pairs }])),
        });
      }
      const exited = new Promise((resolve) => (child.exitCode !== null ? resolve() : child.once('exit', resolve)));
      child.stdin.write('{"exit":true}\n');
      await exited;
    }
  }
}

function printNobodyWaiting(runs) {
  const table = {};
  const peer = runs[PEER];
  for (const [name, byConcurrency] of Object.entries(runs)) {
    for (const [concurrency, list] of Object.entries(byConcurrency)) {
      const m = (field) => fmt(median(list.map((r) => r[field])));
      const ratio = (field) => (peer ? fmt(median(list.map((r, i) => r[field] / peer[concurrency][i][field]))) : '-');
      table[`${name}, ${concurrency} ${concurrency === '1' ? 'worker' : 'workers'}`] = {
        'pairs/s': m('pairsPerSecond'),
        'x peer': ratio('pairsPerSecond'),
        'Node CPU us/pair': m('nodeCpuUsPerPair'),
        'x peer ': ratio('nodeCpuUsPerPair'),
        'Redis CPU us/pair': m('redisProcessCpuUsPerPair'),
        'x peer  ': ratio('redisProcessCpuUsPerPair'),
        'Redis cmd us/pair': m('redisUsecPerPair'),
      };
    }
  }
  console.log('\nlimit 3, nobody waiting (a key per pair)');
  console.table(table);
}
