import type { LockBackend } from '../../lib/core/engine/lock-backend.js';
import type { RedisClient } from '../../lib/core/stores/redis/drivers/redis-client.js';
import type { LockStore, RenewalPart, RenewalRequest } from '../../lib/core/stores/lock-store.js';
import { MemoryNotifier } from '../../lib/core/stores/memory/memory-notifier.js';
import type { Clock } from '../../lib/core/time/clock.js';
import type { EventOwner, VirtualScheduler } from './virtual-time.js';

/** What the fault injector decides for one command or one message. */
export interface CommandFate {
  /** `before`: never reaches the store; `after`: took effect, the reply is lost. The caller gets a connection error. */
  lost?: 'before' | 'after';
  /** Extra delay of the reply, ms. */
  delay: number;
  /** Extra delay of the command on its way to the store, ms (later commands of the instance queue behind it). */
  delayBefore?: number;
  /**
   * A frozen connection (see `Frozen` in plan.ts): with `lost` `after` the command takes effect,
   * with `before` it never reaches the store; its reply (or its connection error) comes `hold` ms
   * late, holding back the instance's later replies as one connection does, or `never` (no error
   * either: a cut that resets nothing), when the instance's later commands are answered as usual.
   */
  frozen?: { hold: number; never: boolean };
  /** Told when the reply (or the connection error) is scheduled to reach the instance, and when (a probe's record). */
  replied?: (at: number) => void;
}

export interface FaultDecider {
  /** `lockKey`: the lock's key a script of one lock runs on (an attempt, a renewal, a release). */
  command(instance: SimNode, op: string, lockKey?: string): CommandFate;
  message(instance: SimNode): 'ok' | 'lost' | 'duplicated';
  /** Network latency of one hop, ms (small and random). */
  latency(): number;
  trace(instance: SimNode | undefined, text: string): void;
  /** A command of `node` whose reply never comes (a frozen connection, see `CommandFate.frozen`). */
  neverAnswered?(node: SimNode, op: string, token: string | undefined): void;
  /** The store answered an attempt of `token` with busy. */
  busy(token: string): void;
  /** Whether the store holds data of another kind under `lockKey` (a hash where the lock's string goes): its scripts are refused. */
  foreignData?(lockKey: string): boolean;
  /**
   * Whether Redis refuses `node`'s `op` on `lockKey` as it refuses a user whose ACL no longer
   * covers the key (NOPERM): the script is refused in the store, its reply on its way as any.
   */
  noPermission?(node: SimNode, op: string, lockKey: string): boolean;
  /**
   * Whether `node`'s client was closed by its owner while the application runs (ioredis' quit()
   * or disconnect() on a client handed in): the engine, asking after a failure, finds it closed.
   */
  clientClosed?(node: SimNode): boolean;
  /**
   * Whether the closed client of `node` refuses its `op` on `lockKey` ("Connection is closed."):
   * only the probe's key's commands are (see `World.closedClients`), refused before they touch
   * the store, their refusal on its way back as any reply.
   */
  closedClientRefuses?(node: SimNode, op: string, lockKey: string): boolean;
  /** A record to fill for an acquire attempt of `node` on `lockKey`, when that key's attempts are watched (see `AttemptRecord`). */
  watchAttempt?(node: SimNode, lockKey: string): AttemptRecord | undefined;
}

/** What became of one watched acquire attempt: what the store answered and when its reply reaches the instance. */
export interface AttemptRecord {
  sentAt: number;
  /** `busy`: the store had the key held by someone else when it ran; `lost`: no reply (before or after taking effect). */
  outcome?: 'busy' | 'acquired' | 'lost' | 'error';
  /** When the reply (or the connection error) is scheduled to reach the instance. */
  replyAt?: number;
}

/** A simulated process as the network sees it. */
export interface SimNode extends EventOwner {
  notifier?: MemoryNotifier;
  /** Owner tokens it sent a release or a leave for: it gave their locks up (see `World.checkHandedBack`). */
  readonly gaveBack?: Set<string>;
}

/** The ops that give a token's lock up (a holder's release, a parked lock's, a waiter's leave). */
const GIVE_BACKS = new Set(['release', 'leave', 'semaphore.release', 'semaphore.leave', 'read.release', 'read.leave']);

/** The error a command gets when its connection drops (the reply, or the command itself, is lost). */
export class ConnectionLostError extends Error {
  constructor(op: string) {
    super(`connection lost (simulated) during ${op}`);
  }
}

/** Redis' refusal of a script that touches a key holding another type (Redis 7's text). */
export class WrongTypeError extends Error {
  constructor() {
    super('WRONGTYPE Operation against a key holding the wrong kind of value script: acquire');
  }
}

/** Redis' refusal of a script on a key the ACL user may not touch (Redis 7's text). */
export class NoPermissionError extends Error {
  constructor() {
    super('NOPERM this user has no permissions to access one of the keys used as arguments');
  }
}

