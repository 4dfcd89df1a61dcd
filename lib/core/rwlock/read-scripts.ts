import { createHash } from 'node:crypto';
import type { LuaScript, RunScript } from '../stores/redis/drivers/redis-driver.js';
import { toAcquireReply, toReleaseReply, type AcquireReply, type ReleaseReply } from '../stores/lock-replies.js';
import type { ReadKeys } from './read-keys.js';
import { READ_ACQUIRE, READ_LEAVE, READ_RELEASE } from './read-lua.js';
import type { ReadStore } from './read-store.js';

type Script = LuaScript;

const script = (lua: string): Script => ({ lua, sha: createHash('sha1').update(lua).digest('hex') });
const ACQUIRE = script(READ_ACQUIRE);
const RELEASE = script(READ_RELEASE);
const LEAVE = script(READ_LEAVE);


/**
 * The read side of read-write locks over one client. `settings` gives the
 * `<fence retention>:<waiter lease>:<sharded>` argument of the lock scripts, so both sides
 * publish alike.
 */
export class ReadScripts implements ReadStore {
  constructor(
    private readonly runScript: RunScript,
    private readonly settings: (waiterLease: number) => string | Promise<string>,
  ) {}

  async acquire(keys: ReadKeys, token: string, ttl: number, enqueue: boolean, waiterLease: number): Promise<AcquireReply> {
    const settings = (await this.settings(waiterLease)) + (enqueue ? ':1' : ':0');
    return toAcquireReply(await this.run(ACQUIRE, keys, token, ttl, settings));
  }

  async release(keys: ReadKeys, token: string, waiterLease: number): Promise<ReleaseReply> {
    return toReleaseReply(await this.run(RELEASE, keys, token, await this.settings(waiterLease)));
  }

  async leave(keys: ReadKeys, token: string, ttl: number, waiterLease: number): Promise<void> {
    await this.run(LEAVE, keys, token, ttl, await this.settings(waiterLease));
  }

  private run(code: Script, keys: ReadKeys, ...args: (string | number)[]): Promise<unknown> {
    return this.runScript(code, [keys.read.shared, keys.fence, keys.queue, keys.waiters, keys.released, keys.lock, keys.read.readers], args);
  }

}
