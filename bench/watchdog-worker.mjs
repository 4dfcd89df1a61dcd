// The watchdog section, in a process of its own: holds `count` locks (ttl 3 s, so renewed
// every second) for `holdMs`, and reports the renewal round trips Redis saw and this
// process's CPU over that time. Usage: watchdog-worker.mjs <redis url> <count> <hold ms>
import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Redis } from 'ioredis';
import { LockService, RedisLockModule } from 'nestjs-redis-lock';
import { redisMeter } from './redis-stats.mjs';

const [, , url, countArg, holdArg] = process.argv;
const count = Number(countArg);
const holdMs = Number(holdArg);
const admin = new Redis(url);
await admin.flushall();
class HoldModule {}
Module({ imports: [RedisLockModule.forRoot({ redis: url, ttl: 3_000 })] })(HoldModule);
const app = await NestFactory.createApplicationContext(HoldModule, { logger: ['error'] });
const locks = app.get(LockService);
const held = [];
for (let from = 0; from < count; from += 500) {
  held.push(...(await Promise.all(Array.from({ length: Math.min(500, count - from) }, (_, i) => locks.acquire(`hold:${from + i}`)))));
}
const meter = redisMeter([admin]);
await meter.begin({ flush: false });
const cpuBefore = process.cpuUsage();
await new Promise((resolve) => setTimeout(resolve, holdMs));
const cpu = process.cpuUsage(cpuBefore);
const stats = await meter.end();
const lost = held.filter((lock) => lock.signal.aborted).length;
await Promise.all(held.map((lock) => lock.release()));
await app.close();
await admin.quit();
const renewals = stats.commands.pexpire?.calls ?? 0;
const scriptCalls = (stats.commands.evalsha?.calls ?? 0) + (stats.commands.eval?.calls ?? 0);
process.stdout.write(
  JSON.stringify({
    locks: count,
    ttlMs: 3_000,
    renewIntervalMs: 1_000,
    holdMs,
    renewals,
    roundTripsPerPeriod: scriptCalls / (holdMs / 1_000),
    redisCommandUsec: stats.commandUsec,
    nodeCpuMs: (cpu.user + cpu.system) / 1000,
    nodeCpuPerRenewalUs: renewals > 0 ? (cpu.user + cpu.system) / renewals : null,
    locksLost: lost,
  }) + '\n',
);
