import { WAITER_LEASE_MS } from '../../lib/core/engine/lock-manager.js';
import type { Section, World } from './world.js';

/**
 * Defects of today's code that the explorer finds and that are being fixed elsewhere: a
 * violation that matches one is counted under its name rather than failing the run, so that
 * exploration goes on looking for new ones. Each matcher is narrow (it names the mechanism, not
 * the symptom). Delete an entry when its fix is merged: from then on the explorer fails on it.
 */
export function knownDefect(world: World, section: Section): string | undefined {
  // Issue 23 item 2: a grant published while the waiter could not hear it (paused, message
  // delayed) reaches it after a later attempt got a busy reply; the engine counts the grant's
  // short lease from that later attempt and hands out a lock whose grant lease already ended.
  for (const part of section.parts) {
    const grantedAt = world.grantedAt.get(`${part.token}:${part.fencingToken}`);
    if (grantedAt === undefined) continue;
    // Handed out after its grant lease ended, or after the store answered a later attempt with busy.
    const busyAt = world.lastBusyAt.get(part.token) ?? -Infinity;
    if (world.scheduler.now - grantedAt >= Math.min(world.plan.ttl, WAITER_LEASE_MS) || busyAt >= grantedAt) {
      return 'issue 23 item 2: stale grant handed out after a busy reply';
    }
  }
  return undefined;
}
