import { Redis } from 'ioredis';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedisCluster, type RedisCluster } from '../../scripts/redis-cluster.mjs';
import { startRedisServer, type RedisServer } from '../../scripts/redis-server.mjs';
import { ChaosWorker } from '../chaos/support/chaos-worker.js';
import { createLockApp, type LockApp } from '../support/lock-app.js';
import { redisUrl } from '../support/redis.js';
import { check, trace, type History, type HistoryEvent } from '../../explore/real/checker.mjs';
import { FaultProxy } from '../../explore/real/fault-proxy.mjs';
import { LostHolders } from '../../explore/real/lost-holders.mjs';
import { formatResult, keyClass, lockOfKey, makeSchedule, readHistory, runSchedule, startEnvironment, storeSnapshot, Worker, type Environment, type RunResult } from '../../explore/real/runner.mjs';

interface Section {
  p?: string;
  kind?: string;
  key?: string;
  invoke: number;
  enter?: number;
  token?: number;
  aborted?: boolean;
  lost?: number;
  exit?: number;
  ok?: number;
  fail?: { t: number; outcome: string };
  limit?: number;
  tick?: number;
}

/** The events one call of a worker records, as worker.mjs writes them. */
function call(sid: string, s: Section): HistoryEvent[] {
  const p = s.p ?? sid.split('.')[0]!;
  const events: HistoryEvent[] = [{ ev: 'invoke', p, sid, key: s.key ?? 'k', kind: s.kind ?? 'mutex', limit: s.limit, t: s.invoke }];
  if (s.enter !== undefined) events.push({ ev: 'enter', p, sid, token: s.token, aborted: s.aborted ?? false, tick: s.tick, t: s.enter });
  if (s.lost !== undefined) events.push({ ev: 'lost', p, sid, reason: 'expired', t: s.lost });
  if (s.exit !== undefined) events.push({ ev: 'exit', p, sid, t: s.exit });
  if (s.ok !== undefined) events.push({ ev: 'ok', p, sid, t: s.ok });
  if (s.fail !== undefined) events.push({ ev: 'fail', p, sid, error: 'LockNotAcquiredError', outcome: s.fail.outcome, t: s.fail.t });
  return events;
}

/**
 * The first event of a worker's history file (JSON lines) that `what` accepts, once it is there:
 * the regressions below wait for what the workers recorded, not for times a loaded machine may
 * overrun (20 s at most, to end a hang).
 */
/**
 * The first event of `file` that `what` picks, polled until there is one. Each poll reads the whole
 * file again and asks `what` of every event from the first, so a predicate that counts must count
 * from `all` (the events before `index`), never in a variable of its own, which a second poll would
 * raise again (a CI run passed a tick that had not settled that way).
 */
