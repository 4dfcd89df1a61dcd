// One worker process of the lock family benchmark (bench/family.mjs). It waits for
// "go <epoch ms>", then runs CHAINS loops until the deadline, each taking the lock, holding it
// 2 ms and releasing it, and reports every critical section.
// Usage: family-worker.mjs <contender> <redis url> <duration ms> <chains> [limit, default 3]
import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Redis } from 'ioredis';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { Semaphore } from 'redis-semaphore';
import { LockService, RedisLockModule } from 'nestjs-redis-lock';

const [, , name, url, durationMs, chains, limit = '3'] = process.argv;
const LIMIT = Number(limit);
const KEY = 'bench-family';
// Epoch-based high-resolution time, comparable between processes on one machine.
// The system's monotonic clock (CLOCK_MONOTONIC on Linux), the same for every process of the
// machine: `performance.timeOrigin + performance.now()` is not (each process fixes its own
// origin, a millisecond apart at times, which showed as more holders inside than the limit).
const clock = () => Number(process.hrtime.bigint()) / 1e6;

let withLock;
let close;
if (name === 'redis-semaphore Semaphore') {
  const redis = new Redis(url);
  withLock = async (body) => {
    const semaphore = new Semaphore(redis, KEY, LIMIT, { lockTimeout: 30_000, acquireTimeout: 10_000 });
    await semaphore.acquire();
    await body('permit');
    await semaphore.release();
  };
  close = () => redis.quit();
} else {
  class BenchModule {}
  Module({ imports: [RedisLockModule.forRoot({ redis: url, waitTimeout: 10_000 })] })(BenchModule);
  const app = await NestFactory.createApplicationContext(BenchModule, { logger: ['error'] });
  const locks = app.get(LockService);
  withLock =
    name === 'LockService semaphore'
      ? (body) => locks.using(KEY, () => body('permit'), { limit: LIMIT })
      : name === 'LockService mutex'
        ? (body) => locks.using(KEY, () => body('lock'))
        : (body) => {
          // Read-write: 7 readers in 10 calls.
          const mode = Math.random() < 0.7 ? 'read' : 'write';
          return locks.using(KEY, () => body(mode), { mode });
        };
  close = () => app.close();
}
process.stdout.write('ready\n');

const lines = createInterface({ input: process.stdin });
for await (const line of lines) {
  if (!line.startsWith('go ')) continue;
  const startAt = Number(line.slice(3));
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, startAt - Date.now())));
  const end = clock() + Number(durationMs);
  const sections = [];
  await Promise.all(
    Array.from({ length: Number(chains) }, async (_, chain) => {
      while (clock() < end) {
        const section = { chain, requestedAt: clock() };
        await withLock(async (kind) => {
          section.kind = kind;
          section.acquiredAt = clock();
          await new Promise((resolve) => setTimeout(resolve, 2));
          section.releasedAt = clock();
        });
        sections.push(section);
      }
    }),
  );
  process.stdout.write(JSON.stringify({ sections }) + '\n');
  break;
}
lines.close();
await close();
