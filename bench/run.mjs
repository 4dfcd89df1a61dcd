// npm run bench [-- --quick] [--node 20,22,24] [--only uncontended,cluster,quorum,contended,watchdog,family]
// [--reps N] [--contenders a,b]: nestjs-redis-lock side by side with raw ioredis and its peers.
// Every contender runs in a process of its own (the raw floor too), pinned to one core where
// `taskset` exists, in an order rotated over the repetitions; figures are medians. The
// headline is CPU per acquire+release pair, Node's (process.cpuUsage() in the contender's
// process) and Redis' (INFO commandstats, CONFIG RESETSTAT before each run), which a shared
// machine disturbs far less than throughput. Every figure goes to bench/results/latest.json.
// --node runs the uncontended contenders under each of those Node majors (interleaved within
// every repetition; a major the machine lacks comes from the npm registry's `node` package, see
// scripts/node-versions.mjs); the other parts run on the machine's Node. --only picks parts.
// The family part is bench/family.mjs (npm run bench:family alone), run last in its own process.
// --reps sets the repetitions of the uncontended, cluster and quorum parts; --contenders picks the contenders of the uncontended and contended parts (raw ioredis always runs).
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { startRedisCluster } from '../scripts/redis-cluster.mjs';
import { startRedisServer } from '../scripts/redis-server.mjs';
import { nodeBinary, OWN_MAJOR, parseMajors } from '../scripts/node-versions.mjs';
import { ALS_FLOOR, CLUSTER_FLOOR, CONTENDED_NAMES, CONTENDER_NAMES, QUORUM_FLOOR, QUORUM_NAMES, SCRIPTS_FLOOR } from './contenders.mjs';
import { redisMeter } from './redis-stats.mjs';
import { fmt, median, percentile } from './stats.mjs';

const QUICK = process.argv.includes('--quick');
const PARTS = ['uncontended', 'cluster', 'quorum', 'contended', 'watchdog', 'family'];
const ONLY = option('--only', PARTS.join(',')).split(',');
for (const part of ONLY) if (!PARTS.includes(part)) throw new Error(`--only: expected some of ${PARTS.join(',')}, got ${JSON.stringify(part)}.`);
const runs = (part) => ONLY.includes(part);
const REPS_ARG = option('--reps');
const REPS = Number(REPS_ARG ?? (QUICK ? '1' : '7'));
if (!Number.isInteger(REPS) || REPS < 1) throw new Error(`--reps: expected a whole number of repetitions, got ${REPS_ARG}.`);
const SCALE_REPS = REPS_ARG === undefined ? (QUICK ? 1 : 3) : REPS;
const QUORUM_REPS = REPS_ARG === undefined ? (QUICK ? 1 : 5) : REPS;
// --contenders a,b: those contenders alone, in the uncontended and the contended parts.
const PICKED = option('--contenders')?.split(',');
for (const name of PICKED ?? []) if (![...CONTENDER_NAMES, ALS_FLOOR, SCRIPTS_FLOOR, ...CONTENDED_NAMES].includes(name)) throw new Error(`--contenders: unknown contender ${JSON.stringify(name)}.`);
const UNCONTENDED = ['raw ioredis', ...[...CONTENDER_NAMES, ALS_FLOOR, SCRIPTS_FLOOR].filter((name) => name !== 'raw ioredis' && (PICKED === undefined || PICKED.includes(name)))];
// The Node versions of the uncontended part: the machine's own unless --node names others.
const NODES = parseMajors(option('--node', String(OWN_MAJOR)), '--node').map(nodeBinary);
const PAIRS = QUICK ? 2_000 : 10_000;
const CONCURRENCIES = [1, 50];
const WORKERS = 4;
const CONTENDED_REPS = QUICK ? 1 : 3;
const CONTENDED_MS = QUICK ? 1_000 : 2_000;
const HOLD_MS = QUICK ? 3_000 : 10_000;
const HOLD_COUNTS = QUICK ? [1_000] : [1_000, 10_000];
const FIGURES = ['pairsPerSecond', 'nodeCpuUsPerPair', 'redisUsecPerPair', 'redisProcessCpuUsPerPair'];
const here = (file) => fileURLToPath(new URL(file, import.meta.url));

