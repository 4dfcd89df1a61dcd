// What a store's acquire and release calls name and answer, for every lock kind.

/** The Redis names a script call needs. */
export interface ScriptKeys {
  lock: string;
  fence: string;
  queue: string;
  waiters: string;
  released: string;
}

/**
 * Outcome of one acquire attempt. A busy reply may carry `fence`, the key's fencing counter when
 * the attempt ran: every grant the caller could still be sent with a token up to it was made
 * before that attempt and did not survive it (the attempt would have found the caller holding).
 * `joined`: the attempt queued a caller that was not queued before. To one that had been queued,
 * that says its place was lost (dropped as dead, or Redis restarted empty): a grant it hears of
 * may then be from before the loss, which the fencing counter, restarted with it, cannot tell.
 */
export type AcquireReply = { acquired: true; fencingToken: number } | { acquired: false; pttl: number; fence?: number; joined?: boolean };

/**
 * What a release publishes on a lock's channel when it frees the lock for barging waiters
 * (`fairness: 'barging'`) instead of handing it to one: never a `<token>:<fencing token>` grant.
 */
export const FREED_MESSAGE = '*';

/** A lock a release handed to a waiter. */
export interface Grant {
  token: string;
  fencingToken: number;
}

/**
 * A lock a release parked (see `LockStore.release`): held now under the park token, with the
 * fencing token its next holder takes; `contended` when barging waiters of any process wait.
 */
export interface ParkedReply {
  fencingToken: number;
  contended: boolean;
}

/** Outcome of a release: whether we held it, and the waiter it was handed to. */
export interface ReleaseReply {
  released: boolean;
  /** The release parked the lock instead of freeing it (it asked to, and nobody queued). */
  parked?: ParkedReply;
  /** The (first) waiter it was handed to. */
  grant?: Grant;
  /** Every waiter it was handed to, `grant` first, when there may be several (readers, permits). */
  grants?: Grant[];
}

/**
 * A release script's reply `{1, token, fencing, token, fencing...}` (or `{2, fencing, wanted}`
 * for a parked lock): the lock went to the waiters it names, several only when readers came in
 * together. A release that hands the lock to nobody answers the integer `1` (`0`: not the
 * owner's), as an acquire that takes the lock answers its fencing token alone: an array reply
 * costs Redis a deferred length and a `writev`, and the client an array, on every lock.
 */
export function toReleaseReply(reply: unknown): ReleaseReply {
  if (typeof reply === 'number') return { released: reply === 1 };
  const flat = reply as [number, ...(string | number)[]];
  if (flat[0] === 2) return { released: true, parked: { fencingToken: Number(flat[1]), contended: flat[2] === 1 } };
  // `{0, token, fencing...}`: not held any more, yet the lock went to waiters (a lapsed last reader's release).
  const released = flat[0] === 1;
  if (flat.length < 3) return { released };
  const grant = { token: String(flat[1]), fencingToken: Number(flat[2]) };
  if (flat.length < 5) return { released, grant };
  const grants: Grant[] = [];
  for (let i = 1; i + 1 < flat.length; i += 2) grants.push({ token: String(flat[i]), fencingToken: Number(flat[i + 1]) });
  return { released, grant, grants };
}

/**
 * An acquire script's reply, `{1, fencingToken}` or `{0, pttl, fence?, joined?}`, as every lock kind's
 * scripts answer; the mutex's and a quorum master's scripts answer a taken lock with the integer
 * fencing token alone (see `toReleaseReply`).
 */
export function toAcquireReply(reply: unknown): AcquireReply {
  if (typeof reply === 'number') return { acquired: true, fencingToken: reply };
  const [ok, value, fence, joined] = reply as [number, number, number?, number?];
  if (ok === 1) return { acquired: true, fencingToken: value };
  return fence === undefined ? { acquired: false, pttl: value } : { acquired: false, pttl: value, fence, joined: joined === 1 };
}
