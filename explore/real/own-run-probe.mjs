// The own run probe of the real-Redis explorer (runner.mjs): one server, job schedules that drain.
const mono = () => Number(process.hrtime.bigint()) / 1e6;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Ticks far past any the runner's ticker sends, so that `job-once` judges the probe's apart. */
const FIRST_TICK = 1_000_000;
/** The next ticks asked of the running worker after the restart, a ticker's 120 ms apart. */
const TICKS_AFTER = 8;

/**
 * The shape seeded bug 35 needs (a worker's own run of a `@WithoutOverlapping` job going on
 * while Redis restarts empty, then the next tick on that worker), which the drawn restarts make
 * only when one falls inside a run of one of the few sections that hold past a tick: missed in
 * 100 schedules from seed 1 in the forty-third session's audit. It draws nothing, so a seed's
 * schedule up to it is what it was. Every call ends first (the applications stay open); once no
 * fault can excuse what follows (`after`), every live worker is called for one tick as the
 * ticker calls them, and the run that begins (the owner lease's) goes on until the probe ends it,
 * as code that does not stop at its signal does; Redis restarts empty (`restart`, recorded as the
 * drawn fault is), and the same worker is called for the next ticks until one runs or eight were
 * skipped: none may run while its own run goes on, whatever Redis lost (checker.mjs, `exclusion`
 * of two runs on one worker). Returns whether it ran.
 */
export async function ownRunProbe(live, after, restart, record) {
  for (const worker of live) worker.send({ drain: true });
  if ((await Promise.all(live.map((w) => w.next('drained', 20_000)))).some((m) => m === undefined)) return false;
  await sleep(Math.max(0, after - mono()));
  let tick = FIRST_TICK;
  let holder;
  // The owner lease may be in doubt for a moment (a claim under way): a later tick then.
  for (let tries = 0; tries < 3 && holder === undefined; tries++, tick++) {
    for (const worker of live) worker.send({ ownRun: { step: 'hold', tick } });
    const ran = await Promise.all(live.map((w) => w.next('ownRunEntered', 10_000)));
    holder = live.find((_, i) => ran[i]?.ownRunEntered === true);
    if (holder === undefined) await sleep(120);
  }
  if (holder !== undefined) {
    const event = { ev: 'fault', kind: 'restart-empty', probe: 'own-run', wall: Date.now(), t: mono() };
    await restart(event.wall);
    event.until = mono();
    record(event);
    for (let i = 0; i < TICKS_AFTER; i++, tick++) {
      holder.send({ ownRun: { step: 'tick', tick } });
      if ((await holder.next('ownRunTicked', 10_000))?.ownRunTicked !== false) break;
      await sleep(120);
    }
  }
  for (const worker of live) worker.send({ ownRun: { step: 'release' } });
  await Promise.all(live.map((w) => w.next('ownRunDone', 10_000)));
  return holder !== undefined;
}