// Node processes on core 1, Redis on core 0 (when there are two), so that neither steals the
// other's core and a contender's figures do not depend on where the scheduler put it.
const TASKSET = spawnSync('taskset', ['-V']).status === 0 && os.cpus().length >= 2;
const NODE_CORE = '1';
const REDIS_CORE = '0';
const nodeCommand = (args, node = process.execPath) => (TASKSET ? ['taskset', ['-c', NODE_CORE, node, ...args]] : [node, args]);

/** The value of `--name value` or `--name=value` on the command line, else `fallback`. */
function option(name, fallback) {
  const args = process.argv.slice(2);
  const at = args.indexOf(name);
  if (at !== -1) return args[at + 1] ?? fallback;
  const inline = args.find((arg) => arg.startsWith(`${name}=`));
  return inline === undefined ? fallback : inline.slice(name.length + 1);
}

const results = { machine: {}, startedAt: new Date().toISOString(), quick: QUICK, method: {}, uncontended: {}, uncontendedByNode: {}, cluster: {}, quorum: {}, contended: {}, watchdog: [], targets: [] };
const server = await startRedisServer();
const admin = new Redis(server.url);
await pinRedis(admin);
results.machine = await machine(admin);
console.log(`Machine: ${results.machine.cpu} (${results.machine.cores} cores), ${results.machine.platform}; Node ${results.machine.node}; Redis ${results.machine.redis}; ` + (TASKSET ? `Node pinned to core ${NODE_CORE}, Redis to core ${REDIS_CORE}` : 'no taskset: nothing pinned'));

try {
  if (runs('uncontended')) {
    await uncontended();
    targets();
  }
  if (runs('cluster')) await cluster();
  if (runs('quorum')) {
    await quorum();
    quorumTargets();
  }
  if (runs('contended')) await contended();
  if (runs('watchdog')) await watchdog();
} finally {
  await admin.quit();
  await server.stop();
}

mkdirSync(here('./results/'), { recursive: true });
writeFileSync(here('./results/latest.json'), JSON.stringify(results, null, 2));
console.log(`\nEvery figure: ${here('./results/latest.json')}`);

if (runs('family')) {
  const family = spawnSync(process.execPath, [here('./family.mjs'), ...(QUICK ? ['--quick'] : [])], { stdio: 'inherit' });
  if (family.status !== 0) process.exitCode = family.status ?? 1;
}

/** Starts one contender's process; `run()` measures one batch, with Redis figures from `admins`. */
async function contenderProcess(name, target, admins, node = process.execPath) {
  const [command, args] = nodeCommand([here('./uncontended-worker.mjs'), name, JSON.stringify(target)], node);
  const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const first = (await lines.next()).value;
  if (first !== 'ready') throw new Error(`the ${name} process said ${first}`);
  const meter = redisMeter(admins);
  let runs = 0;
  return {
    async run(concurrency) {
      await meter.begin();
      child.stdin.write(JSON.stringify({ pairs: PAIRS, concurrency, tag: `r${runs++}` }) + '\n');
      const reply = JSON.parse((await lines.next()).value);
      const redis = await meter.end();
      return {
        pairsPerSecond: reply.pairs / reply.seconds,
        nodeCpuUsPerPair: reply.nodeCpuUs / reply.pairs,
        redisUsecPerPair: redis.commandUsec / reply.pairs,
        redisProcessCpuUsPerPair: redis.processCpuUs / reply.pairs,
        failedPairs: reply.failures,
        commandsPerPair: Object.fromEntries(Object.entries(redis.commands).map(([command, { calls, usec }]) => [command, { calls: calls / reply.pairs, usec: usec / reply.pairs }])),
      };
    },
    async close() {
      const exited = new Promise((resolve) => (child.exitCode !== null ? resolve() : child.once('exit', resolve)));
      child.stdin.write('{"exit":true}\n');
      await exited;
    },
  };
}

