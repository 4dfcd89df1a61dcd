import { once } from 'node:events';
import { createServer, Socket, type AddressInfo } from 'node:net';
import { describe, expect, it, onTestFinished } from 'vitest';
import { QuorumSilence } from './quorum-silence.js';

/** Busy-waits `ms`: the event loop stalled, as a long GC pause or a busy CPU does. */
function stall(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // busy
  }
}

/** A connected socket pair on loopback: what `server` writes, `client` reads at the loop's next poll. */
async function socketPair(): Promise<{ client: Socket; server: Socket }> {
  const listener = createServer();
  onTestFinished(() => void listener.close());
  listener.listen(0, '127.0.0.1');
  await once(listener, 'listening');
  const accepted = once(listener, 'connection') as Promise<[Socket]>;
  const client = new Socket();
  onTestFinished(() => void client.destroy());
  client.connect((listener.address() as AddressInfo).port, '127.0.0.1');
  const [[server]] = await Promise.all([accepted, once(client, 'connect')]);
  onTestFinished(() => void server.destroy());
  return { client, server };
}

describe('QuorumSilence', () => {
  // A master that left a round unanswered and answered during a stall of the event loop: its
  // answer sits unread in the socket when the stall ends. app.close() right then (owedAtShutdown)
  // waits for the answers of the masters that answer; settledOrSilent read the clock at once,
  // before the loop had read its sockets, found the stall to be the master's second without an
  // answer, and ended the wait (as QuorumSilence.refusal did for rounds before f13f602a).
  it('settledOrSilent waits for an answer that came in during a stall of the event loop', { timeout: 10_000 }, async () => {
    const { client, server } = await socketPair();
    const silence = new QuorumSilence(1);
    const answer = once(client, 'data').then(() => 'answered');
    silence.track(0, answer);
    silence.leftUnanswered(0);
    // The master answers; the loop stalls past SILENT_AFTER_MS before it reads that answer.
    server.write('+OK\r\n');
    stall(1_500);
    const outcome = await silence.settledOrSilent([0], answer);
    expect(outcome).toBe('answered');
  });

  it('settledOrSilent ends for a master that stays silent, without its answer', { timeout: 10_000 }, async () => {
    const silence = new QuorumSilence(1);
    silence.track(0, new Promise(() => undefined));
    silence.leftUnanswered(0);
    stall(1_100);
    expect(await silence.settledOrSilent([0], new Promise(() => undefined))).toBeUndefined();
  });
});
