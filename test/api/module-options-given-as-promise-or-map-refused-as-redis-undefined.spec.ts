import { Test } from '@nestjs/testing';
import { describe, expect, it } from 'vitest';
import { InvalidLockOptionsError, RedisLockModule } from '../../lib/index.js';
import { redisUrl } from '../support/redis.js';
import { refusedWith } from '../support/refused-with.js';

/**
 * Found by review (forty-third session). The module's options given as a Promise
 * (`forRoot(loadConfig())`, an async loader not awaited, where `forRootAsync()` was meant) or as
 * a Map (a factory returning `new Map(Object.entries(config))`) have no own option names: they
 * were read as an empty object, and the startup refused `Option "redis" ... got undefined`, an
 * option the application had given, inside them. The refusal now names the options themselves.
 */
describe('module options given as a Promise or a Map', () => {
  const started = async (module: () => unknown) => {
    const moduleRef = await Test.createTestingModule({ imports: [module() as never] }).setLogger(false as never).compile();
    await moduleRef.init();
    await moduleRef.close();
  };
  const refusal = async (module: () => unknown) => {
    const { option, message } = await refusedWith(started(module), InvalidLockOptionsError);
    return { option, message };
  };
  const refused = (where: string, what: string) => ({
    option: 'options',
    message: expect.stringMatching(new RegExp(`^RedisLockModule\\.${where}\\(\\): Option "options" must be an object of options, not ${what}`)),
  });

  it('is refused naming the options, not as a redis left out', async () => {
    const redis = redisUrl();
    expect(await refusal(() => RedisLockModule.forRoot(Promise.resolve({ redis }) as never))).toEqual(refused('forRoot', 'a Promise'));
    expect(await refusal(() => RedisLockModule.forRoot(new Map([['redis', redis]]) as never))).toEqual(refused('forRoot', 'a Map'));
    expect(await refusal(() => RedisLockModule.forRootAsync({ useFactory: () => new Map([['redis', redis]]) as never }))).toEqual(refused('forRootAsync', 'a Map'));
  });
});
