import type { Duplex } from 'node:stream';

/** A connection as ioredis (and iovalkey) exposes it: a `Redis`, or each node of a `Cluster`. */
export interface BatchedConnection {
  readonly status: string;
  readonly stream?: Duplex;
}

/**
 * How many commands at most wait for one write. Written all at once at the end of the tick, a
 * burst of 50 made Node and Redis take turns: Redis idle while Node wrote them, Node idle while
 * Redis ran them, fewer locks per second for half the CPU (bench/NOTES.md, "One write per
 * few commands"). A few at a time keep both busy.
 */
export const COMMANDS_PER_WRITE = 8;

/**
 * Gathers the commands the library sends within one tick of the event loop into few writes.
 * ioredis writes each command to the socket at once, one system call each: with many locks
 * taken and released together (many loops, a burst of `@Locked` calls) that was half of the
 * process's CPU per lock, and Redis read each command on its own too. The first command of a
 * tick still goes out at once (a lone caller waits for nothing); the ones after it on the same
 * tick are held (`cork()`) and written `COMMANDS_PER_WRITE` at a time, the rest when the tick's
 * promise continuations have run (`process.nextTick`). node-redis gathers every tick's commands
 * this way on its own. The order of the commands and of their replies is unchanged; a command
 * of the application's own sent meanwhile on the same client goes out in the same write. A
 * connection not ready is left alone (ioredis queues commands offline then), and nothing
 * outlives the tick: no timer, no handle.
 *
 * The held commands also go out once the tick's first command is answered, should the
 * `nextTick` never run: Jest's default fake timers fake `process.nextTick` for the code under
 * test (not for Node's sockets), and drop the queued ticks when the real ones come back. Held
 * until then, the library's commands and the application's own on the shared client would wait
 * for a `jest.runAllTicks()`, or for good. A reply comes back on a later turn of the event loop,
 * after every real tick, so that fallback never fires first on its own.
 */
export class TickWriteBatching {
  /** Whether a command went out on this tick (the flush is scheduled). */
  private open = false;
  /** The streams held since the tick's second command, and how many commands wait in them. */
  private corked: Duplex[] | undefined;
  private waiting = 0;
  /** The reply to the tick's first command (see `sent`), and whether that command is on its way. */
  private first: PromiseLike<unknown> | undefined;
  private firstOnItsWay = false;
  /** Counts the ticks flushed: a fallback flushes only the tick it was set for. */
  private ticks = 0;

  constructor(private readonly connections: () => Iterable<BatchedConnection>) {}

  /** Called right before a command goes to the client (then `sent` with its reply). */
  hold(): void {
    if (!this.open) {
      this.open = true;
      this.firstOnItsWay = true;
      process.nextTick(this.flush);
      return;
    }
    if (this.corked === undefined) {
      this.corked = this.cork();
      this.waiting = 1;
      this.flushOnFirstReply();
      return;
    }
    if (this.waiting++ < COMMANDS_PER_WRITE) return;
    // A full write's worth waits: out it goes, and the next commands gather behind it.
    for (const stream of this.corked) {
      stream.uncork();
      stream.cork();
    }
    this.waiting = 1;
  }

  /** The reply of the command `hold()` was called for; returns it. */
  sent<T>(reply: Promise<T>): Promise<T> {
    if (this.firstOnItsWay) {
      this.firstOnItsWay = false;
      this.first = reply;
    }
    return reply;
  }

  /** Only a tick with held commands pays for it: one `then` on its first reply. */
  private flushOnFirstReply(): void {
    const first = this.first;
    if (first === undefined) return;
    const tick = this.ticks;
    const flush = (): void => {
      if (this.ticks === tick) this.flush();
    };
    first.then(flush, flush);
  }

  private cork(): Duplex[] {
    const corked: Duplex[] = [];
    for (const connection of this.connections()) {
      const stream = connection.stream;
      if (connection.status !== 'ready' || stream === undefined || !stream.writable) continue;
      stream.cork();
      corked.push(stream);
    }
    return corked;
  }

  private readonly flush = (): void => {
    const corked = this.corked;
    this.ticks++;
    this.open = false;
    this.corked = undefined;
    this.first = undefined;
    this.firstOnItsWay = false;
    // Each stream held once: one uncork each (a closed one ignores it).
    if (corked !== undefined) for (const stream of corked) stream.uncork();
  };
}
