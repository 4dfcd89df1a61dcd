import { describe, expect, it } from 'vitest';
import { RedisLockError } from '../../lib/index.js';
import { useQuorumNodes } from '../support/quorum-nodes.js';

/**
 * Found by review of 594755df and e00831aa. A quorum master's acquire refuses a fencing counter past
 * 2^53 with Redis' error "FOREIGNFENCINGCOUNTER <value> <counter key>", the counter key raw: the
 * lock's key, the caller's text. The error of a majority so refused (and of fewer, "Quorum not
 * reached") names the keys quoted and escaped, then quotes each master's reply as it came, so a key
 * with control characters (C0 and C1 controls, line separators, bidi overrides) reached the message,
 * and every log line that prints it, raw: a forged log line. On one Redis the same reply is shown
 * with its key quoted (storeFailure). Each master's reply now shows the counter key so too.
 */
const FORGED = 'q-forged\u0085[Nest] 1  - ERROR [RedisLock] forged line\u2028another\u009b31mred\u001b[31mred\u202Edesrever';
const UNESCAPED = /[\u0000-\u001f\u0080-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/u;

describe('quorum: a counter past 2^53 at a lock whose key holds control characters', () => {
  const { servers, app, admin } = useQuorumNodes();
  const failure = (call: Promise<unknown>) => call.then((value) => new Error(`no failure: ${String(value)}`), (error: unknown) => error as Error);

  it.each([
    ['a majority of the masters', [0, 1]],
    ['one master, another frozen', [0]],
  ])('on %s: the error shows the key escaped', { timeout: 30_000 }, async (_what, foreign) => {
    const { locks } = await app({ ttl: 5_000 });
    for (const i of foreign) await admin(i, (node) => node.set(`lock:{${FORGED}}:fence`, '9007199254740993'));
    // Master 1 frozen: the refusal of master 0 and the grant of master 2 make no majority either way.
    if (foreign.length === 1) servers[1]!.pause();
    const error = await failure(locks.tryAcquire(FORGED));
    expect(error).toBeInstanceOf(RedisLockError);
    expect(error.message).toMatch(/FOREIGNFENCINGCOUNTER/);
    // Before: U+0085, U+2028, U+009B, ESC and U+202E raw, from the masters' replies.
    expect(error.message).not.toMatch(UNESCAPED);
  });
});
