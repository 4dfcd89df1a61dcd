import { Redis } from 'ioredis';
import { sleep } from './lock-app.js';

// Spins inside Redis for ARGV[1] ms: the server serves nobody meanwhile, and what clients send
// waits in their sockets, so replies (and the effects of scripts) come after the block ends.
const SPIN = `
local start = redis.call('TIME')
local from = tonumber(start[1]) * 1000000 + tonumber(start[2])
while true do
  local t = redis.call('TIME')
  if tonumber(t[1]) * 1000000 + tonumber(t[2]) - from >= tonumber(ARGV[1]) * 1000 then
    return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  end
end
`;

/**
 * Blocks the Redis at `url` for `ms` milliseconds; resolves once the block has surely started,
 * with a promise of its end: the wall-clock time (ms) at which Redis was free again, on the clock
 * this machine's processes share, so that a test can say whether something happened before it
 * without a race against the reply (undefined if the block failed).
 */
export async function blockRedis(url: string, ms: number): Promise<{ ended: Promise<number | undefined> }> {
  const admin = new Redis(url);
  await admin.ping();
  const ended = admin.eval(SPIN, 0, ms).then(
    (freeAt) => admin.quit().then(() => Number(freeAt)),
    () => void admin.disconnect(),
  );
  // The script reaches Redis over loopback well within this.
  await sleep(Math.min(50, ms / 4));
  return { ended };
}
