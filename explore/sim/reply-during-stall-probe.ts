import { lockRedisKeys } from '../../lib/core/keys/lock-key.js';
import { RedisUnansweredError } from '../../lib/errors/redis-unanswered.error.js';
import { SETTLE_MS, settleCall } from './settle-call.js';
import { KEY_PREFIX, type Instance, type World } from './world.js';

/** How long the event loop stalls right after the call's command went out: past the 1 s grace of an attempt's or a release's answer. */
const STALL_MS = 1_500;
/** The tried lock's lease: longer than the stall, so the lock granted during it is still held once it ends. */
const TRY_TTL_MS = 3_000;
/** The released lock's lease: shorter than the grace, so the release's answer is waited for the grace (see `HeldLock.releaseInRedis`). */
const TTL_MS = 600;

/** The invariant: a reply that reached the process before its call's bound was decided is the call's answer. */
export const REPLY_IN_STALL_INVARIANT = 'a call whose reply came in while its event loop stalled past the call\'s bound is answered by it, not failed as unanswered';

/**
 * A reply Redis sent while the process' event loop was stalled past the call's bound (a long GC
 * pause, a busy CPU) is the call's answer (docs/locks.md; 126d9490, d272b5cc): Node's event loop,
 * coming back from the stall, runs the timers that fell due before it reads its sockets, so a
 * bound decided when its timer runs finds the reply missing, and the call fails with
 * `RedisUnansweredError` although Redis ran its command once and answered in time. The drawn
 * pauses never made it: they release what fell due in the order it fell due, the reply before a
 * bound's timer due after it, and a bound's timer due first, with what it defers to the next turn,
 * before the reply (see `VirtualScheduler.resumeAsEventLoop`). An instance of the probe's own
 * (`World.probeInstance`: it holds nothing else, which a stall past the leases would take)
 * calls, on a key of its own each, and its event loop stalls 1.5 s right after the command went
 * out, its reply coming in a few hops into the stall, and the stall ending as the event loop does
 * (`World.pause` with `asEventLoop`): `rs-try`, a `tryAcquire()` of a free key (its attempt's 1 s
 * grace); `rs-rel`, the `release()` of a held lock whose lease (600 ms) ends within the grace its
 * answer gets. Judged as each call settles: one that rejects with `RedisUnansweredError` though
 * its reply reached the process before it did breaks the invariant. After the faults; draws
 * nothing from the random streams but the network's latencies.
 */
export async function replyDuringStallProbe(world: World, check: () => void, stop: () => boolean): Promise<void> {
  const x = world.probeInstance('reply-during-stall');
  const tried = await stalledCall(world, x, 'rs-try', 'acquire', () => x.service.tryAcquire('rs-try', { ttl: TRY_TTL_MS }), check, stop);
  if (world.violation) return;
  if (tried !== undefined && tried !== null) await settleCall(world, tried.release(), check, stop);
  if (world.violation) return;

  const held = await settleCall(world, x.service.acquire('rs-rel', { ttl: TTL_MS }), check, stop);
  if (world.violation || held === undefined) return;
  await stalledCall(world, x, 'rs-rel', 'release', () => held.release(), check, stop);
}

/**
 * Calls `call`, whose command `op` on `key` goes out first, stalls `x`'s event loop right after it
 * went out, and judges the call once it settled: its value, or undefined when it failed.
 */
async function stalledCall<T>(world: World, x: Instance, key: string, op: string, call: () => Promise<T>, check: () => void, stop: () => boolean): Promise<T | undefined> {
  const sent = world.steerNext(x, op, lockRedisKeys(KEY_PREFIX, key).lock, { delay: 0 });
  // Filled as the call settles, in the runs below.
  type Outcome = { value: T } | { error: unknown };
  const result: { outcome?: Outcome; at?: number } = {};
  call().then(
    (value) => Object.assign(result, { outcome: { value }, at: world.scheduler.now }),
    (error: unknown) => Object.assign(result, { outcome: { error }, at: world.scheduler.now }),
  );
  await world.scheduler.run(world.scheduler.now + SETTLE_MS, check, () => stop() || sent.at !== undefined || result.outcome !== undefined);
  if (world.violation || sent.at === undefined || result.outcome !== undefined) return undefined;
  world.pause(x, STALL_MS, `reply-during-stall probe: its event loop blocked right after its ${op} on ${key} went out`, true);
  await world.scheduler.run(world.scheduler.now + STALL_MS + SETTLE_MS, check, () => stop() || result.outcome !== undefined);
  const outcome = result.outcome as Outcome | undefined;
  const at = result.at;
  if (world.violation || outcome === undefined || at === undefined) return undefined;
  if ('value' in outcome) {
    world.trace(x, `reply-during-stall probe: its ${op} on ${key} settled, answered`);
    return outcome.value;
  }
  const error = outcome.error;
  world.trace(x, `reply-during-stall probe: its ${op} on ${key} failed: ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`);
  if (error instanceof RedisUnansweredError && sent.replyAt !== undefined && sent.replyAt <= at) {
    world.violate(x, REPLY_IN_STALL_INVARIANT, `${key}: the ${op} sent at ${sent.at} ms was answered at ${sent.replyAt} ms, during a ${STALL_MS} ms stall of the event loop; the call failed at ${at} ms: ${error.name}: ${error.message}`);
  }
  return undefined;
}