/**
 * Runs `names` against `target` for `reps` repetitions, rotating the order, under each Node of
 * `nodes` in every repetition; the runs of each Node version (`runs[version][name][concurrency]`).
 */
async function measure(names, targetOf, adminsOf, reps, nodes = [{ binary: process.execPath, version: process.version }]) {
  const runs = {};
  for (let rep = 0; rep < reps; rep++) {
    const order = names.map((_, i) => names[(i + rep) % names.length]);
    for (const name of order) {
      for (const node of rep % 2 === 0 ? nodes : [...nodes].reverse()) {
        const contender = await contenderProcess(name, targetOf(name), adminsOf(name), node.binary);
        try {
          // Alternate which shape goes first as well.
          const shapes = rep % 2 === 0 ? CONCURRENCIES : [...CONCURRENCIES].reverse();
          for (const concurrency of shapes) (((runs[node.version] ??= {})[name] ??= {})[concurrency] ??= []).push(await contender.run(concurrency));
        } finally {
          await contender.close();
        }
      }
    }
  }
  return runs;
}

/**
 * Medians per contender and shape. A ratio to raw is the median of per-repetition ratios: each
 * run against the raw run of the same repetition, which ran minutes apart at most, so that a
 * burst of load elsewhere on the machine moves both sides of most ratios.
 */
function summarize(runs, floor = 'raw ioredis') {
  const raw = runs[floor];
  const summary = {};
  for (const [name, byConcurrency] of Object.entries(runs)) {
    for (const [concurrency, reps] of Object.entries(byConcurrency)) {
      const entry = { runs: reps };
      for (const figure of FIGURES) {
        entry[figure] = median(reps.map((r) => r[figure]));
        const floors = raw?.[concurrency];
        if (floors) entry[`${figure}XRaw`] = median(reps.map((r, i) => r[figure] / floors[i][figure]));
      }
      ((summary[name] ??= {})[concurrency] = entry);
    }
  }
  return summary;
}

function printTable(title, summary) {
  console.log(`\n${title}`);
  const table = {};
  for (const concurrency of CONCURRENCIES) {
    for (const [name, byConcurrency] of Object.entries(summary)) {
      const e = byConcurrency[concurrency];
      if (!e) continue;
      table[`${name}, ${concurrency}w`] = {
        'Redis us/pair': fmt(e.redisUsecPerPair),
        'x raw': fmt(e.redisUsecPerPairXRaw),
        'Node CPU us/pair': fmt(e.nodeCpuUsPerPair),
        'x raw ': fmt(e.nodeCpuUsPerPairXRaw),
        'pairs/s': fmt(e.pairsPerSecond),
        'x raw  ': fmt(e.pairsPerSecondXRaw),
        'Redis process CPU us/pair': fmt(e.redisProcessCpuUsPerPair),
        'x raw   ': fmt(e.redisProcessCpuUsPerPairXRaw),
      };
    }
  }
  console.table(table);
}

async function uncontended() {
  const runs = await measure(UNCONTENDED, () => server.url, () => [admin], REPS, NODES);
  for (const { version } of NODES) results.uncontendedByNode[version] = summarize(runs[version]);
  // The headline (and the targets) on the first Node version given.
  results.uncontended = results.uncontendedByNode[NODES[0].version];
  results.method.uncontended =
    `${PAIRS} acquire+release pairs on distinct keys per run, with 1 and with 50 concurrent loops, ` +
    `each contender in a process of its own after 4,000 warm-up pairs; ${REPS} repetitions in rotated order; medians, ratios to raw as medians of per-repetition ratios. ` +
    'Redis us/pair: INFO commandstats usec summed over every command (commands a script runs count inside the script call and again on their own, for every contender alike), CONFIG RESETSTAT before each run. ' +
    'Redis process CPU: the server main thread (INFO cpu), which also covers reading requests and writing replies.';
  for (const { version } of NODES) {
    printTable(`Uncontended acquire+release, one Redis, Node ${version} (median of ${REPS}; raw ioredis = SET NX PX + an owner-checked EVALSHA release)`, results.uncontendedByNode[version]);
  }
}

