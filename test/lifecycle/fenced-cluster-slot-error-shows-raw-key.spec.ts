import { Cluster } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { FencedRedis } from '../../lib/index.js';

/**
 * Found by review. Every other message that shows a user's key goes through `quoteKey()`
 * (lib/core/keys/quote-key.ts: escaped, no raw C1 controls, line separators or bidi overrides,
 * and cut to 200 characters), FencedRedis's own argument errors included (lib/fencing/
 * fence-key.ts). The refusal of an untagged key that a Cluster client's `keyPrefix` moves to
 * another slot than its fencing token (lib/fencing/fenced-store.ts:55, `checkSlot`) shows the key
 * with a bare `JSON.stringify(key)`: whole (FencedRedis keys have no length limit: a 10 KB key
 * makes a 10 KB message) and with U+0085 (NEL), U+2028 and U+202E raw, which forge or garble log lines.
 * The client never needs to connect: the check runs before any command.
 */
const FORGED = 'order:7\u0085[Nest] 1  - ERROR forged\u2028line\u202Eeno';
const UNESCAPED = /[\u0080-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/u;

describe("FencedRedis on a Cluster client with a keyPrefix, an untagged key in another slot than its token", () => {
  let client: Cluster | undefined;
  afterEach(() => client?.disconnect());

  it('is refused with the key escaped and bounded, as in every other message', async () => {
    client = new Cluster([{ host: '127.0.0.1', port: 1 }], { keyPrefix: 'app:', lazyConnect: true });
    const key = `${FORGED}${'x'.repeat(10_000)}`;
    const error = await new FencedRedis(client).set(key, 'v', 1).catch((e: unknown) => e);
    expect((error as Error).message).toMatch(/hashes to another Cluster slot than its fencing token/);
    // Before the fix: the message is over 10,000 characters, with U+0085, U+2028 and U+202E raw.
    expect({ length: (error as Error).message.length < 1_000, escaped: !UNESCAPED.test((error as Error).message) }).toEqual({ length: true, escaped: true });
  });
});
