import { describe, expect, it } from 'vitest';
import { InvalidLockOptionsError } from '../lib/index.js';
import { openClient } from './support/handed-clients.js';
import { createLockApp } from './support/lock-app.js';
import { redisUrl } from './support/redis.js';

/**
 * Found by review (GLIDE): a node-redis client that is not open is refused at startup with an
 * InvalidLockOptionsError naming `redis` (redis-connection.ts:21), since it refuses every
 * command. A GLIDE client that was closed refuses every command for good too (it can never be
 * reopened), but is accepted: the module starts, and every lock call fails later with GLIDE's
 * raw ClosingError.
 */
describe('a GLIDE client handed in closed', () => {
  it('is refused at startup, naming the option', async () => {
    const handed = await openClient('GLIDE', redisUrl());
    handed.close();
    const started = await createLockApp({ redis: handed.client }).then(
      async (app) => {
        const call = await app.locks.tryAcquire('closed-client').then(
          () => 'acquired',
          (error: Error) => `${error.constructor.name}: ${error.message}`,
        );
        await app.close();
        return `started; tryAcquire: ${call}`;
      },
      (error: unknown) => error,
    );
    expect(started).toBeInstanceOf(InvalidLockOptionsError);
  });
});
