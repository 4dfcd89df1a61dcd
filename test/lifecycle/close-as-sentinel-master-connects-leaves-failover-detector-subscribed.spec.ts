import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSentinelDeployment, type SentinelDeployment } from '../../scripts/redis-sentinel.mjs';
import { openConnection } from '../../lib/core/stores/redis/redis-connection.js';

/**
 * Found by review (thirty-third session). Sentinel options with `failoverDetector: true` (what
 * docs/deployment.md asks for): ioredis' SentinelConnector arms its FailoverDetector when the
 * socket to the master connects (`stream.once('connect', initFailoverDetector)`), on clients of
 * its own to every sentinel, each subscribed to `+switch-master`. `disconnect()` ends a socket
 * still connecting without stopping its connect, and cleans up only a detector that exists: the
 * module's connection closed while its socket to the master was connecting (between the
 * sentinel's answer and the connect: one round trip, a TLS handshake; an application closed right
 * as it started, as a script or an end-to-end test does) had the detector armed after the close,
 * its sentinel clients subscribed (and reconnecting) for good, the process alive. With a ready
 * check, ioredis happens to clean the detector up when that check fails on the closed socket; the
 * release subscriber's connection has none (ioredis-driver.ts `subscriber()`), nor has one made
 * from options with `enableReadyCheck: false`, as here. `disconnectPromptly` (lib/core/stores/redis/drivers/ioredis-prompt-close.ts) ended the helper
 * clients open at the close only; one ioredis makes for the connection after it is now ended as
 * it is made. The close here is the one `app.close()` ends with (`openConnection`'s `close`),
 * run in the event-loop turn in which ioredis opened the socket to the master (`natMap`, which
 * ioredis asks just before, has it run next: before the poll that sees the socket connected).
 */
describe('the module connection to a Sentinel master, failoverDetector on, closed while its socket connects', () => {
  let deployment: SentinelDeployment;
  beforeAll(async () => {
    deployment = await startSentinelDeployment();
  }, 60_000);
  afterAll(() => deployment?.stop());

  /** Clients subscribed to a channel on the sentinels: the sentinels themselves subscribe on none of them. */
  async function sentinelSubscribers(): Promise<number> {
    let count = 0;
    for (const { host, port } of deployment.sentinels) {
      const sentinel = new Redis(port, host);
      try {
        count += String(await sentinel.client('LIST')).split('\n').filter((line) => / sub=[1-9]/.test(line)).length;
      } finally {
        sentinel.disconnect();
      }
    }
    return count;
  }

  it('leaves no failover subscription on the sentinels', { timeout: 60_000 }, async () => {
    let closeAsSocketOpens: () => void = () => undefined;
    const natMap = (): null => {
      setImmediate(() => closeAsSocketOpens());
      return null; // the address as the sentinel gave it
    };
    const logger = { error: () => undefined, warn: () => undefined };
    const opened = openConnection({ sentinels: deployment.sentinels, name: deployment.name, failoverDetector: true, enableReadyCheck: false, natMap } as never, logger);
    const client = opened.client as Redis;
    let connectingAtClose: boolean | undefined;
    closeAsSocketOpens = () => {
      closeAsSocketOpens = () => undefined;
      connectingAtClose = (client as unknown as { stream?: { connecting?: boolean } }).stream?.connecting;
      opened.close!();
    };
    const detectorDone = new Promise((resolve) => client.once('failoverSubscribed', resolve));
    (opened as { connect?: () => void }).connect?.();
    await detectorDone;
    // The close came while the socket connected (else this spec shows nothing).
    expect(connectingAtClose).toBe(true);
    // Before: 3, the detector's subscriptions, one per sentinel, there for good.
    expect(await sentinelSubscribers()).toBe(0);
  });
});
