import { Redis } from 'ioredis';
import { afterAll, beforeAll } from 'vitest';
import { startRedisServer, type RedisServer } from '../../support/redis-server.js';
import { once } from 'node:events';
import { createConnection, createServer, type Server, type Socket } from 'node:net';

/**
 * A TCP proxy in front of Redis that can lose one reply: once `armed`, the next bytes Redis
 * sends to any client are dropped and that client's connection is cut (the command ran in
 * Redis; the client never hears the answer, as when a connection drops mid-command).
 */
export class ReplyEater {
  private readonly server: Server;
  private readonly pairs = new Set<{ client: Socket; upstream: Socket }>();
  armed = false;
  eaten = 0;
  /** While set, a new connection waits for it before it reaches Redis (a reconnection held back). */
  gate?: Promise<void>;
  readonly eatenText: string[] = [];
  connections = 0;
  port = 0;

  private constructor(private readonly targetPort: number) {
    this.server = createServer((client) => this.accept(client));
  }

  static async start(targetPort: number): Promise<ReplyEater> {
    const proxy = new ReplyEater(targetPort);
    proxy.server.listen(0, '127.0.0.1');
    await once(proxy.server, 'listening');
    proxy.port = (proxy.server.address() as { port: number }).port;
    return proxy;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async close(): Promise<void> {
    for (const { client, upstream } of this.pairs) {
      client.destroy();
      upstream.destroy();
    }
    this.server.close();
    await once(this.server, 'close');
  }

  private accept(client: Socket): void {
    this.connections++;
    if (this.gate !== undefined) {
      // What the client sends meanwhile waits in its socket.
      client.pause();
      void this.gate.then(() => {
        if (client.destroyed) return;
        this.wire(client);
        client.resume();
      });
      return;
    }
    this.wire(client);
  }

  private wire(client: Socket): void {
    const upstream = createConnection({ host: '127.0.0.1', port: this.targetPort });
    const pair = { client, upstream };
    this.pairs.add(pair);
    client.on('data', (chunk) => upstream.write(chunk));
    upstream.on('data', (chunk) => {
      if (this.armed) {
        this.armed = false;
        this.eaten++;
        this.eatenText.push(chunk.toString('latin1'));
        client.destroy();
        upstream.destroy();
        return;
      }
      client.write(chunk);
    });
    const drop = (): void => {
      this.pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('close', drop).on('error', drop);
    upstream.on('close', drop).on('error', drop);
  }
}

/**
 * A redis-server behind a `ReplyEater`, started before the tests of the calling `describe` and
 * stopped after them, with an `admin` client straight to the server (not through the eater).
 * Read its parts inside the tests.
 */
export function useReplyEater(): { readonly server: RedisServer; readonly proxy: ReplyEater; readonly admin: Redis } {
  const parts = {} as { server: RedisServer; proxy: ReplyEater; admin: Redis };
  beforeAll(async () => {
    parts.server = await startRedisServer();
    parts.proxy = await ReplyEater.start(Number(new URL(parts.server.url).port));
    parts.admin = new Redis(parts.server.url);
  });
  afterAll(async () => {
    parts.admin?.disconnect();
    await parts.proxy?.close();
    await parts.server?.stop();
  });
  return parts;
}
