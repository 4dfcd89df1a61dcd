import { once } from 'node:events';
import { createConnection, createServer, type Server, type Socket } from 'node:net';

/** One proxied connection: what its client sent, and its replies while they are held. */
export interface ProxiedConnection {
  client: Socket;
  upstream: Socket;
  sent: string;
  /** Replies held back (undefined: flowing). */
  held?: Buffer[];
}

/**
 * A TCP proxy that can hold one connection's replies and close it: a reply lost after its
 * command ran (ioredis then sends the command again once reconnected; node-redis rejects it).
 */
export class ReplyHoldingProxy {
  readonly pairs = new Set<ProxiedConnection>();
  /** While set, new connections are closed at once (Redis unreachable). */
  refusing = false;
  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  static async start(target: number): Promise<ReplyHoldingProxy> {
    let proxy: ReplyHoldingProxy | undefined;
    const server = createServer((client) => proxy!.accept(client, target));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    proxy = new ReplyHoldingProxy(server, (server.address() as { port: number }).port);
    return proxy;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** The connections that sent commands on `key` and never a SUBSCRIBE command: the command connection. */
  commandPairs(key: string): ProxiedConnection[] {
    return [...this.pairs].filter((pair) => pair.sent.includes(key) && !/\*\d+\r\n\$9\r\nsubscribe\r\n/i.test(pair.sent));
  }

  async close(): Promise<void> {
    for (const pair of this.pairs) this.drop(pair);
    this.server.close();
    await once(this.server, 'close');
  }

  drop(pair: ProxiedConnection): void {
    this.pairs.delete(pair);
    pair.client.destroy();
    pair.upstream.destroy();
  }

  private accept(client: Socket, target: number): void {
    if (this.refusing) {
      client.destroy();
      return;
    }
    const upstream = createConnection({ host: '127.0.0.1', port: target });
    const pair: ProxiedConnection = { client, upstream, sent: '' };
    this.pairs.add(pair);
    client.on('data', (data: Buffer) => {
      if (pair.sent.length < 100_000) pair.sent += data.toString('latin1');
      upstream.write(data);
    });
    upstream.on('data', (data: Buffer) => {
      if (pair.held !== undefined) pair.held.push(data);
      else client.write(data);
    });
    const drop = (): void => this.drop(pair);
    client.on('close', drop).on('error', drop);
    upstream.on('close', drop).on('error', drop);
  }
}