/** What ioredis rejects a command with once its owner closed the client (quit(), disconnect()). */
export class ClientClosedError extends Error {
  constructor() {
    super('Connection is closed.');
  }
}

/**
 * The client an instance's store is behind, as the engine sees it when it asks, after a failure,
 * whether every client was closed by its owner (`clientsClosed`): shaped as an ioredis client,
 * read as closed while `FaultDecider.clientClosed` says so (ioredis' `manuallyClosing`, which
 * quit() and disconnect() set; its status stays `ready` here, as the driver refuses a client
 * handed in with status `end`). Nothing is sent through it.
 */
function simClient(closed: () => boolean): RedisClient {
  return {
    defineCommand: () => undefined,
    options: {},
    status: 'ready',
    get manuallyClosing(): boolean {
      return closed();
    },
  } as unknown as RedisClient;
}

/**
 * Between the instances and the one store: each instance's commands reach the store in the
 * order they were sent and their replies come back in that order (one connection each), after a
 * small latency, unless the fault injector delays or loses them. Release messages travel on a
 * connection of their own, so they may overtake replies, and may be lost or duplicated.
 */
export class Network {
  private readonly lastArrival = new Map<SimNode, number>();
  private readonly lastReply = new Map<SimNode, number>();
  private readonly lastMessage = new Map<SimNode, number>();
  /** Instances subscribed to release messages. */
  readonly subscribers = new Set<SimNode>();

  constructor(
    private readonly scheduler: VirtualScheduler,
    private readonly faults: FaultDecider,
  ) {}

  /** When `node`'s last command sent so far reaches the store: a command sent now arrives no earlier. */
  queuedUntil(node: SimNode): number {
    return this.lastArrival.get(node) ?? 0;
  }

  /** When the last reply (or connection error) scheduled so far reaches its instance. */
  lastReplyAt(): number {
    return Math.max(0, ...this.lastReply.values());
  }

  /** Sends one command of `node`: `invoke` runs on the store when it arrives. */
  call<T>(node: SimNode, op: string, invoke: () => Promise<T>, token?: string, watched?: AttemptRecord, lockKey?: string): Promise<T> {
    if (token !== undefined && GIVE_BACKS.has(op)) node.gaveBack?.add(token);
    return new Promise<T>((resolve, reject) => {
      const fate = this.faults.command(node, op, lockKey);
      const arrival = Math.max(this.scheduler.now + this.faults.latency() + (fate.delayBefore ?? 0), this.lastArrival.get(node) ?? 0);
      this.lastArrival.set(node, arrival);
      // Its reply comes after it arrives: counted from now, so that the checks that wait for every held-back reply wait for it too.
      if (fate.delayBefore !== undefined) this.lastReply.set(node, Math.max(arrival, this.lastReply.get(node) ?? 0));
      const reply = (settle: () => void, extra: number): void => {
        const at = Math.max(this.scheduler.now + this.faults.latency() + extra, this.lastReply.get(node) ?? 0);
        this.lastReply.set(node, at);
        if (watched !== undefined) watched.replyAt = at;
        fate.replied?.(at);
        // Input from outside the process: read in the event loop's poll phase (see `SimEvent.io`).
        this.scheduler.schedule(at, settle, node, true);
      };
      const frozen = fate.frozen;
      // No reply ever: nothing is scheduled, and the instance's later replies do not queue behind it.
      const never = (): void => {
        this.faults.trace(node, `${op}${token === undefined ? '' : ` ${token}`}: its reply never comes (connection frozen)`);
        if (watched !== undefined) watched.outcome = 'lost';
        this.faults.neverAnswered?.(node, op, token);
      };
      this.scheduler.schedule(arrival, () => {
        if (frozen !== undefined && fate.lost === 'before') {
          this.faults.trace(node, `${op} never reaches the store (connection frozen)`);
          if (frozen.never) never();
          else {
            if (watched !== undefined) watched.outcome = 'lost';
            reply(() => reject(new ConnectionLostError(op)), frozen.hold);
          }
          return;
        }
        if (fate.lost === 'before') {
          this.faults.trace(node, `${op} lost before reaching the store`);
          if (watched !== undefined) watched.outcome = 'lost';
          reply(() => reject(new ConnectionLostError(op)), fate.delay);
          return;
        }
        invoke().then(
          (value) => {
            this.faults.trace(node, `store ran ${op}${token === undefined ? '' : ` ${token}`}: ${summary(value)}`);
            const busy = token !== undefined && op.endsWith('acquire') && (value as { acquired?: boolean }).acquired === false;
            if (busy) this.faults.busy(token);
            if (watched !== undefined) watched.outcome = fate.lost === 'after' ? 'lost' : busy ? 'busy' : 'acquired';
            if (frozen !== undefined) {
              if (frozen.never) never();
              else {
                this.faults.trace(node, `${op} reply held back ${frozen.hold} ms (connection frozen)`);
                if (watched !== undefined) watched.outcome = busy ? 'busy' : 'acquired';
                reply(() => resolve(value), frozen.hold);
              }
            } else if (fate.lost === 'after') {
              this.faults.trace(node, `${op} took effect; its reply is lost`);
              reply(() => reject(new ConnectionLostError(op)), fate.delay);
            } else reply(() => resolve(value), fate.delay);
          },
          (error: unknown) => {
            if (watched !== undefined) watched.outcome = 'error';
            if (frozen?.never === true) never();
            else reply(() => reject(error), frozen?.hold ?? fate.delay);
          },
        );
      });
    });
  }

