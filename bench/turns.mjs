// "Polite" workers for measuring handoff: after releasing, a worker steps back until another
// worker has taken the lock, so that every handoff goes to a waiter (greedy workers would
// mostly hand the lock to themselves, which measures nothing).
import { once } from 'node:events';
import { Redis } from 'ioredis';

/** Turn-taking among processes, announced on a pub/sub channel. */
export async function remoteTurns(url, worker) {
  const publisher = new Redis(url);
  const subscriber = new Redis(url);
  // Subscribed only once ready: see createHandoffFloor (ioredis 5.9 would fail its ready check).
  if (subscriber.status !== 'ready') await once(subscriber, 'ready');
  await subscriber.subscribe('bench:turns');
  let othersSinceMine = 0;
  let wake;
  subscriber.on('message', (_channel, by) => {
    if (Number(by) !== worker) {
      othersSinceMine++;
      wake?.();
    }
  });
  return {
    taken() {
      othersSinceMine = 0;
      void publisher.publish('bench:turns', String(worker));
    },
    async othersAfter() {
      while (othersSinceMine === 0) await new Promise((resolve) => (wake = resolve));
    },
    async close() {
      await Promise.all([publisher.quit(), subscriber.quit()]);
    },
  };
}
