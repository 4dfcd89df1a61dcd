// The resent release probe of the real-Redis explorer (runner.mjs): one server, mutex schedules that drain.
import { Redis } from 'ioredis';

const mono = () => Number(process.hrtime.bigint()) / 1e6;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The shape seeded bug 34 needs (a release whose reply a connection reset lost, run again by the
 * client on the new connection and refused there, its first run having released the lock), which
 * the drawn resets make only when one falls between a release's run and its reply: missed in 120
 * schedules from seed 1 in the forty-third session. It draws nothing, so a seed's schedule up to
 * it is what it was. Every chain ends first (the applications stay open); once no fault can excuse
 * what follows (`after`), the first worker holds a lock of a key of its own in a section recorded
 * as any, the runner throws its link's replies away and has it end the section, and once Redis
 * shows the key gone (the release ran) resets the link: ioredis sends the release again, Redis
 * refuses it, and the holder must not be told of a loss (checker.mjs, `told-after-release`).
 * Returns whether it ran.
 */
export async function resentReleaseProbe(live, links, server, after, record) {
  for (const worker of live) worker.send({ drain: true });
  if ((await Promise.all(live.map((w) => w.next('drained', 20_000)))).some((m) => m === undefined)) return false;
  await sleep(Math.max(0, after - mono()));
  const [worker] = live;
  const proxies = links(worker);
  worker.send({ resent: 'hold' });
  const key = (await worker.next('resentEntered', 10_000))?.resentEntered?.key;
  if (typeof key !== 'string') return false;
  const admin = new Redis(server.port, '127.0.0.1', { maxRetriesPerRequest: 1 });
  try {
    const dropped = { ev: 'fault', kind: 'drop-replies', probe: 'resent-release', p: worker.id, t: mono() };
    for (const p of proxies) p.drop('replies');
    worker.send({ resent: 'release' });
    for (const until = mono() + 2_000; mono() < until && (await admin.exists(key)) === 1; ) await sleep(5);
    // heal() resets the connections that lost bytes: the release goes again on the new one.
    for (const p of proxies) p.heal();
    dropped.until = mono();
    record(dropped);
  } finally {
    admin.disconnect();
  }
  await worker.next('resentDone', 10_000);
  return true;
}
