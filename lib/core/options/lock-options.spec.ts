import { describe, expect, it } from 'vitest';
import { InvalidLockOptionsError } from '../../errors/invalid-lock-options.error.js';
import type { RedisLockModuleOptions } from '../../interfaces/redis-lock-options.interface.js';
import { driftMargin, resolveLockOptions, resolveModuleOptions } from './lock-options.js';

const redis = 'redis://127.0.0.1:6379';

describe('resolveModuleOptions', () => {
  it('fills in the documented defaults', () => {
    expect(resolveModuleOptions({ redis })).toEqual({
      redis,
      keyPrefix: 'lock:',
      ttl: 30_000,
      renewInterval: 10_000,
      waitTimeout: 10_000,
      autoRenew: true,
      shutdownTimeout: 3_000,
      exposeKeyInHttpErrors: false,
      fenceRetention: 0,
      fairness: 'fifo',
    });
  });

  it('takes fairness, and refuses anything but fifo or barging, naming the option', () => {
    expect(resolveModuleOptions({ redis, fairness: 'barging' }).fairness).toBe('barging');
    expect(() => resolveModuleOptions({ redis, fairness: 'fair' as never })).toThrow(expect.objectContaining({ option: 'fairness', value: 'fair' }));
    expect(() => resolveModuleOptions({ redis, fairness: null as never })).toThrow(InvalidLockOptionsError);
  });

  it('takes durations as numbers of milliseconds or strings with a unit', () => {
    expect(resolveModuleOptions({ redis, ttl: '500ms', waitTimeout: '2s', shutdownTimeout: '1.5s' })).toMatchObject({
      ttl: 500,
      renewInterval: 166,
      waitTimeout: 2_000,
      shutdownTimeout: 1_500,
    });
    expect(resolveModuleOptions({ redis, ttl: '5m', renewInterval: '1m' })).toMatchObject({ ttl: 300_000, renewInterval: 60_000 });
    expect(resolveModuleOptions({ redis, ttl: '1h' }).ttl).toBe(3_600_000);
    expect(resolveLockOptions({ ttl: '2d' }, resolveModuleOptions({ redis }))).toMatchObject({ ttl: 172_800_000, renewInterval: 57_600_000 });
  });

  it('takes leases of 30 days and more, with the watchdog interval kept below the timer limit', () => {
    expect(resolveModuleOptions({ redis, ttl: '30d' })).toMatchObject({ ttl: 2_592_000_000, renewInterval: 864_000_000 });
    expect(resolveModuleOptions({ redis, ttl: '365d' })).toMatchObject({ ttl: 31_536_000_000, renewInterval: 2_147_483_647 });
  });

  it('derives renewInterval from a given ttl', () => {
    expect(resolveModuleOptions({ redis, ttl: 900 }).renewInterval).toBe(300);
  });

  it('accepts an Infinity waitTimeout and a zero waitTimeout, and refuses an empty prefix', () => {
    expect(resolveModuleOptions({ redis, waitTimeout: Infinity }).waitTimeout).toBe(Infinity);
    expect(resolveModuleOptions({ redis, waitTimeout: 0 }).waitTimeout).toBe(0);
    expect(() => resolveModuleOptions({ redis, keyPrefix: '' })).toThrow(expect.objectContaining({ option: 'keyPrefix' }));
  });

  it('accepts ioredis options and client-like objects for redis', () => {
    expect(resolveModuleOptions({ redis: { host: 'x', port: 1 } }).redis).toEqual({ host: 'x', port: 1 });
    expect(resolveModuleOptions({ redis: { host: 'x', port: '65535' } as never }).redis).toEqual({ host: 'x', port: '65535' });
  });

  const bad: [string, Partial<Record<keyof RedisLockModuleOptions, unknown>>, RegExp][] = [
    ['redis', { redis: undefined }, /Option "redis" must be .*URL.*got undefined/],
    ['redis', { redis: 42 }, /Option "redis" .*got 42/],
    ['redis', { redis: 'localhost:6379' }, /Option "redis" .*got "localhost:6379"/],
    ['redis', { redis: 'http://localhost' }, /Option "redis"/],
    ['redis', { redis: [] }, /Option "redis" .*non-empty array of independent Redis masters, got an array/],
    ['redis[1]', { redis: ['redis://a:1', 'nope', 'redis://c:3'] }, /Option "redis\[1\]" .*got "nope"/],
    ['redis.port', { redis: { host: 'a', port: '63 79' } }, /Option "redis\.port" must be a TCP port.*got "63 79"/],
    ['redis[2].port', { redis: ['redis://a:1', 'redis://b:1', { host: 'c', port: 0 }] }, /Option "redis\[2\]\.port" must be a TCP port.*got 0/],
    ['redis.host', { redis: { host: 5, port: 1 } }, /Option "redis\.host" must be a host name.*got 5/],
    ['redis[1].host', { redis: ['redis://a:1', { host: '', port: 2 }, 'redis://c:3'] }, /Option "redis\[1\]\.host" must be a host name.*got ""/],
    ['keyPrefix', { keyPrefix: 'a{b}' }, /Option "keyPrefix" .*without "\{" or "\}".*got "a\{b\}"/],
    ['keyPrefix', { keyPrefix: 7 }, /Option "keyPrefix" .*got 7/],
    ['keyPrefix', { keyPrefix: 'x'.repeat(300) }, /Option "keyPrefix" .*1 to 256 characters/],
    ['ttl', { ttl: -1 }, /Option "ttl" must be a number of milliseconds or a duration string such as '500ms', '30s', '5m', '1h' or '2d', from 100 to 31536000000 ms, got -1/],
    ['ttl', { ttl: 0 }, /Option "ttl" .*got 0/],
    ['ttl', { ttl: 99 }, /Option "ttl" .*got 99/],
    ['ttl', { ttl: 1000.5 }, /Option "ttl" .*got 1000.5/],
    ['ttl', { ttl: Number.NaN }, /Option "ttl" .*got NaN/],
    ['ttl', { ttl: Infinity }, /Option "ttl" .*got Infinity/],
    ['ttl', { ttl: 365 * 86_400_000 + 1 }, /Option "ttl" .*got 31536000001/],
    ['ttl', { ttl: '366d' }, /Option "ttl" .*got "366d"/],
    ['ttl', { ttl: '30 s' }, /Option "ttl" .*got "30 s"/],
    ['ttl', { ttl: '-5s' }, /Option "ttl" .*got "-5s"/],
    ['ttl', { ttl: '50ms' }, /Option "ttl" .*from 100 to .*got "50ms"/],
    ['shutdownTimeout', { shutdownTimeout: '1w' }, /Option "shutdownTimeout" .*got "1w"/],
    ['waitTimeout', { waitTimeout: '30d' }, /Option "waitTimeout" .*from 0 to 2147483647 ms, or Infinity, got "30d"/],
    ['renewInterval', { ttl: '90d', renewInterval: '25d' }, /Option "renewInterval" .*from 1 to 2147483647 ms .*got "25d"/],
    ['ttl', { ttl: '30000' }, /Option "ttl" .*got "30000"/],
    ['renewInterval', { ttl: 1000, renewInterval: 1000 }, /Option "renewInterval" .*from 1 to 987 ms \(below ttl 1000 minus the drift margin\), got 1000/],
    ['renewInterval', { renewInterval: 0 }, /Option "renewInterval" .*got 0/],
    ['renewInterval', { ttl: 1000, renewInterval: -5 }, /Option "renewInterval" .*got -5/],
    ['waitTimeout', { waitTimeout: -1 }, /Option "waitTimeout" .*or Infinity, got -1/],
    ['waitTimeout', { waitTimeout: Number.NaN }, /Option "waitTimeout" .*got NaN/],
    ['waitTimeout', { waitTimeout: null }, /Option "waitTimeout" .*got null/],
    ['autoRenew', { autoRenew: 'yes' }, /Option "autoRenew" must be a boolean, got "yes"/],
    ['shutdownTimeout', { shutdownTimeout: -1 }, /Option "shutdownTimeout" .*got -1/],
    ['exposeKeyInHttpErrors', { exposeKeyInHttpErrors: 'no' }, /Option "exposeKeyInHttpErrors" must be a boolean/],
  ];

  it.each(bad)('rejects a bad %s, naming it and the value', (option, patch, message) => {
    const attempt = () => resolveModuleOptions({ redis, ...patch } as RedisLockModuleOptions);
    expect(attempt).toThrow(InvalidLockOptionsError);
    expect(attempt).toThrow(message);
    try {
      attempt();
    } catch (error) {
      expect((error as InvalidLockOptionsError).option).toBe(option);
    }
  });

  it('rejects options that are not an object', () => {
    expect(() => resolveModuleOptions(undefined as unknown as RedisLockModuleOptions)).toThrow(/Option "options"/);
  });
});

