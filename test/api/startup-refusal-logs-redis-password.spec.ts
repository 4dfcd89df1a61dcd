import { ConsoleLogger } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { Redis } from 'ioredis';
import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { InvalidLockOptionsError, RedisLockModule, type RedisLockModuleOptions } from '../../lib/index.js';
import { CapturedLogs } from '../support/lock-app.js';

const SECRET = 'TOPSECRET-pw';

/** What Nest's own logger writes for the error, as its ExceptionHandler logs a failed startup. */
function loggedByNest(error: unknown): string {
  let written = '';
  const writes = [process.stdout, process.stderr].map((stream) => {
    const write = stream.write.bind(stream);
    stream.write = ((chunk: string | Uint8Array) => {
      written += String(chunk);
      return true;
    }) as typeof stream.write;
    return () => (stream.write = write);
  });
  try {
    new ConsoleLogger('ExceptionHandler').error(error);
  } finally {
    for (const restore of writes) restore();
  }
  return written;
}

/**
 * Found by review of the module's configuration. A bad `redis` URL string is refused with its
 * credentials masked ("Shown without its credentials: the startup error goes to the logs",
 * lib/core/options/lock-options.ts), but the other refusals of `redis` kept the raw value in the
 * error's enumerable `value` property (lib/errors/invalid-lock-options.error.ts): Nest's
 * ExceptionHandler logs a failed startup with its ConsoleLogger, which prints the error's own
 * properties, so the password of `redis: { url }` (the very mistake that refusal exists for), of
 * a quorum of two URLs, or of a closed ioredis client's options went to the application's logs
 * (and so to whatever collects them); so did a JSON logger's copy of the error's fields.
 */
describe('a refused redis option, as Nest logs the failed startup', () => {
  const cases: [string, () => RedisLockModuleOptions['redis']][] = [
    ['redis: { url } (the URL given as node-redis takes it)', () => ({ url: `redis://app:${SECRET}@127.0.0.1:6399` }) as never],
    ['redis: [url, url] (a quorum of two)', () => [`redis://app:${SECRET}@10.0.0.1:6379`, `redis://app:${SECRET}@10.0.0.2:6379`]],
    ['redis: a closed ioredis client', () => {
      const client = new Redis({ host: '127.0.0.1', port: 6399, password: SECRET, lazyConnect: true });
      client.disconnect();
      return client;
    }],
  ];

  it.each(cases)('%s: the log and the error\'s fields leave the password out', async (_, redis) => {
    const error = await Test.createTestingModule({ imports: [RedisLockModule.forRoot({ redis: redis() })] })
      .setLogger(new CapturedLogs())
      .compile()
      .then(
        (moduleRef) => moduleRef.close().then(() => 'started'),
        (e: unknown) => e,
      );
    expect(error).toBeInstanceOf(InvalidLockOptionsError);
    expect((error as InvalidLockOptionsError).option).toMatch(/^redis/);
    expect(loggedByNest(error)).not.toContain(SECRET);
    expect(inspect(error)).not.toContain(SECRET); // an unhandled rejection's print
    expect(JSON.stringify({ ...(error as object) })).not.toContain(SECRET); // a JSON logger's fields
  });
});
