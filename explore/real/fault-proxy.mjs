// A TCP proxy between the explorer's workers and one Redis node, with the network faults a real
// deployment suffers. It does what test/chaos/support/tcp-proxy.ts does (`cut()`/`heal()`: a
// partition that queues traffic and shows the clients no error) and adds delay, loss and reset.
// Plain JavaScript so that `npm run explore:real` runs on Node without a TypeScript loader.
//
// TCP never loses bytes inside a connection: a lost packet is retransmitted (a delay), and a
// connection that cannot deliver dies. So "lost" here means: bytes in one direction are thrown
// away for a while (a command that took effect but whose reply never came, or a command that
// never arrived), then the connection is reset, which is what the client would eventually see.
import { once } from 'node:events';
import { createConnection, createServer } from 'node:net';

/** A command that makes a connection a subscriber's, as a RESP bulk string (any case). */
const SUBSCRIBES = /\r\n[sp]?subscribe\r\n/i;

export class FaultProxy {
  /** @param {{ host: string, port: number }} target */
  constructor(target) {
    this.target = target;
    this.pairs = new Set();
    this.cutOff = false;
    this.delayMs = 0;
    /** The link's own latency (`latency()`): what `heal()` goes back to. */
    this.latencyMs = 0;
    /** @type {'none' | 'requests' | 'replies'} */
    this.dropping = 'none';
    /** `muteMessages()`: what the subscriber connections are sent is thrown away (`mutedChunks` counts the chunks). */
    this.muted = false;
    this.mutedChunks = 0;
    this.port = 0;
    this.server = createServer((client) => this.accept(client));
  }

  static async start(targetPort, host = '127.0.0.1') {
    const proxy = new FaultProxy({ host, port: targetPort });
    proxy.server.listen(0, '127.0.0.1');
    await once(proxy.server, 'listening');
    proxy.port = proxy.server.address().port;
    return proxy;
  }

  get url() {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** Stops all traffic without closing anything, like a partition. */
  cut() {
    this.cutOff = true;
    for (const pair of this.pairs) {
      pair.client.pause();
      pair.upstream.pause();
    }
  }

  /**
   * Release messages lost while commands flow (a pub/sub client over its output-buffer limit, a
   * load balancer's idle timeout on a connection that only listens): what Redis sends a
   * subscriber connection (one that sent SUBSCRIBE, SSUBSCRIBE or PSUBSCRIBE) is thrown away, until
   * `unmuteMessages()` resets those connections. Other connections go on as before.
   */
  muteMessages() {
    this.muted = true;
  }

  /** Ends `muteMessages()`: the subscriber connections that lost bytes are reset (the client subscribes again). */
  unmuteMessages() {
    if (!this.muted) return;
    this.muted = false;
    for (const pair of [...this.pairs]) if (pair.subscriber && pair.muted) pair.close();
  }

  /** Lets traffic flow again (what queued during a cut included) and ends delays and losses. */
  heal() {
    this.unmuteMessages();
    this.cutOff = false;
    this.delayMs = this.latencyMs;
    const dropped = this.dropping !== 'none';
    this.dropping = 'none';
    // A connection that lost bytes is out of step with the protocol: it can only be reset.
    if (dropped) this.reset();
    for (const pair of this.pairs) {
      pair.client.resume();
      pair.upstream.resume();
    }
  }

  /** Delivers every chunk, in both directions and in order, `ms` late. */
  delay(ms) {
    this.delayMs = ms;
  }

  /** A link as long as `ms` each way, for good (a master in another zone): `delay()` that `heal()` keeps. */
  latency(ms) {
    this.latencyMs = ms;
    this.delayMs = ms;
  }

  /** Throws away what flows in one direction until `heal()`, which then resets the connections. */
  drop(direction) {
    this.dropping = direction;
  }

  /** Closes every connection at once, as a reset or a crashed middlebox would. */
  reset() {
    for (const pair of [...this.pairs]) pair.close();
  }

  async close() {
    this.reset();
    this.server.close();
    await once(this.server, 'close');
  }

  accept(client) {
    const upstream = createConnection(this.target);
    // Chunks wait here in order while a delay is on; each is released at its own due time.
    const queues = { requests: [], replies: [] };
    const pair = {
      client,
      upstream,
      close: () => {
        this.pairs.delete(pair);
        for (const queue of Object.values(queues)) for (const entry of queue.splice(0)) clearTimeout(entry.timer);
        client.destroy();
        upstream.destroy();
      },
    };
    this.pairs.add(pair);
    const forward = (direction, to) => (chunk) => {
      if (this.dropping === direction) return;
      // A connection that subscribes carries release messages (the client's subscriber).
      if (direction === 'requests' && !pair.subscriber && SUBSCRIBES.test(chunk.toString('latin1'))) pair.subscriber = true;
      if (direction === 'replies' && pair.subscriber && this.muted) {
        pair.muted = true;
        this.mutedChunks++;
        return;
      }
      const queue = queues[direction];
      if (this.delayMs === 0 && queue.length === 0) {
        to.write(chunk);
        return;
      }
      const entry = { chunk, timer: undefined };
      queue.push(entry);
      entry.timer = setTimeout(() => {
        // In order: a chunk leaves only with every chunk queued before it.
        entry.due = true;
        while (queue.length > 0 && queue[0].due) to.write(queue.shift().chunk);
      }, this.delayMs);
    };
    client.on('data', forward('requests', upstream));
    upstream.on('data', forward('replies', client));
    if (this.cutOff) {
      client.pause();
      upstream.pause();
    }
    client.on('close', pair.close).on('error', pair.close);
    upstream.on('close', pair.close).on('error', pair.close);
  }
}
