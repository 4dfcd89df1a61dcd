// npm run bench: nestjs-redis-lock side by side with raw ioredis and its peers, in one run,
// interleaved, repeated; prints medians and ratios and writes every figure to bench/results/.
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { NestFactory } from '@nestjs/core';
import { Module } from '@nestjs/common';
import { LockService, RedisLockModule } from 'nestjs-redis-lock';
import { Cluster } from 'ioredis';
import { startRedisCluster } from '../scripts/redis-cluster.mjs';
import { startRedisServer } from '../scripts/redis-server.mjs';
import { CONTENDER_NAMES, createContender } from './contenders.mjs';
import { fmt, median, percentile } from './stats.mjs';
import { localTurns } from './turns.mjs';

const QUICK = process.argv.includes('--quick');
const REPS = QUICK ? 1 : 5;
const CONTENDED_REPS = QUICK ? 1 : 3;
const SEQ_CYCLES = QUICK ? 200 : 1_500;
const CONC_CYCLES = QUICK ? 1_000 : 6_000;
const CONCURRENCY = 50;
const WORKERS = 4;
const CONTENDED_MS = QUICK ? 1_000 : 2_000;
const HOLD_MS = QUICK ? 3_000 : 10_000;
const HOLD_COUNTS = QUICK ? [1_000] : [1_000, 10_000];
const worker = fileURLToPath(new URL('./handoff-worker.mjs', import.meta.url));

const server = process.env.REDIS_URL ? undefined : await startRedisServer();
const url = process.env.REDIS_URL ?? server.url;
const admin = new Redis(url);
const results = { machine: machine(), startedAt: new Date().toISOString(), uncontended: {}, contended: {}, watchdog: [] };

// Scale-out rows: a 3-master Redis Cluster and a quorum of 3 independent masters.
const cluster = await startRedisCluster(3);
const quorum = await Promise.all([0, 1, 2].map(() => startRedisServer()));
const scaleTargets = {
  'LockService cluster': () => new Cluster(cluster.nodes),
  'LockService quorum': () => quorum.map((node) => node.url),
};

try {
  await uncontended();
  await contended();
  await watchdog();
} finally {
  await admin.quit();
  await server?.stop();
  await cluster.stop();
  await Promise.all(quorum.map((node) => node.stop()));
}

mkdirSync(new URL('./results/', import.meta.url), { recursive: true });
const file = fileURLToPath(new URL('./results/latest.json', import.meta.url));
writeFileSync(file, JSON.stringify(results, null, 2));
console.log(`\nEvery figure: ${file}`);

async function uncontended() {
  const names = [...CONTENDER_NAMES, ...Object.keys(scaleTargets)];
  const contenders = {};
  for (const name of names) contenders[name] = await createContender(name, scaleTargets[name] ?? url);
  const runs = { sequential: {}, concurrent: {} };
  for (const name of names) {
    runs.sequential[name] = [];
    runs.concurrent[name] = [];
    // Warm up (JIT, script cache, connection) in both modes, untimed.
    for (let i = 0; i < 200; i++) await contenders[name].lockCycle(`warm:${name}`);
    await Promise.all(Array.from({ length: CONCURRENCY }, (_, w) => contenders[name].lockCycle(`warm:${name}:${w}`)));
  }
  for (let rep = 0; rep < REPS; rep++) {
    // Rotate the order each repetition, so that no contender always runs first or last.
    const order = names.map((_, i) => names[(i + rep) % names.length]);
    for (const name of order) {
      const contender = contenders[name];
      let started = performance.now();
      for (let i = 0; i < SEQ_CYCLES; i++) await contender.lockCycle(`seq:${name}`);
      runs.sequential[name].push(SEQ_CYCLES / ((performance.now() - started) / 1000));
      started = performance.now();
      await Promise.all(
        Array.from({ length: CONCURRENCY }, async (_, w) => {
          for (let i = 0; i < CONC_CYCLES / CONCURRENCY; i++) await contender.lockCycle(`conc:${name}:${w}`);
        }),
      );
      runs.concurrent[name].push(CONC_CYCLES / ((performance.now() - started) / 1000));
    }
  }
  for (const name of names) await contenders[name].close();
  const table = {};
  for (const mode of ['sequential', 'concurrent']) {
    const raw = median(runs[mode]['raw ioredis']);
    for (const name of names) {
      const pairs = median(runs[mode][name]);
      results.uncontended[mode] ??= {};
      results.uncontended[mode][name] = { pairsPerSecond: pairs, ratioToRaw: pairs / raw, runs: runs[mode][name] };
      table[name] ??= {};
      table[name][mode === 'sequential' ? 'sequential pairs/s' : `${CONCURRENCY} workers pairs/s`] = fmt(pairs);
      table[name][mode === 'sequential' ? 'seq x raw' : `${CONCURRENCY}w x raw`] = fmt(pairs / raw);
    }
  }
  console.log(`\nUncontended acquire+release (median of ${REPS}, ratio to raw ioredis SET NX PX + EVALSHA release on one node; cluster: 3 masters; quorum: 3 independent masters)`);
  console.table(table);
}