/**
 * A 3-master Cluster, against raw ioredis on the same Cluster (SET NX PX and an owner-checked
 * release through `defineCommand`, routed by the client like ours): what the library costs
 * there, not what a Cluster costs against one node.
 */
async function cluster() {
  const nodes = await startRedisCluster(3);
  const admins = nodes.nodes.map(({ host, port }) => new Redis(port, host));
  try {
    await Promise.all(admins.map(pinRedis));
    const names = [CLUSTER_FLOOR, 'LockService cluster'];
    const runs = await measure(names, () => nodes.nodes, () => admins, SCALE_REPS);
    results.cluster = { floor: CLUSTER_FLOOR, summary: summarize(runs[process.version], CLUSTER_FLOOR) };
    printTable(`Cluster, 3 masters (median of ${SCALE_REPS}; Redis figures summed over the nodes; "x raw": x ${CLUSTER_FLOOR} on the same Cluster)`, results.cluster.summary);
  } finally {
    await Promise.all(admins.map((client) => client.quit()));
    await nodes.stop();
  }
}

/**
 * Quorum mode against redlock v5 on the same three independent masters, with and without
 * fencing tokens (redlock has none): ratios to redlock v5.
 */
async function quorum() {
  const masters = await Promise.all([0, 1, 2].map(() => startRedisServer()));
  const admins = masters.map((node) => new Redis(node.url));
  try {
    await Promise.all(admins.map(pinRedis));
    const urls = masters.map((node) => node.url);
    const runs = await measure(QUORUM_NAMES, () => urls, () => admins, QUORUM_REPS);
    results.quorum = { floor: QUORUM_FLOOR, summary: summarize(runs[process.version], QUORUM_FLOOR) };
    printTable(`Quorum, 3 independent masters (median of ${QUORUM_REPS}; Redis figures summed over the nodes; "x raw": x ${QUORUM_FLOOR} on the same masters)`, results.quorum.summary);
  } finally {
    await Promise.all(admins.map((client) => client.quit()));
    await Promise.all(masters.map((node) => node.stop()));
  }
}

/** The targets of issue 24 (item 1) on the quorum medians of this run. */
function quorumTargets() {
  const q = results.quorum.summary;
  const checks = [];
  const check = (what, value, ok) => checks.push({ target: what, measured: fmt(value), met: ok(value) ? 'met' : 'NOT met' });
  for (const c of CONCURRENCIES) {
    check(`throughput >= 1.0x ${QUORUM_FLOOR}, LockService quorum no fencing ${c}w`, q['LockService quorum, no fencing'][c].pairsPerSecondXRaw, (v) => v >= 1);
    check(`Node CPU/pair <= 1.0x ${QUORUM_FLOOR}, LockService quorum no fencing ${c}w`, q['LockService quorum, no fencing'][c].nodeCpuUsPerPairXRaw, (v) => v <= 1);
    check(`throughput >= 0.8x ${QUORUM_FLOOR}, LockService quorum ${c}w`, q['LockService quorum'][c].pairsPerSecondXRaw, (v) => v >= 0.8);
  }
  results.targets.push(...checks);
  console.log('\nTargets (issue 24), quorum medians of this run');
  console.table(Object.fromEntries(checks.map(({ target, ...rest }) => [target, rest])));
}

