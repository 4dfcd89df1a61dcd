/**
 * The harness of the differential specs (a store's Redis scripts against the in-memory store):
 * seeded random sequences, run one after the other until one fails, whose seed then replays.
 */

/** A small deterministic generator (an LCG): a failing seed replays. */
export function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

/**
 * Runs `runSequence` for seeds 1 to `SEEDS` (`seeds` unless the environment says) until one
 * throws: the failure of that seed with the log its sequence wrote, or none.
 */
export async function firstFailingSeed(runSequence: (seed: number, log: string[]) => Promise<void>, seeds = 150): Promise<string[]> {
  seeds = Number(process.env.SEEDS ?? seeds);
  const failures: string[] = [];
  for (let seed = 1; seed <= seeds && failures.length === 0; seed++) {
    const log: string[] = [];
    try {
      await runSequence(seed, log);
    } catch (error) {
      failures.push(`seed ${seed}: ${(error as Error).message}\n${log.join('\n')}`);
    }
  }
  return failures;
}
