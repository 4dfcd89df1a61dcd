import { Injectable } from '@nestjs/common';
import { describe, expect, it } from 'vitest';
import { LockService, OnOneInstance, type LockSkippedEvent } from '../../lib/index.js';
import { sleep } from '../support/lock-app.js';
import { useRedis } from '../support/redis.js';
import { startJobApp } from './support.js';

// An @OnOneInstance lease takes the module's ttl and renewInterval when the job gives no ttl
// (lockOptions forces autoRenew, not the interval). The owner runs a tick only while its lease
// has at least a third of the ttl left (OWNER_MARGIN_SHARE). With a valid module renewInterval
// longer than two thirds of the ttl (docs/configuration.md: anything below ttl minus the drift
// margin), the lease of a healthy owner, on a healthy loopback Redis, falls below that third in
// every renewal cycle: the owner skips the ticks that land there ('owner-uncertain'), the other
// instances skip them too ('other-owner'), and those ticks run nowhere. Nothing at startup says
// so; the docs call it "its watchdog is behind".
describe('@OnOneInstance job under a module renewInterval of 90% of the ttl, one healthy instance', () => {
  useRedis();

  it('runs every call: the lease is renewed on time, so the owner is never uncertain', async () => {
    @Injectable()
    class Digest {
      runs = 0;
      @OnOneInstance()
      async send(): Promise<string> {
        this.runs++;
        return 'sent';
      }
    }
    const app = await startJobApp([Digest], { ttl: 1_500, renewInterval: 1_350 });
    const skips: LockSkippedEvent[] = [];
    app.get<LockService>(LockService).events$.subscribe((event) => event.type === 'skipped' && skips.push(event));
    const digest = app.get<Digest>(Digest);
    // A tick every 50 ms for a little over two renewal cycles (the lease always renewed on time).
    let calls = 0;
    for (let i = 0; i < 70; i++) {
      await digest.send();
      calls++;
      await sleep(50);
    }
    // Fails: about a quarter of the calls skipped with 'owner-uncertain' (those made when the
    // lease, between renewals, had less than 500 ms of its 1500 ms left).
    expect(skips.map((event) => event.reason)).toEqual([]);
    expect(digest.runs).toBe(calls);
  });
});
