import type { World } from './world.js';

/** Virtual time a probe gives one call's network hops (an acquire, a release, a first attempt). */
export const SETTLE_MS = 50;

/**
 * Runs the world until `call` settles (or `SETTLE_MS` pass): its value, or undefined when it
 * failed (`failed` is told why) or is still on its way.
 */
export async function settleCall<T>(world: World, call: Promise<T>, check: () => void, stop: () => boolean, failed?: (error: unknown) => void): Promise<T | undefined> {
  let value: T | undefined;
  let done = false;
  call.then(
    (result) => {
      value = result;
      done = true;
    },
    (error: unknown) => {
      failed?.(error);
      done = true;
    },
  );
  await world.scheduler.run(world.scheduler.now + SETTLE_MS, check, () => stop() || done);
  return value;
}
