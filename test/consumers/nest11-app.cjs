// A CommonJS Nest 11 application on ioredis 6 using the packed package, as an existing service
// would (require() of the ESM package works on Node >= 20.19).
require('reflect-metadata');
const { Injectable, Module } = require('@nestjs/common');
const { NestFactory } = require('@nestjs/core');
const { LockService, Locked, RedisLockModule, LockNotAcquiredError } = require('nestjs-redis-lock');

class Orders {
  async pay(id) {
    return this.locks.current().key;
  }
}
const pay = Object.getOwnPropertyDescriptor(Orders.prototype, 'pay');
Locked('order:<0>')(Orders.prototype, 'pay', pay);
Object.defineProperty(Orders.prototype, 'pay', pay);
Injectable()(Orders);

class AppModule {}
Module({ imports: [RedisLockModule.forRoot({ redis: process.env.REDIS_URL, isGlobal: true })], providers: [Orders] })(AppModule);

(async () => {
  const app = await NestFactory.createApplicationContext(AppModule, { logger: ['error'] });
  const locks = app.get(LockService);
  const orders = app.get(Orders);
  orders.locks = locks;
  const lock = await locks.acquire('consumer');
  const busy = await locks.acquire('consumer', { waitTimeout: 0 }).catch((error) => error instanceof LockNotAcquiredError);
  await lock.release();
  const key = await orders.pay('42');
  await app.close();

  // Every subpath export, required from CommonJS.
  const missing = [];
  for (const [path, names] of Object.entries(JSON.parse(process.env.SUBPATHS))) {
    const exported = require(path);
    for (const name of names) if (exported[name] === undefined) missing.push(`${path}: ${name}`);
  }
  // The testing module, without Redis.
  const { RedisLockTestingModule, InMemoryLocks } = require('nestjs-redis-lock/testing');
  class TestModule {}
  Module({ imports: [RedisLockTestingModule.forRoot({ locks: new InMemoryLocks() })] })(TestModule);
  const testing = await NestFactory.createApplicationContext(TestModule, { logger: ['error'] });
  const memoryLocks = testing.get(LockService);
  const held = await memoryLocks.acquire('memory');
  const memoryBusy = (await memoryLocks.tryAcquire('memory')) === null;
  await held.release();
  await testing.close();

  console.log(
    JSON.stringify({
      nest: require('@nestjs/core/package.json').version,
      ioredis: require('ioredis/package.json').version,
      fencingToken: lock.fencingToken,
      busy,
      key,
      missing,
      inMemory: { fencingToken: held.fencingToken, busy: memoryBusy },
    }),
  );
})();