async function contended() {
  const runs = {};
  for (let rep = 0; rep < CONTENDED_REPS; rep++) {
    const names = CONTENDED_NAMES.filter((name) => PICKED === undefined || PICKED.includes(name));
    const order = names.map((_, i) => names[(i + rep) % names.length]);
    for (const name of order) {
      await admin.flushall();
      const polite = await acrossProcesses(name, 'polite');
      await admin.flushall();
      const greedy = await acrossProcesses(name, 'greedy');
      await admin.flushall();
      // The hot key under load: greedy workers with about 1 ms of work inside the lock.
      const working = await acrossProcesses(name, 'greedy-work');
      // Handoff from the polite run, throughput and shares from the greedy one.
      (runs[name] ??= []).push({
        handoffP50Ms: polite.handoffP50Ms,
        handoffP99Ms: polite.handoffP99Ms,
        acquisitionsPerSecond: greedy.acquisitionsPerSecond,
        minShareOfFair: greedy.minShareOfFair,
        maxShareOfFair: greedy.maxShareOfFair,
        workAcquisitionsPerSecond: working.acquisitionsPerSecond,
        workMinShareOfFair: working.minShareOfFair,
        failures: polite.failures + greedy.failures + working.failures,
        overlaps: polite.overlaps + greedy.overlaps + working.overlaps,
        polite,
        greedy,
        working,
      });
    }
  }
  const table = {};
  for (const name of Object.keys(runs)) {
    const reps = runs[name];
    const summary = {
      handoffP50Ms: median(reps.map((r) => r.handoffP50Ms)),
      handoffP99Ms: median(reps.map((r) => r.handoffP99Ms)),
      acquisitionsPerSecond: median(reps.map((r) => r.acquisitionsPerSecond)),
      minShareOfFair: median(reps.map((r) => r.minShareOfFair)),
      maxShareOfFair: median(reps.map((r) => r.maxShareOfFair)),
      workAcquisitionsPerSecond: median(reps.map((r) => r.workAcquisitionsPerSecond)),
      workMinShareOfFair: median(reps.map((r) => r.workMinShareOfFair)),
      failedAcquires: median(reps.map((r) => r.failures)),
      overlaps: Math.max(...reps.map((r) => r.overlaps)),
      runs: reps,
    };
    results.contended[name] = summary;
    table[name] = {
      'handoff p50 ms': fmt(summary.handoffP50Ms),
      'handoff p99 ms': fmt(summary.handoffP99Ms),
      'acquisitions/s': fmt(summary.acquisitionsPerSecond),
      'min share (x fair)': fmt(summary.minShareOfFair),
      'max share (x fair)': fmt(summary.maxShareOfFair),
      '1 ms work: acq/s': fmt(summary.workAcquisitionsPerSecond),
      '1 ms work: min share': fmt(summary.workMinShareOfFair),
      'failed acquires': fmt(summary.failedAcquires),
      overlaps: summary.overlaps,
    };
  }
  results.method.contended =
    `One key, ${WORKERS} worker processes (not pinned) for ${CONTENDED_MS} ms, ${CONTENDED_REPS} repetitions, medians. Handoff (release to the next waiter running) from polite workers that hold 2 ms and step back until another took the lock; throughput and shares of the fair count from greedy workers that re-request at once, with no work and with about 1 ms of work (a 1 ms timer) inside the lock. "LockService barging" is LockService with fairness: 'barging'.`;
  console.log(`\nContended: ${results.method.contended}`);
  console.table(table);
  const best = bestPeer(results.contended);
  if (best && results.contended.LockService) {
    const ours = results.contended.LockService;
    console.log(`LockService vs best peer (${best.name}): handoff p50 ${fmt(best.handoffP50Ms / ours.handoffP50Ms)}x faster, p99 ${fmt(best.handoffP99Ms / ours.handoffP99Ms)}x faster`);
    results.contended.bestPeer = best.name;
  }
}

function bestPeer(byName) {
  let best;
  for (const name of ['redlock v5', 'redlock v4', 'redis-semaphore']) {
    const entry = byName[name];
    if (entry && Number.isFinite(entry.handoffP50Ms) && (!best || entry.handoffP50Ms < best.handoffP50Ms)) best = { name, ...entry };
  }
  return best;
}

