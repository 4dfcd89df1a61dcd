import { once } from 'node:events';
import { createConnection, createServer, type Server, type Socket } from 'node:net';

/**
 * A TCP proxy under the test's control, between clients and Redis. `cut()` stops all traffic
 * without closing anything, as a network partition does (the clients see no error, only
 * silence); `heal()` lets it flow again, including what queued up meanwhile.
 */
export class TcpProxy {
  private readonly server: Server;
  private readonly pairs = new Set<{ client: Socket; upstream: Socket }>();
  private cutOff = false;
  private holding = false;
  port = 0;

  private constructor(private readonly target: { host: string; port: number }) {
    this.server = createServer((client) => this.accept(client));
  }

  static async start(targetPort: number): Promise<TcpProxy> {
    const proxy = new TcpProxy({ host: '127.0.0.1', port: targetPort });
    proxy.server.listen(0, '127.0.0.1');
    await once(proxy.server, 'listening');
    proxy.port = (proxy.server.address() as { port: number }).port;
    return proxy;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  cut(): void {
    this.cutOff = true;
    for (const { client, upstream } of this.pairs) {
      client.pause();
      upstream.pause();
    }
  }

  heal(): void {
    this.cutOff = false;
    for (const { client, upstream } of this.pairs) {
      client.resume();
      if (!this.holding) upstream.resume();
    }
  }

  /**
   * Holds back what Redis answers (replies, pub/sub messages) while commands still reach it and
   * run: a slow way back, where the client learns of what ran only at `flushReplies()`.
   */
  holdReplies(): void {
    this.holding = true;
    for (const { upstream } of this.pairs) upstream.pause();
  }

  flushReplies(): void {
    this.holding = false;
    for (const { upstream } of this.pairs) upstream.resume();
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
    const upstream = createConnection(this.target);
    const pair = { client, upstream };
    this.pairs.add(pair);
    client.pipe(upstream);
    upstream.pipe(client);
    if (this.cutOff) client.pause();
    if (this.cutOff || this.holding) upstream.pause();
    const drop = (): void => {
      this.pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('close', drop).on('error', drop);
    upstream.on('close', drop).on('error', drop);
  }
}
