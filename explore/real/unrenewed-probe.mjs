// The unrenewed handover probe of the real-Redis explorer (runner.mjs): one server, mutex schedules that drain, after the resent release probe.
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** How long the waiter waits for the holder before the release: its attempt queued, and refreshed. */
const QUEUED_MS = 300;

/**
 * The shape seeded bug 100 needs (a lock with `autoRenew: false` handed over by a release, whose
 * first renewal, a third of the way into its grant lease, renews it to what is left of its ttl),
 * which no workload makes: none asks for `autoRenew: false`. It draws nothing, and runs on the
 * chains the resent release probe drained, the applications open. The first worker holds a lock
 * of a key of its own, the second waits for it with `autoRenew: false` and a 1.5 s ttl, and the
 * first releases once the second is queued: the lock goes to the waiter by a grant. Its section
 * holds until the lock's first renewal, then the runner reads Redis' lease of it, which must end
 * by the lease's start (the waiter's last attempt) plus its ttl (checker.mjs, `lease-past-ttl`).
 * Returns whether it ran.
 */
export async function unrenewedProbe(live) {
  if (live.length < 2) return false;
  const [holder, waiter] = live;
  holder.send({ unrenewed: 'hold' });
  if ((await holder.next('unrenewedHeld', 10_000))?.unrenewedHeld !== true) return false;
  waiter.send({ unrenewed: 'wait' });
  await waiter.next('unrenewedWaiting', 10_000);
  await sleep(QUEUED_MS);
  holder.send({ unrenewed: 'release' });
  return (await waiter.next('unrenewedDone', 20_000)) !== undefined;
}