describe('resolveLockOptions', () => {
  const { ttl, renewInterval, waitTimeout, autoRenew } = resolveModuleOptions({ redis, ttl: 9_000, renewInterval: 2_000, waitTimeout: 500 });
  const defaults = { ttl, renewInterval, waitTimeout, autoRenew };

  it('returns the module timing when the call gives none', () => {
    expect(resolveLockOptions(undefined, defaults)).toEqual({ ttl: 9_000, renewInterval: 2_000, waitTimeout: 500, autoRenew: true });
  });

  it('takes fencing: false as a lock without a fencing token, and refuses anything but a boolean', () => {
    expect(resolveLockOptions({ fencing: false }, defaults)).toEqual({ ...defaults, unfenced: true });
    expect(resolveLockOptions({ fencing: true }, defaults)).toEqual(defaults);
    for (const bad of ['false', 0, null]) {
      const attempt = () => resolveLockOptions({ fencing: bad as never }, defaults);
      expect(attempt).toThrow(InvalidLockOptionsError);
      expect(attempt).toThrow(/^Option "fencing" must be a boolean \(false: the lock comes without a fencing token\), got /);
    }
  });

  it('gives a call-level ttl its own renewInterval instead of the inherited one', () => {
    expect(resolveLockOptions({ ttl: 1_200 }, defaults).renewInterval).toBe(400);
    expect(resolveLockOptions({ waitTimeout: 0 }, defaults)).toMatchObject({ ttl: 9_000, renewInterval: 2_000, waitTimeout: 0 });
  });

  it('rejects bad call options, naming them', () => {
    expect(() => resolveLockOptions({ ttl: 50 }, defaults)).toThrow(/Option "ttl"/);
    expect(() => resolveLockOptions({ ttl: 1000, renewInterval: 995 }, defaults)).toThrow(/Option "renewInterval"/);
    expect(() => resolveLockOptions({ signal: {} as AbortSignal }, defaults)).toThrow(/Option "signal" must be an AbortSignal/);
    expect(() => resolveLockOptions('fast' as never, defaults)).toThrow(/Option "options"/);
  });
});

