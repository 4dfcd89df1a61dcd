import type { HeldLock } from '../../lib/core/engine/held-lock.js';
import type { Section, World } from './world.js';

/**
 * Defects the explorer finds that are known and not fixed yet: a violation that matches one is
 * counted under its name rather than failing the run, so that exploration goes on looking for
 * new ones (`npm run explore -- --strict` fails on them too). Each matcher must be narrow (it
 * names the mechanism, not the symptom), and is deleted when its fix is merged.
 *
 * The two the explorer found first are fixed, with their reverts in the catalogue of seeded
 * bugs: a grant handed out after a busy reply proved it expired (issue 23 item 2;
 * `explore/bugs/17-stale-grant-after-busy.patch`), and a read lock's `~r` kept without expiry
 * once its last reader lost its lease (issue 23 item 7).
 *
 * Open: `extend-short-unrecorded` (found by the extend workload, see docs/explorer.md and
 * `test/explore/regressions.spec.ts`). `HeldLock.extend()` to a shorter lease records it (so
 * that no reply to an earlier renewal moves the deadline past it) only when the new lease ends
 * before the deadline the lock has when the call is sent. When that deadline is older than an
 * earlier renewal still on its way (the watchdog's, a handed-over lock's first renewal), the new
 * lease may end after it but before what that renewal's reply then sets: the reply, applied
 * first, moves the deadline past the short lease Redis runs next, and with the extension's own
 * reply late or lost the lock is reported held past its lease.
 */
export function knownDefect(world: World, section: Section): string | undefined {
  if (section.key !== 'ext') return undefined;
  for (const part of section.parts) {
    const lock = part as HeldLock;
    const internals = lock as unknown as { renewalApplied: number; shortenedAt: number };
    for (const sent of world.extendsSent.get(lock) ?? []) {
      // Not recorded by the engine (its lease ended no sooner than the deadline of the moment),
      // not answered yet (the deadline comes from an earlier renewal's reply), and ending before
      // the deadline that reply set.
      if (sent.end >= sent.deadlineAtSend && internals.shortenedAt < sent.sequence && internals.renewalApplied < sent.sequence && sent.end < lock.deadline) {
        return 'extend-short-unrecorded';
      }
    }
  }
  return undefined;
}
