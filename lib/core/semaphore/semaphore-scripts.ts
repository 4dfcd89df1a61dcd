import { createHash } from 'node:crypto';
import type { LuaScript, RunScript } from '../stores/redis/drivers/redis-driver.js';
import type { SemaphoreKeys } from './semaphore-keys.js';
import { SEMAPHORE_ACQUIRE, SEMAPHORE_LEAVE, SEMAPHORE_RELEASE } from './semaphore-lua.js';
import { toGrants, type SemaphoreAcquireReply, type SemaphoreReleaseReply, type SemaphoreStore } from './semaphore-store.js';
import { toAcquireReply } from '../stores/lock-replies.js';

type Script = LuaScript;

const script = (lua: string): Script => ({ lua, sha: createHash('sha1').update(lua).digest('hex') });

const ACQUIRE = script(SEMAPHORE_ACQUIRE);
const RELEASE = script(SEMAPHORE_RELEASE);
const LEAVE = script(SEMAPHORE_LEAVE);


/**
 * The semaphore scripts over one client (a server, a Sentinel master or a Cluster:
 * every key of a call is in the semaphore's `{key}` slot). `settings` gives the
 * `<fence retention>:<waiter lease>:<sharded>` argument the mutex scripts take, so that both
 * publish on the same kind of channel and keep fencing counters alike.
 */
export class SemaphoreScripts implements SemaphoreStore {
  constructor(
    private readonly runScript: RunScript,
    private readonly settings: (waiterLease: number) => string | Promise<string>,
  ) {}

  async acquire(keys: SemaphoreKeys, token: string, ttl: number, enqueue: boolean, waiterLease: number): Promise<SemaphoreAcquireReply> {
    const settings = (await this.settings(waiterLease)) + (enqueue ? ':1' : ':0');
    const { limit, permits } = keys.semaphore;
    const reply = await this.run(ACQUIRE, keys, token, ttl, settings, limit, permits);
    const [code, value] = reply as [number, number];
    if (code === 2) return { acquired: false, pttl: -1, limitInUse: value };
    return toAcquireReply(reply);
  }

  async release(keys: SemaphoreKeys, token: string, waiterLease: number): Promise<SemaphoreReleaseReply> {
    const [ok, ...granted] = (await this.run(RELEASE, keys, token, await this.settings(waiterLease), keys.semaphore.limit)) as [number, ...(string | number)[]];
    if (ok !== 1) return { released: false, grants: [] };
    const grants = toGrants(granted);
    return { released: true, grant: grants[0], grants };
  }

  async leave(keys: SemaphoreKeys, token: string, ttl: number, waiterLease: number): Promise<void> {
    const { limit, permits } = keys.semaphore;
    await this.run(LEAVE, keys, token, ttl, await this.settings(waiterLease), limit, permits);
  }

  /** Every key of the semaphore is declared, in its `{key}` slot. */
  private run(code: Script, keys: SemaphoreKeys, ...args: (string | number)[]): Promise<unknown> {
    const { lock, fence, queue, waiters, released, semaphore } = keys;
    return this.runScript(code, [lock, fence, queue, waiters, released, semaphore.holders, semaphore.limitKey], args);
  }

}
