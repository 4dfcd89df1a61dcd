import { createHash } from 'node:crypto';
import { withoutArguments, type LuaScript, type RunScript } from '../stores/redis/drivers/redis-driver.js';
import type { SemaphoreKeys } from './semaphore-keys.js';
import { SEMAPHORE_ACQUIRE, SEMAPHORE_LEAVE, SEMAPHORE_RELEASE } from './semaphore-lua.js';
import { toGrants, type SemaphoreAcquireReply, type SemaphoreReleaseReply, type SemaphoreStore } from './semaphore-store.js';
import { toAcquireReply } from '../stores/lock-replies.js';

const script = (lua: string): LuaScript => ({ lua, sha: createHash('sha1').update(lua).digest('hex') });

/** Each script twice: every key declared (Cluster), or the permit alone (see `semaphore-lua.ts`). */
const SCRIPTS = {
  declared: { acquire: script(SEMAPHORE_ACQUIRE.declared), release: script(SEMAPHORE_RELEASE.declared), leave: script(SEMAPHORE_LEAVE.declared) },
  derived: { acquire: script(SEMAPHORE_ACQUIRE.derived), release: script(SEMAPHORE_RELEASE.derived), leave: script(SEMAPHORE_LEAVE.derived) },
};

/**
 * The semaphore scripts over one client (a server, a Sentinel master or a Cluster:
 * every key of a call is in the semaphore's `{key}` slot). `settings` gives the
 * `<fence retention>:<waiter lease>:<sharded>` argument the mutex scripts take, so that both
 * publish on the same kind of channel and keep fencing counters alike; the call's own numbers
 * (enqueue, limit, permits) follow it in the same argument: ioredis spends about 0.1 us of CPU
 * per argument (bench/NOTES.md, change 5). `declareAll`: on a Cluster every key is declared,
 * elsewhere the permit alone, which spares the client six arguments per call.
 */
export class SemaphoreScripts implements SemaphoreStore {
  private readonly scripts: (typeof SCRIPTS)['declared'];

  constructor(
    private readonly runScript: RunScript,
    private readonly settings: (waiterLease: number) => string,
    private readonly declareAll: boolean,
    /** HDEL on the same client (`RedisDriver.deleteField`), for the release of a holder alone. */
    private readonly deleteField: (key: string, field: string) => Promise<number>,
    /** Whether the store was closed (`app.close()` ran): see `release`. */
    private readonly closed: () => boolean = () => false,
  ) {
    this.scripts = declareAll ? SCRIPTS.declared : SCRIPTS.derived;
  }

  acquire(keys: SemaphoreKeys, token: string, ttl: number, enqueue: boolean, waiterLease: number): Promise<SemaphoreAcquireReply> {
    const { limit, permits } = keys.semaphore;
    const call = `${this.settings(waiterLease)}:${enqueue ? 1 : 0}:${limit}:${permits}`;
    return this.run(this.scripts.acquire, keys, [token, ttl, call]).then((reply) => {
      // A holder alone is answered with its fencing token alone (see ACQUIRE_LONE).
      if (typeof reply === 'number') {
        keys.semaphore.lone = true;
        return { acquired: true, fencingToken: reply };
      }
      const [code, value] = reply as [number, number];
      if (code === 2) return { acquired: false, pttl: -1, limitInUse: value };
      if (code === 1) keys.semaphore.lone = false;
      return toAcquireReply(reply);
    });
  }

  /**
   * A holder alone (see LONE in `semaphore-lua.ts`) deletes its field with a plain `HDEL`: 1 proves
   * it still held it, and nobody else held or waited (any other caller would have unfolded it).
   * Otherwise, and for every other holder, the release script; but not once the store was closed:
   * an `HDEL` written to a frozen server is answered after `app.close()`, and nothing may be sent
   * then on a client the application handed in and keeps open. What the holder's entry counts
   * then ends with its lease, as its permit does.
   */
  release(keys: SemaphoreKeys, token: string, waiterLease: number): Promise<SemaphoreReleaseReply> {
    if (keys.semaphore.lone !== true) return this.releaseByScript(keys, token, waiterLease);
    keys.semaphore.lone = false;
    return this.deleteField(keys.semaphore.holders, `!${token}`).then(
      (deleted) => {
        if (deleted === 1) return { released: true, grants: [] };
        return this.closed() ? { released: false, grants: [] } : this.releaseByScript(keys, token, waiterLease);
      },
      // Not a script's error (`scriptError` leaves their arguments out): the field is the token.
      (error: unknown) => {
        withoutArguments(error);
        throw error;
      },
    );
  }

  private releaseByScript(keys: SemaphoreKeys, token: string, waiterLease: number): Promise<SemaphoreReleaseReply> {
    return this.run(this.scripts.release, keys, [token, `${this.settings(waiterLease)}:${keys.semaphore.limit}`]).then((reply) => {
      // `{0, token, fencing...}`: the caller's permit was gone, and the permits its entry counted went to waiters.
      const [ok, ...granted] = reply as [number, ...(string | number)[]];
      const grants = toGrants(granted);
      return { released: ok === 1, grant: grants[0], grants };
    });
  }

  async leave(keys: SemaphoreKeys, token: string, ttl: number, waiterLease: number): Promise<void> {
    const { limit, permits } = keys.semaphore;
    await this.run(this.scripts.leave, keys, [token, ttl, `${this.settings(waiterLease)}:${limit}:${permits}`]);
  }

  private run(code: LuaScript, keys: SemaphoreKeys, args: (string | number)[]): Promise<unknown> {
    if (!this.declareAll) return this.runScript(code, [keys.lock], args);
    const { lock, fence, queue, waiters, released, semaphore } = keys;
    return this.runScript(code, [lock, fence, queue, waiters, released, semaphore.holders, semaphore.due], args);
  }
}