describe('driftMargin', () => {
  it('is 1% of the ttl plus 2 ms, rounded up', () => {
    expect(driftMargin(30_000)).toBe(302);
    expect(driftMargin(1_000)).toBe(12);
    expect(driftMargin(150)).toBe(4);
  });
});

describe('waitForReplicas', () => {
  it('is off by default, and takes replicas with a timeout that defaults to 1 s (half the ttl at most)', () => {
    expect(resolveModuleOptions({ redis }).waitForReplicas).toBeUndefined();
    expect(resolveModuleOptions({ redis, waitForReplicas: { replicas: 1 } }).waitForReplicas).toEqual({ replicas: 1, timeout: 1_000 });
    expect(resolveModuleOptions({ redis, ttl: 1_000, waitForReplicas: { replicas: 2 } }).waitForReplicas).toEqual({ replicas: 2, timeout: 500 });
    expect(resolveModuleOptions({ redis, waitForReplicas: { replicas: 1, timeout: '250ms' } }).waitForReplicas).toEqual({ replicas: 1, timeout: 250 });
  });

  it('rejects bad values, naming the option', () => {
    const bad = (waitForReplicas: unknown) => () => resolveModuleOptions({ redis, waitForReplicas } as RedisLockModuleOptions);
    expect(bad(null)).toThrow(/Option "waitForReplicas" must be an object such as \{ replicas: 1, timeout: 1000 \}, got null/);
    expect(bad(1)).toThrow(/Option "waitForReplicas" must be an object/);
    expect(bad({})).toThrow(/Option "waitForReplicas.replicas" must be an integer from 1 to 100, got undefined/);
    for (const replicas of [0, -1, 1.5, 101, NaN, '1']) expect(bad({ replicas })).toThrow(/Option "waitForReplicas.replicas"/);
    for (const timeout of [0, -5, 15_001]) expect(bad({ replicas: 1, timeout })).toThrow(/Option "waitForReplicas.timeout" must .*from 1 to 15000 ms \(at most half the ttl 30000\)/);
    for (const timeout of ['soon', null]) expect(bad({ replicas: 1, timeout })).toThrow(/Option "waitForReplicas.timeout" must be a number of milliseconds or a duration string/);
    expect(bad({ replicas: 1, timeout: 15_000 })).not.toThrow();
  });

  it('is refused in quorum mode, where the masters are independent and have no replicas to wait for', () => {
    const nodes = ['redis://a:6379', 'redis://b:6379', 'redis://c:6379'];
    expect(() => resolveModuleOptions({ redis: nodes, waitForReplicas: { replicas: 1 } })).toThrow(InvalidLockOptionsError);
    expect(() => resolveModuleOptions({ redis: nodes, waitForReplicas: { replicas: 1 } })).toThrow(/Option "waitForReplicas" must be left out in quorum mode/);
  });

  // Found by review (thirty-fifth session): a one-element array runs as that one connection (the
  // backend opens quorum mode only for several), yet the option was refused as in quorum mode.
  it('is kept for an array of one connection, which is that connection and no quorum', () => {
    expect(resolveModuleOptions({ redis: ['redis://a:6379'], waitForReplicas: { replicas: 1 } }).waitForReplicas).toEqual({ replicas: 1, timeout: 1_000 });
  });

  it('is checked without Redis (the in-memory store of nestjs-redis-lock/testing), where it has nothing to wait for', () => {
    expect(resolveModuleOptions({ waitForReplicas: { replicas: 1 } } as RedisLockModuleOptions, { needsRedis: false }).waitForReplicas).toEqual({ replicas: 1, timeout: 1_000 });
    expect(() => resolveModuleOptions({ waitForReplicas: { replicas: 0 } } as RedisLockModuleOptions, { needsRedis: false })).toThrow(/waitForReplicas.replicas/);
  });
});

