/**
 * Found by review (forty-first session), left over from the thirty-ninth's
 * job-class-and-method-names-shown-raw-and-whole-in-logs.spec.ts: the startup checks the module
 * makes of a `@Locked` method (its ttl against `fenceRetention`, the kind of lock against the
 * store) named it `@Locked on Class.method` with the class and method names as they are, and a
 * `DuplicateLockKeyError` named a provider by its class or Symbol token as it is. A class name
 * set at runtime, a computed method name or a Symbol's description can hold a newline that
 * forges a log line, or thousands of characters; the decorator's own errors already show them
 * quoted, escaped and cut, as keys are.
 */
import { Injectable } from '@nestjs/common';
import { describe, expect, it } from 'vitest';
import { DuplicateLockKeyError, Locked, OnOneInstance } from '../../lib/index.js';
import { useRedis } from '../support/redis.js';
import { startupRefusal } from './support.js';

const FORGED = `\nERROR [RedisLock] forged line ${'x'.repeat(3_000)}`;

describe('startup refusals naming code the user named', () => {
  useRedis();

  it('show a @Locked method\'s class and method names escaped and cut', async () => {
    const method = `reindex${FORGED}`;
    class Indexer {
      @Locked('reindex', { ttl: '2h' })
      async [method](): Promise<void> {}
    }
    Object.defineProperty(Indexer, 'name', { value: `Indexer${FORGED}` });
    Injectable()(Indexer);
    const error = await startupRefusal([Indexer], { fenceRetention: '1h' });
    expect(error.message).toContain('fenceRetention');
    // Failed: the message held both raw newlines and all 6,000 characters of the names.
    expect(error.message).not.toMatch(/\n/);
    expect(error.message.length).toBeLessThan(1_000);
  });

  it('show a provider\'s Symbol token escaped and cut', async () => {
    @Injectable()
    class Twice {
      @OnOneInstance()
      async run(): Promise<void> {}
    }
    const error = await startupRefusal([Twice, { provide: Symbol(`second${FORGED}`), useClass: Twice }]);
    expect(error).toBeInstanceOf(DuplicateLockKeyError);
    expect(error.message).toContain('provider Twice)');
    expect(error.message).not.toMatch(/\n/);
    expect(error.message.length).toBeLessThan(1_000);
  });
});
