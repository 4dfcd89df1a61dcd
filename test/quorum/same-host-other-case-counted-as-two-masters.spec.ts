import { describe, expect, it } from 'vitest';
import { InvalidLockOptionsError } from '../../lib/index.js';
import { resolveModuleOptions } from '../../lib/core/options/lock-options.js';

/**
 * docs/deployment.md: "an entry listed twice, by the same client or address, is refused at
 * startup with InvalidLockOptionsError naming both". Host names are case-insensitive, and a
 * bracketed IPv6 literal in a URL is the same address as the bare one in ioredis options, but
 * the check compares the spellings: one server is accepted as two of three votes (only the
 * background run_id check logs it, once the servers answer).
 */
describe('quorum entries that name one address in two spellings', () => {
  const refusal = (redis: unknown[]) => {
    try {
      resolveModuleOptions({ redis: redis as never });
      return undefined;
    } catch (error) {
      return error;
    }
  };

  it('control: the same spelling twice is refused, naming both entries', () => {
    const error = refusal(['redis://cache-a.internal:6379', 'redis://b.internal:6379', 'redis://cache-a.internal:6379']);
    expect(error).toBeInstanceOf(InvalidLockOptionsError);
    expect((error as Error).message).toMatch(/redis\[2\].*redis\[0\]/);
  });

  it('refuses a host name repeated in other letter case', () => {
    // Accepted today: URL keeps the case of a redis:// host ("CACHE-A.internal:6379" vs "cache-a.internal:6379").
    const error = refusal(['redis://cache-a.internal:6379', 'redis://b.internal:6379', 'redis://CACHE-A.internal:6379']);
    expect(error).toBeInstanceOf(InvalidLockOptionsError);
    expect((error as Error).message).toMatch(/redis\[2\].*redis\[0\]/);
  });

  it('refuses an IPv6 address given as a URL and as ioredis options', () => {
    // Accepted today: "[::1]:6380" (URL hostname keeps the brackets) vs "::1:6380".
    const error = refusal(['redis://[::1]:6380', 'redis://b.internal:6379', { host: '::1', port: 6380 }]);
    expect(error).toBeInstanceOf(InvalidLockOptionsError);
    expect((error as Error).message).toMatch(/redis\[2\].*redis\[0\]/);
  });
});
