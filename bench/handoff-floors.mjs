// The physical floors of a message-woken handoff on this machine, for the contended runs only:
// the least any lock woken by Redis pub/sub can cost, so that the handoff figures of the
// libraries (and the 0.3 ms target) can be read against what the machine allows.
//   'raw pub/sub (barging floor)': SET NX PX; a busy caller waits for the release message and
//     races again. Release: one script, owner check + DEL + PUBLISH. A handoff is the release's
//     round trip, the message, and the woken caller's SET.
//   'raw grant (FIFO floor)': a busy caller queues its token in the same script that tried;
//     the release script makes the head of the queue the owner and publishes its token, so the
//     woken caller holds the lock with no further round trip. A handoff is the release's round
//     trip and the message.
// Neither handles a crashed waiter, a lost message or a timeout: floors, not locks.
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { Redis } from 'ioredis';

export const HANDOFF_FLOORS = ['raw pub/sub (barging floor)', 'raw grant (FIFO floor)'];

const TTL = 30_000;

const BARGING_RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) redis.call('PUBLISH', KEYS[2], '*') end return 0`;
const GRANT_ACQUIRE = `if redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2], 'NX') then return 1 end redis.call('RPUSH', KEYS[2], ARGV[1]) return 0`;
const GRANT_RELEASE = `if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
local next = redis.call('LPOP', KEYS[2])
if next then redis.call('SET', KEYS[1], next, 'PX', ARGV[2]) redis.call('PUBLISH', KEYS[3], next) else redis.call('DEL', KEYS[1]) end
return 1`;

/** One of the floors above, as a contender with `withLock` (contended runs only). */
export async function createHandoffFloor(name, url) {
  const redis = new Redis(url);
  const subscriber = new Redis(url);
  // ioredis 5.9 sends SUBSCRIBE (a command allowed while loading) as soon as the socket connects,
  // before its ready check's INFO, which Redis then refuses in subscriber mode: the connection is
  // dropped, the subscription's promise rejects, and a waiter never hears a release.
  await Promise.all([redis, subscriber].map((client) => (client.status === 'ready' ? undefined : once(client, 'ready'))));
  const grants = name === HANDOFF_FLOORS[1];
  redis.defineCommand('floorRelease', { numberOfKeys: grants ? 3 : 2, lua: grants ? GRANT_RELEASE : BARGING_RELEASE });
  redis.defineCommand('floorAcquire', { numberOfKeys: 2, lua: GRANT_ACQUIRE });
  const subscribed = new Set();
  // Messages seen so far: a caller waits for one that arrived after its own attempt was sent.
  let messages = 0;
  const waiting = new Map();
  subscriber.on('message', (_channel, message) => {
    messages++;
    if (grants) waiting.get(message)?.();
    else for (const wake of waiting.values()) wake();
  });
  const channelOf = (key) => `${key}:released`;
  const subscribe = async (key) => {
    if (subscribed.has(key)) return;
    subscribed.add(key);
    await subscriber.subscribe(channelOf(key));
  };

  const bargingAcquire = async (key, token) => {
    for (;;) {
      const seen = messages;
      if ((await redis.set(key, token, 'PX', TTL, 'NX')) === 'OK') return;
      if (messages !== seen) continue;
      await new Promise((resolve) => waiting.set(token, resolve));
      waiting.delete(token);
    }
  };
  const grantAcquire = async (key, token) => {
    const granted = new Promise((resolve) => waiting.set(token, resolve));
    if ((await redis.floorAcquire(key, `${key}:queue`, token, TTL)) !== 1) await granted;
    waiting.delete(token);
  };

  return {
    async withLock(key, body) {
      await subscribe(key);
      const token = randomUUID();
      await (grants ? grantAcquire : bargingAcquire)(key, token);
      await body();
      await (grants ? redis.floorRelease(key, `${key}:queue`, channelOf(key), token, TTL) : redis.floorRelease(key, channelOf(key), token));
      return true;
    },
    lockCycle() {
      throw new Error(`${name} is a contended floor only`);
    },
    close: () => Promise.all([redis.quit(), subscriber.quit()]),
  };
}
