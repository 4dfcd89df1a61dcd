// The owed give-back probe of the real-Redis explorer (runner.mjs): quorum `--silence` schedules.
import { heldWithCopyDeleted } from './bare-majority-probe.mjs';

const mono = () => Number(process.hrtime.bigint()) / 1e6;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * How long master 2 stays paused: past the end of the rival's first give-back round (a round
 * timeout, then RELEASE_ROUND_MS, 750 ms), which records that give-back as owed to it.
 */
const PAUSE_MS = 1_800;
/** How long the rival holds on after master 2 resumes (and then until its store saw master 2 answer again). */
const HELD_AFTER_MS = 500;

/**
 * The shape seeded bug 73 needs (a waiter's give-back owed to a master once its round ended,
 * after the same token's next attempt began, then resent over that attempt's grant when the
 * master answers again), which the drawn silences make in about one schedule in fifteen. It draws
 * nothing, so a seed's schedule up to it is what it was. With every chain ended (the bare-majority
 * probe drained them): the first worker holds a lock of a key of its own on masters 0 and 1 (the
 * runner deletes its copy on master 2), the runner pauses master 2, and the second worker waits
 * for that key. Its first poll times out on master 2 (not silent yet) and sends a give-back
 * there; the holder releases before the give-back's round ends, the rival's next attempt is
 * granted on masters 0 and 1 and sent to master 2 too, and the give-back's round then ends owing
 * it to master 2. Once master 2 resumes, it grants that attempt (after the first one and its
 * give-back), then answers again: what the store resends it then must spare the rival's copy
 * (checker.mjs, `copy-deleted-while-held`). Returns whether it ran.
 */
export async function owedGiveBackProbe(live, servers, record) {
  if (live.length < 2 || servers.length !== 3) return false;
  const [holder, rival] = live;
  // Master 2 runs each worker's commands in order, but not the workers' between them: with the
  // holder's copy there, the rival's attempts could all run before the holder's release.
  if ((await heldWithCopyDeleted(holder, servers, { owed: 'hold' }, 'owedDone', 2, 'owed-give-back', record)) === undefined) return false;
  const paused = { ev: 'fault', kind: 'long-pause', probe: 'owed-give-back', node: 2, t: mono() };
  servers[2].pause();
  rival.send({ owed: 'rival' });
  // Its first poll timed out on master 2 (its round 200 ms) and sent a give-back: the holder
  // releases before that give-back's round ends, and before master 2 falls silent (1 s), so
  // that the rival's next attempt goes to master 2 too.
  await rival.next('owedGaveBack', 5_000);
  holder.send({ owed: 'release' });
  await holder.next('owedDone', 10_000);
  const entered = rival.next('owedEntered', 10_000);
  await sleep(Math.max(0, paused.t + PAUSE_MS - mono()));
  servers[2].resume();
  paused.until = mono();
  record(paused);
  await entered;
  await sleep(HELD_AFTER_MS);
  rival.send({ owed: 'release' });
  await rival.next('owedDone', 10_000);
  return true;
}