  /** What the store PUBLISHes: to every subscribed instance, each on its own connection. */
  publish(channel: string, message: string): void {
    for (const node of this.subscribers) {
      if (node.crashed) continue;
      const fate = this.faults.message(node);
      if (fate === 'lost') {
        this.faults.trace(node, `release message ${message} lost`);
        continue;
      }
      const copies = fate === 'duplicated' ? 2 : 1;
      for (let copy = 0; copy < copies; copy++) {
        const at = Math.max(this.scheduler.now + this.faults.latency(), this.lastMessage.get(node) ?? 0);
        this.lastMessage.set(node, at);
        this.scheduler.schedule(at, () => node.notifier?.receive(channel, message), node, true);
      }
    }
  }

  /** The backend one instance's `LockService` talks to: the shared store behind this network. */
  backend(node: SimNode, store: LockStore, clock: Clock, shutdownClock: Clock): LockBackend {
    const notifier = new MemoryNotifier();
    node.notifier = notifier;
    this.subscribers.add(node);
    const call = <T>(op: string, invoke: () => Promise<T>, token?: string, watched?: AttemptRecord, lockKey?: string): Promise<T> => this.call(node, op, invoke, token, watched, lockKey);
    // Run in the store as the command arrives: a refusal the ACL makes there (see `noPermission`),
    // or the closed client's, which sent nothing (see `closedClientRefuses`).
    const refused = (op: string, lockKey: string): Promise<never> | undefined => {
      if (this.faults.closedClientRefuses?.(node, op, lockKey) === true) return Promise.reject(new ClientClosedError());
      return this.faults.noPermission?.(node, op, lockKey) === true ? Promise.reject(new NoPermissionError()) : undefined;
    };
    const wrapped: LockStore = {
      queues: store.queues,
      barges: store.barges,
      semaphores: store.semaphores && wrapMethods(store.semaphores, 'semaphore.', call),
      readers: store.readers && wrapMethods(store.readers, 'read.', call),
      acquire: (...args) => {
        const watched = this.faults.watchAttempt?.(node, args[0].lock);
        if (watched !== undefined) watched.sentAt = this.scheduler.now;
        return call('acquire', () => (this.faults.foreignData?.(args[0].lock) === true ? Promise.reject(new WrongTypeError()) : refused('acquire', args[0].lock) ?? store.acquire(...args)), args[1] as string, watched, args[0].lock);
      },
      renew: (...args) => call('renew', () => refused('renew', args[0]) ?? store.renew(...args), args[1] as string, undefined, args[0]),
      renewBatch: (requests: RenewalRequest[]): RenewalPart[] => [
        // The in-memory store answers a batch in one part, refused whole as one script is.
        { indexes: requests.map((_, i) => i), outcomes: call('renewBatch', () => requests.reduce<Promise<never> | undefined>((no, request) => no ?? refused('renewBatch', request.lockKey), undefined) ?? store.renewBatch(requests)[0]!.outcomes) },
      ],
      release: (...args) => call('release', () => refused('release', args[0].lock) ?? store.release(...args), args[1] as string, undefined, args[0].lock),
      leave: (...args) => call('leave', () => refused('leave', args[0].lock) ?? store.leave(...args), args[1] as string),
      exists: (...args) => call('exists', () => store.exists(...args)),
      inspect: (...args) => call('inspect', () => store.inspect(...args)),
    };
    return {
      store: wrapped,
      notifier,
      clients: [simClient(() => this.faults.clientClosed?.(node) === true)],
      clock,
      shutdownClock,
      close: () => {
        notifier.close();
        this.subscribers.delete(node);
      },
    };
  }
}

/** The semaphore's and the read side's scripts (acquire, release, leave), each through the network. */
function wrapMethods<T extends object>(target: T, prefix: string, call: <R>(op: string, invoke: () => Promise<R>, token?: string) => Promise<R>): T {
  const wrapped: Record<string, unknown> = {};
  for (const name of ['acquire', 'release', 'leave']) {
    const value = (target as Record<string, unknown>)[name] as (...a: unknown[]) => Promise<unknown>;
    wrapped[name] = (...args: unknown[]) => call(prefix + name, () => value.apply(target, args), args[1] as string);
  }
  return wrapped as T;
}

function summary(value: unknown): string {
  if (value === undefined) return 'ok';
  return JSON.stringify(value);
}