async function recorded(file: string, what: (event: HistoryEvent, index: number, all: HistoryEvent[]) => boolean): Promise<HistoryEvent> {
  for (let i = 0; ; i++) {
    const lines = existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : [];
    const event = lines.map((line) => JSON.parse(line) as HistoryEvent).find(what);
    if (event) return event;
    if (i > 2_000) throw new Error(`${file} never recorded what the test waits for`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const register = (seq: number, sid: string, token: number, accepted: boolean, key = 'k'): HistoryEvent => ({ ev: 'register', seq, key, token, sid, accepted });
/**
 * The schedules that broke an invariant, each with its replay command and its whole history: a
 * run under load may not break it again on replay (seed 610002 failed once in 23 replays with
 * other work on the machine), and CI keeps the output of a failed run, not its files. The
 * history goes to stdout (vitest prints a failed test's output), the summary to the assertion.
 */
function failures(results: RunResult[], replay: (r: RunResult) => string): string {
  const broken = results.filter((r) => r.violations.length > 0);
  for (const r of broken) process.stdout.write(`history of seed ${r.schedule.seed} (${replay(r)}):\n${trace(r.history).map((line) => `    ${line}\n`).join('')}`);
  return broken.map((r) => `${formatResult(r)}\n  replay: ${replay(r)}`).join('\n');
}

const invariants = (events: HistoryEvent[], extra: Omit<History, 'events'> = {}): string[] => check({ events, ...extra }).map((v) => v.invariant);

describe("the real-Redis runner's store scan", () => {
  // Greedy seed 1168 once reported the barging waiters' flag as a lock its worker left behind.
  it('reads no owner token from the barging waiters\' flag (:wanted), and still reads a lock\'s owner', async () => {
    const url = new URL(redisUrl());
    const redis = new Redis(Number(url.port), url.hostname); // db 0: where the scan looks
    const key = `scan-${process.pid}-${Date.now()}:greedy`;
    try {
      await redis.set(`lock:{${key}}:wanted`, '1', 'PX', 5_000);
      await redis.set(`lock:{${key}}`, 'owner-token', 'PX', 5_000);
      const found = await storeSnapshot([{ port: Number(url.port), host: url.hostname }], key);
      const tokensOf = (name: string) => found.find((e) => e.key === name)?.tokens;
      expect(tokensOf(`lock:{${key}}:wanted`)).toEqual([]);
      expect(tokensOf(`lock:{${key}}`)).toEqual(['owner-token']);
    } finally {
      await redis.del(`lock:{${key}}:wanted`, `lock:{${key}}`);
      await redis.quit();
    }
  });
});

describe("the real-Redis runner's store scan of a Cluster mid-failover", () => {
  // Seed 39203 of --freeze once left a Cluster down a while (a master frozen past its node
  // timeout): the scan's first key read threw CLUSTERDOWN and failed the whole run.
  it('waits out CLUSTERDOWN answers and reads the keys once the slots are served again', { timeout: 30_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'scan-clusterdown-'));
    const server = await startRedisServer(['--cluster-enabled', 'yes', '--cluster-config-file', join(dir, 'nodes.conf')]);
    const redis = new Redis(server.port, '127.0.0.1');
    const key = `scan-${process.pid}-${Date.now()}:mutex`;
    try {
      await redis.call('CLUSTER', 'ADDSLOTSRANGE', '0', '16383');
      await expect.poll(async () => /cluster_state:ok/.test(String(await redis.call('CLUSTER', 'INFO'))), { timeout: 10_000 }).toBe(true);
      await redis.set(`lock:{${key}}`, 'owner-token', 'PX', 20_000);
      // Its slots taken away: every read of a key answers CLUSTERDOWN, as a Cluster's does while a failed master has no replica to promote.
      await redis.call('CLUSTER', 'DELSLOTSRANGE', '0', '16383');
      const refusals = async (): Promise<number> => Number(/errorstat_CLUSTERDOWN:count=(\d+)/.exec(String(await redis.info('errorstats')))?.[1] ?? 0);
      const scan = storeSnapshot([{ port: server.port, host: '127.0.0.1' }], key);
      let settled = false;
      scan.then(() => (settled = true), () => (settled = true));
      await expect.poll(refusals, { timeout: 10_000 }).toBeGreaterThan(0);
      expect(settled).toBe(false);
      await redis.call('CLUSTER', 'ADDSLOTSRANGE', '0', '16383');
      const found = await scan;
      expect(found.find((e) => e.key === `lock:{${key}}`)?.tokens).toEqual(['owner-token']);
    } finally {
      redis.disconnect();
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the real-Redis runner\'s faults from outside (--deletes, --drop-messages)', () => {
  it("classes a run's keys as the runner deletes them: the lock's own key, a guard, a queue key, the fencing counter", () => {
    expect(['lock:{k}', 'lock:{k:owner}', 'lock:{k:acct-a}'].map(keyClass)).toEqual(['owner', 'owner', 'owner']);
    expect(['lock:{k}:readers', 'lock:{k}:reader:a.b.c', 'lock:{k}:holders', 'lock:{k}:permit:a.b.c', 'lock:{k}:due'].map(keyClass)).toEqual(Array(5).fill('guard'));
    expect(['lock:{k}:queue', 'lock:{k}:waiters', 'lock:{k}:sq', 'lock:{k}:sw', 'lock:{k}:wanted'].map(keyClass)).toEqual(Array(5).fill('queue'));
    expect(keyClass('lock:{k}:fence')).toBe('fence');
    expect(['lock:{k}:readers', 'lock:{k:owner}', 'lock:{s1-x:transfer:acct-b}'].map(lockOfKey)).toEqual(['k', 'k:owner', 's1-x:transfer:acct-b']);
    // Drawn on top of the seed's own faults, which stay what they were.
    const plain = makeSchedule(7, { target: 'single' });
    const both = makeSchedule(7, { target: 'single', deletes: true, mute: true });
    expect(both.faults.filter((f) => f.kind !== 'delete-key' && f.kind !== 'drop-messages')).toEqual(plain.faults);
    expect(both.faults.map((f) => f.kind)).toEqual(expect.arrayContaining(['delete-key', 'drop-messages']));
    expect(() => makeSchedule(7, { target: 'quorum', deletes: true })).toThrow('not in quorum mode');
    // --freeze: the seed's faults, and one redis-pause past the 1 s grace on top, with the workers' reads.
    const frozen = makeSchedule(7, { target: 'single', freeze: true });
    expect(frozen.faults.filter((f) => !f.frozen)).toEqual(plain.faults);
    expect(frozen.faults.filter((f) => f.frozen)).toEqual([expect.objectContaining({ kind: 'redis-pause', ms: expect.any(Number) })]);
    expect(frozen.faults.find((f) => f.frozen)!.ms).toBeGreaterThanOrEqual(1_500);
    expect(frozen.reads).toBe(true);
    expect(() => makeSchedule(7, { target: 'quorum', freeze: true })).toThrow('not in quorum mode');
    // --foreign-counters: the seed's faults, and the run's counters holding past 2^53 or a negative number for a while on top.
    const foreign = makeSchedule(7, { target: 'single', foreign: true });
    expect(foreign.faults.filter((f) => f.kind !== 'foreign-counter')).toEqual(plain.faults);
    expect(foreign.faults.filter((f) => f.kind === 'foreign-counter')).toEqual([expect.objectContaining({ ms: expect.any(Number), value: expect.stringMatching(/^(?:9007199254740993|-5)$/) })]);
    // In quorum mode too, on one master or on a majority of them, drawn after the rest.
    const quorumPlain = makeSchedule(7, { target: 'quorum', workload: 'mutex' });
    const quorumForeign = (seed: number) => makeSchedule(seed, { target: 'quorum', workload: 'mutex', foreign: true });
    expect(quorumForeign(7).faults.filter((f) => f.kind !== 'foreign-counter')).toEqual(quorumPlain.faults);
    const drawn = Array.from({ length: 40 }, (_, i) => quorumForeign(i + 1).faults.find((f) => f.kind === 'foreign-counter')!);
    expect(drawn.every((f) => f.masters !== undefined && f.masters.length >= 1 && f.masters.every((m) => m >= 0 && m <= 2) && new Set(f.masters).size === f.masters.length)).toBe(true);
    expect(new Set(drawn.map((f) => f.masters!.length))).toEqual(new Set([1, 2, 3]));
    expect(foreign.faults.find((f) => f.kind === 'foreign-counter')!.masters).toBeUndefined();
    expect(() => makeSchedule(7, { target: 'quorum', foreign: true, deletes: true })).toThrow('not in quorum mode');
  });

  it("throws away what Redis sends a subscriber connection while commands flow, then resets it (the client subscribes again)", async () => {
    const url = new URL(redisUrl());
    const proxy = await FaultProxy.start(Number(url.port));
    const publisher = new Redis(Number(url.port), url.hostname);
    const commands = new Redis(proxy.port, '127.0.0.1');
    const subscriber = new Redis(proxy.port, '127.0.0.1');
    const channel = `mute-${process.pid}-${Date.now()}`;
    const heard: string[] = [];
    try {
      subscriber.on('message', (_channel: string, message: string) => heard.push(message));
      await subscriber.subscribe(channel);
      await publisher.publish(channel, 'before');
      await expect.poll(() => heard).toEqual(['before']);
      proxy.muteMessages();
      await publisher.publish(channel, 'lost');
      // Commands and their replies still flow on the other connection.
      expect(await commands.ping()).toBe('PONG');
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(heard).toEqual(['before']);
      proxy.unmuteMessages();
      // ioredis reconnects and subscribes again: later messages arrive.
      await expect.poll(async () => (await publisher.publish(channel, 'after'), heard.includes('after')), { timeout: 5_000 }).toBe(true);
      expect(heard).not.toContain('lost');
    } finally {
      subscriber.disconnect();
      commands.disconnect();
      await publisher.quit();
      await proxy.close();
    }
  });
});

describe("a worker's attribution of lost events to its sections", () => {
  it('puts an event on the section that entered its key with its fencing token, a multi-key lock on each key', () => {
    const holders = new LostHolders();
    holders.entered('w0.0.0', { k: 1 });
    holders.entered('w0.1.1', { a: 7, b: 3 });
    expect(holders.sectionOf('k', 1)).toBe('w0.0.0');
    expect(holders.sectionOf('a', 7)).toBe('w0.1.1');
    expect(holders.sectionOf('b', 3)).toBe('w0.1.1');
    expect(holders.sectionOf('k', 2)).toBeUndefined();
    expect(holders.sectionOf('b', 7)).toBeUndefined();
  });

  it('puts it on neither of two sections that held one key at one token (a counter that went back)', () => {
    const holders = new LostHolders();
    holders.entered('w0.0.0', { k: 1 });
    // The same section entering again (a reentrant using()) still names it.
    holders.entered('w0.0.0', { k: 1 });
    expect(holders.sectionOf('k', 1)).toBe('w0.0.0');
    holders.entered('w0.0.5', { k: 1 });
    expect(holders.sectionOf('k', 1)).toBeUndefined();
    // And a third does not name it again.
    holders.entered('w0.0.9', { k: 1 });
    expect(holders.sectionOf('k', 1)).toBeUndefined();
  });
});

describe('the real-Redis checker (a pure function over a history)', () => {
  it('passes a history where each holder leaves before the next enters, tokens growing', () => {
    const events = [
      ...call('w0.0.0', { invoke: 0, enter: 5, token: 1, exit: 50, ok: 52 }),
      ...call('w1.0.0', { invoke: 10, enter: 53, token: 2, exit: 90, ok: 91 }),
      register(0, 'w0.0.0', 1, true),
      register(1, 'w1.0.0', 2, true),
    ];
    expect(check({ events })).toEqual([]);
  });

  it("finds an inspect() that said the holder's lock was held under another fencing token, unless the holder's lease was in doubt or the data was lost", () => {
    const inspect = (token: number | null, held = true, seenHeld = true): HistoryEvent => ({ ev: 'inspect', p: 'w0', sid: 'w0.0.0', held, seenHeld, seenToken: token, t: 20, done: 22 });
    const section = call('w0.0.0', { invoke: 0, enter: 5, token: 7, exit: 50, ok: 52 });
    expect(invariants([...section, inspect(7)])).toEqual([]);
    // Before d94fd97, a quorum's inspect() answered a minority master's higher counter.
    expect(invariants([...section, inspect(9)])).toEqual(['inspect-token']);
    expect(check({ events: [...section, inspect(9)] })[0]!.message).toContain('token 9, while w0.0.0 held it with token 7');
    // The holder's lease in doubt meanwhile, or the lock seen free: nothing to judge.
    expect(invariants([...section, inspect(9, false)])).toEqual([]);
    expect(invariants([...section, inspect(null, true, false)])).toEqual([]);
    expect(invariants([...section, inspect(9), { ev: 'fault', kind: 'restart-empty', t: 10, until: 15 }], { ttl: 600 })).toEqual([]);
    // Its counter written from outside, or deleted after (--foreign-counters): not the token's to tell, from the write's send to the deletion.
    const foreign = (sent: number, until: number, key = 'lock:{k}:fence'): HistoryEvent => ({ ev: 'fault', kind: 'foreign-counter', keys: [key], value: '-5', sent, t: sent, until });
    expect(invariants([...section, inspect(null), foreign(10, 15)])).toEqual([]);
    expect(invariants([...section, inspect(-5), foreign(21, 40)])).toEqual([]);
    expect(invariants([...section, inspect(9), foreign(60, 80)])).toEqual(['inspect-token']);
    expect(invariants([...section, inspect(9), foreign(10, 15, 'lock:{other}:fence')])).toEqual(['inspect-token']);
  });

  it("finds a holder that counts on more lease than Redis keeps of its lock (lease-outlasted), read by the runner or by inspect(), and not one within Redis' lease", () => {
    const section = call('w0.0.0', { invoke: 0, enter: 5, token: 7, exit: 500, ok: 502 });
    // Asked at 6 with 592 ms left by the holder's deadline (to 598), answered at 8.
    const observed = (pttl: number, ours = true): HistoryEvent => ({ ev: 'redis-lease', p: 'w0', sid: 'w0.0.0', key: 'lock:{k}', t: 6, leaseLeft: 592, ours, pttl, done: 8 });
    expect(invariants([...section, observed(595)])).toEqual([]);
    // Within SLACK of Redis' lease: the few ms between the clocks' readings.
    expect(invariants([...section, observed(580)])).toEqual([]);
    // The ACQUIRE of an attempt that found the lock its own without PEXPIRE (seeded bug 69): Redis
    // kept the grant's lease, 400 ms older than the attempt the holder counted from.
    expect(invariants([...section, observed(195)])).toEqual(['lease-outlasted']);
    expect(check({ events: [...section, observed(195)] })[0]!.message).toContain('could go on 395 ms after Redis let the lock go');
    // Another owner's key, or one without expiry: not this holder's lease.
    expect(invariants([...section, observed(195, false)])).toEqual([]);
    expect(invariants([...section, observed(-1)])).toEqual([]);
    // inspect()'s answer of the holder's own lock says the same; a quorum's is the shortest of its masters'.
    const inspect: HistoryEvent = { ev: 'inspect', p: 'w0', sid: 'w0.0.0', held: true, seenHeld: true, seenToken: 7, leaseLeft: 592, seenTtl: 195, t: 6, done: 8 };
    expect(invariants([...section, inspect])).toEqual(['lease-outlasted']);
    expect(invariants([...section, { ...inspect, seenTtl: 595 }])).toEqual([]);
    expect(check({ events: [...section, inspect], schedule: { target: 'quorum' } })).toEqual([]);
  });

  it("finds a lock without a watchdog that Redis keeps past the end its ttl sets (lease-past-ttl), and not one that ends by then", () => {
    // The unrenewed handover probe's waiter: its lease began at 100 (its last attempt), ttl 1,500.
    const section = call('w1.unrenewed.8', { invoke: 0, enter: 420, token: 9, exit: 760, ok: 762 });
    const read = (pttl: number, ours = true): HistoryEvent => ({ ev: 'redis-lease', p: 'w1', sid: 'w1.unrenewed.8', key: 'lock:{k}', t: 760, leaseLeft: pttl, ttlEnd: 1_600, ours, pttl, done: 762 });
    expect(invariants([...section, read(840)])).toEqual([]);
    // Within PAST_TTL_SLACK: the renewal's way to Redis.
    expect(invariants([...section, read(980)])).toEqual([]);
    // Renewed to the whole ttl a third of the way into the grant lease (seeded bug 100).
    expect(check({ events: [...section, read(1_180)] })).toEqual([expect.objectContaining({ invariant: 'lease-past-ttl', message: expect.stringContaining('held 340 ms past its ttl') })]);
    // Another owner's key, or a read that names no such end: nothing to judge.
    expect(invariants([...section, read(1_180, false)])).toEqual([]);
    expect(invariants([...section, { ...read(1_180), ttlEnd: undefined }])).toEqual([]);
  });

  it('finds a section entered with a fencing token no fencing token can be (token-range): past 2^53, below 1', () => {
    // b7696f17: a counter written past 2^53 (or negative) handed out 9007199254740994 (-4 for -5).
    expect(invariants(call('w0.0.0', { invoke: 0, enter: 5, token: 9_007_199_254_740_994, exit: 9, ok: 10 }))).toEqual(['token-range']);
    expect(invariants(call('w0.0.0', { invoke: 0, enter: 5, token: -4, exit: 9, ok: 10 }))).toEqual(['token-range']);
    expect(invariants(call('w0.0.0', { invoke: 0, enter: 5, token: 9_007_199_254_740_991, exit: 9, ok: 10 }))).toEqual([]);
  });

  it('reports a promise rejection a worker left unhandled, naming the worker and the error', () => {
    const events = [...call('w0.0.0', { invoke: 0, enter: 5, token: 1, exit: 50, ok: 52 }), { ev: 'unhandled', p: 'w1', error: 'Error: Connection is closed.', t: 60 }];
    expect(check({ events })).toEqual([expect.objectContaining({ invariant: 'unhandled-rejection', message: expect.stringContaining('w1') })]);
    expect(check({ events })[0]!.message).toContain('Connection is closed.');
  });

  it('finds two mutex holders inside at once when neither was paused nor told of a loss', () => {
    const events = [...call('w0.0.0', { invoke: 0, enter: 5, token: 1, exit: 50, ok: 52 }), ...call('w1.0.0', { invoke: 10, enter: 30, token: 2, exit: 60, ok: 61 })];
    const [violation] = check({ events });
    expect(violation?.invariant).toBe('exclusion');
    expect(violation?.message).toContain('w1.0.0');
  });

  it('allows the overlap when the earlier holder was told of its loss first, or was frozen (SIGSTOP or a stalled event loop) when the other entered', () => {
    const told = [...call('w0.0.0', { invoke: 0, enter: 5, token: 1, lost: 25, exit: 50, ok: 52 }), ...call('w1.0.0', { invoke: 10, enter: 30, token: 2, exit: 60, ok: 61 })];
    const paused = [
      ...call('w0.0.0', { invoke: 0, enter: 5, token: 1, exit: 1_500, ok: 1_501 }),
      ...call('w1.0.0', { invoke: 10, enter: 900, token: 2, exit: 960, ok: 961 }),
      { ev: 'fault', kind: 'pause', p: 'w0', t: 100, until: 1_400 },
    ];
    const stalled = [
      ...call('w0.0.0', { invoke: 0, enter: 5, token: 1, exit: 1_500, ok: 1_501 }),
      ...call('w1.0.0', { invoke: 10, enter: 900, token: 2, exit: 960, ok: 961 }),
      { ev: 'stall', p: 'w0', t: 200, until: 1_000 },
    ];
    expect(invariants(told)).toEqual([]);
    expect(invariants(paused)).toEqual([]);
    expect(invariants(stalled)).toEqual([]);
  });

  it('does not excuse a holder that entered after its own pause, beside one that entered before it (a stale grant)', () => {
    // Both chains of w2 were frozen; the one whose lock had expired meanwhile entered on thawing.
    const events = [
      ...call('w2.1.1', { invoke: 0, enter: 1_377, token: 6, exit: 1_470, ok: 1_471 }),
      ...call('w2.0.0', { invoke: 0, enter: 1_378, token: 5, lost: 1_379, exit: 1_407, ok: 1_407 }),
      { ev: 'fault', kind: 'pause', p: 'w2', t: 439, until: 1_373 },
    ];
    expect(check({ events })).toEqual([expect.objectContaining({ invariant: 'exclusion', cause: 'stale-grant' })]);
  });

  it('does not excuse an overlap by a pause that had ended before the other entered', () => {
    const events = [
      ...call('w0.0.0', { invoke: 0, enter: 5, token: 1, exit: 1_500, ok: 1_501 }),
      ...call('w1.0.0', { invoke: 10, enter: 900, token: 2, exit: 960, ok: 961 }),
      { ev: 'fault', kind: 'pause', p: 'w0', t: 100, until: 500 },
    ];
    expect(invariants(events)).toEqual(['exclusion']);
  });

  it('finds a holder handed a lock whose signal was aborted only after it entered', () => {
    const late = [...call('w0.0.0', { invoke: 0, enter: 5, token: 1, exit: 50, ok: 52 }), ...call('w1.0.0', { invoke: 1, enter: 20, token: 2, exit: 25, ok: 26 })];
    const aborted = [...call('w0.0.0', { invoke: 0, enter: 5, token: 1, exit: 50, ok: 52 }), ...call('w1.0.0', { invoke: 1, enter: 20, token: 2, aborted: true, exit: 25, ok: 26 })];
    expect(invariants(late)).toEqual(['exclusion']);
    expect(invariants(aborted)).toEqual([]);
  });

  // A key deleted from outside (`--deletes`: an operator's DEL, an eviction): the next caller is let
  // in "while the holder still works (until its next renewal)" (docs/deployment.md), and the
  // holder must then be told, by the end of its lease at the latest.
  it('excuses a rival beside a holder whose key was deleted from outside, within a ttl, and finds a holder not told by the end of its lease (told-of-deletion)', () => {
    const deleted = (key: string, t: number, of = 'owner', token?: string): HistoryEvent => ({ ev: 'fault', kind: 'delete-key', key, lock: 'k', of, ...(token === undefined ? {} : { token }), sent: t - 1, t, until: t });
    const rival = call('w1.0.0', { invoke: 10, enter: 200, token: 2, exit: 260, ok: 261 });
    // Told at its next renewal (refused): the rival beside it was the deletion's doing.
    const told = [...call('w0.0.0', { invoke: 0, enter: 5, token: 1, lost: 300, exit: 310, ok: 311 }), ...rival, deleted('lock:{k}', 101)];
    expect(invariants(told, { ttl: 600 })).toEqual([]);
    // Its code ended before its lease could run out: nothing to tell.
    const ended = [...call('w0.0.0', { invoke: 0, enter: 5, token: 1, exit: 700, ok: 701 }), ...rival, deleted('lock:{k}', 101)];
    expect(invariants(ended, { ttl: 600 })).toEqual([]);
    // One server refuses its next renewal, a third of a ttl away: told by then, unless a fault held its commands up.
    expect(invariants(ended, { ttl: 600, schedule: { target: 'single' } })).toEqual(['told-of-deletion']);
    expect(check({ events: ended, ttl: 600, schedule: { target: 'single' } })[0]!.message).toContain('not told of a loss at 451 ms (its next renewal, on one server, refused by then)');
    expect(invariants([...ended, { ev: 'fault', kind: 'delay', p: 'w0', t: 50, until: 400 }], { ttl: 600, schedule: { target: 'single' } })).toEqual([]);
    // Never told (its renewals "succeeded"), still working a ttl after the deletion.
    const untold = [...call('w0.0.0', { invoke: 0, enter: 5, token: 1, exit: 900, ok: 901 }), ...rival, deleted('lock:{k}', 101)];
    expect(invariants(untold, { ttl: 600 })).toEqual(['told-of-deletion']);
    expect(check({ events: untold, ttl: 600 })[0]!.message).toContain('w0.0.0 (mutex, token 1) on "k" was inside when lock:{k} was deleted from outside at 101 ms');
    // Frozen past its lease: judged from the thaw.
    const frozen = [...call('w0.0.0', { invoke: 0, enter: 5, token: 1, lost: 1_250, exit: 1_260, ok: 1_261 }), ...rival, deleted('lock:{k}', 101), { ev: 'fault', kind: 'pause', p: 'w0', t: 150, until: 1_200 }];
    expect(invariants(frozen, { ttl: 600 })).toEqual([]);
    // A rival a ttl after the deletion is not excused; nor is one beside a holder whose queue was deleted.
    const late = [...call('w0.0.0', { invoke: 0, enter: 5, token: 1, exit: 900, ok: 901 }), ...call('w1.0.0', { invoke: 10, enter: 800, token: 2, exit: 860, ok: 861 }), deleted('lock:{k}', 101)];
    expect(invariants(late, { ttl: 600 })).toEqual(['exclusion', 'told-of-deletion']);
    const queue = [...call('w0.0.0', { invoke: 0, enter: 5, token: 1, exit: 500, ok: 501 }), ...rival, deleted('lock:{k}:waiters', 101, 'queue')];
    expect(invariants(queue, { ttl: 600 })).toEqual(['exclusion']);
    // A reader's own key names one reader: only that one must be told; the readers hash, every reader.
    const reader = (sid: string, token: number, ownerToken: string): HistoryEvent[] =>
      call(sid, { kind: 'read', invoke: 0, enter: 5, token, exit: 900, ok: 901 }).map((e) => (e.ev === 'enter' ? { ...e, ownerToken } : e));
    const readers = [...reader('w0.0.0', 1, 'a.x.1'), ...reader('w1.0.0', 2, 'b.x.1')];
    expect(check({ events: [...readers, deleted('lock:{k}:reader:a.x.1', 101, 'guard', 'a.x.1')], ttl: 600 }).map((v) => v.message)).toEqual([expect.stringContaining('w0.0.0 (read, token 1)')]);
    expect(invariants([...readers, deleted('lock:{k}:readers', 101, 'guard')], { ttl: 600 })).toEqual(['told-of-deletion', 'told-of-deletion']);
    // A semaphore's due set guards nobody; its holders hash, every holder.
    const permits = [...call('w0.0.0', { kind: 'semaphore', limit: 2, invoke: 0, enter: 5, exit: 900, ok: 901 })];
    expect(invariants([...permits, deleted('lock:{k}:due', 101, 'guard')], { ttl: 600 })).toEqual([]);
    expect(invariants([...permits, deleted('lock:{k}:holders', 101, 'guard')], { ttl: 600 })).toEqual(['told-of-deletion']);
  });

  it("does not hold a release's refusal, an inspect() or a leader's successor against a holder whose key was deleted from outside", () => {
    const deleted = (key: string, t: number, of = 'owner'): HistoryEvent => ({ ev: 'fault', kind: 'delete-key', key, lock: 'k', of, sent: t - 1, t, until: t });
    // Its release found the key gone (its renewal had not come yet).
    const release = [...call('w0.0.0', { invoke: 0, enter: 5, token: 1, exit: 50, ok: 52 }), { ev: 'told', p: 'w0', sid: 'w0.0.0', how: 'lost event', reason: 'refused', t: 51 }];
    expect(invariants(release)).toEqual(['told-after-release']);
    expect(invariants([...release, deleted('lock:{k}', 30)], { ttl: 600 })).toEqual([]);
    // inspect() of a held lock whose fencing counter (or own key) was deleted meanwhile.
    const inspect: HistoryEvent = { ev: 'inspect', p: 'w0', sid: 'w0.0.0', held: true, seenHeld: true, seenToken: 1733, t: 20, done: 22 };
    const held = call('w0.0.0', { invoke: 0, enter: 5, token: 7, exit: 50, ok: 52 });
    expect(invariants([...held, inspect])).toEqual(['inspect-token']);
    expect(invariants([...held, inspect, deleted('lock:{k}:fence', 10, 'fence')], { ttl: 600 })).toEqual([]);
    // A leader whose lease was deleted hears at its next renewal: another term may begin before.
    const terms = [
      ...call('w0.leader.0', { kind: 'leader', invoke: 0, enter: 5, token: 1, lost: 250, exit: 260, ok: 261 }),
      { ev: 'leadership-lost', p: 'w0', sid: 'w0.leader.0', t: 255 },
      ...call('w1.leader.1', { kind: 'leader', invoke: 150, enter: 150, token: 2, exit: 400, ok: 401 }),
      { ev: 'leadership-lost', p: 'w1', sid: 'w1.leader.1', t: 395 },
    ];
    expect(invariants(terms, { ttl: 600 })).toEqual(['exclusion', 'leader-told']);
    expect(invariants([...terms, deleted('lock:{k}', 100)], { ttl: 600 })).toEqual([]);
  });

  // Cluster semaphore seed 50320 of --deletes (a loaded machine; not again in 8 replays): w2.1.1 was
  // told `refused` 4 ms after its release was sent, which the deletion did not excuse, its DEL done
  // before the worker recorded the entry. A permit (or reader) key names its token, so it exists
  // only once Redis granted that token: deleting it took this holder's grant, even on its way here
  // (a release's grant message, or an acquire's reply, that a delay held up: the waiter handed a
  // grant enters without asking Redis again, Acquisition.takeGrant). Another's key excuses nothing.
  it("excuses a holder's refused release when its own permit key (or own lock key) was deleted between its grant in Redis and its entry", () => {
    const own = 'abc.WyJ2bSJd.x';
    const permit = (token: string): HistoryEvent => ({ ev: 'fault', kind: 'delete-key', key: `lock:{k}:permit:${token}`, lock: 'k', of: 'guard', token, deleted: 1, sent: 150, t: 152, until: 152 });
    const holder = [
      ...call('w2.1.1', { kind: 'semaphore', limit: 2, invoke: 0, exit: 300, ok: 305 }),
      { ev: 'enter', p: 'w2', sid: 'w2.1.1', token: 7, aborted: false, ownerToken: own, t: 200 },
      { ev: 'told', p: 'w2', sid: 'w2.1.1', how: 'aborted', reason: 'refused', t: 304 },
    ];
    expect(invariants(holder, { ttl: 600 })).toEqual(['told-after-release']);
    expect(invariants([...holder, permit(own)], { ttl: 600 })).toEqual([]);
    expect(invariants([...holder, permit('other.WyJ2bSJd.y')], { ttl: 600 })).toEqual(['told-after-release']);
    // A DEL that found nothing (the key gone between the runner's scan and it) took nothing.
    expect(invariants([...holder, { ...permit(own), deleted: 0 }], { ttl: 600 })).toEqual(['told-after-release']);
    // A mutex's own key alike, when the runner found it holding this holder's owner token (`held`).
    const mutex = holder.map((e) => (e.ev === 'invoke' ? { ...e, kind: 'mutex', limit: undefined } : e));
    const ownKey = (held: string): HistoryEvent => ({ ev: 'fault', kind: 'delete-key', key: 'lock:{k}', lock: 'k', of: 'owner', held, deleted: 1, sent: 150, t: 152, until: 152 });
    expect(invariants(mutex, { ttl: 600 })).toEqual(['told-after-release']);
    expect(invariants([...mutex, ownKey(own)], { ttl: 600 })).toEqual([]);
    expect(invariants([...mutex, ownKey('other.WyJ2bSJd.y')], { ttl: 600 })).toEqual(['told-after-release']);
  });

  // The same grant's other side: a holder that enters after its own key was deleted holds nothing in
  // Redis from its first moment, and learns it as a holder inside at the deletion does: at its next
  // renewal (refused), by its lease's end at the latest. told-of-deletion judged only holders inside
  // when the DEL was sent, so one that entered late and was never told went unjudged.
  it('finds a holder that entered after its own permit key (or own lock key) was deleted, its grant on its way, not told by its next renewal or its lease end (told-of-deletion)', () => {
    const own = 'abc.WyJ2bSJd.x';
    const permit = (token: string, deleted = 1): HistoryEvent => ({ ev: 'fault', kind: 'delete-key', key: `lock:{k}:permit:${token}`, lock: 'k', of: 'guard', token, deleted, sent: 150, t: 152, until: 152 });
    const holder = (kind: string, exit: number, lost?: number): HistoryEvent[] => [
      ...call('w2.1.1', { kind, ...(kind === 'semaphore' ? { limit: 2 } : {}), invoke: 0, ...(lost === undefined ? {} : { lost }), exit, ok: exit + 5 }),
      { ev: 'enter', p: 'w2', sid: 'w2.1.1', token: 7, aborted: false, ownerToken: own, t: 200 },
    ];
    // Never told, still working past its lease (it began before the DEL, and 600 ms after its entry at the latest).
    expect(invariants([...holder('semaphore', 900), permit(own)], { ttl: 600 })).toEqual(['told-of-deletion']);
    expect(check({ events: [...holder('semaphore', 900), permit(own)], ttl: 600 })[0]!.message).toContain('w2.1.1 (semaphore, token 7) on "k" entered after lock:{k}:permit:abc.WyJ2bSJd.x, its own grant, was deleted from outside at 152 ms');
    // Told (its renewal refused), or its code ended first: nothing to judge.
    expect(invariants([...holder('semaphore', 900, 400), permit(own)], { ttl: 600 })).toEqual([]);
    expect(invariants([...holder('semaphore', 700), permit(own)], { ttl: 600 })).toEqual([]);
    // One server refuses its next renewal, a third of a ttl after its entry at the latest.
    expect(invariants([...holder('semaphore', 700), permit(own)], { ttl: 600, schedule: { target: 'single' } })).toEqual(['told-of-deletion']);
    // Another's permit key, or a DEL that found nothing, took nothing of its.
    expect(invariants([...holder('semaphore', 900), permit('other.WyJ2bSJd.y')], { ttl: 600 })).toEqual([]);
    expect(invariants([...holder('semaphore', 900), permit(own, 0)], { ttl: 600 })).toEqual([]);
    // A mutex's own key alike when the runner found it holding this holder's token; one holding
    // another's token, deleted before this holder entered, was not its grant (it made a new key).
    const ownKey = (held: string): HistoryEvent => ({ ev: 'fault', kind: 'delete-key', key: 'lock:{k}', lock: 'k', of: 'owner', held, deleted: 1, sent: 150, t: 152, until: 152 });
    expect(invariants([...holder('mutex', 900), ownKey(own)], { ttl: 600 })).toEqual(['told-of-deletion']);
    expect(invariants([...holder('mutex', 900), ownKey('other.WyJ2bSJd.y')], { ttl: 600 })).toEqual([]);
  });

  it('excuses an overlap across a data loss (Redis restarted empty), where the lock promises nothing', () => {
    const events = [
      ...call('w0.0.0', { invoke: 0, enter: 5, token: 7, exit: 500, ok: 501 }),
      ...call('w1.0.0', { invoke: 10, enter: 300, token: 1, exit: 360, ok: 361 }),
      { ev: 'fault', kind: 'restart-empty', t: 200, until: 280 },
    ];
    expect(invariants(events, { ttl: 600 })).toEqual([]);
    // But a holder still unaware a ttl after the loss (its renewals "succeed") is not excused.
    const unaware = [
      ...call('w0.0.0', { invoke: 0, enter: 5, token: 7, exit: 1_500, ok: 1_501 }),
      ...call('w1.0.0', { invoke: 10, enter: 1_000, token: 1, exit: 1_060, ok: 1_061 }),
      { ev: 'fault', kind: 'restart-empty', t: 200, until: 280 },
    ];
    expect(invariants(unaware, { ttl: 600 })).toEqual(['exclusion']);
  });

  // Quorum seed 28 (`--target quorum`): the holder's requests to master 1 thrown away while
  // master 0 restarted empty; its copy on master 1 lapsed, the restart took the one on master 0,
  // and a rival took both. One master's restart alone, its lock still on the other two, is no loss.
  it('judges a quorum master\'s restart a loss only with another master out of reach within a ttl of it', () => {
    const overlap = [
      ...call('w1.0.2', { invoke: 0, enter: 5, token: 3, exit: 1_500, ok: 1_501 }),
      ...call('w0.0.0', { invoke: 10, enter: 900, token: 10, exit: 960, ok: 961 }),
    ];
    const restart: HistoryEvent = { ev: 'fault', kind: 'restart-empty', node: 0, t: 714, until: 760, wall: 1 };
    const quorum = { ttl: 600, schedule: { target: 'quorum' } };
    expect(invariants([...overlap, restart], quorum)).toEqual(['exclusion']);
    const cutOff: HistoryEvent = { ev: 'fault', kind: 'drop-requests', p: 'w1', node: 1, t: 292, until: 1_461 };
    expect(invariants([...overlap, restart, cutOff], quorum)).toEqual([]);
    // The other master's fault ended more than a ttl before the restart: its copy was put back.
    expect(invariants([...overlap, restart, { ...cutOff, t: 0, until: 90 }], quorum)).toEqual(['exclusion']);
    // A fault of the restarted master itself is not another master out of reach.
    expect(invariants([...overlap, restart, { ...cutOff, node: 0 }], quorum)).toEqual(['exclusion']);
    // On one server the restart alone is the loss.
    expect(invariants([...overlap, restart], { ttl: 600 })).toEqual([]);
  });

  // The workers record the copies their quorum stores confirmed (worker.mjs, `watchCopies`): a
  // restart excuses two holders only when it took a copy the earlier holder's majority stood on.
  // Silence seed 1046 (before f5fe742): a give-back resent to master 1 on its return deleted the
  // holder's copy there, and master 0's restart then let a rival take masters 0 and 1; that
  // restart was excused as the loss, since the checker could not tell whose copies it took.
  it('excuses two quorum holders by a restart only when it took the copy of the earlier holder that the rival\'s master had', () => {
    const lock = 'lock:{k}';
    const copy = (p: string, what: string, node: number | undefined, token: string, sent: number, t: number, extra: object = {}): HistoryEvent => ({ ev: 'copy', p, what, node, lock, token, sent, t, ttl: 2_000, ...extra });
    const holder = [
      ...call('w1.0.2', { invoke: 0, enter: 30, token: 3, exit: 1_500, ok: 1_501 }),
      copy('w1', 'acquired', undefined, 'a', 10, 25, { fencingToken: 3 }),
      copy('w1', 'grant', 0, 'a', 10, 20),
      copy('w1', 'grant', 2, 'a', 10, 22),
      copy('w1', 'grant', 1, 'a', 10, 24),
    ];
    const rival = [
      ...call('w0.0.0', { invoke: 10, enter: 900, token: 10, exit: 960, ok: 961 }),
      copy('w0', 'acquired', undefined, 'b', 880, 895, { fencingToken: 10 }),
      copy('w0', 'grant', 0, 'b', 880, 890),
      copy('w0', 'grant', 1, 'b', 880, 892),
    ];
    const restart: HistoryEvent = { ev: 'fault', kind: 'restart-empty', node: 0, t: 714, until: 760, wall: 1 };
    const cutOff: HistoryEvent = { ev: 'fault', kind: 'drop-requests', p: 'w1', node: 1, t: 292, until: 1_461 };
    const quorum = { ttl: 2_000, schedule: { target: 'quorum' } };
    // Master 1 granted the rival within the lease of the holder's copy there, and was not restarted.
    const found = check({ events: [...holder, ...rival, restart, cutOff], ...quorum });
    expect(found.map((v) => v.invariant)).toEqual(['exclusion']);
    expect(found[0]!.message).toContain('master 1 granted it');
    // A release of the holder's own token deleted that copy: the shape is named, and the deletion
    // breaks an invariant of its own (it needs no rival).
    const deleted = copy('w1', 'deleted', 1, 'a', 500, 510);
    const named = check({ events: [...holder, ...rival, restart, cutOff, deleted], ...quorum });
    expect(named.map((v) => [v.invariant, v.cause])).toEqual([
      ['exclusion', 'quorum-copy-deleted'],
      ['copy-deleted-while-held', undefined],
    ]);
    expect(invariants([...holder, deleted], quorum)).toEqual(['copy-deleted-while-held']);
    // Not a release sent before the acquisition handed out began (an earlier attempt's give-back),
    // nor the holder's own release after its code ended, nor the give-back of a loss it was told of.
    expect(invariants([...holder, { ...deleted, sent: 5, t: 9 }], quorum)).toEqual([]);
    expect(invariants([...holder, { ...deleted, sent: 1_502, t: 1_503 }], quorum)).toEqual([]);
    expect(invariants([...holder, { ev: 'lost', p: 'w1', sid: 'w1.0.2', reason: 'expired', t: 505 }, deleted], quorum)).toEqual([]);
    // On one server or a Cluster nothing is judged so.
    expect(invariants([...holder, deleted], { ttl: 2_000 })).toEqual([]);
    // Without the copy on master 1 (its grant unconfirmed), master 0's restart took the one the
    // rival needed: the loss, as before.
    expect(invariants([...holder.filter((e) => !(e.ev === 'copy' && e.node === 1)), ...rival, restart, cutOff], quorum)).toEqual([]);
    // Nor does a copy whose lease had ended before the rival's grant count (a ttl of 600 ms).
    const short = [...holder, ...rival].map((e) => (e.ev === 'copy' ? { ...e, ttl: 600 } : e));
    expect(invariants([...short, restart, cutOff], { ...quorum, ttl: 600 })).toEqual([]);
    // Nor one confirmed after the rival's command there was sent (they crossed).
    const crossed = holder.map((e) => (e.ev === 'copy' && e.node === 1 ? { ...e, sent: 885, t: 893 } : e));
    expect(invariants([...crossed, ...rival, restart, cutOff], quorum)).toEqual([]);
    // Nor one of an attempt before the acquisition handed out (its give-back deleted it).
    const earlier = holder.map((e) => (e.ev === 'copy' && e.node === 1 ? { ...e, sent: 5, t: 8 } : e));
    expect(invariants([...earlier, ...rival, restart, cutOff], quorum)).toEqual([]);
    // A restart of master 1 too (between the copy and the grant) took it.
    expect(invariants([...holder, ...rival, restart, cutOff, { ...restart, node: 1, t: 600, until: 650 }], quorum)).toEqual([]);
    // Without the copy records (another build's layout), the restart excuses as it did.
    expect(invariants([...holder, ...rival, restart, cutOff].filter((e) => e.ev !== 'copy'), quorum)).toEqual([]);
  });

  it('excuses no two runs of one job on one worker beside each other, even across a loss of Redis\' data', () => {
    const runs = (second: string): HistoryEvent[] => [
      ...call('w0.job.0', { kind: 'job', invoke: 0, enter: 5, token: 7, exit: 500, ok: 501 }),
      ...call(second, { kind: 'job', invoke: 290, enter: 300, token: 1, exit: 360, ok: 361 }),
      { ev: 'fault', kind: 'restart-empty', t: 200, until: 280 },
    ];
    // Two instances: the documented exception (docs/jobs-and-leaders.md).
    expect(invariants(runs('w1.job.0'), { ttl: 600 })).toEqual([]);
    // One instance: its orchestrator knows its own run.
    expect(invariants(runs('w0.job.1'), { ttl: 600 })).toEqual(['exclusion']);
    // Even once the first run was told of its loss: its code goes on, and so does its local guard
    // (the own run probe's shape, runner.mjs); another instance's run is the documented exception.
    const told = (second: string): HistoryEvent[] => [
      ...call('w0.job.0', { kind: 'job', invoke: 0, enter: 5, token: 7, lost: 290, exit: 500, ok: 501 }),
      ...call(second, { kind: 'job', invoke: 295, enter: 300, token: 1, exit: 360, ok: 361 }),
      { ev: 'fault', kind: 'restart-empty', t: 200, until: 280 },
    ];
    expect(check({ events: told('w0.job.1'), ttl: 600 })).toEqual([expect.objectContaining({ invariant: 'exclusion', message: expect.stringContaining('still ran on w0, told of a loss at') })]);
    expect(invariants(told('w1.job.0'), { ttl: 600 })).toEqual([]);
    // Once its code ended, the next run on the worker is no overlap.
    expect(invariants(told('w0.job.1').map((e) => (e.ev === 'exit' && e.sid === 'w0.job.0' ? { ...e, t: 299 } : e)), { ttl: 600 })).toEqual([]);
  });

  it('finds more semaphore holders inside than the limit', () => {
    const s = (sid: string, enter: number, token: number): HistoryEvent[] => call(sid, { kind: 'semaphore', limit: 2, invoke: 0, enter, token, exit: 100, ok: 101 });
    expect(invariants([...s('w0.0.0', 5, 1), ...s('w1.0.0', 6, 2)])).toEqual([]);
    const over = check({ events: [...s('w0.0.0', 5, 1), ...s('w1.0.0', 6, 2), ...s('w2.0.0', 7, 3)] });
    expect(over.map((v) => v.invariant)).toEqual(['semaphore-limit']);
    expect(over[0]!.message).toContain('3 holders inside semaphore "k" (limit 2)');
    expect(over[0]).not.toHaveProperty('cause');
    // A waiter of a paused worker entering on thawing with an older grant (token 1) beside two newer holders.
    const stale = [...s('w1.0.0', 5, 22), ...s('w2.0.0', 7, 23), ...call('w0.0.0', { kind: 'semaphore', limit: 2, invoke: 0, enter: 50, token: 1, exit: 100, ok: 101 })];
    stale.push({ ev: 'fault', kind: 'pause', p: 'w0', t: -900, until: 45 });
    expect(check({ events: stale })).toEqual([expect.objectContaining({ invariant: 'semaphore-limit', cause: 'stale-grant' })]);
  });

  it('lets readers share and finds a writer beside a reader', () => {
    const read = (sid: string, enter: number, token: number): HistoryEvent[] => call(sid, { kind: 'read', invoke: 0, enter, token, exit: 100, ok: 101 });
    expect(invariants([...read('w0.0.0', 5, 1), ...read('w1.0.0', 6, 2)])).toEqual([]);
    const writer = call('w2.0.0', { kind: 'write', invoke: 0, enter: 50, token: 3, exit: 120, ok: 121 });
    expect(invariants([...read('w0.0.0', 5, 1), ...writer])).toEqual(['reader-writer']);
  });

  it('finds a job tick run twice, even when the first runner was paused', () => {
    const run = (sid: string, enter: number, token: number): HistoryEvent[] => call(sid, { kind: 'job', tick: 4, invoke: enter - 1, enter, token, exit: enter + 20, ok: enter + 21 });
    const events = [...run('w0.job.3', 1_000, 5), ...run('w1.job.3', 100, 4), { ev: 'fault', kind: 'pause', p: 'w0', t: 50, until: 990 }];
    expect(check({ events })).toEqual([expect.objectContaining({ invariant: 'job-once' })]);
    expect(check({ events })[0]).not.toHaveProperty('cause');
    const heldUp = [...call('w0.job.3', { kind: 'job', tick: 4, invoke: 90, enter: 1_000, token: 5, exit: 1_020, ok: 1_021 }), ...run('w1.job.3', 100, 4)];
    expect(check({ events: heldUp })).toEqual([expect.objectContaining({ invariant: 'job-once', cause: 'held-up-claim' })]);
  });

  it('lets a tick that reached a frozen instance late run under a newer owner lease, never under the same or an older one', () => {
    const run = (sid: string, invoke: number, token: number, owner: number): HistoryEvent[] => {
      const events = call(sid, { kind: 'job', tick: 4, invoke, enter: invoke + 1, token, exit: invoke + 20, ok: invoke + 21 });
      events[1]!.owner = owner;
      return events;
    };
    expect(invariants([...run('w1.job.3', 100, 4, 2), ...run('w0.job.3', 1_100, 6, 5)])).toEqual([]);
    expect(invariants([...run('w1.job.3', 100, 4, 2), ...run('w0.job.3', 1_100, 6, 2)])).toEqual(['job-once']);
    expect(invariants([...run('w1.job.3', 100, 4, 3), ...run('w0.job.3', 1_100, 6, 1)])).toEqual(['job-once']);
  });

  it('excuses a tick run twice when Redis lost the owner lease: its owner ran it before hearing, another took the lease again (seed 906610)', () => {
    const run = (sid: string, tick: number, invoke: number, enter: number, token: number, owner: number): HistoryEvent[] => {
      const events = call(sid, { kind: 'job', tick, invoke, enter, token, exit: enter + 10, ok: enter + 11 });
      events[1]!.owner = owner;
      return events;
    };
    const lease = (p: string, t: number, token: number): HistoryEvent => ({ ev: 'lease', p, key: 'k:owner', token, t });
    const restart: HistoryEvent = { ev: 'fault', kind: 'restart-empty', node: 1, t: 1_066, until: 1_067 };
    // The history of the failing run: w1 owns the lease (token 1) since tick 1; node 1, which
    // holds it, restarts empty before tick 3; w1 runs tick 3 (it renews a third of the ttl later),
    // w0 finds the lease gone and takes it with token 1 (the counter went too), and runs tick 3 17 ms
    // later, once w1 gave the run lock (on another master: tokens 3 then 4) back.
    const before = [lease('w1', 460, 1), ...run('w1.job.0', 1, 358, 461, 1, 1), ...run('w1.job.1', 2, 642, 651, 2, 1)];
    const failing = [...before, restart, ...run('w1.job.2', 3, 1_080, 1_081, 3, 1), lease('w0', 1_090, 1), ...run('w0.job.1', 3, 1_069, 1_098, 4, 1)];
    expect(invariants(failing, { ttl: 600 })).toEqual([]);
    expect(invariants(failing, { ttl: 600, placement: { lock: 0, owner: 1 } })).toEqual([]);
    // Not when the master that lost its data holds the run lock, not the owner lease.
    expect(invariants(failing, { ttl: 600, placement: { lock: 1, owner: 0 } })).toEqual(['job-once']);
    // Not without the loss, nor when the workers did not say when they took their leases.
    expect(invariants(failing.filter((e) => e !== restart), { ttl: 600 })).toEqual(['job-once']);
    expect(invariants(failing.filter((e) => e.ev !== 'lease'), { ttl: 600 })).toEqual(['job-once']);
    // Not when the old lease's run came more than a ttl after the loss (its owner must know by then).
    const later = (e: HistoryEvent): HistoryEvent => (typeof e.t === 'number' && e.t > 1_067 ? { ...e, t: e.t + 1_000 } : e);
    expect(invariants(failing.map(later), { ttl: 600 })).toEqual(['job-once']);
    // Not when both leases were taken before the loss: Redis never gave one lease to two owners.
    const bothOld = [...failing.filter((e) => !(e.ev === 'lease' && e.p === 'w0')), lease('w0', 900, 2)];
    bothOld.find((e) => e.ev === 'enter' && e.p === 'w0')!.owner = 2;
    expect(invariants(bothOld, { ttl: 600 })).toEqual(['job-once']);
  });

  it('finds two acquisitions with one fencing token, and a later acquisition with a lower one', () => {
    const same = [...call('w0.0.0', { invoke: 0, enter: 5, token: 3, exit: 10, ok: 11 }), ...call('w1.0.0', { invoke: 20, enter: 25, token: 3, exit: 30, ok: 31 })];
    expect(invariants(same)).toEqual(['unique-token', 'token-order']);
    const lower = [...call('w0.0.0', { invoke: 0, enter: 5, token: 3, exit: 10, ok: 11 }), ...call('w1.0.0', { invoke: 20, enter: 25, token: 2, exit: 30, ok: 31 })];
    expect(invariants(lower)).toEqual(['token-order']);
  });

  it("finds the register accepting a paused holder's late (lower) token, or refusing the rightful holder's", () => {
    const sections = [
      ...call('w0.0.0', { invoke: 0, enter: 5, token: 1, exit: 1_500, ok: 1_501 }),
      ...call('w1.0.0', { invoke: 10, enter: 900, token: 2, exit: 960, ok: 961 }),
      { ev: 'fault', kind: 'pause', p: 'w0', t: 100, until: 1_400 },
    ];
    const refusedLate = [...sections, register(0, 'w0.0.0', 1, true), register(1, 'w1.0.0', 2, true), register(2, 'w0.0.0', 1, false)];
    expect(invariants(refusedLate)).toEqual([]);
    const acceptedLate = [...sections, register(0, 'w0.0.0', 1, true), register(1, 'w1.0.0', 2, true), register(2, 'w0.0.0', 1, true)];
    expect(invariants(acceptedLate)).toEqual(['register-monotonic']);
    const refusedRightful = [...sections, register(0, 'w0.0.0', 1, true), register(1, 'w1.0.0', 2, false)];
    expect(invariants(refusedRightful)).toEqual(['fencing']);
  });

  // A restart without persistence loses the counters outright; they start again at the server's
  // clock in ms (e249151), so tokens keep rising across it. Seeded bug 51,
  // redis-fence-restarts-at-one, is the revert: tokens start again at 1.
  it('finds tokens that go back across a restart that lost the counters, unless one had run ahead of the clock', () => {
    const wall = 1_800_000_000_500;
    const before = wall - 400;
    // `ahead`: the restart began at a wall clock the lost counter had already passed.
    const restart = (at: number, seq: number, ahead = false): HistoryEvent[] => [
      { ev: 'fault', kind: 'restart-empty', t: at, until: at + 40, wall: ahead ? before - 100 : wall },
      { ev: 'restart', seq, wall: ahead ? before - 100 : wall },
    ];
    // One holder after the other, the register written by each, Redis restarting empty between them.
    const across = (after: number, ahead = false): HistoryEvent[] => [
      ...call('w0.0.0', { invoke: 0, enter: 5, token: before, exit: 50, ok: 51 }),
      register(0, 'w0.0.0', before, true),
      ...restart(100, 1, ahead),
      ...call('w1.0.0', { invoke: 60, enter: 200, token: after, exit: 250, ok: 251 }),
      register(2, 'w1.0.0', after, after >= before),
    ];
    // Tokens from the clock: clean, and a pre-restart holder's late write after them is refused.
    expect(invariants(across(wall + 3))).toEqual([]);
    const late = [...across(wall + 3), ...call('w2.0.0', { invoke: 0, enter: 6, token: before - 1, aborted: true, exit: 300, ok: 301 }), register(3, 'w2.0.0', before - 1, false)];
    expect(invariants(late)).toEqual([]);
    // The counter started again at 1: below the register's highest (refused, it keeps it), and not higher than the release before.
    expect(invariants(across(1))).toEqual(['token-order']);
    // The same token again, to an acquisition after the restart.
    expect(invariants(across(before))).toEqual(['unique-token', 'token-order', 'unique-token']);
    // A counter that had run past the clock (more tokens than milliseconds since its seed) goes back: excused.
    expect(invariants(across(1, true))).toEqual([]);
    expect(invariants(across(before, true))).toEqual([]);
  });

  it('finds a call that never settled and a worker that did not finish, but not those of a killed worker', () => {
    const unsettled = call('w0.0.0', { invoke: 0, enter: 5, token: 1 });
    expect(invariants(unsettled)).toEqual(['liveness']);
    expect(invariants([...unsettled, { ev: 'fault', kind: 'kill', p: 'w0', t: 20, until: 21 }])).toEqual([]);
    expect(invariants([{ ev: 'stuck', p: 'w1', t: 5 }])).toEqual(['liveness']);
  });

  it('finds a renewal refused while the lock\'s key still held its token (a false loss), and not an expiry or a true refusal', () => {
    const refused = (owned: boolean, reason = 'refused'): HistoryEvent[] => [
      ...call('w0.0.0', { kind: 'semaphore', limit: 6, invoke: 0, enter: 5, token: 1, exit: 50, ok: 52 }),
      { ev: 'lost', p: 'w0', sid: 'w0.0.0', reason, t: 20 },
      { ev: 'alive', p: 'w0', sid: 'w0.0.0', key: 'lock:{k}:permit:x', owned, t: 21 },
    ];
    expect(invariants(refused(true))).toEqual(['false-loss']);
    expect(invariants(refused(false))).toEqual([]);
    expect(invariants(refused(true, 'expired'))).toEqual([]);
  });

  it('finds a holder told of a loss after its code ended and its release was sent, unless the release was held up, the holder frozen, the data lost or the worker closing', () => {
    const told = (how: string, reason: string, extra: HistoryEvent[] = []): HistoryEvent[] => [
      ...call('w0.0.0', { invoke: 0, enter: 5, token: 1, exit: 50, ok: 52 }),
      { ev: 'told', p: 'w0', sid: 'w0.0.0', how, reason, t: 300 },
      ...extra,
    ];
    // The shape of a release resent after a connection reset (replies thrown away, then the reset).
    expect(invariants(told('aborted', 'refused', [{ ev: 'fault', kind: 'drop-replies', p: 'w0', t: 40, until: 280 }]))).toEqual(['told-after-release']);
    expect(invariants(told('lost event', 'refused'))).toEqual(['told-after-release']);
    // Told inside its code: no concern of this invariant.
    expect(invariants([...call('w0.0.0', { invoke: 0, enter: 5, token: 1, exit: 50, ok: 52 }), { ev: 'told', p: 'w0', sid: 'w0.0.0', how: 'aborted', reason: 'refused', t: 30 }])).toEqual([]);
    expect(invariants(told('aborted', 'refused', [{ ev: 'fault', kind: 'cut', p: 'w0', t: 45, until: 900 }]))).toEqual([]);
    expect(invariants(told('aborted', 'refused', [{ ev: 'fault', kind: 'pause', p: 'w0', t: 20, until: 40 }]))).toEqual([]);
    expect(invariants(told('aborted', 'refused', [{ ev: 'fault', kind: 'restart-empty', t: 100, until: 150 }]))).toEqual([]);
    expect(invariants(told('aborted', 'shutdown'))).toEqual([]);
    // The runner's stalls (every link waits through them) are named in the report, and excuse nothing.
    const stalled = check({ events: told('lost event', 'refused', [{ ev: 'stall', p: 'runner', t: 60, until: 180 }, { ev: 'stall', p: 'runner', t: 200, until: 230 }, { ev: 'stall', p: 'runner', t: 10, until: 30 }]) });
    expect(stalled.map((v) => v.invariant)).toEqual(['told-after-release']);
    expect(stalled[0]!.message).toContain('the runner, whose event loop carries every link, stalled meanwhile 2 time(s), 150 ms in all (longest 120 ms)');
    // A section that names its lease (the resent release probe's, 5 s): a worker's stall of a loaded
    // machine lost nothing of it; a freeze of a third of it may have.
    const named = (freeze: HistoryEvent): HistoryEvent[] => told('aborted', 'refused', [freeze]).map((e) => (e.ev === 'invoke' ? { ...e, ttl: 5_000 } : e));
    expect(invariants(named({ ev: 'stall', p: 'w0', t: 20, until: 60 }))).toEqual(['told-after-release']);
    expect(invariants(named({ ev: 'fault', kind: 'pause', p: 'w0', t: 20, until: 40 }))).toEqual(['told-after-release']);
    expect(invariants(named({ ev: 'fault', kind: 'pause', p: 'w0', t: 20, until: 1_700 }))).toEqual([]);
  });

  // Quorum seed 610002 (a CI run under load): rivals' multi-key attempts held the key on master 1
  // at the holder's grant and at each of its renewals, so its copies stood on masters 0 and 2
  // alone; master 2 restarted empty (no fault on another master), and the holder's release found
  // one copy: refused. The restart took half of a bare majority: a loss.
  it("judges a quorum master's restart a loss when a holder's recorded copies stood on a bare majority that included it", () => {
    const lock = 'lock:{k}';
    const copy = (what: string, node: number | undefined, sent: number, t: number, extra: object = {}): HistoryEvent => ({ ev: 'copy', p: 'w1', what, node, lock, token: 'a', sent, t, ttl: 600, ...extra });
    const holder = (nodes: number[]): HistoryEvent[] => [
      ...call('w1.0.0', { invoke: 147, enter: 419, token: 7, exit: 1_044, ok: 1_048 }),
      copy('acquired', undefined, 272, 356, { fencingToken: 7 }),
      ...nodes.flatMap((node) => [copy('grant', node, 272, 345), copy('renew', node, 428, 479), copy('renew', node, 630, 679), copy('renew', node, 830, 880)]),
      { ev: 'told', p: 'w1', sid: 'w1.0.0', how: 'lost event', reason: 'refused', t: 1_048 },
    ];
    const restart = (node: number): HistoryEvent => ({ ev: 'fault', kind: 'restart-empty', node, t: 945, until: 973, wall: 1 });
    const quorum = { ttl: 600, schedule: { target: 'quorum' } };
    expect(invariants([...holder([0, 2]), restart(2)], quorum)).toEqual([]);
    // Its copy on master 1 too: the restart left it a majority, so the refusal is unexplained.
    expect(invariants([...holder([0, 1, 2]), restart(2)], quorum)).toEqual(['told-after-release']);
    // A restart of a master it had no copy on took nothing of it.
    expect(invariants([...holder([0, 2]), restart(1)], quorum)).toEqual(['told-after-release']);
    // Its copy on master 2 had lapsed before the restart (renewed there last at 428): already a minority.
    const lapsed = holder([0, 2]).filter((e) => !(e.ev === 'copy' && e.node === 2 && (e.sent as number) > 428));
    expect(invariants([...lapsed, { ...restart(2), t: 1_030, until: 1_035 }], quorum)).toEqual(['told-after-release']);
    // Without the copy records (another build's layout), nothing tells a bare majority.
    expect(invariants([...holder([0, 2]), restart(2)].filter((e) => e.ev !== 'copy'), quorum)).toEqual(['told-after-release']);
  });

  it('finds a wait that timed out after every fault had ended, and allows one during a fault', () => {
    const timedOut = call('w0.0.0', { invoke: 2_000, fail: { t: 4_500, outcome: 'timeout' } });
    expect(invariants(timedOut, { quietAt: 1_000, ttl: 600 })).toEqual(['liveness']);
    expect(invariants(timedOut, { quietAt: 1_900, ttl: 600 })).toEqual([]);
  });

  it('holds each key of a multi-key transfer as a lock of its own: two transfers sharing an account may not overlap', () => {
    const transfer = (sid: string, keys: string[], tokens: number[], enter: number, exit: number): HistoryEvent[] => {
      const events = call(sid, { kind: 'transfer', invoke: 0, enter, token: tokens[0], exit, ok: exit + 1 });
      events[0]!.keys = keys;
      events[1]!.tokens = Object.fromEntries(keys.map((key, i) => [key, tokens[i]]));
      return events;
    };
    const apart = [...transfer('w0.0.0', ['k:acct-a', 'k:acct-b'], [1, 1], 5, 50), ...transfer('w1.0.0', ['k:acct-c'], [1], 6, 40)];
    expect(invariants(apart)).toEqual([]);
    // Sharing acct-b: the second entered while the first still held it.
    const sharing = [...transfer('w0.0.0', ['k:acct-a', 'k:acct-b'], [1, 1], 5, 50), ...transfer('w1.0.0', ['k:acct-b', 'k:acct-c'], [2, 1], 20, 40)];
    const [violation] = check({ events: sharing });
    expect(violation).toMatchObject({ invariant: 'exclusion' });
    expect(violation!.message).toContain('"k:acct-b"');
    // One after the other on acct-b, tokens growing: clean; each key's register judged apart.
    const after = [...transfer('w0.0.0', ['k:acct-a', 'k:acct-b'], [1, 1], 5, 50), ...transfer('w1.0.0', ['k:acct-b', 'k:acct-c'], [2, 1], 60, 80)];
    const writes = [register(0, 'w0.0.0', 1, true, 'k:acct-a'), register(1, 'w0.0.0', 1, true, 'k:acct-b'), register(2, 'w1.0.0', 2, true, 'k:acct-b'), register(3, 'w1.0.0', 1, true, 'k:acct-c')];
    expect(invariants([...after, ...writes])).toEqual([]);
    expect(invariants([...after, ...writes, register(4, 'w0.0.0', 1, true, 'k:acct-b')])).toEqual(['register-monotonic']);
  });

  it('finds a leader term that lost its lock, or ended with the close, without hearing onLeadershipLost, or heard it after another term began', () => {
    const term = (sid: string, enter: number, token: number, more: Partial<Section> = {}): HistoryEvent[] => call(sid, { kind: 'leader', invoke: enter, enter, token, exit: more.exit ?? enter + 500, ok: (more.exit ?? enter + 500) + 1, ...more });
    const told = (sid: string, t: number): HistoryEvent => ({ ev: 'leadership-lost', p: sid.split('.')[0], sid, t });
    const closed = (p: string, t: number): HistoryEvent[] => [{ ev: 'closing', p, shutdownTimeout: 1_000, t: t - 5 }, { ev: 'closed', p, t }];
    // w0 leads, loses its lock, hears it; w1 leads next; both hear it at their close.
    const clean = [...term('w0.leader.0', 0, 1, { lost: 600, exit: 610 }), told('w0.leader.0', 601), ...term('w1.leader.0', 700, 2, { exit: 1_500 }), told('w1.leader.0', 1_490), ...closed('w0', 1_500), ...closed('w1', 1_510)];
    expect(invariants(clean)).toEqual([]);
    expect(invariants(clean.filter((e) => !(e.ev === 'leadership-lost' && e.p === 'w1')))).toEqual(['leader-told']);
    expect(check({ events: clean.filter((e) => !(e.ev === 'leadership-lost' && e.p === 'w0')) }).map((v) => v.message)).toEqual([
      expect.stringContaining('lost its lock at 600 ms and never heard'),
      expect.stringContaining('began at 700 ms while w0.leader.0'),
    ]);
    // Heard after the next term began, unfrozen: too late.
    const late = clean.map((e) => (e.ev === 'leadership-lost' && e.p === 'w0' ? { ...e, t: 720 } : e));
    expect(invariants(late)).toEqual(['leader-told']);
    // Frozen (SIGSTOP) when the next term began: it must hear it as it thaws, not later.
    const pause: HistoryEvent = { ev: 'fault', kind: 'pause', p: 'w0', t: 100, until: 900 };
    const thawing = (t: number) => [...term('w0.leader.0', 0, 1, { lost: t, exit: t + 5 }), told('w0.leader.0', t), pause, ...term('w1.leader.0', 700, 2, { exit: 1_500 }), told('w1.leader.0', 1_490), ...closed('w0', 1_500), ...closed('w1', 1_510)];
    expect(invariants(thawing(905))).toEqual([]);
    expect(invariants(thawing(1_300))).toEqual(['leader-told']);
    // A killed leader is not heard from again.
    const killed = [...term('w0.leader.0', 0, 1), { ev: 'fault', kind: 'kill', p: 'w0', t: 300, until: 301 }, ...term('w1.leader.0', 700, 2, { exit: 1_500 }), told('w1.leader.0', 1_490), ...closed('w1', 1_510)];
    expect(invariants(killed)).toEqual([]);
  });

  it('finds an app.close() that took longer than its shutdownTimeout, the time its worker was frozen not counted', () => {
    const close = (took: number): HistoryEvent[] => [{ ev: 'closing', p: 'w0', shutdownTimeout: 1_000, t: 2_000 }, { ev: 'closed', p: 'w0', t: 2_000 + took }];
    expect(invariants(close(300))).toEqual([]);
    expect(check({ events: close(1_600) })).toEqual([expect.objectContaining({ invariant: 'close-bound', message: expect.stringContaining('app.close() of w0 took 1600 ms') })]);
    // Paused 800 ms during it: 800 ms of work.
    expect(invariants([...close(1_600), { ev: 'fault', kind: 'pause', p: 'w0', t: 2_300, until: 3_100 }])).toEqual([]);
    // Another worker's pause excuses nothing.
    expect(invariants([...close(1_600), { ev: 'fault', kind: 'pause', p: 'w1', t: 2_300, until: 3_100 }])).toEqual(['close-bound']);
    // Its links cut through the close, a worker that led: the shape of a defect since fixed (the lease handed back without a bound).
    const cutThrough: HistoryEvent = { ev: 'fault', kind: 'cut', p: 'w0', close: true, t: 1_995, until: 3_600 };
    const led = call('w0.leader.0', { kind: 'leader', invoke: 100, enter: 101, token: 1, exit: 2_010, ok: 2_011 });
    // A worker that led has two phases of shutdownTimeout (the election's, then the lock service's).
    const leadership = [...led, { ev: 'leadership-lost', p: 'w0', sid: 'w0.leader.0', t: 2_001 }];
    expect(check({ events: [...close(1_600), cutThrough, ...leadership] })).toEqual([]);
    expect(check({ events: [...close(2_400), { ...cutThrough, until: 4_500 }, ...leadership] })).toEqual([
      expect.objectContaining({ invariant: 'close-bound', cause: 'lease-release-unbounded' }),
    ]);
    expect(check({ events: [...close(1_600), cutThrough] })).toEqual([expect.not.objectContaining({ cause: expect.anything() })]);
    // The hand-back probe's election records no section, only its lease: two phases all the same,
    // and a close that ended as the link healed (its answers in) waited for it.
    const probeLease: HistoryEvent = { ev: 'lease', p: 'w0', key: 'k:long', token: 5, t: 150 };
    expect(check({ events: [...close(1_600), cutThrough, probeLease] })).toEqual([]);
    expect(check({ events: [...close(4_500), { ...cutThrough, until: 6_400 }, probeLease] })).toEqual([
      expect.objectContaining({ invariant: 'close-bound', cause: 'lease-release-unbounded' }),
    ]);
  });

  it('finds a quorum close begun with one master silent that waited past the second a silent master is waited for (close-waits-silent-master)', () => {
    const close = (took: number): HistoryEvent[] => [{ ev: 'closing', p: 'w0', shutdownTimeout: 3_000, t: 2_000 }, { ev: 'closed', p: 'w0', t: 2_000 + took }];
    const silenced = (node: number, t: number): HistoryEvent => ({ ev: 'silence', what: 'silenced', p: 'w0', node, t });
    const frozen: HistoryEvent = { ev: 'fault', kind: 'long-pause', node: 2, close: true, t: 500, until: 5_500 };
    expect(check({ events: [silenced(2, 1_600), frozen, ...close(2_900)] })).toEqual([
      expect.objectContaining({ invariant: 'close-waits-silent-master', message: expect.stringContaining('begun with master 2 silent and the others answering, took 2900 ms') }),
    ]);
    expect(invariants([silenced(2, 1_600), frozen, ...close(40)])).toEqual([]);
    // Not silenced in its store's eyes (answered again before the close), or two of three silent: no judgement.
    expect(invariants([silenced(2, 1_600), { ev: 'silence', what: 'comeback', p: 'w0', node: 2, t: 1_900 }, ...close(2_900)])).toEqual([]);
    expect(invariants([silenced(2, 1_600), silenced(1, 1_700), frozen, ...close(2_900)])).toEqual([]);
    // Another fault holding up the worker's commands through the close excuses it.
    expect(invariants([silenced(2, 1_600), frozen, ...close(2_900), { ev: 'fault', kind: 'delay', p: 'w0', t: 2_100, until: 2_500 }])).toEqual([]);
    // Paused 2 s of it: 900 ms of work.
    expect(invariants([silenced(2, 1_600), frozen, ...close(2_900), { ev: 'fault', kind: 'pause', p: 'w0', t: 2_300, until: 4_300 }])).toEqual([]);
  });

  it('finds a quorum call failed "Quorum not reached" with one master out (minority-fails-quorum)', () => {
    const failed: HistoryEvent[] = [
      { ev: 'invoke', p: 'w1', sid: 'w1.bare.0', key: 'k', kind: 'mutex', t: 3_000 },
      { ev: 'fail', p: 'w1', sid: 'w1.bare.0', error: 'LockNotAcquiredError: Redis did not answer (Quorum not reached to acquire the lock: 1 of 3 Redis nodes agreed, 2 needed)', outcome: 'error', t: 3_500 },
    ];
    const paused: HistoryEvent = { ev: 'fault', kind: 'long-pause', node: 2, t: 1_800, until: 4_000 };
    const quorum = (events: HistoryEvent[]): string[] => invariants(events, { schedule: { target: 'quorum' } });
    expect(quorum([paused, ...failed])).toEqual(['minority-fails-quorum']);
    // A copy deleted on another master is no master out; not judged off quorum mode.
    expect(quorum([paused, { ev: 'fault', kind: 'delete-key', node: 0, t: 1_700, until: 1_701 }, ...failed])).toEqual(['minority-fails-quorum']);
    expect(check({ events: [paused, ...failed] })).toEqual([]);
    // Two masters out: a second fault up to 1.5 s before the call, or one its store still had silenced.
    expect(quorum([paused, { ev: 'fault', kind: 'redis-pause', node: 0, t: 1_000, until: 1_600 }, ...failed])).toEqual([]);
    expect(quorum([paused, { ev: 'fault', kind: 'redis-pause', node: 0, t: 1_000, until: 1_400 }, ...failed])).toEqual(['minority-fails-quorum']);
    expect(quorum([paused, { ev: 'silence', what: 'silenced', p: 'w1', node: 0, t: 3_100 }, ...failed])).toEqual([]);
    expect(quorum([paused, { ev: 'fault', kind: 'reset', t: 3_200, until: 3_200 }, ...failed])).toEqual([]);
    // A master whose counter was written past 2^53 (--foreign-counters) refuses every acquisition
    // until its deletion: out, as a failed one is; one written -5 is raised to the seed, and refuses nothing.
    const foreign = (value: string, masters: number[], sent: number, until: number): HistoryEvent => ({ ev: 'fault', kind: 'foreign-counter', masters, keys: ['lock:{k}:fence'], value, sent, t: sent, until });
    expect(quorum([paused, foreign('9007199254740993', [0], 3_100, 3_600), ...failed])).toEqual([]);
    expect(quorum([foreign('9007199254740993', [0, 1], 3_100, 3_600), ...failed])).toEqual([]);
    expect(quorum([paused, foreign('-5', [0], 3_100, 3_600), ...failed])).toEqual(['minority-fails-quorum']);
    expect(quorum([paused, foreign('9007199254740993', [2], 3_100, 3_600), ...failed])).toEqual(['minority-fails-quorum']);
    expect(quorum([paused, foreign('9007199254740993', [0], 3_600, 3_900), ...failed])).toEqual(['minority-fails-quorum']);
  });

  it('finds a closed application that sent a master answering again releases or fencing raises (sent-after-close)', () => {
    const comeback = (t: number, releases: number, floors: number): HistoryEvent => ({ ev: 'silence', what: 'comeback', p: 'w0', node: 2, silent: true, releases, floors, t });
    const closed: HistoryEvent[] = [{ ev: 'closing', p: 'w0', shutdownTimeout: 3_000, t: 2_000 }, { ev: 'closed', p: 'w0', t: 2_100 }];
    expect(invariants([...closed, comeback(2_600, 0, 1)])).toEqual(['sent-after-close']);
    expect(invariants([...closed, comeback(2_600, 2, 0)])).toEqual(['sent-after-close']);
    // Nothing sent, or sent before the close ended.
    expect(invariants([...closed, comeback(2_600, 0, 0)])).toEqual([]);
    expect(invariants([...closed, comeback(2_050, 2, 1)])).toEqual([]);
  });

  it('finds give-backs sent after polls that every master answered busy or was not asked, one silent (busy-poll-gives-back)', () => {
    const poll = (p: string, t: number, gaveBack: number): HistoryEvent => ({ ev: 'busy-poll', p, silent: 1, gaveBack, t });
    expect(invariants([poll('w0', 100, 0), poll('w0', 200, 0), poll('w1', 150, 0)])).toEqual([]);
    expect(check({ events: [poll('w0', 100, 0), poll('w0', 200, 1), poll('w0', 300, 1), poll('w1', 150, 0)] })).toEqual([
      expect.objectContaining({ invariant: 'busy-poll-gives-back', message: expect.stringContaining('w0 sent a give-back after 2 poll(s)') }),
    ]);
  });

  it("finds a quorum master that answered again and was not sent a holder's release it missed (comeback-left-release)", () => {
    const comeback = (t: number, left: number): HistoryEvent => ({ ev: 'silence', p: 'w0', what: 'comeback', node: 2, silent: true, releases: 1, floors: 0, left, t });
    // Every release it missed sent (an owed give-back whose holder's release reached it is not counted by the worker).
    expect(invariants([{ ev: 'silence', p: 'w0', what: 'silenced', node: 2, t: 1_000 }, comeback(2_500, 0)])).toEqual([]);
    expect(check({ events: [comeback(2_500, 0), comeback(3_000, 1)] })).toEqual([
      expect.objectContaining({ invariant: 'comeback-left-release', message: expect.stringContaining("w0's master 2, answering again at") }),
    ]);
  });

  it("finds an isLocked() or inspect() that settled past an attempt's 1 s grace, its worker's freeze not counted (read-unbounded)", () => {
    const read = (t: number, done: number, what = 'isLocked'): HistoryEvent => ({ ev: 'read', p: 'w0', what, t, done, outcome: 'answered' });
    // Refused at the grace, with Redis frozen: as promised.
    expect(invariants([read(100, 1_105)])).toEqual([]);
    // Held until Redis answered again, 2.4 s later (seeded bug 83).
    expect(invariants([read(100, 2_500, 'inspect')])).toEqual(['read-unbounded']);
    expect(check({ events: [read(100, 2_500, 'inspect')] })[0]!.message).toContain('inspect() of w0 asked at');
    // Its worker paused (SIGSTOP) or its event loop stalled meanwhile: that time is not the read's.
    expect(invariants([read(100, 2_500), { ev: 'fault', kind: 'pause', p: 'w0', t: 200, until: 1_700 }])).toEqual([]);
    expect(invariants([read(100, 2_500), { ev: 'stall', p: 'w0', t: 200, until: 1_700 }])).toEqual([]);
    expect(invariants([read(100, 2_500), { ev: 'stall', p: 'w1', t: 200, until: 1_700 }])).toEqual(['read-unbounded']);
  });

  it('finds what a closed worker left in Redis, but not what a killed worker left, nor what a recent fault of its commands may have left', () => {
    const token = (p: string): string => `${'ab'.repeat(16)}.${Buffer.from(JSON.stringify(['host', 1, p, null])).toString('base64url')}.${(1_700_000_000_000).toString(36)}`;
    const closed = (p: string, t: number): HistoryEvent[] => [{ ev: 'closing', p, shutdownTimeout: 1_000, t }, { ev: 'closed', p, t: t + 10 }];
    const key = (name: string, type: string, pttl: number, tokens: string[]): HistoryEvent => ({ ev: 'store', node: 0, key: name, type, pttl, tokens, t: 5_000 });
    const closes = [...closed('w0', 4_000), ...closed('w1', 4_000)];
    // Queue keys with no live place, and a semaphore's hash with only its own fields, expire on their own.
    expect(invariants([...closes, key('lock:{k}:queue', 'list', 900, []), key('lock:{k}:waiters', 'zset', 900, []), key('lock:{k}:holders', 'hash', 400, [])])).toEqual([]);
    const permit = key(`lock:{k}:permit:${token('w1')}`, 'string', 450, [token('w1'), token('w1')]);
    expect(check({ events: [...closes, permit] })).toEqual([expect.objectContaining({ invariant: 'store-leftover', message: expect.stringContaining("still held w1's token") })]);
    expect(invariants([...closes, key('lock:{k}', 'string', 300, [token('w0')]), key('lock:{k}:waiters', 'zset', 800, [token('w1')])])).toEqual(['store-leftover', 'store-leftover']);
    expect(invariants([...closes, key('lock:{k}:readers', 'hash', -1, [])])).toEqual(['store-leftover']);
    // w1 killed: its leases run out on their own.
    expect(invariants([...closed('w0', 4_000), { ev: 'fault', kind: 'kill', p: 'w1', t: 700, until: 701 }, permit])).toEqual([]);
    // A cut of w1's links (or everyone's) that ended 1 s before w1's close: a lost release may have left it.
    const cut = (p: string | undefined, until: number): HistoryEvent => ({ ev: 'fault', kind: 'cut', ...(p ? { p } : {}), t: until - 500, until });
    expect(invariants([...closes, permit, cut('w1', 3_000)], { ttl: 600 })).toEqual([]);
    expect(invariants([...closes, permit, cut(undefined, 3_000)], { ttl: 600 })).toEqual([]);
    // Not one of another worker's links, nor one that ended long before.
    expect(invariants([...closes, permit, cut('w0', 3_000)], { ttl: 600 })).toEqual(['store-leftover']);
    expect(invariants([...closes, permit, cut('w1', 1_000)], { ttl: 600 })).toEqual(['store-leftover']);
  });

  it("finds the permit probe's caller refused the permits its second section did not hold, once its first was told its permit was gone (free-refused)", () => {
    // Seeded bug 96 (the revert of d9880f3): the told holder's entry stayed counted until its old deadline.
    expect(check({ events: [{ ev: 'free-refused', p: 'w1', permits: 1, t: 3_360, done: 3_362 }] })).toEqual([expect.objectContaining({ invariant: 'free-refused', message: expect.stringContaining("w1's permit probe was refused 1 permit(s)") })]);
    expect(invariants([{ ev: 'exit', p: 'w1', sid: 'w1.probe.7', t: 3_360 }])).not.toContain('free-refused');
  });

  it('finds what a closed application left keeping its worker alive, naming it, and nothing when it left nothing', () => {
    const alive = (p: string, left: string[]): HistoryEvent[] => [
      { ev: 'closing', p, shutdownTimeout: 1_000, t: 1_000 },
      { ev: 'closed', p, t: 1_100 },
      { ev: 'alive-after-close', p, left, since: 1_100, bound: 250, t: left.length > 0 ? 1_351 : 1_104 },
    ];
    expect(invariants(alive('w0', []))).toEqual([]);
    // The shape of a connection waiting ioredis' 2 s disconnectTimeout for a Redis out of reach.
    const [violation, ...more] = check({ events: [...alive('w0', []), ...alive('w1', ['TCPSocketWrap', 'Timeout', 'TCPSocketWrap', 'Timeout'])] });
    expect(more).toEqual([]);
    expect(violation).toMatchObject({ invariant: 'left-alive-after-close', at: 1_351 });
    expect(violation!.message).toContain('app.close() of w1 left 2 TCPSocketWrap, 2 Timeout keeping its process alive 251 ms after it resolved');
  });

  it("does not count against a closed application the time its worker's event loop stalled after the close, and only that time", () => {
    const closes = (p: string): HistoryEvent[] => [
      { ev: 'closing', p, shutdownTimeout: 1_000, t: 1_000 },
      { ev: 'closed', p, t: 1_100 },
    ];
    const stall = (p: string, t: number, until: number): HistoryEvent => ({ ev: 'stall', p, t, until });
    const left = (p: string, t: number): HistoryEvent => ({ ev: 'alive-after-close', p, left: ['TCPSocketWrap', 'Timeout'], since: 1_100, bound: 250, t });
    // The shape of Cluster seed 60055 of --deletes on a loaded machine: a stall begun before the
    // close resolved and one after it held the worker 640 of the 663 ms before it looked (its
    // sockets' closes not yet run): 23 ms of its own, not the bound's 250.
    expect(invariants([...closes('w0'), stall('w0', 1_080, 1_140), stall('w0', 1_150, 1_750), left('w0', 1_763)])).toEqual([]);
    // A leak is still one past a stall: the worker ran 250 ms beside the 200 it stalled.
    const [violation, ...more] = check({ events: [...closes('w1'), stall('w1', 1_200, 1_400), left('w1', 1_550)] });
    expect(more).toEqual([]);
    expect(violation).toMatchObject({ invariant: 'left-alive-after-close', at: 1_550 });
    expect(violation!.message).toContain('keeping its process alive 450 ms after it resolved (200 ms of it stalled; its own connections close within 250 ms)');
    // Another worker's stall, or one of its own before the close, excuses nothing.
    expect(invariants([...closes('w2'), stall('w1', 1_150, 1_750), stall('w2', 500, 1_000), left('w2', 1_763)])).toEqual(['left-alive-after-close']);
  });

  it("finds a semaphore whose count (':used') differs from what its holders' entries hold, whoever left it", () => {
    const holders = (used: number, held: number): HistoryEvent => ({ ev: 'store', node: 0, key: 'lock:{k}:holders', type: 'hash', pttl: 900, tokens: [], counts: { used, held }, t: 5_000 });
    const killed: HistoryEvent = { ev: 'fault', kind: 'kill', p: 'w1', t: 700, until: 701 };
    expect(invariants([holders(0, 0)])).toEqual([]);
    // A crashed holder's entry still counts its permits, and the count says so.
    expect(invariants([killed, holders(2, 2)])).toEqual([]);
    // Permits counted that no entry holds (lost until the hash expires): no fault excuses it.
    expect(check({ events: [killed, holders(1, 0)] })).toEqual([expect.objectContaining({ invariant: 'semaphore-count', message: expect.stringContaining("counts 1 permit(s) held (':used') where its holders' entries hold 0") })]);
    expect(invariants([holders(2, 3)])).toEqual(['semaphore-count']);
  });
});

// Seeds are random per run (a failure prints the replay command); EXPLORE_REAL_SEED fixes the first.
// Seven per run (sixteen until the thirty-third session, ten until the thirty-ninth): every CI run
// draws new ones, and the suite must stay within CI's 20 minutes on the slower machines
// (`npm run explore:real` for more); the fixed seeds below keep the regressions.
const SCHEDULES = 7;
const firstSeed = Number(process.env.EXPLORE_REAL_SEED ?? Math.floor(Math.random() * 1e6));

// One environment for the file (one server, a 3-master Cluster and three quorum masters; the
// quorum schedules started a second one, with its own register and server, until the thirty-ninth
// session), started by the first describe that needs it and stopped after the last.
let shared: Promise<Environment> | undefined;
const sharedEnvironment = (): Promise<Environment> => (shared ??= startEnvironment({ quorum: true }));
afterAll(async () => {
  await (await shared?.catch(() => undefined))?.stop();
}, 30_000);

describe(`real Redis and a 3-master Cluster: ${SCHEDULES} seeded fault schedules from seed ${firstSeed} (needs npm run build)`, () => {
  let environment: Environment;
  beforeAll(async () => {
    environment = await sharedEnvironment();
  }, 60_000);

  it('keeps every invariant under worker pauses and kills, network faults and Redis restarts', { timeout: 240_000 }, async () => {
    const results: RunResult[] = [];
    // Both deployments every run: a target is drawn (a Cluster one time in three), and seven draws
    // miss one about once in sixteen runs, so the last schedule takes the one missing, if any.
    let forced: 'single' | 'cluster' | undefined;
    for (let i = 0; i < SCHEDULES; i++) {
      const drawn = new Set(results.map((r) => r.schedule.target));
      if (i === SCHEDULES - 1 && drawn.size === 1) forced = drawn.has('cluster') ? 'single' : 'cluster';
      results.push(await runSchedule(environment, makeSchedule(firstSeed + i, forced === undefined ? {} : { target: forced })));
    }
    const broken = results.filter((r) => r.violations.length > 0);
    const faults: Record<string, number> = {};
    for (const r of results) for (const [kind, n] of Object.entries(r.figures.faults)) faults[kind] = (faults[kind] ?? 0) + n;
    process.stdout.write(
      `explore real: schedules=${SCHEDULES} seeds=${firstSeed}..${firstSeed + SCHEDULES - 1} cluster=${results.filter((r) => r.schedule.target === 'cluster').length} ` +
        `calls=${results.reduce((n, r) => n + r.figures.sections, 0)} faults=${JSON.stringify(faults)} violations=${broken.length}\n`,
    );
    const report = failures(results, (r) => `npm run explore:real -- --seed ${r.schedule.seed}${forced !== undefined && r.schedule.seed === firstSeed + SCHEDULES - 1 ? ` --target ${forced}` : ''}`);
    expect(report).toBe('');
    // Both deployments and real work: every schedule ran calls, and most entered the lock (one
    // whose faults cover its whole run may enter nothing: seed 250637, a job on a Cluster whose
    // two masters dropped replies for all of its 1.7 s of ticks, each failing with its error).
    expect(new Set(results.map((r) => r.schedule.target)).size).toBe(2);
    expect(results.every((r) => r.figures.sections > 0)).toBe(true);
    expect(results.filter((r) => r.figures.entered > 0).length).toBeGreaterThan(results.length / 2);
    // lease-outlasted reads engine internals (worker.mjs's heldLockOf), and records nothing on a
    // build whose fields moved: on one server, the entries were read against Redis' own lease.
    const singleEntered = results.filter((r) => r.schedule.target === 'single' && r.figures.entered > 0);
    if (singleEntered.length > 0) expect(singleEntered.some((r) => r.history.events.some((e) => e.ev === 'redis-lease' && e.ours === true))).toBe(true);
  });

  // Seeds 1 to 3 of the migration schedules, kept as the regression of what the explorer found
  // with the revert of issue 23 item 3 (explore/bugs/19-renew-migration-nil-as-gone.patch; with
  // EXPLORE_PACKAGE on that build, two or three of them fail with false-loss in each run, and
  // `npm run explore:bugs` finds it at seed 2 or earlier): a worker's batch renewal went to the
  // importing master with its first permit, and its other permit, not moved yet, read as gone.
  it('keeps every permit through a slot migration under way, renewed in one batch per worker (seeds 1 to 3)', { timeout: 60_000 }, async () => {
    const results: RunResult[] = [];
    for (const seed of [1, 2, 3]) results.push(await runSchedule(environment, makeSchedule(seed, { migrate: true })));
    const report = failures(results, (r) => `npm run explore:real -- --seed ${r.schedule.seed} --migrate`);
    expect(report).toBe('');
    for (const { history } of results) {
      // The slot moved key by key (permits, holders, fencing counter) while permits were held.
      const migration = history.events.find((e) => e.ev === 'fault' && e.kind === 'migrate')!;
      expect(migration.moved).toBeGreaterThanOrEqual(3);
      const exitOf = (sid: unknown) => history.events.find((e) => e.ev === 'exit' && e.sid === sid)?.t ?? Infinity;
      const heldDuring = history.events.filter((e) => e.ev === 'enter' && e.t! < (migration.until as number) && exitOf(e.sid) > migration.t!);
      expect(heldDuring.length).toBeGreaterThanOrEqual(2);
    }
  });

  // Greedy barging callers (never drawn above: the seeds keep their workloads), so that parking
  // (lib/core/engine/lock-parking.ts) runs under real faults: a holder paused, its release
  // replies thrown away, a kill, a pause and lost requests on a Cluster closed in the middle of
  // work. With explore/bugs/22-parked-lock-freed-while-held.patch built in, every one of seeds
  // 1 to 8 broke exclusion. Seed 1168 (a kill, a pause and a restart of Redis) once reported the
  // barging waiters' flag (`:wanted`, which names nobody) as a lock left behind. Seeds 5 and 7 ran
  // here too until the thirty-ninth session: seed 4 (one server) and 1168 (a Cluster) cover both
  // deployments, and bug 22 breaks on seed 4 alone.
  it('keeps every invariant with greedy barging callers whose process parks the lock between calls (seeds 4, 1168)', { timeout: 60_000 }, async () => {
    const results: RunResult[] = [];
    for (const seed of [4, 1168]) results.push(await runSchedule(environment, makeSchedule(seed, { workload: 'greedy' })));
    const report = failures(results, (r) => `npm run explore:real -- --seed ${r.schedule.seed} --workload greedy`);
    expect(report).toBe('');
    expect(results.every((r) => r.figures.entered > 0)).toBe(true);
  });

  // Faults from outside (never drawn above: the seeds keep their faults; `--deletes`,
  // `--drop-messages`): a key of the run deleted on the runner's own connection (an operator's DEL,
  // an eviction), and a worker's release messages thrown away while its commands flow. Read-write
  // lock seeds 13 (a Cluster) and 37 (one server) of `--deletes` are where the explorer found the
  // revert of 59b7494 (explore/bugs/78-reader-hash-kept-for-new-readers.patch): a reader whose `~r`
  // was deleted renewed on beside a new readers' `~r`, never told (told-of-deletion); on that build
  // a replay shows it only now and then (timing), so they guard the fault and the fixed code. Mutex
  // seed 2 loses a worker's release messages for 1.3 s while the lock changes hands. Semaphore seed
  // 21 deletes a holder's permit key during the run, and ends with the permit probe (a permit
  // deleted under one of two holders, nobody calling after them): on the revert of d9880f3
  // (explore/bugs/96-permit-gone-at-renewal-keeps-permits-counted.patch) the probe's caller is
  // refused the free permit once its first holder was told (free-refused); on the revert of
  // 1c00b54 (explore/bugs/81-semaphore-release-without-permit-keeps-entry.patch), once its first
  // holder released at once after the deletion, before a renewal of its met the gone key (the
  // probe's second part; the renewal that tells a holder drops its entry itself).
  it('keeps every invariant with a lock key deleted from outside and release messages lost (rwlock seeds 13 and 37, mutex seed 2, semaphore seed 21)', { timeout: 90_000 }, async () => {
    const results: RunResult[] = [];
    results.push(await runSchedule(environment, makeSchedule(13, { target: 'cluster', workload: 'rwlock', deletes: true })));
    results.push(await runSchedule(environment, makeSchedule(37, { target: 'single', workload: 'rwlock', deletes: true })));
    results.push(await runSchedule(environment, makeSchedule(2, { target: 'single', workload: 'mutex', deletes: true, mute: true })));
    results.push(await runSchedule(environment, makeSchedule(21, { target: 'single', workload: 'semaphore', deletes: true })));
    const report = failures(results, (r) => `npm run explore:real -- --seed ${r.schedule.seed} --deletes${r.schedule.mute ? ' --drop-messages' : ''} --target ${r.schedule.target} --workload ${r.schedule.workload}`);
    expect(report).toBe('');
    // Each deleted a key it found, and the subscribers of the muted worker missed messages.
    expect(results.every((r) => r.figures.deleted.length === 1 && r.figures.deleted[0] !== 'none')).toBe(true);
    expect(results[2]!.figures.mutedChunks).toBeGreaterThan(0);
    // The semaphore schedule drained, and its probe deleted the first holder's permit key.
    expect(results[3]!.figures.probe).toBe(true);
  });

  // The run's fencing counters written past 2^53 or negative for a while (`--foreign-counters`,
  // never drawn): every acquisition meanwhile fails with a RedisLockError naming the counter, and
  // none enters with a token no fencing token can be (token-range; the revert of b7696f17,
  // explore/bugs/128-foreign-counter-hands-out-inexact-tokens.patch, is found by mutex seed 2).
  it('keeps every invariant with the fencing counters holding a value no token can be for a while (mutex seed 2)', { timeout: 60_000 }, async () => {
    const result = await runSchedule(environment, makeSchedule(2, { target: 'single', workload: 'mutex', foreign: true }));
    expect(failures([result], (r) => `npm run explore:real -- --seed ${r.schedule.seed} --foreign-counters --target single --workload mutex`)).toBe('');
    // It wrote a counter the run had, and calls failed on it.
    expect(result.history.events.some((e) => e.ev === 'fault' && e.kind === 'foreign-counter' && Array.isArray(e.keys) && e.keys.length > 0)).toBe(true);
    expect(result.history.events.some((e) => e.ev === 'fail' && typeof e.error === 'string' && e.error.includes('fencing counter'))).toBe(true);
  });

  // A node-redis client handed in (never drawn above: the seeds keep their clients), so that the
  // node-redis driver and the library's subscriber on a duplicate of it run under the same faults.
  // Seeds 850000 to 850002: a semaphore, a read-write lock and a job (850003, a second job, ran
  // too until the thirty-ninth session).
  it('keeps every invariant with a node-redis client handed to the module (seeds 850000 to 850002)', { timeout: 60_000 }, async () => {
    const results: RunResult[] = [];
    for (let seed = 850_000; seed < 850_003; seed++) results.push(await runSchedule(environment, makeSchedule(seed, { target: 'single', driver: 'node-redis' })));
    const report = failures(results, (r) => `npm run explore:real -- --seed ${r.schedule.seed} --target single --driver node-redis`);
    expect(report).toBe('');
    expect(results.every((r) => r.figures.sections > 0)).toBe(true);
    // Every worker of every schedule ran on a node-redis client of its own.
    const clients = results.flatMap((r) => r.history.events.filter((e) => e.ev === 'ready').map((e) => e.client));
    expect(clients.length).toBe(results.length * 3);
    expect(new Set(clients)).toEqual(new Set(['node-redis']));
  });

  // Clients handed in, one server frozen across the close (`--handed --target single`): the closed
  // application sends nothing on them. Seed 1 (mutex) saw the driver's NOSCRIPT retry of a leave
  // go out after the close until 2d1df09; seed 506646 (semaphore) sees ioredis resend, as it
  // reconnects after the close, commands a dropped reply left unanswered: the client's own resend
  // of the same command, which the rule leaves out (and a rule that took it for the
  // application's flagged both workers).
  it('sends nothing on clients handed in once closed (handed seeds 1 and 506646)', { timeout: 90_000 }, async () => {
    const results: RunResult[] = [];
    results.push(await runSchedule(environment, makeSchedule(1, { target: 'single', workload: 'mutex', handed: true })));
    results.push(await runSchedule(environment, makeSchedule(506_646, { target: 'single', workload: 'semaphore', handed: true })));
    const report = failures(results, (r) => `npm run explore:real -- --seed ${r.schedule.seed} --handed --target single --workload ${r.schedule.workload}`);
    expect(report).toBe('');
    expect(results.every((r) => r.figures.sections > 0)).toBe(true);
  });

  // Job seed 1 on one server drains, and ends with the own run probe (a worker's run going on
  // while Redis restarts empty, then its next ticks): on the revert of fa0d00a's local guard
  // (explore/bugs/35-job-run-beside-own-run-after-data-loss.patch) the worker's next tick ran
  // beside its own run (exclusion), in each of 8 probed schedules of seeds 1 to 16.
  it("skips a worker's next ticks while its own run goes on across a restart of Redis (job seed 1)", { timeout: 60_000 }, async () => {
    const result = await runSchedule(environment, makeSchedule(1, { target: 'single', workload: 'job' }));
    expect(failures([result], () => 'npm run explore:real -- --seed 1 --target single --workload job')).toBe('');
    expect(result.figures.ownRun).toBe(true);
  });
});

// Three independent masters in quorum mode (never drawn above: the seeds keep their targets).
// Seed 28 is the schedule that showed a single master's restart losing a lock whose holder could
// not reach another master (see the checker's quorum loss, and docs/deployment.md), and fencing
// tokens repeating after it until a lost counter started at the clock (with that fix reverted
// it broke unique-token in 1 of 4 runs); 610001 (a leader) and 610002 (transfers) are plain
// draws of the other workloads. Mutex seeds 2 and 119 are the regression of inspect() reporting a
// minority master's counter as the holder's token (explore/bugs/72-quorum-inspect-any-masters-counter.patch;
// on that build seed 2 broke inspect-token in 3 runs of 3, seed 119 in 2 of 3; in the thirty-ninth
// session seed 2 in 2 of 4, seed 119 in 2 of 2). Seed 610000 (a third mutex draw) ran here too
// until the thirty-ninth session.
describe('real Redis in quorum mode: seeded fault schedules (needs npm run build)', () => {
  let environment: Environment;
  beforeAll(async () => {
    environment = await sharedEnvironment();
  }, 60_000);

  it('keeps every invariant on three masters (seeds 28, 610001 and 610002, mutex seeds 2 and 119)', { timeout: 120_000 }, async () => {
    const results: RunResult[] = [];
    for (const seed of [28, 610_001, 610_002]) results.push(await runSchedule(environment, makeSchedule(seed, { target: 'quorum' })));
    for (const seed of [2, 119]) results.push(await runSchedule(environment, makeSchedule(seed, { target: 'quorum', workload: 'mutex' })));
    const replay = (r: RunResult) => `npm run explore:real -- --seed ${r.schedule.seed} --target quorum${r.schedule.seed < 200 ? ' --workload mutex' : ''}`;
    const report = failures(results, replay);
    expect(report).toBe('');
    expect(results.every((r) => r.figures.entered > 0)).toBe(true);
    // Every worker of every schedule ran in quorum mode, and seed 28 restarted a master.
    const clients = results.flatMap((r) => r.history.events.filter((e) => e.ev === 'ready').map((e) => e.client));
    expect(new Set(clients)).toEqual(new Set(['quorum']));
    expect(results[0]!.history.events.some((e) => e.ev === 'fault' && e.kind === 'restart-empty' && e.node === 0)).toBe(true);
    // The mutex seeds asked inspect() while holding.
    expect(results.slice(3).every((r) => r.history.events.some((e) => e.ev === 'inspect' && e.held === true && e.seenHeld === true))).toBe(true);
  });

  // The fencing counters of a majority of the masters (1 and 2) written past 2^53 for 438 ms
  // (`--foreign-counters`, never drawn): every acquisition meanwhile fails with a RedisLockError
  // naming the counter ("Quorum not reached", the two masters judged out by minority-fails-quorum),
  // and none enters with a token no fencing token can be (token-range; the revert of 594755df,
  // explore/bugs/129-quorum-foreign-counter-hands-out-inexact-tokens.patch, is found from seed 1 by
  // seed 2, one master written; the catalogue's CI replay covers no real-Redis bug).
  it('keeps every invariant with a majority of the fencing counters past 2^53 for a while (mutex seed 7)', { timeout: 60_000 }, async () => {
    const result = await runSchedule(environment, makeSchedule(7, { target: 'quorum', workload: 'mutex', foreign: true }));
    expect(failures([result], (r) => `npm run explore:real -- --seed ${r.schedule.seed} --foreign-counters --target quorum --workload mutex`)).toBe('');
    const fault = result.history.events.find((e) => e.ev === 'fault' && e.kind === 'foreign-counter');
    expect(fault).toEqual(expect.objectContaining({ masters: [1, 2], value: '9007199254740993' }));
    expect((fault!.keys as string[]).length).toBeGreaterThan(0);
    expect(result.history.events.some((e) => e.ev === 'fail' && typeof e.error === 'string' && e.error.includes('FOREIGNFENCINGCOUNTER'))).toBe(true);
  });

  // Silence schedules (`--silence`: masters frozen past the 1 s silence threshold, resumed or
  // restarted empty). Seed 1046 found a waiter's give-back resent to a returning master behind the
  // grant of the same token's later attempt: two holders, in 1 run of 5 to 10 before f5fe742.
  // A schedule is run again (at most twice) when no worker saw its master silent and answering
  // again: on a loaded machine the workers may all be between calls while it is silent, or closed
  // by its return (a CI run's seed 1046 once was). Every run's invariants are judged.
  // On the revert of e1704ae's re-add (explore/bugs/97-quorum-missed-release-not-resent-on-comeback.patch)
  // seed 1046 or 2000 breaks comeback-left-release (one in each of two runs: timing), a returning
  // master not sent a holder's release it missed. Seed 8 owes a returning master a waiter's
  // give-back recorded after the token's holder released on that master's connection (harmless,
  // sent again at the close), which a first cut of that rule took for a release not sent.
  it('keeps every invariant while masters go silent and answer again (silence mutex seeds 1046, 2000 and 8)', { timeout: 220_000 }, async () => {
    const results: RunResult[] = [];
    const sawSilence = (r: RunResult) => r.figures.silenced > 0 && r.figures.comebacks > 0;
    for (const seed of [1046, 2000, 8]) {
      for (let run = 0; run < 3 && !results.some((r) => r.schedule.seed === seed && sawSilence(r)); run++) {
        results.push(await runSchedule(environment, makeSchedule(seed, { target: 'quorum', workload: 'mutex', silence: true })));
      }
    }
    const report = failures(results, (r) => `npm run explore:real -- --seed ${r.schedule.seed} --silence --target quorum --workload mutex`);
    expect(report).toBe('');
    // The masters went silent, and their return resent what they had missed.
    const figures = results.map((r) => ({ seed: r.schedule.seed, silenced: r.figures.silenced, comebacks: r.figures.comebacks, resent: r.figures.resent }));
    for (const seed of [1046, 2000]) expect(results.some((r) => r.schedule.seed === seed && sawSilence(r)), JSON.stringify(figures)).toBe(true);
    expect(results.some((r) => r.figures.resent > 0), JSON.stringify(figures)).toBe(true);
  });

  // Latency schedules (`--latency`: masters 10 to 30 ms away, one restarting empty). With 9b54bbb
  // reverted (give-backs as EVALSHA), seed 16 showed copy-deleted-while-held: a give-back's EVAL
  // retry after NOSCRIPT ran behind the same token's next attempt and deleted its grant (1 replay
  // of 3 of seed 16 on that build: timing, not a deterministic regression; main must stay clean).
  it('keeps every invariant on masters far away, one restarting empty (latency mutex seeds 16 and 17)', { timeout: 90_000 }, async () => {
    const results: RunResult[] = [];
    for (const seed of [16, 17]) results.push(await runSchedule(environment, makeSchedule(seed, { target: 'quorum', workload: 'mutex', latency: true })));
    const report = results
      .filter((r) => r.violations.length > 0)
      .map((r) => `${formatResult(r)}\n  replay: npm run explore:real -- --seed ${r.schedule.seed} --latency --target quorum --workload mutex`)
      .join('\n');
    expect(report).toBe('');
    expect(results.every((r) => r.schedule.latency !== undefined && r.schedule.faults.some((f) => f.kind === 'restart-empty'))).toBe(true);
  });
});

// Found by the explorer (seed 1019 on a Cluster: a cut of one master while a tick fired), kept
// here as a deterministic schedule of the same faults on one server with a proxy per instance.
describe('regression: an @OnOneInstance tick whose claim was held up in the network (needs npm run build)', () => {
  let servers: RedisServer[] = [];
  const proxies: FaultProxy[] = [];
  const workers: Worker[] = [];
  let register: Redis | undefined;
  let dir = '';
  afterAll(async () => {
    for (const proxy of proxies) await proxy.close();
    await Promise.all(workers.map((w) => w.exit()));
    await register?.quit();
    await Promise.all(servers.map((s) => s.stop()));
    if (dir) rmSync(dir, { recursive: true, force: true });
  }, 30_000);

  // Before the fix the held-up call took the expired owner lease and ran tick 2 again after the
  // owner ran it. Now a claim that comes back late keeps the lease but skips its tick
  // (`owner-uncertain`). The steps wait for what the workers recorded, not for times a loaded
  // machine may overrun, and the late claim's answer comes inside its own lease (so that the
  // lease's local deadline, a check of its own, does not hide the one this test is about).
  it('a tick whose owner claim was held up past the owner lease does not run a second time', { timeout: 60_000 }, async () => {
    const ttl = 900;
    servers = [await startRedisServer(), await startRedisServer()];
    const [locks, registerServer] = servers as [RedisServer, RedisServer];
    register = new Redis(registerServer.url);
    dir = mkdtempSync(join(tmpdir(), 'explore-real-regression-'));
    const key = `tick-regression-${Date.now()}`;
    for (let i = 0; i < 2; i++) {
      proxies.push(await FaultProxy.start(locks.port));
      workers.push(new Worker(`w${i}`, registerServer.url));
    }
    const [late, owner] = workers as [Worker, Worker];
    const [lateLink, ownerLink] = proxies as [FaultProxy, FaultProxy];
    const files = workers.map((w) => join(dir, `${w.id}.jsonl`));
    await Promise.all(workers.map((w, i) => w.start({ KEY: key, WORKLOAD: 'job', TTL: ttl, WRITES: 1, HISTORY: files[i]!, REDIS_URL: proxies[i]!.url })));
    const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    const ran = (n: number) => {
      const sids = new Set<string>();
      return (e: HistoryEvent) => {
        if (e.ev === 'enter' && e.tick === n) sids.add(String(e.sid));
        return e.ev === 'ok' && sids.has(String(e.sid));
      };
    };
    const direct = new Redis(locks.url);
    const skips = (all: HistoryEvent[], upTo = all.length): number => all.slice(0, upTo).filter((e) => e.ev === 'skip').length;
    const skipsSoFar = (): number => (existsSync(files[1]!) ? skips(readFileSync(files[1]!, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line) as HistoryEvent)) : 0);
    // The owner runs tick n. On a loaded machine its claim may come back later than a sixth of the
    // ttl (150 ms here), and the tick is then skipped as owner-uncertain (a CI run's two attempts
    // both waited 20 s for tick 1): it is fired again until it runs.
    const ownerRuns = async (n: number): Promise<void> => {
      for (let attempt = 0; attempt < 10; attempt++) {
        const before = skipsSoFar();
        const isRun = ran(n);
        owner.send({ tick: n });
        const seen = await recorded(files[1]!, (e, i, all) => isRun(e) || (e.ev === 'skip' && skips(all, i + 1) > before));
        if (seen.ev !== 'skip') return;
      }
      throw new Error(`the owner skipped tick ${n} ten times`);
    };
    try {
      await ownerRuns(1); // the owner takes the job's lease and runs tick 1...
      await ownerRuns(2); // ...and tick 2
      lateLink.cut(); // the other instance fires tick 2 a little later; its claim waits in the network
      const sent = performance.now();
      late.send({ tick: 2 });
      await recorded(files[0]!, (e) => e.ev === 'invoke');
      ownerLink.cut(); // the owner is cut off, and its lease runs out (at once here, within a ttl for real)
      const [ownerKey] = (await direct.keys('*:owner}')) as [string];
      expect(await direct.pexpire(ownerKey, 1)).toBe(1);
      while ((await direct.exists(ownerKey)) === 1) await sleep(2);
      // The claim arrives after the owner lease ran out, held up longer than a sixth of the ttl
      // (what a claim made on time can take) and well inside its own lease and 1 s bound.
      await sleep(Math.max(0, sent + ttl / 3 - performance.now()));
      lateLink.heal();
      const settled = await recorded(files[0]!, (e) => e.ev === 'ok' || e.ev === 'fail');
      ownerLink.heal();
      expect(await Promise.all(workers.map((w) => w.finish()))).toEqual([true, true]);

      const events = await readHistory(files, register, key);
      // The late claim did take the lease (so the skip below is the late claim's rule at work)...
      const ownerLeases = events.filter((e) => e.p === 'w1' && e.ev === 'lease').map((e) => Number(e.token));
      expect(events.filter((e) => e.p === 'w0' && e.ev === 'lease').map((e) => e.token)).toEqual([Math.max(...ownerLeases) + 1]);
      expect(settled.ev).toBe('ok');
      // ...and did not run the tick the owner ran.
      const runs = events.filter((e) => e.ev === 'enter').sort((a, b) => a.t! - b.t!).map((e) => `${e.p}: tick ${e.tick}`);
      expect(runs).toEqual(['w1: tick 1', 'w1: tick 2']);
      expect(check({ events })).toEqual([]);
    } finally {
      direct.disconnect();
    }
  });
});

// Found by the explorer (seed 2013, on the engine before c8c5dae; fixed there for the mutex,
// issue 23 item 2), kept as a deterministic schedule of the same fault: the waiter's process is
// frozen, the holder releases (granting it the lock on a 1 s grant lease), the grant runs out,
// another holder takes the lock, and the waiter thaws. It must not enter beside that holder.
// The semaphore's and the reader's twins are driven by hand, step by step, in stale-grant.spec.ts.
describe('regression: a waiter whose grant ran out while its process was paused (needs npm run build)', () => {
  let holders: LockApp | undefined;
  let waiter: ChaosWorker | undefined;
  afterAll(async () => {
    waiter?.child.kill('SIGCONT');
    waiter?.child.kill('SIGKILL');
    await holders?.close();
  });

  it('waits on thawing and gets the lock after the holder that took it, with a higher token', { timeout: 60_000 }, async () => {
    holders = await createLockApp();
    const key = `stale-grant-${Date.now()}`;
    const first = await holders.locks.acquire(key);
    waiter = ChaosWorker.start({ REDIS_URL: redisUrl(), MODE: 'wait', KEY: key, TTL: 600 }, 'stale-grant-waiter');
    const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    const redis = new Redis(redisUrl());
    try {
      for (let i = 0; (await redis.zcard(`lock:{${key}}:waiters`)) === 0; i++) {
        if (i > 200) throw new Error('the waiter never queued');
        await sleep(50);
      }
    } finally {
      await redis.quit();
    }
    waiter.child.kill('SIGSTOP');
    await first.release(); // grants the lock to the frozen waiter, on a 1 s grant lease
    await sleep(1_500); // the grant lease and the waiter's place run out
    const second = await holders.locks.acquire(key, { waitTimeout: 5_000 });
    waiter.child.kill('SIGCONT');
    await sleep(1_000);
    const enteredBeforeRelease = waiter.lines.some((line) => typeof line === 'object' && line !== null && 'acquired' in line);
    await second.release();
    const got = await waiter.next<{ acquired: number }>('acquired', 20_000);
    await waiter.exitsOnItsOwn(5_000);
    expect(enteredBeforeRelease).toBe(false);
    expect(got.acquired).toBeGreaterThan(second.fencingToken);
  });
});

// Found by the explorer (seed 906610 on a Cluster: node 1 restarted empty while a worker's link
// to it lagged) and reported as a `job-once` violation: tick 3 ran on w1 (run lock token 3) and
// on w0 (token 4), 17 ms apart. The owner lease `<key>:owner` lived on the master that lost its
// data, the run lock on another one. Its owner still held the lease in its own eyes (it learns of
// the loss at its next renewal, a third of the ttl later at most, or by its deadline), ran the
// tick, and gave the run lock back; another instance found the lease gone, took it (its fencing
// counter gone too: token 1, so not a take-over), and ran the same tick. That is the data loss the
// lock promises nothing across (docs/jobs-and-leaders.md), kept here as a deterministic schedule of
// the same faults: the checker must excuse it (it did not: the loss came before the tick's calls).
describe('a tick run twice because a Cluster master lost the owner lease (needs npm run build)', () => {
  let cluster: RedisCluster | undefined;
  let registerServer: RedisServer | undefined;
  const proxies: FaultProxy[] = [];
  const workers: Worker[] = [];
  let register: Redis | undefined;
  let dir = '';
  afterAll(async () => {
    for (const proxy of proxies) await proxy.close();
    await Promise.all(workers.map((w) => w.exit()));
    await register?.quit();
    await cluster?.stop();
    await registerServer?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  }, 30_000);

  it('runs on the owner that has not heard yet and on the instance that took the lease again, and the checker excuses it', { timeout: 90_000 }, async () => {
    // A ttl long enough that the owner's next renewal (a third of it after the last) comes well
    // after tick 3 reached it, however loaded the machine.
    const ttl = 3_000;
    const mono = () => Number(process.hrtime.bigint()) / 1e6;
    cluster = await startRedisCluster(3);
    registerServer = await startRedisServer();
    register = new Redis(registerServer.url);
    dir = mkdtempSync(join(tmpdir(), 'explore-real-data-loss-'));
    const admins = cluster.nodes.map((node) => new Redis(node.port, node.host));
    try {
      // A key whose owner lease lives on node 1 and whose run lock lives elsewhere, as in the
      // failing run (the runner's keys are random, which is why its replay was clean).
      const nodeOf = async (redisKey: string): Promise<number> => {
        const slot = Number(await admins[0]!.cluster('KEYSLOT', redisKey));
        const ranges = await admins[0]!.cluster('SLOTS');
        const port = ranges.find(([lo, hi]) => lo <= slot && slot <= hi)![2]![1];
        return cluster!.nodes.findIndex((node) => node.port === port);
      };
      let key = '';
      let runNode = 1;
      for (let i = 0; key === ''; i++) {
        const candidate = `data-loss-${i}:job`;
        runNode = await nodeOf(`lock:{${candidate}}`);
        if ((await nodeOf(`lock:{${candidate}:owner}`)) === 1 && runNode !== 1) key = candidate;
      }
      for (let i = 0; i < 2; i++) {
        proxies.push(...(await Promise.all(cluster.nodes.map((node) => FaultProxy.start(node.port)))));
        workers.push(new Worker(`w${i}`, registerServer.url));
      }
      const links = (i: number) => proxies.slice(i * 3, i * 3 + 3);
      const files = workers.map((w) => join(dir, `${w.id}.jsonl`));
      await Promise.all(
        workers.map((w, i) =>
          w.start({
            KEY: key,
            WORKLOAD: 'job',
            TTL: ttl,
            WRITES: 1,
            HISTORY: files[i]!,
            CLUSTER_NODES: JSON.stringify(links(i).map((p) => ({ host: '127.0.0.1', port: p.port }))),
            NAT_MAP: JSON.stringify(Object.fromEntries(cluster!.nodes.map((node, n) => [`${node.host}:${node.port}`, { host: '127.0.0.1', port: links(i)[n]!.port }]))),
          }),
        ),
      );
      const w1 = workers[1]!;
      const events: HistoryEvent[] = [];
      // Each step waits for what the workers recorded, not for times a loaded machine may overrun.
      /** The job call of `tick` settled on that worker (run or skipped). */
      const settled = (tick: number) => (e: HistoryEvent, index: number, all: HistoryEvent[]) =>
        (e.ev === 'ok' || e.ev === 'fail') && all.slice(0, index).filter((before) => before.ev === 'invoke' && before.kind === 'job').length >= tick;

      w1.send({ tick: 1 }); // w1 takes the owner lease (on node 1) and runs tick 1
      await recorded(files[1]!, settled(1));
      for (const w of workers) w.send({ tick: 2 }); // w1 runs it, w0 finds the lease held
      await Promise.all([recorded(files[0]!, settled(1)), recorded(files[1]!, settled(2))]);
      // Right after a renewal of the lease (node 1 runs nothing else of this key), so that w1's
      // next one, the first to find the lease gone, is a third of the ttl away.
      const watcher = new Redis(cluster.nodes[1]!.port, cluster.nodes[1]!.host);
      const monitor = await watcher.monitor();
      await new Promise<void>((resolve) => monitor.on('monitor', (_time: string, args: string[]) => args.some((arg) => arg.includes(`${key}:owner`)) && resolve()));
      monitor.disconnect();
      watcher.disconnect();
      // w1's link to node 1 is held up through tick 3: its next renewal of the lease, the first to
      // find it gone, must come after its tick 3 began (on a loaded machine the renewal the
      // monitor saw was read late, and the next one came right after the loss: w1 learnt of it
      // first and claimed the lease again, and no double run formed).
      links(1)[1]!.cut();
      // Node 1 loses its data, keeping its slots (the runner's restart-empty on a Cluster).
      const t = mono();
      await admins[1]!.flushall();
      await admins[1]!.client('KILL', 'TYPE', 'normal');
      events.push({ ev: 'fault', kind: 'restart-empty', node: 1, t, until: mono() });
      // w0's link to the run lock's master is held up until w1's run has given the run lock back
      // (in the failing run, w0 reconnected to node 1 first and its run lock request came later).
      links(0)[runNode]!.cut();
      for (const w of workers) w.send({ tick: 3 });
      await recorded(files[1]!, settled(3));
      links(0)[runNode]!.heal();
      // On a loaded machine w0's tick 3 can end before its run lock for want of the lease: its
      // claim found node 1's connection still closed by the restart and used up ioredis'
      // redirections, or came back later than a sixth of the ttl, which a take-over must not (the
      // lease is kept, the tick skipped as uncertain). Either way it took no run lock, so w0 is
      // sent tick 3 again, as the scheduler's next tick would be (1 run in 12 here under load).
      const historyOf = (file: string) => readFileSync(file, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line) as HistoryEvent);
      for (let calls = 2; ; calls++) {
        const end = await recorded(files[0]!, settled(calls));
        const history = historyOf(files[0]!);
        const invoked = history.filter((e) => e.ev === 'invoke' && e.kind === 'job')[calls - 1]!;
        const call = history.slice(history.findIndex((e) => e.sid === invoked.sid), history.findIndex((e) => e.sid === end.sid && e.ev === end.ev));
        const unreachable = end.ev === 'fail' && String(end.error).includes(`tryAcquire("${key}:owner"): Redis could not be asked`);
        const late = call.some((e) => e.ev === 'skip' && e.reason === 'owner-uncertain');
        if (!unreachable && !late) break;
        expect(calls, 'w0 takes the lease within four calls of tick 3').toBeLessThan(5);
        workers[0]!.send({ tick: 3 });
      }
      links(1)[1]!.heal();
      expect(await Promise.all(workers.map((w) => w.finish()))).toEqual([true, true]);

      events.push(...(await readHistory(files, register, key)));
      const enters = events.filter((e) => e.ev === 'enter').sort((a, b) => a.t! - b.t!);
      const [first] = enters as [HistoryEvent];
      const runs = enters.filter((e) => e.tick === 3).map((e) => `${e.p}: token ${Number(e.token) - Number(first.token) + 1}, owner lease ${e.owner === first.owner ? 'first' : Number(e.owner) > Number(first.owner) ? 'higher' : 'lower'}`);
      // The run lock's counter lives on another master: its 1st and 2nd tokens for ticks 1 and 2,
      // then its 3rd and 4th. w1 still runs under the owner lease it took first; w0 under one of
      // the restarted counter, which began at the clock, above it.
      const history = `the history:\n${trace({ events }).join('\n')}`;
      expect(runs, history).toEqual(['w1: token 3, owner lease first', 'w0: token 4, owner lease higher']);
      expect(check({ events, ttl, placement: { lock: runNode, owner: 1 } }), history).toEqual([]);
    } finally {
      for (const admin of admins) admin.disconnect();
    }
  });
});