describe('resolveModuleOptions, quorum masters', () => {
  const nodes = ['redis://a:6379', 'redis://b:6379', 'redis://c:6379'];
  const refused = (redis: unknown[]) => () => resolveModuleOptions({ redis } as RedisLockModuleOptions);

  it('takes independent masters', () => {
    expect(resolveModuleOptions({ redis: nodes }).redis).toEqual(nodes);
    expect(() => resolveModuleOptions({ redis: [{ host: 'a' }, { host: 'a', port: 6380 }, 'redis://b'] })).not.toThrow();
  });

  it('refuses a master listed twice (two votes of one server), naming both entries and not the credentials', () => {
    expect(refused([nodes[0], nodes[1], nodes[0]])).toThrow(InvalidLockOptionsError);
    expect(refused([nodes[0], nodes[1], nodes[0]])).toThrow(/Option "redis\[2\]" must be a Redis master other than redis\[0\]/);
    // The same server under another database, user or spelling of the default port.
    expect(refused(['redis://:secret@a:6379/1', nodes[1], 'redis://a/2'])).toThrow(/"redis\[2\]" .* other than redis\[0\] .*got "a:6379"/);
    expect(refused(['redis://:secret@a:6379/1', nodes[1], 'redis://a/2'])).not.toThrow(/secret/);
    expect(refused([{ host: 'a', port: 6379 }, nodes[1], nodes[0]])).toThrow(/"redis\[2\]"/);
    expect(refused([{ host: 'localhost' }, nodes[1], {}])).toThrow(/"redis\[2\]"/);
    const client = { options: {} };
    expect(refused([client, nodes[1], client])).toThrow(/"redis\[2\]" must be a Redis master other than redis\[0\]/);
  });
});
