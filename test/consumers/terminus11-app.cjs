// A CommonJS Nest 11 application with @nestjs/terminus 11, using the packed package's terminus
// subpath as an existing service would.
require('reflect-metadata');
const { Module } = require('@nestjs/common');
const { NestFactory } = require('@nestjs/core');
const { HealthCheckService, TerminusModule } = require('@nestjs/terminus');
const { RedisLockModule } = require('nestjs-redis-lock');
const { RedisLockHealthIndicator } = require('nestjs-redis-lock/terminus');

// A generous timeout where Redis is up (a loaded machine may take a while to answer), a short one
// where nothing answers.
async function check(redis, timeout) {
  class AppModule {}
  Module({
    imports: [TerminusModule.forRoot({ logger: false }), RedisLockModule.forRoot({ redis, isGlobal: true })],
    providers: [RedisLockHealthIndicator],
  })(AppModule);
  const app = await NestFactory.createApplicationContext(AppModule, { logger: false });
  try {
    const indicator = app.get(RedisLockHealthIndicator);
    return await app
      .get(HealthCheckService)
      .check([() => indicator.isHealthy('locks', { timeout })])
      .catch((error) => ({ thrown: error.constructor.name, ...error.getResponse() }));
  } finally {
    await app.close();
  }
}

(async () => {
  const up = await check(process.env.REDIS_URL, 5_000);
  const down = await check({ host: '127.0.0.1', port: 1, lazyConnect: true, enableOfflineQueue: true, retryStrategy: () => 1_000 }, 300);
  console.log(JSON.stringify({ terminus: require('@nestjs/terminus/package.json').version, nest: require('@nestjs/core/package.json').version, up, down }));
})();