async function acrossProcesses(name, mode) {
  const children = Array.from({ length: WORKERS }, (_, id) =>
    spawn(process.execPath, [here('./handoff-worker.mjs'), name, server.url, 'contended', String(CONTENDED_MS), String(id), mode], { stdio: ['pipe', 'pipe', 'inherit'] }),
  );
  const outputs = children.map((child) => createInterface({ input: child.stdout })[Symbol.asyncIterator]());
  for (const lines of outputs) {
    const { value } = await lines.next();
    if (value !== 'ready') throw new Error(`worker for ${name} said ${value}`);
  }
  const startAt = Date.now() + 100;
  for (const child of children) child.stdin.write(`go ${startAt}\n`);
  const perWorker = [];
  for (const lines of outputs) perWorker.push(JSON.parse((await lines.next()).value));
  await Promise.all(children.map((child) => new Promise((resolve) => (child.exitCode !== null ? resolve() : child.on('exit', resolve)))));
  return summarizeSections(perWorker);
}

/** Handoff = from the moment a holder is done to the moment the next holder runs. */
function summarizeSections(perWorker) {
  const all = perWorker.flatMap((w, worker) => w.sections.map((s) => ({ ...s, worker }))).sort((a, b) => a.acquiredAt - b.acquiredAt);
  // Only handoffs to a worker that was already waiting when the lock was released.
  const handoffs = [];
  for (let i = 1; i < all.length; i++) {
    if (all[i].requestedAt < all[i - 1].releasedAt) handoffs.push(all[i].acquiredAt - all[i - 1].releasedAt);
  }
  const span = all.length > 1 ? (all[all.length - 1].releasedAt - all[0].acquiredAt) / 1000 : CONTENDED_MS / 1000;
  const counts = perWorker.map((w) => w.sections.length);
  const fair = all.length / perWorker.length;
  return {
    acquisitions: all.length,
    acquisitionsPerSecond: all.length / span,
    handoffP50Ms: percentile(handoffs, 50),
    handoffP99Ms: percentile(handoffs, 99),
    perWorker: counts,
    minShareOfFair: fair > 0 ? Math.min(...counts) / fair : 0,
    maxShareOfFair: fair > 0 ? Math.max(...counts) / fair : 0,
    failures: perWorker.reduce((sum, w) => sum + w.failures, 0),
    overlaps: handoffs.filter((h) => h < 0).length,
    handoffsMeasured: handoffs.length,
  };
}

async function watchdog() {
  const table = {};
  for (const count of HOLD_COUNTS) {
    const [command, args] = nodeCommand([here('./watchdog-worker.mjs'), server.url, String(count), String(HOLD_MS)]);
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
    const entry = JSON.parse((await lines.next()).value);
    await new Promise((resolve) => (child.exitCode !== null ? resolve() : child.once('exit', resolve)));
    results.watchdog.push(entry);
    table[`${count} locks`] = {
      renewals: entry.renewals,
      'round trips / period': fmt(entry.roundTripsPerPeriod),
      'Node CPU ms': fmt(entry.nodeCpuMs),
      'Node CPU us / renewal': fmt(entry.nodeCpuPerRenewalUs),
      'locks lost': entry.locksLost,
    };
  }
  console.log(`\nWatchdog: locks held with ttl 3 s (renewal every 1 s) for ${HOLD_MS / 1000} s, in a process of its own`);
  console.table(table);
}

