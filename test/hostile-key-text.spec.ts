import { describe, expect, it } from 'vitest';
import { LockNotAcquiredError } from '../lib/index.js';
import { nextEvent, useLockApps } from './support/lock-app.js';
import { useRedis } from './support/redis.js';

/**
 * Found by review. `quoteKey` (lib/core/keys/quote-key.ts) promises a key "quoted and escaped (no raw
 * newlines or control characters to forge log lines with)", but it is `JSON.stringify`, which
 * escapes only U+0000-U+001F, `"` and `\`. It leaves raw the C1 control characters
 * U+0080-U+009F (U+0085 NEL is a newline; U+009B is CSI, the 8-bit form of ESC [ that starts
 * ANSI sequences), the Unicode line and paragraph separators U+2028/U+2029 (line breaks to many
 * log viewers and to JavaScript before ES2019), and bidi overrides such as U+202E.
 */
const FORGED = 'acct:1\u0085[Nest] 1  - ERROR [RedisLock] forged line\u2028another forged line\u009b31mred\u202Edesrever';
const UNESCAPED = /[\u0080-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/u;

describe('a key with C1 controls, Unicode line separators and bidi overrides', () => {
  const redis = useRedis();
  const app = useLockApps();

  it('is escaped in the LockNotAcquiredError of a multi-key acquisition', async () => {
    const holder = await app();
    const { locks } = await app();
    const busy = await holder.locks.acquire(FORGED);
    const error = await locks.acquire(['acct:0', FORGED], { waitTimeout: 0 }).catch((e: unknown) => e);
    await busy.release();
    expect(error).toBeInstanceOf(LockNotAcquiredError);
    expect((error as LockNotAcquiredError).key).toBe(FORGED); // the key itself stays exact
    // Current code: the message carries U+0085, U+2028, U+009B and U+202E raw.
    expect((error as Error).message).not.toMatch(UNESCAPED);
  });

  it('is escaped in the lost-lock log line', async () => {
    const { locks, logs } = await app({ ttl: 300, renewInterval: 100 });
    await locks.acquire(['acct:0', FORGED]);
    const lost = nextEvent(locks.events$, 'lost');
    await redis.del(`lock:{${FORGED}}`);
    await lost;
    const line = logs.lines.find((entry) => entry.message.includes('lock lost'))!;
    expect(line).toBeDefined();
    expect(line.message).not.toMatch(UNESCAPED);
  });
});
