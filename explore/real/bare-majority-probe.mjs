// The bare-majority probe of the real-Redis explorer (runner.mjs): quorum `--silence` schedules.
import { Redis } from 'ioredis';

const mono = () => Number(process.hrtime.bigint()) / 1e6;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** How long master 2 stays paused: past the silence threshold (1 s) and the rival's call within it. */
const PAUSE_MS = 2_200;

/**
 * The shape docs/deployment.md names (quorum: "a rival's attempt on a lock held on a bare majority
 * that includes a failed master is busy, not a quorum failure"), which the drawn silences rarely
 * make: a lock must stand on two masters, one of them silent, while the third grants. It draws
 * nothing, so a seed's schedule up to it is what it was. Every chain ends first (the applications
 * stay open); once the schedule's faults are out of the checker's reach (`after`), the first
 * worker holds a lock of a key of its own on the three masters, the runner deletes its copy on
 * master 0 (as a restart empty would lose it) and pauses master 2, and the second worker polls the
 * key once master 2 is silent: master 0 grants, master 1 answers busy, master 2 is asked nothing.
 * Its call must end as busy (`LockNotAcquiredError` without a quorum failure: checker.mjs,
 * `minority-fails-quorum`, sees master 2's pause as the one master out). Returns whether it ran.
 */
export async function bareMajorityProbe(live, servers, after, record) {
  if (live.length < 2 || servers.length !== 3) return false;
  for (const worker of live) worker.send({ drain: true });
  if ((await Promise.all(live.map((w) => w.next('drained', 20_000)))).some((m) => m === undefined)) return false;
  await sleep(Math.max(0, after - mono()));
  const [holder, rival] = live;
  if ((await heldWithCopyDeleted(holder, servers, { bare: 'hold' }, 'bared', 0, 'bare-majority', record)) === undefined) return false;
  const paused = { ev: 'fault', kind: 'long-pause', probe: 'bare-majority', node: 2, t: mono() };
  servers[2].pause();
  rival.send({ bare: 'rival' });
  await Promise.all([rival.next('bared', 10_000), sleep(PAUSE_MS)]);
  servers[2].resume();
  paused.until = mono();
  record(paused);
  holder.send({ bare: 'release' });
  await holder.next('bared', 10_000);
  return true;
}

/**
 * Has `holder` take a probe's lock of a key of its own (`message`, answered in `field` with its
 * Redis key), waits until the three masters hold a copy of it, and deletes the copy on master
 * `node` (as a restart empty would lose it), recorded as the fault of `probe`: the key, or
 * `undefined` when the holder holds none.
 */
export async function heldWithCopyDeleted(holder, servers, message, field, node, probe, record) {
  holder.send(message);
  const key = (await holder.next(field, 10_000))?.[field]?.key;
  if (typeof key !== 'string') return undefined;
  const admins = servers.map((server) => new Redis(server.port, '127.0.0.1', { maxRetriesPerRequest: 1 }));
  try {
    // The round ends at an agreeing majority: the third copy may land a moment later.
    for (const until = mono() + 2_000; mono() < until; await sleep(10)) {
      if ((await Promise.all(admins.map((admin) => admin.exists(key)))).every((n) => n === 1)) break;
    }
    const deleted = { ev: 'fault', kind: 'delete-key', probe, node, copy: key, t: mono() };
    await admins[node].del(key);
    deleted.until = mono();
    record(deleted);
  } finally {
    for (const admin of admins) admin.disconnect();
  }
  return key;
}