/** The targets of issues 10 and 20, on the uncontended medians of this run, per Node version. */
function targets() {
  const checks = [];
  for (const { version } of NODES) {
    const u = results.uncontendedByNode[version];
    // A contender left out (--contenders) has no figure to check.
    const check = (what, value, ok) => value !== undefined && !Number.isNaN(value) && checks.push({ target: `${what} (Node ${version})`, measured: fmt(value), met: ok(value) ? 'met' : 'NOT met' });
    for (const c of CONCURRENCIES) {
      check(`Redis us/pair (commandstats) <= 1.5x raw, LockService ${c}w`, u.LockService?.[c].redisUsecPerPairXRaw, (v) => v <= 1.5);
      check(`Redis process CPU/pair <= 1.5x raw, LockService ${c}w`, u.LockService?.[c].redisProcessCpuUsPerPairXRaw, (v) => v <= 1.5);
    }
    for (const name of ['LockService', '@Locked']) {
      for (const c of CONCURRENCIES) check(`Node CPU/pair <= 1.15x raw, ${name} ${c}w`, u[name]?.[c].nodeCpuUsPerPairXRaw, (v) => v <= 1.15);
      for (const c of CONCURRENCIES) check(`throughput >= 0.9x raw, ${name} ${c}w`, u[name]?.[c].pairsPerSecondXRaw, (v) => v >= 0.9);
    }
    // Against the peer, as a median of per-repetition ratios like every other ratio.
    for (const c of u.LockService && u['redis-semaphore'] ? CONCURRENCIES : []) {
      const ours = u.LockService[c].runs;
      const peer = u['redis-semaphore'][c].runs;
      check(`throughput >= 1.0x redis-semaphore, LockService ${c}w`, median(ours.map((r, i) => r.pairsPerSecond / peer[i].pairsPerSecond)), (v) => v >= 1);
    }
    // Context, not a target: how close the protocol's Redis cost alone lets LockService come to
    // raw ioredis and to redis-semaphore (whose Mutex takes a lock with a plain SET NX PX).
    for (const c of u[SCRIPTS_FLOOR] ? CONCURRENCIES : []) {
      const floor = u[SCRIPTS_FLOOR][c].runs;
      checks.push({ target: `(context) throughput of ${SCRIPTS_FLOOR} ${c}w vs raw ioredis (Node ${version})`, measured: fmt(u[SCRIPTS_FLOOR][c].pairsPerSecondXRaw), met: '-' });
      if (u['redis-semaphore']) {
        const peer = u['redis-semaphore'][c].runs;
        checks.push({ target: `(context) throughput of ${SCRIPTS_FLOOR} ${c}w vs redis-semaphore (Node ${version})`, measured: fmt(median(floor.map((r, i) => r.pairsPerSecond / peer[i].pairsPerSecond))), met: '-' });
      }
      if (u.LockService) {
        const ours = u.LockService[c].runs;
        checks.push({ target: `(context) throughput of LockService ${c}w vs ${SCRIPTS_FLOOR} (Node ${version})`, measured: fmt(median(ours.map((r, i) => r.pairsPerSecond / floor[i].pairsPerSecond))), met: '-' });
      }
    }
    // Context, not a target: what @Locked adds over the same floor once promise hooks are on.
    for (const c of u['@Locked'] && u[ALS_FLOOR] ? CONCURRENCIES : []) {
      const locked = u['@Locked'][c].runs;
      const floor = u[ALS_FLOOR][c].runs;
      const value = median(locked.map((r, i) => r.nodeCpuUsPerPair / floor[i].nodeCpuUsPerPair));
      checks.push({ target: `(context) Node CPU/pair of @Locked ${c}w vs ${ALS_FLOOR} (Node ${version})`, measured: fmt(value), met: '-' });
    }
  }
  results.targets = checks;
  console.log('\nTargets (issues 10 and 20), uncontended medians of this run');
  console.table(Object.fromEntries(checks.map(({ target, ...rest }) => [target, rest])));
}

async function pinRedis(client) {
  if (!TASKSET) return;
  const pid = /process_id:(\d+)/.exec(await client.info('server'))?.[1];
  if (pid) spawnSync('taskset', ['-a', '-p', '-c', REDIS_CORE, pid]);
}

async function machine(client) {
  return {
    cpu: os.cpus()[0]?.model,
    cores: os.cpus().length,
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    platform: `${os.platform()} ${os.release()}`,
    node: process.version,
    redis: /redis_version:(\S+)/.exec(await client.info('server'))?.[1],
    pinned: TASKSET ? { node: NODE_CORE, redis: REDIS_CORE } : null,
    loadAverage: os.loadavg(),
  };
}