async function contended() {
  const runs = { 'in-process': {}, [`${WORKERS} processes`]: {} };
  for (let rep = 0; rep < CONTENDED_REPS; rep++) {
    const order = CONTENDER_NAMES.map((_, i) => CONTENDER_NAMES[(i + rep) % CONTENDER_NAMES.length]);
    for (const name of order) {
      for (const [mode, run] of [['in-process', inProcess], [`${WORKERS} processes`, acrossProcesses]]) {
        await admin.flushall();
        const polite = await run(name, 'polite');
        await admin.flushall();
        const greedy = await run(name, 'greedy');
        // Handoff from the polite run, throughput and shares from the greedy one.
        (runs[mode][name] ??= []).push({
          handoffP50Ms: polite.handoffP50Ms,
          handoffP99Ms: polite.handoffP99Ms,
          politeAcquisitionsPerSecond: polite.acquisitionsPerSecond,
          acquisitionsPerSecond: greedy.acquisitionsPerSecond,
          minShareOfFair: greedy.minShareOfFair,
          maxShareOfFair: greedy.maxShareOfFair,
          failures: polite.failures + greedy.failures,
          overlaps: polite.overlaps + greedy.overlaps,
          polite,
          greedy,
        });
      }
    }
  }
  for (const [mode, byName] of Object.entries(runs)) {
    const table = {};
    for (const name of CONTENDER_NAMES) {
      const reps = byName[name];
      const summary = {
        handoffP50Ms: median(reps.map((r) => r.handoffP50Ms)),
        handoffP99Ms: median(reps.map((r) => r.handoffP99Ms)),
        acquisitionsPerSecond: median(reps.map((r) => r.acquisitionsPerSecond)),
        minShareOfFair: median(reps.map((r) => r.minShareOfFair)),
        maxShareOfFair: median(reps.map((r) => r.maxShareOfFair)),
        failedAcquires: median(reps.map((r) => r.failures)),
        runs: reps,
      };
      results.contended[mode] ??= {};
      results.contended[mode][name] = summary;
      table[name] = {
        'handoff p50 ms': fmt(summary.handoffP50Ms),
        'handoff p99 ms': fmt(summary.handoffP99Ms),
        'acquisitions/s': fmt(summary.acquisitionsPerSecond),
        'min share (x fair)': fmt(summary.minShareOfFair),
        'max share (x fair)': fmt(summary.maxShareOfFair),
        'failed acquires': fmt(summary.failedAcquires),
      };
    }
    const best = bestPeer(results.contended[mode]);
    console.log(`\nContended, one key, ${WORKERS} workers ${mode} (median of ${CONTENDED_REPS}; handoff (release to the next waiter running) from polite workers that hold 2 ms and step back until another took the lock, throughput and shares from greedy workers that re-request at once; ${CONTENDED_MS} ms each)`);
    console.table(table);
    if (best) {
      const ours = results.contended[mode].LockService;
      console.log(`LockService vs best peer (${best.name}): handoff p50 ${fmt(best.handoffP50Ms / ours.handoffP50Ms)}x faster, p99 ${fmt(best.handoffP99Ms / ours.handoffP99Ms)}x faster`);
      results.contended[mode].bestPeer = best.name;
    }
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

async function inProcess(name, mode) {
  const contender = await createContender(name, url, { contended: true });
  const turns = mode === 'polite' ? localTurns() : undefined;
  const clock = () => performance.timeOrigin + performance.now();
  const end = clock() + CONTENDED_MS;
  const perWorker = await Promise.all(
    Array.from({ length: WORKERS }, async (_, worker) => {
      const sections = [];
      let failures = 0;
      while (clock() < end) {
        const section = { requestedAt: clock() };
        let mine = 0;
        const ok = await contender.withLock('contended', async () => {
          section.acquiredAt = clock();
          if (turns) {
            turns.taken(worker);
            mine = turns.count;
            // Hold briefly, so that the others have asked for the lock before it is released.
            await new Promise((resolve) => setTimeout(resolve, 2));
          }
          section.releasedAt = clock();
        });
        if (ok) sections.push(section);
        else failures++;
        if (turns) await Promise.race([turns.othersAfter(worker, mine), new Promise((resolve) => setTimeout(resolve, Math.max(0, end - clock())))]);
      }
      return { sections, failures };
    }),
  );
  await contender.close();
  return summarize(perWorker);
}

async function acrossProcesses(name, mode) {
  const children = Array.from({ length: WORKERS }, (_, id) =>
    spawn(process.execPath, [worker, name, url, 'contended', String(CONTENDED_MS), String(id), mode], { stdio: ['pipe', 'pipe', 'inherit'] }),
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
  return summarize(perWorker);
}

/** Handoff = from the moment a holder is done to the moment the next holder runs. */
function summarize(perWorker) {
  const all = perWorker.flatMap((w, worker) => w.sections.map((s) => ({ ...s, worker }))).sort((a, b) => a.acquiredAt - b.acquiredAt);
  // Only handoffs to a worker that was already waiting when the lock was released.
  const handoffs = [];
  for (let i = 1; i < all.length; i++) {
    if (all[i].requestedAt < all[i - 1].releasedAt) handoffs.push(all[i].acquiredAt - all[i - 1].releasedAt);
  }
  const span = all.length > 1 ? (all[all.length - 1].releasedAt - all[0].acquiredAt) / 1000 : CONTENDED_MS / 1000;
  const counts = perWorker.map((w) => w.sections.length);
  const fair = all.length / perWorker.length;
  const overlaps = handoffs.filter((h) => h < 0).length;
  return {
    acquisitions: all.length,
    acquisitionsPerSecond: all.length / span,
    handoffP50Ms: percentile(handoffs, 50),
    handoffP99Ms: percentile(handoffs, 99),
    perWorker: counts,
    minShareOfFair: fair > 0 ? Math.min(...counts) / fair : 0,
    maxShareOfFair: fair > 0 ? Math.max(...counts) / fair : 0,
    failures: perWorker.reduce((sum, w) => sum + w.failures, 0),
    overlaps,
    handoffsMeasured: handoffs.length,
  };
}

async function watchdog() {
  const table = {};
  for (const count of HOLD_COUNTS) {
    await admin.flushall();
    class HoldModule {}
    Module({ imports: [RedisLockModule.forRoot({ redis: url, ttl: 3_000 })] })(HoldModule);
    const app = await NestFactory.createApplicationContext(HoldModule, { logger: ['error'] });
    const locks = app.get(LockService);
    const held = [];
    for (let from = 0; from < count; from += 500) {
      held.push(...(await Promise.all(Array.from({ length: Math.min(500, count - from) }, (_, i) => locks.acquire(`hold:${from + i}`)))));
    }
    await admin.config('RESETSTAT');
    const cpuBefore = process.cpuUsage();
    await new Promise((resolve) => setTimeout(resolve, HOLD_MS));
    const cpu = process.cpuUsage(cpuBefore);
    const stats = commandStats(await admin.info('commandstats'));
    const lost = held.filter((lock) => lock.signal.aborted).length;
    await Promise.all(held.map((lock) => lock.release()));
    await app.close();
    const renewals = stats.pexpire ?? 0;
    const scriptCalls = (stats.evalsha ?? 0) + (stats.eval ?? 0);
    const periods = HOLD_MS / 1_000;
    const entry = {
      locks: count,
      ttlMs: 3_000,
      renewIntervalMs: 1_000,
      holdMs: HOLD_MS,
      renewals,
      scriptCallsPerPeriod: scriptCalls / periods,
      redisCommands: Object.entries(stats).filter(([name]) => name !== 'info' && name !== 'config').reduce((sum, [, calls]) => sum + calls, 0),
      nodeCpuMs: (cpu.user + cpu.system) / 1000,
      nodeCpuPerRenewalUs: renewals > 0 ? (cpu.user + cpu.system) / renewals : NaN,
      locksLost: lost,
    };
    results.watchdog.push(entry);
    table[`${count} locks`] = {
      renewals: entry.renewals,
      'round trips / period': fmt(entry.scriptCallsPerPeriod),
      'Redis commands': entry.redisCommands,
      'Node CPU ms': fmt(entry.nodeCpuMs),
      'CPU us / renewal': fmt(entry.nodeCpuPerRenewalUs),
      'locks lost': entry.locksLost,
    };
  }
  console.log(`\nWatchdog: locks held with ttl 3 s (renewal every 1 s) for ${HOLD_MS / 1000} s`);
  console.table(table);
}

function commandStats(info) {
  const stats = {};
  for (const line of info.split('\n')) {
    const match = /^cmdstat_([^:]+):calls=(\d+)/.exec(line.trim());
    if (match) stats[match[1]] = Number(match[2]);
  }
  return stats;
}

function machine() {
  return {
    cpu: os.cpus()[0]?.model,
    cores: os.cpus().length,
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
    platform: `${os.platform()} ${os.release()}`,
  };
}
