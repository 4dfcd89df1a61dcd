/**
 * Defect: a call waiting for its lock inside another lock's scope (a nested `using()` /
 * `@Locked`, a job run's, a leader's term) whose outer lock is lost while it waits ends its wait
 * (LockNotAcquiredError, `cause` the outer lock's LockLostError), and the `not-acquired` event,
 * its diagnostics channel and `lock.acquire.duration` said `outcome: 'error'`, which
 * docs/observability.md defines as Redis failing or the service shutting down: an alert on
 * Redis errors fired for a lock that Redis had answered every time.
 *
 * Promise (docs/observability.md, lock-event.interface.ts): such a wait ends `aborted`, as one
 * its caller's signal ends; one that shutdown ends stays `error`.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { Histogram } from '@opentelemetry/sdk-metrics';
import { describe, expect, it } from 'vitest';
import { LeadershipService, LOCK_DIAGNOSTICS_CHANNELS, LockNotAcquiredError, LockService, type LockEvent } from '../../lib/index.js';
import { startJobApp } from '../jobs/support.js';
import { leaderThatStepsDown } from '../leader/step-down-leader.js';
import { useLockApps } from '../support/lock-app.js';
import { useLockMetrics } from '../support/lock-metrics.js';
import { useRedis } from '../support/redis.js';

describe('the outcome of a wait ended by the lock it waited within', () => {
  const redis = useRedis();
  const app = useLockApps();
  const lockMetrics = useLockMetrics();
  const results = async (lockName: string): Promise<Record<string, number>> => {
    const points = await lockMetrics.points<Histogram>('lock.acquire.duration');
    return Object.fromEntries(points.filter((point) => point.attributes['lock.name'] === lockName).map((point) => [point.attributes['lock.result'], point.value.count]));
  };
  /** The `not-acquired` messages of the diagnostics channel, for the test's length. */
  const channelMessages = (): { seen: LockEvent[]; stop(): void } => {
    const seen: LockEvent[] = [];
    const onMessage = (message: unknown): number => seen.push(message as LockEvent);
    subscribe(LOCK_DIAGNOSTICS_CHANNELS['not-acquired'], onMessage);
    return { seen, stop: () => unsubscribe(LOCK_DIAGNOSTICS_CHANNELS['not-acquired'], onMessage) };
  };

  it('is aborted, not error, when the outer lock is lost: in the event, the channel and the metric', async () => {
    lockMetrics.enable();
    const { locks } = await app();
    const events: LockEvent[] = [];
    locks.events$.subscribe((event) => events.push(event));
    const channel = channelMessages();
    const other = await locks.acquire('inner', { ttl: '60s' });
    const outer = locks.using('outer', () => locks.using('inner', () => 'ran', { name: 'inner', waitTimeout: '60s' }), { ttl: '1s' });
    await expect.poll(() => events.some((event) => event.type === 'waiting' && event.key === 'inner'), { timeout: 5_000 }).toBe(true);
    // The outer lock's next renewal is refused: lost.
    await redis.del('lock:{outer}');
    const error = await outer.then(() => undefined, (thrown: unknown) => thrown);
    channel.stop();
    await other.release();
    expect(error).toBeInstanceOf(LockNotAcquiredError);
    const ended = events.find((event) => event.type === 'not-acquired' && event.key === 'inner');
    // Failed: 'error' (and { error: 1 } in the metric and the channel).
    expect(ended).toMatchObject({ outcome: 'aborted', afterWaiting: true });
    expect(channel.seen.filter((event) => event.key === 'inner')).toMatchObject([{ outcome: 'aborted' }]);
    expect(await results('inner')).toEqual({ aborted: 1 });
  }, 30_000);

  it('is aborted for a multi-key call, counted once', async () => {
    lockMetrics.enable();
    const { locks } = await app();
    const events: LockEvent[] = [];
    locks.events$.subscribe((event) => events.push(event));
    const other = await locks.acquire('inner-b', { ttl: '60s' });
    const outer = locks.using('outer-of-keys', () => locks.using(['inner-a', 'inner-b'], () => 'ran', { name: 'inner-keys', waitTimeout: '60s' }), { ttl: '1s' });
    await expect.poll(() => events.some((event) => event.type === 'waiting' && event.key === 'inner-b'), { timeout: 5_000 }).toBe(true);
    await redis.del('lock:{outer-of-keys}');
    const error = await outer.then(() => undefined, (thrown: unknown) => thrown);
    await other.release();
    expect(error).toBeInstanceOf(LockNotAcquiredError);
    expect(events.find((event) => event.type === 'not-acquired' && event.key === 'inner-b')).toMatchObject({ outcome: 'aborted' });
    // Failed: { error: 1 }.
    expect(await results('inner-keys')).toEqual({ aborted: 1 });
  }, 30_000);

  it('is aborted when the leader whose term the call waited in steps down', async () => {
    lockMetrics.enable();
    const { Leader, fail } = leaderThatStepsDown('metrics-step-down');
    const app = await startJobApp([Leader]);
    const leadership = app.get(LeadershipService);
    const locks = app.get(LockService);
    const events: LockEvent[] = [];
    locks.events$.subscribe((event) => events.push(event));
    await expect.poll(() => leadership.isLeader('metrics-step-down'), { timeout: 5_000 }).toBe(true);
    const other = await locks.acquire('term-batch', { ttl: '60s' });
    const work = leadership.runAsLeader('metrics-step-down', () => locks.using('term-batch', () => 'ran', { name: 'term-batch', waitTimeout: '60s' }));
    const settled = work.then(() => undefined, (thrown: unknown) => thrown);
    await expect.poll(() => events.some((event) => event.type === 'waiting' && event.key === 'term-batch'), { timeout: 5_000 }).toBe(true);
    fail();
    expect(await settled).toBeInstanceOf(LockNotAcquiredError);
    await other.release();
    // Failed: 'error'.
    expect(events.find((event) => event.type === 'not-acquired' && event.key === 'term-batch')).toMatchObject({ outcome: 'aborted' });
    expect(await results('term-batch')).toEqual({ aborted: 1 });
  }, 30_000);

  it('stays error when shutdown ends the outer lock, as shutdown ends every wait', async () => {
    lockMetrics.enable();
    const closing = await app();
    const holder = await app();
    const events: LockEvent[] = [];
    closing.locks.events$.subscribe((event) => events.push(event));
    const other = await holder.locks.acquire('inner-at-close', { ttl: '60s' });
    const outer = closing.locks.using('outer-at-close', () => closing.locks.using('inner-at-close', () => 'ran', { name: 'inner-at-close', waitTimeout: '60s' }));
    const settled = outer.then(() => undefined, (thrown: unknown) => thrown);
    await expect.poll(() => events.some((event) => event.type === 'waiting' && event.key === 'inner-at-close'), { timeout: 5_000 }).toBe(true);
    await closing.close();
    expect(await settled).toBeInstanceOf(LockNotAcquiredError);
    await other.release();
    expect(events.find((event) => event.type === 'not-acquired' && event.key === 'inner-at-close')).toMatchObject({ outcome: 'error' });
    expect(await results('inner-at-close')).toEqual({ error: 1 });
  }, 30_000);
});
