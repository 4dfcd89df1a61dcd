// What `waitForReplicas` costs: acquire+release pairs on distinct keys against a master with one
// replica on this machine, with and without the option, in alternating rounds; medians and the
// ratio. Its own process: `npm run build && node bench/replicas.mjs [rounds]`.
import 'reflect-metadata';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Redis } from 'ioredis';
import { LockService, RedisLockModule } from 'nestjs-redis-lock';
import { startRedisServer } from '../scripts/redis-server.mjs';

const rounds = Number(process.argv[2] ?? 7);
const shapes = [
  { concurrency: 1, pairs: 2_000 },
  { concurrency: 50, pairs: 10_000 },
];

// A directory of their own: the master writes an RDB file for the replica's full sync.
const dir = mkdtempSync(join(tmpdir(), 'bench-replicas-'));
const master = await startRedisServer(['--dir', dir]);
const replica = await startRedisServer(['--dir', dir, '--replicaof', '127.0.0.1', String(master.port)]);
const admin = new Redis(master.port, '127.0.0.1');
while (!/slave0:.*state=online/.test(await admin.info('replication'))) await new Promise((resolve) => setTimeout(resolve, 50));

async function open(extra) {
  class BenchModule {}
  Module({ imports: [RedisLockModule.forRoot({ redis: master.url, waitTimeout: 10_000, ...extra })] })(BenchModule);
  const app = await NestFactory.createApplicationContext(BenchModule, { logger: ['error'] });
  return { app, locks: app.get(LockService) };
}

const contenders = [
  { name: 'without', ...(await open({})) },
  { name: 'waitForReplicas 1', ...(await open({ waitForReplicas: { replicas: 1, timeout: 1_000 } })) },
];

async function run(locks, { concurrency, pairs }, tag) {
  const perLoop = Math.ceil(pairs / concurrency);
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async (_, w) => {
      for (let i = 0; i < perLoop; i++) await (await locks.acquire(`r:${tag}:${w}:${i}`)).release();
    }),
  );
  return ((performance.now() - started) * 1000) / (perLoop * concurrency); // us per pair
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const results = new Map();
for (const { name, locks } of contenders) await run(locks, { concurrency: 50, pairs: 5_000 }, `warm:${name}`);
for (let round = 0; round < rounds; round++) {
  for (const shape of shapes) {
    // Alternate the order, so that neither contender always runs on a warmer machine.
    const order = round % 2 === 0 ? contenders : [...contenders].reverse();
    for (const { name, locks } of order) {
      const key = `${name} @${shape.concurrency}`;
      if (!results.has(key)) results.set(key, []);
      results.get(key).push(await run(locks, shape, `${round}:${shape.concurrency}:${name}`));
    }
  }
}

console.log(`acquire+release pairs on distinct keys, master + 1 replica on loopback, ${rounds} rounds, medians`);
for (const shape of shapes) {
  const [plain, waited] = contenders.map(({ name }) => median(results.get(`${name} @${shape.concurrency}`)));
  console.log(
    `concurrency ${String(shape.concurrency).padStart(2)}: without ${plain.toFixed(1)} us/pair (${Math.round(1e6 / plain)} pairs/s), ` +
      `waitForReplicas 1: ${waited.toFixed(1)} us/pair (${Math.round(1e6 / waited)} pairs/s), ratio ${(waited / plain).toFixed(2)}x`,
  );
}

for (const { app } of contenders) await app.close();
admin.disconnect();
await replica.stop();
await master.stop();
rmSync(dir, { recursive: true, force: true });
process.exit(0);
