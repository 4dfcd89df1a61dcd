// A worker process of the real-Redis explorer, started by runner.mjs with an IPC channel and
// kept for many schedules (importing Nest costs most of a second; an application context per
// schedule costs little). For each schedule it builds a Nest application context using the
// built package by its name (run `npm run build` first), runs the workload, and appends every
// operation to the schedule's HISTORY file as JSON lines with CLOCK_MONOTONIC times (one
// write(2) each, so a SIGKILL loses nothing already recorded).
//
// WORKLOAD=mutex      CHAINS chains of using(KEY) (chain 0 through an @Locked method), each
//                     section writing the fencing register WRITES times (default: 1 to 4, or one
//                     time in five 25 to 49, for one to two ttls), checking its signal before each.
// WORKLOAD=semaphore  the same under using(KEY, fn, { limit: LIMIT }), without register writes
//                     (WRITES: steps of each section).
// WORKLOAD=rwlock     readers (60%) and writers of KEY; writers write the register.
// WORKLOAD=job        an @OnOneInstance() + @WithoutOverlapping() job keyed KEY; the runner sends
//                     { tick: n } to every worker at once and each calls the job; a run writes the
//                     register. Each owner lease taken is recorded ({ ev: 'lease', token }).
// WORKLOAD=leader     a @LeaderElection(KEY) provider: while it leads it writes the register (a
//                     term is one section, from onLeadershipAcquired to onLeadershipLost; the
//                     lost hook itself is recorded: { ev: 'leadership-lost', sid }).
// WORKLOAD=greedy     the mutex of `using(KEY)` with fairness: 'barging', in bursts of 2 to 8 calls
//                     a chain makes back to back (each asked in the turn the last release came
//                     back, so that the worker parks the lock between them).
// WORKLOAD=transfer   multi-key transfers: each call locks two of three accounts (KEY:acct-a, -b,
//                     -c) as one using([a, b]) and writes the register of both with each one's token.
// After a refused renewal on a Cluster it records { ev: 'alive', owned }: whether the lock's key
// still held its token (checker.mjs's false-loss). At each entry it sends the runner { observe }:
// each entered key's Redis name and owner token with the lease the holder counts left, for the
// runner to read Redis' own lease of it (runner.mjs's `observeLeases`, checker.mjs's lease-outlasted).
// IPC in: { start: config } (answered { ready }), { tick }, { drain } (end the chains, the
// application left open; answered { drained }), { probe: 'permit' } (see `permitProbe`; answered
// { probeHolding } while its two sections hold, then { probed }), { probe: 'permit-release' } (see
// `permitReleaseProbe`; answered as 'permit', told { probeDeleted } in between), { probe: 'permit-due' } (see
// `permitDueProbe`; answered as 'permit-release'), { unrenewed } (see `unrenewedProbe`), { ownRun: { step, tick } } (see
// `ownRunProbe`; answered { ownRunEntered }, { ownRunTicked }, { ownRunDone }), { finish, abrupt? } (end the chains,
// app.close(), record "done", answered { finished }; `abrupt`: app.close() at once, while the
// chains still run, as a SIGTERM in the middle of work; "closing" and "closed" record when
// app.close() began and resolved; "alive-after-close" what the application left keeping the
// process alive, see `leftAlive`; on one server, the lock board's list, inspect() and isLocked()
// are read while app.close() runs and once after it, see `readsWhileClosing`). Sections report
// { holding: ±1, long } to the runner (a key deletion waits for a long one). The config: ID, KEY, WORKLOAD, CHAINS,
// LIMIT, TTL, WAIT (ms), WRITES, SEED, HISTORY, LONG_LEADER (leader: the ttl of an election of its own, see `LongLeader`); REDIS_URL, or CLUSTER_NODES and NAT_MAP (JSON)
// for a Redis Cluster behind the runner's proxies, or QUORUM_URLS (JSON: three masters' URLs) for quorum mode; DRIVER=node-redis: a node-redis client of
// this worker's own on REDIS_URL, handed to the module, destroyed after app.close(). REGISTER_URL (environment): the fencing
// register's own Redis (no faults there).
import 'reflect-metadata';
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Cluster, Redis } from 'ioredis';
import { closeSync, openSync, writeSync } from 'node:fs';
import { LostHolders } from './lost-holders.mjs';
import { pathToFileURL } from 'node:url';
// EXPLORE_PACKAGE: another build of the package (an entry file), e.g. one with a bug seeded on purpose.
const { LeaderElection, LockService, Locked, OnOneInstance, RedisLockModule, WithoutOverlapping } = await import(process.env.EXPLORE_PACKAGE ?? 'nestjs-redis-lock');
// The lock board (its entry beside the package's): its list is read while the application closes.
const { RedisLockBoardModule } = await import(process.env.EXPLORE_PACKAGE !== undefined ? new URL('./board/index.js', pathToFileURL(process.env.EXPLORE_PACKAGE)).href : 'nestjs-redis-lock/board');

/** The module's `shutdownTimeout` (ms) unless the runner gives one (`SHUTDOWN`): the checker holds app.close() to it. */
const SHUTDOWN_TIMEOUT = 1_000;
/**
 * How long after app.close() resolved the library's own connections may still hold the process:
 * each waits at most 100 ms for Redis to close its side (CLOSE_WAIT_MS in
 * lib/core/stores/redis/drivers/ioredis-prompt-close.ts; configuration.md: they close at once
 * whatever Redis' state), and this worker's own Cluster client is closed as promptly (see
 * `userPromptly`). Past it, what is still there was left by the application.
 */
const LEFT_ALIVE_BOUND = 250;
const mono = () => Number(process.hrtime.bigint()) / 1e6;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
let history;
const rec = (event) => history !== undefined && writeSync(history.fd, JSON.stringify({ p: history.id, t: mono(), ...event }) + '\n');

/** The last return of a master this worker's store saw, `{ node, t }` (the owed give-back probe's rival holds until one). */
let lastComeback;
/** Told the lock of each give-back (a release round sent whole) the store sends (the owed give-back probe's rival). */
let onGiveBack;

/**
 * Quorum silence as this worker's store sees it, recorded for the runner's figures (a schedule
 * says whether a master went silent, and what its return sent): the package's own quorum modules,
 * next to its entry (dist/ or a seeded bug's build), wrapped here, in the explorer alone; the
 * package has no public hook for it. `{ ev: 'silence', what: 'silenced', node }`: a round skipped
 * master `node` (asked nothing: silent), the first since it was last sent a command;
 * `{ ev: 'silence', what: 'comeback', node, silent, releases, floors }`: it answered again after a
 * lapse (`silent`: it had been skipped since its last command), and was sent the `releases` and
 * `floors` it was owed. Nothing is recorded if the modules are not where they were (another layout).
 */
async function watchSilence() {
  const entry = process.env.EXPLORE_PACKAGE !== undefined ? pathToFileURL(process.env.EXPLORE_PACKAGE).href : import.meta.resolve('nestjs-redis-lock');
  let silenceModule;
  let storeModule;
  try {
    silenceModule = await import(new URL('./core/stores/quorum/quorum-silence.js', entry).href);
    storeModule = await import(new URL('./core/stores/quorum/quorum-store.js', entry).href);
  } catch {
    return;
  }
  const silence = silenceModule.QuorumSilence?.prototype;
  const store = storeModule.QuorumStore?.prototype;
  if (typeof silence?.skipped !== 'function' || typeof store?.answersAgain !== 'function') return;
  const skipped = silence.skipped;
  silence.skipped = function (index) {
    if (this.skippedSince?.[index] === undefined) rec({ ev: 'silence', what: 'silenced', node: index });
    return skipped.call(this, index);
  };
  // Tokens whose holder's release was their last act (no attempt since), and the masters that
  // release (or a resend of it) was handed to: a master that answers again is sent every release
  // owed to it of such a token that it was never handed (QuorumStore.answersAgain); `left` counts
  // those it was not, for the checker's `comeback-left-release`. An owed entry of a token whose
  // holder's release did reach that master's connection is harmless: an earlier give-back's,
  // recorded once its round ended, after the token's next attempt (the release deletes that copy,
  // behind every attempt on the same connection), sent again at app.close().
  const done = new Set();
  const handed = new Set();
  const wrapped = new WeakSet();
  const { acquire: storeAcquire, releaseRound: holderRound } = store;
  if (typeof storeAcquire === 'function' && typeof holderRound === 'function') {
    store.acquire = function (keys, token, ...rest) {
      done.delete(token);
      for (let index = 0; index < (this.nodes?.length ?? 0); index++) handed.delete(`${index} ${token}`);
      return storeAcquire.call(this, keys, token, ...rest);
    };
    store.releaseRound = function (lock, token, whole, ...rest) {
      if (!wrapped.has(this) && Array.isArray(this.nodes)) {
        wrapped.add(this);
        this.nodes.forEach((node, index) => {
          const release = node.quorumRelease;
          node.quorumRelease = function (lock, token, ...args) {
            if (done.has(token)) handed.add(`${index} ${token}`);
            return release.call(this, lock, token, ...args);
          };
        });
      }
      if (whole === true) {
        done.delete(token);
        onGiveBack?.(lock);
      } else done.add(token);
      return holderRound.call(this, lock, token, whole, ...rest);
    };
  }
  const answersAgain = store.answersAgain;
  store.answersAgain = function (index) {
    // The releases it resends: those owed to the master that its return took out (a token still
    // trying or holding stays owed, see QuorumStore.answersAgain).
    const owedTo = () => {
      let owed = 0;
      for (const _ of this.missedReleases?.of?.(index) ?? []) owed++;
      return owed;
    };
    const silent = this.silence?.skippedSince?.[index] !== undefined;
    const floors = this.owedFloors?.[index]?.size ?? 0;
    const before = owedTo();
    const result = answersAgain.call(this, index);
    let left = 0;
    // After app.close() nothing is sent (answersAgain returns): the close sent what was owed.
    if (!this.closed) for (const owed of this.missedReleases?.of?.(index) ?? []) if (done.has(owed.token) && !handed.has(`${index} ${owed.token}`)) left++;
    rec({ ev: 'silence', what: 'comeback', node: index, silent, releases: before - owedTo(), floors, left });
    lastComeback = { node: index, t: mono() };
    return result;
  };
  // A poll that every master answered busy or was not asked (silent) took nothing, and sends no
  // give-back (a round of EVALs, one to each answering master): `{ ev: 'busy-poll', silent,
  // gaveBack }` for each such poll with a master silent, with the give-back rounds it sent, for the
  // checker's `busy-poll-gives-back` (the masters' own command counts mix every worker's scripts).
  const { SilentMaster } = silenceModule;
  const { giveBack, releaseRound } = store;
  if (typeof SilentMaster !== 'function' || typeof giveBack !== 'function' || typeof releaseRound !== 'function') return;
  let poll;
  store.releaseRound = function (lock, token, whole, ...rest) {
    if (poll !== undefined && whole === true) poll.gaveBack++;
    return releaseRound.call(this, lock, token, whole, ...rest);
  };
  store.giveBack = function (keys, token, granted, busy, longestBusy, answers, ...rest) {
    const silent = answers.filter((answer) => answer?.ok === false && answer.error instanceof SilentMaster).length;
    poll = { gaveBack: 0 };
    try {
      return giveBack.call(this, keys, token, granted, busy, longestBusy, answers, ...rest);
    } finally {
      if (granted === 0 && silent > 0 && busy + silent === this.nodes.length) rec({ ev: 'busy-poll', silent, gaveBack: poll.gaveBack });
      poll = undefined;
    }
  };
}
await watchSilence();

/**
 * Quorum copies as this worker's store saw them, for the checker's judgement of a restart
 * (checker.mjs, `quorumLossTook`): which master confirmed which copy of a lock, when, and which
 * acquisition was handed out. A restart empty excuses two holders only when it took a copy the
 * earlier holder's majority stood on; these records tell whose copies were where. The package's
 * own modules (as `watchSilence`), wrapped here in the explorer alone:
 * `{ ev: 'copy', what: 'grant' | 'renew' | 'restore', node, lock, token, ttl, sent }`: master
 * `node` confirmed a copy of `lock` under the owner token `token` (an attempt granted, a renewal
 * renewed, a lock put back on a master that lost it), sent at `sent`, its lease `ttl` ms from
 * then at least; `{ ev: 'copy', what: 'deleted', node, lock, token, sent }`: a release (or a
 * give-back, or a resend of one) of that token deleted its copy there; `{ ev: 'copy', what:
 * 'acquired', lock, token, fencingToken, sent }`: the acquisition begun at `sent` (one call of
 * the store's acquire(), every master asked then) was handed out with `fencingToken`.
 */
async function watchCopies() {
  const entry = process.env.EXPLORE_PACKAGE !== undefined ? pathToFileURL(process.env.EXPLORE_PACKAGE).href : import.meta.resolve('nestjs-redis-lock');
  let storeModule;
  let scriptsModule;
  try {
    storeModule = await import(new URL('./core/stores/quorum/quorum-store.js', entry).href);
    scriptsModule = await import(new URL('./core/stores/redis/lock-scripts.js', entry).href);
  } catch {
    return;
  }
  const store = storeModule.QuorumStore?.prototype;
  const scripts = scriptsModule.LockScripts?.prototype;
  const RENEWED = scriptsModule.RENEWED;
  const names = ['acquire', 'renew', 'renewBatch', 'release', 'leave'];
  const calls = ['quorumAcquire', 'quorumRelease', 'renewCode', 'renewCodes', 'restore'];
  if (store === undefined || scripts === undefined || RENEWED === undefined || names.some((n) => typeof store[n] !== 'function') || calls.some((n) => typeof scripts[n] !== 'function')) return;
  /** A quorum's masters (their LockScripts) by index; a server outside a quorum is in none. */
  const nodeOf = new WeakMap();
  const mapNodes = (quorum) => {
    if (Array.isArray(quorum.nodes) && !nodeOf.has(quorum.nodes[0])) quorum.nodes.forEach((node, index) => nodeOf.set(node, index));
  };
  for (const name of names) {
    const original = store[name];
    store[name] = function (...args) {
      mapNodes(this);
      if (name !== 'acquire') return original.apply(this, args);
      const [keys, token] = args;
      const sent = mono();
      const reply = original.apply(this, args);
      reply.then((answer) => answer.acquired && rec({ ev: 'copy', what: 'acquired', lock: keys.lock, token, fencingToken: answer.fencingToken, sent }), () => undefined);
      return reply;
    };
  }
  const copy = (node, what, lock, token, sent, ttl) => rec({ ev: 'copy', what, node, lock, token, sent, ...(ttl === undefined ? {} : { ttl: Number(ttl) }) });
  const wrap = (name, confirmed) => {
    const original = scripts[name];
    scripts[name] = function (...args) {
      const node = nodeOf.get(this);
      // Before the command goes out: its copy's lease runs from a moment after this.
      const sent = mono();
      const reply = original.apply(this, args);
      if (node === undefined) return reply;
      Promise.resolve(reply).then((answer) => confirmed(node, answer, sent, args), () => undefined);
      return reply;
    };
  };
  // A release sent as EVALSHA that met NOSCRIPT (a master that restarted empty) is sent again as
  // EVAL once that answer is in: the command that deletes is that one, which runs after what this
  // process sent the master meanwhile (the same token's next attempt, say: 9b54bbb). Its copy is
  // recorded as sent then. The master's release script (LockScripts' `quorum` getter, made once)
  // has its `resend` watched; a release whole from the start (EVAL) resends at once.
  const resentAt = new Map();
  const releasing = new Set();
  const quorumGetter = Object.getOwnPropertyDescriptor(scripts, 'quorum')?.get;
  if (quorumGetter !== undefined) {
    const watched = new WeakSet();
    Object.defineProperty(scripts, 'quorum', {
      configurable: true,
      get() {
        const quorum = quorumGetter.call(this);
        const release = quorum?.release;
        if (release !== undefined && !watched.has(release)) {
          watched.add(release);
          const resend = release.resend.bind(release);
          release.resend = (...args) => {
            const id = `${nodeOf.get(this)}|${args[0]}|${args[1]}`;
            if (releasing.has(id)) resentAt.set(id, mono());
            return resend(...args);
          };
        }
        return quorum;
      },
    });
  }
  wrap('quorumAcquire', (node, answer, sent, [lock, token, ttl]) => answer?.acquired && copy(node, 'grant', lock, token, sent, ttl));
  const release = scripts.quorumRelease;
  scripts.quorumRelease = function (lock, token, ...rest) {
    const node = nodeOf.get(this);
    const id = `${node}|${lock}|${token}`;
    const sent = mono();
    releasing.add(id);
    resentAt.delete(id);
    const reply = release.call(this, lock, token, ...rest);
    const done = () => {
      const resent = resentAt.get(id);
      releasing.delete(id);
      resentAt.delete(id);
      return resent !== undefined && resent >= sent ? resent : sent;
    };
    Promise.resolve(reply).then((answer) => {
      const at = done();
      if (node !== undefined && answer?.released) copy(node, 'deleted', lock, token, at);
    }, done);
    return reply;
  };
  wrap('renewCode', (node, code, sent, [lock, token, ttl]) => code === RENEWED && copy(node, 'renew', lock, token, sent, ttl));
  wrap('renewCodes', (node, codes, sent, [requests]) => requests.forEach(({ lockKey, token, ttl }, i) => codes?.[i] === RENEWED && copy(node, 'renew', lockKey, token, sent, ttl)));
  wrap('restore', (node, set, sent, [lock, token, ttl]) => set === true && copy(node, 'restore', lock, token, sent, ttl));
}
await watchCopies();

// The event loop's own gaps: a stall longer than the lease's drift margin may hide a loss.
// Kept (`stallsSeen`) for `leftAlive`, which counts its bound in the time the worker ran.
let tickAt = mono();
const stallsSeen = [];
const noteStall = () => {
  const now = mono();
  if (now - tickAt > 5 + 8) {
    const stall = { t: tickAt + 5, until: now };
    stallsSeen.push(stall);
    rec({ ev: 'stall', ...stall });
  }
  tickAt = now;
};
const stallWatch = setInterval(noteStall, 5);
/** How long the stalls recorded so far held the event loop since `from`. */
const stalledSince = (from) => stallsSeen.reduce((sum, f) => sum + Math.max(0, f.until - Math.max(f.t, from)), 0);

// The fencing register: a resource that refuses a token lower than one it accepted. It logs
// every write, in its own order, for the checker.
const register = new Redis(process.env.REGISTER_URL);
register.defineCommand('fencedWrite', {
  numberOfKeys: 2,
  lua: `local highest = tonumber(redis.call('GET', KEYS[1]) or '-1')
local token = tonumber(ARGV[1])
local accepted = 0
if token >= highest then
  redis.call('SET', KEYS[1], ARGV[1])
  accepted = 1
end
redis.call('RPUSH', KEYS[2], cjson.encode({ARGV[1], ARGV[2], accepted}))
return accepted`,
});

/**
 * The engine's own record of a lock handed to user code (`HeldLock`: its `deadline` on the
 * engine's clock, `performance.now()`, past which the holder no longer counts itself holding;
 * the Redis key it renews, `lockKey`, and its owner `token`), through a re-entry's handle
 * (`outer`). Internal, as `watchSilence` reads: `undefined` where a build has no such fields.
 */
function heldLockOf(lock) {
  let held = lock;
  for (let i = 0; i < 4 && held !== undefined && typeof held.deadline !== 'number'; i++) held = held.outer;
  return typeof held?.deadline === 'number' && Number.isFinite(held.deadline) ? held : undefined;
}

/**
 * Asks the runner to read Redis' own lease of each key `lock` holds, on a connection of its own
 * (no fault between it and Redis): `{ observe: { sid, locks: [{ key, token, t, leaseLeft }] } }`,
 * with the lease the holder counts left at `t` by its own deadline (checker.mjs's
 * `lease-outlasted`). Not awaited: the section's code goes on at once, as without it.
 */
function observeLeases(lock, sid) {
  const parts = Array.isArray(lock.parts) ? lock.parts : [lock];
  const locks = [];
  for (const part of parts) {
    const held = heldLockOf(part);
    if (held === undefined || typeof held.lockKey !== 'string' || typeof held.token !== 'string') continue;
    locks.push({ key: held.lockKey, token: held.token, t: mono(), leaseLeft: held.deadline - performance.now() });
  }
  if (locks.length > 0) process.send({ observe: { sid, locks } }, () => undefined);
}

/** Applies method decorators listed top to bottom, as TypeScript would. */
function decorate(type, name, ...decorators) {
  let descriptor = Object.getOwnPropertyDescriptor(type.prototype, name);
  for (const decorator of decorators.reverse()) descriptor = decorator(type.prototype, name, descriptor) ?? descriptor;
  Object.defineProperty(type.prototype, name, descriptor);
}

/**
 * What keeps this process alive, by type: process.getActiveResourcesInfo() lists the ref'd
 * handles (sockets, servers), the ref'd timers (one `Timeout` each) and the requests under way;
 * an unref'd timer or socket does not keep a process alive and is not listed.
 */
const aliveNow = () => process.getActiveResourcesInfo();

/** What `now` lists beyond `baseline`, by type (a multiset difference). */
function beyond(now, baseline) {
  const left = [...baseline];
  return now.filter((type) => {
    const i = left.indexOf(type);
    if (i < 0) return true;
    left.splice(i, 1);
    return false;
  });
}

/** Resolves after two turns of the event loop: a handle closed in this turn is gone from the lists after its close callback, which runs after this turn's immediates. */
const turns = () => new Promise((resolve) => setImmediate(() => setImmediate(resolve)));

/**
 * What the closed application left keeping the process alive, beyond `baseline` (taken before
 * it was created): nothing, as soon as it is so (a socket to a Redis that answers closes within
 * a few ms), or what is still there once the worker ran LEFT_ALIVE_BOUND since the close (`since`;
 * its stalls not counted). Polled on unref'd timers, which are not listed. A timer of the library due before the bound was armed
 * before this one and fires first in the same turn, whatever the machine's load; the turns
 * after it let a socket it destroyed close.
 */
async function leftAlive(baseline, since) {
  // The bound is the worker's running time: a stall after the close (a loaded machine's) holds
  // back the sockets' closes and the library's timers with everything else, so it is not counted
  // (each look records the stall it ends first, as the checker's `left-alive-after-close` discounts
  // the recorded ones), and what keeps the process alive is still looked for past it.
  const ran = () => {
    noteStall();
    return mono() - since - stalledSince(since);
  };
  for (;;) {
    const past = ran() >= LEFT_ALIVE_BOUND;
    await turns();
    const left = beyond(aliveNow(), baseline);
    if (left.length === 0 || past) return left;
    await new Promise((resolve) => setTimeout(resolve, Math.min(5, Math.max(1, LEFT_ALIVE_BOUND - ran()))).unref());
  }
}

/** How long this worker's own Cluster client waits at close for Redis to close a socket (see `userPromptly`). */
const USER_CLOSE_WAIT = 50;

/**
 * Makes a connection of this worker's own Cluster client (the user's, handed to the module) close
 * as promptly as the library's own: ioredis' disconnect() waits up to `disconnectTimeout` (2 s,
 * a ref'd timer) for a socket whose Redis does not answer (links cut as the worker closes), and so
 * do the short-lived connections the Cluster opens from a node's options to refresh its slot
 * map. Set on each node as the Cluster adds it: in the client's `redisOptions` it would be copied
 * to the library's own subscriber Cluster (a duplicate of it) and hide how the library closes that.
 */
function userPromptly(node) {
  node.options.disconnectTimeout = USER_CLOSE_WAIT;
  if (node.connector != null) node.connector.disconnectTimeout = USER_CLOSE_WAIT;
}

/**
 * Counts the slot-map refreshes of this worker's own Cluster client under way: each asks a node
 * on a connection of its own, given up after `slotsRefreshTimeout` (1 s, a ref'd timer), which
 * its disconnect() does not cancel. Resolves `quiet()` once none is.
 */
function trackUserRefreshes(cluster) {
  let pending = 0;
  const waiters = [];
  const refresh = cluster.getInfoFromNode;
  cluster.getInfoFromNode = function (redis, callback) {
    pending++;
    return refresh.call(this, redis, (...args) => {
      pending--;
      if (pending === 0) for (const resolve of waiters.splice(0)) resolve();
      callback(...args);
    });
  };
  return { quiet: () => (pending === 0 ? Promise.resolve(false) : new Promise((resolve) => waiters.push(() => resolve(true)))) };
}

/**
 * Closes this worker's own Cluster client and resolves once it has left nothing behind but
 * connections closing within USER_CLOSE_WAIT: with `true` if it waited for a refresh under way.
 */
async function closeOwnCluster(cluster, refreshes) {
  for (const node of cluster.nodes()) {
    // A connection waiting to reconnect holds a socket closed already, whose close never comes (redis/ioredis#1247).
    if (node.connector?.stream?.destroyed === true) node.connector.stream = undefined;
  }
  cluster.disconnect();
  return refreshes.quiet();
}

/**
 * EXPLORE_ALIVE_STACKS=1: where each ref'd timer still pending was set, recorded with what a
 * close left (`stacks`, shown by --trace), to tell whose connection it is. Off by default: an
 * async hook on every timer costs.
 */
const timerStacks = process.env.EXPLORE_ALIVE_STACKS === '1' ? new Map() : undefined;
if (timerStacks !== undefined) {
  const { createHook } = await import('node:async_hooks');
  createHook({
    init(id, type, _trigger, resource) {
      if (type === 'Timeout') timerStacks.set(id, { resource, stack: new Error().stack.split('\n').slice(6, 14).map((line) => line.trim()).join(' < ') });
    },
    destroy(id) {
      timerStacks.delete(id);
    },
  }).enable();
}
const pendingTimerStacks = () => [...(timerStacks?.values() ?? [])].filter(({ resource }) => resource.hasRef() && !resource._destroyed).map(({ resource, stack }) => `${resource._idleTimeout} ms: ${stack}`);

/** What ioredis sends by itself on a connection it (re)opens, before it is ready. */
const HANDSHAKE = new Set(['info', 'client', 'select', 'auth', 'hello']);

/** One schedule's workload, in a fresh application context. */
async function start(config) {
  // HANDED (quorum, `--handed`): the three masters' clients are this worker's own, handed to the
  // module and left open after app.close() until the worker exits, as an application that keeps
  // its clients does; made before the baseline, so that their sockets are not the application's.
  // One server (`--handed --target single`): the worker's one client, handed to the module as it is.
  const handed = !config.HANDED ? undefined : config.QUORUM_URLS ? JSON.parse(config.QUORUM_URLS).map((url) => new Redis(url, { maxRetriesPerRequest: null })) : [new Redis(config.REDIS_URL, { maxRetriesPerRequest: null })];
  const handedSingle = config.HANDED && !config.QUORUM_URLS ? handed[0] : undefined;
  // What the application sends on it once closed is recorded (`handed-send`): it must send nothing.
  // Not the client's own handshake as it reconnects (its ready check's INFO, CLIENT SETINFO).
  let appClosed = false;
  if (handedSingle !== undefined) {
    const send = handedSingle.sendCommand.bind(handedSingle);
    // The commands already sent once: ioredis sends the same Command again by itself when it
    // reconnects (autoResendUnfulfilledCommands, which the library requires) if the closed
    // connection left it unanswered, after the close too: not a command the application sent
    // then (marked `resend`). The driver's NOSCRIPT retry (an EVAL of its own) is not one: the
    // closed application drops it (2d1df09).
    const sentOnce = new WeakSet();
    handedSingle.sendCommand = (command, ...rest) => {
      const handshake = handedSingle.status === 'connect' && HANDSHAKE.has(command.name);
      const resend = sentOnce.has(command);
      sentOnce.add(command);
      if (appClosed && !handshake) rec({ ev: 'handed-send', command: command.name, t: mono(), ...(resend && { resend: true }) });
      return send(command, ...rest);
    };
  }
  handed?.forEach((client) => client.on('error', () => undefined));
  await Promise.all((handed ?? []).map((client) => Promise.race([new Promise((resolve) => client.once('ready', resolve)), sleep(5_000)])));
  // What keeps the process alive before this schedule's application and clients exist: this
  // worker's register client, stall watch and IPC channel (and whatever an earlier schedule
  // left, judged there).
  const baseline = aliveNow();
  const P = config.ID;
  const KEY = config.KEY;
  const ttl = Number(config.TTL);
  const WRITES = config.WRITES === undefined ? undefined : Number(config.WRITES);
  // Long enough for a queue of five, one of them a long section: a wait that times out once
  // the faults are over is a liveness violation.
  const waitTimeout = Number(config.WAIT ?? 8_000);
  const shutdownTimeout = Number(config.SHUTDOWN ?? SHUTDOWN_TIMEOUT);
  history = { fd: openSync(config.HISTORY, 'a'), id: P };

  // A small seeded generator, so that a replayed schedule makes the same choices (timing aside).
  let seed = Number(config.SEED ?? 1) >>> 0;
  const random = () => {
    seed = (seed + 0x6d2b79f5) >>> 0;
    let x = seed;
    x = Math.imul(x ^ (x >>> 15), x | 1);
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
  // Which sections ask inspect(): a stream of its own, so that the workload's choices stay those
  // of the seed before the probe existed.
  let probeSeed = (Number(config.SEED ?? 1) ^ 0x9e3779b9) >>> 0;
  const probeRandom = () => {
    probeSeed = (Math.imul(probeSeed, 1664525) + 1013904223) >>> 0;
    return probeSeed / 4294967296;
  };
  const INSPECTED = new Set(['mutex', 'greedy']);

  async function fencedWrite(lock, sid) {
    // A multi-key lock writes each key's register with that key's token.
    const tokens = lock.keys === undefined ? { [lock.key]: lock.fencingToken } : lock.fencingTokens;
    for (const [key, token] of Object.entries(tokens)) {
      const t = mono();
      const accepted = (await register.fencedWrite(`register:${key}`, 'register:log', token, `${sid}|${key}`)) === 1;
      rec({ ev: 'write', sid, key, token, accepted, t, done: mono() });
    }
  }

  /**
   * What inspect() says of a lock this section holds: `held` when the lease was this holder's
   * before the question and still after the answer, by its own (conservative) deadline. The
   * checker holds a held lock's answer to the holder's fencing token (`inspect-token`), and
   * Redis' lease left (`seenTtl`) to the one the holder counted as it asked (`leaseLeft`,
   * `lease-outlasted`).
   */
  async function inspectHeld(lock, sid) {
    const t = mono();
    const before = lock.held;
    // The lease this holder counts itself as having left, as it asks: Redis' answer, read
    // later, must not show the lease ending sooner (a renewal under way only moves both on).
    const leaseLeft = heldLockOf(lock)?.deadline - performance.now();
    let seen;
    try {
      seen = await locks.inspect(lock.key);
    } catch {
      return; // No answer under a fault: nothing to judge.
    }
    rec({ ev: 'inspect', sid, t, done: mono(), held: before && lock.held, seenHeld: seen.held, seenToken: seen.fencingToken ?? null, ...(Number.isFinite(leaseLeft) && { leaseLeft, seenTtl: seen.ttlMs ?? null }) });
  }

  /**
   * User code under a lock: checks its signal before each step, as docs/fencing.md asks, then works
   * a while and writes with its fencing token. A pause during that work is the documented gap
   * only fencing closes: the write then leaves after the lock was lost, and the register must refuse it.
   */
  async function critical(lock, sid, writes, extra = {}, until, windDown = false) {
    const tokens = lock.keys === undefined ? {} : { tokens: lock.fencingTokens };
    // The time first, then `held`, which checks the lease's local deadline when read: a freeze
    // anywhere between using()'s own check and here reads as an entry told of its loss at once
    // (an entry after the thaw finds the lease gone), never as an entry after the thaw that was
    // not told, even before the deadline timer ran.
    const t = mono();
    // The owner token names the holder's own keys (a reader's, a permit): a key deleted from outside (runner.mjs) says whose.
    const ownerToken = lock.keys === undefined ? heldLockOf(lock)?.token : undefined;
    rec({ ev: 'enter', sid, token: lock.fencingToken, ...tokens, t, aborted: !lock.held, ...(typeof ownerToken === 'string' && { ownerToken }), ...extra });
    // Its lost events, by key and fencing token (see `lostEvents` below).
    holders.entered(sid, lock.keys === undefined ? { [lock.key]: lock.fencingToken } : lock.fencingTokens);
    // One section in five holds for one to two ttls (its watchdog renews it), the others a few steps.
    const steps = WRITES ?? (random() < 0.2 ? 25 + Math.floor(random() * 25) : 1 + Math.floor(random() * 4));
    // The runner aims some faults at a worker that holds a lock right now (a key deletion, at one that holds it long).
    const long = until !== undefined || steps >= 25;
    process.send({ holding: 1, long });
    if (lock.held) observeLeases(lock, sid);
    const onAbort = () => {
      const reason = lock.signal.reason?.reason;
      rec({ ev: 'lost', sid, reason });
      // A refusal is Redis' word that the lock is gone or another's: on a Cluster, ask where the
      // key lives now (the client follows MOVED and ASK) whether it still holds this owner's
      // token. Asked before the release that follows, which would delete it.
      if (reason === 'refused' && cluster !== undefined && typeof lock.lockKey === 'string') {
        const key = lock.lockKey;
        const file = history; // an answer held up past this schedule's end belongs to no later history
        void cluster.get(key).then((value) => history === file && rec({ ev: 'alive', sid, key, owned: value === lock.token }), () => undefined);
      }
    };
    lock.signal.addEventListener('abort', onAbort, { once: true });
    if (INSPECTED.has(config.WORKLOAD) && lock.keys === undefined && probeRandom() < 0.3) await inspectHeld(lock, sid);
    for (let i = 0; until ? !until() : i < steps; i++) {
      // `windDown`: code that goes on once told, writing nothing more, until `until()`.
      if (!lock.held && !windDown) break;
      if (!lock.held) {
        await sleep(5);
        continue;
      }
      await sleep(Math.floor(random() * 40));
      if (writes) await fencedWrite(lock, sid);
    }
    lock.signal.removeEventListener('abort', onAbort);
    rec({ ev: 'exit', sid });
    // Past here the call only releases: the holder must not be told of a loss any more (an
    // aborted signal, a lost event), whatever happens to the release on its way.
    lock.signal.addEventListener('abort', () => rec({ ev: 'told', sid, how: 'aborted', reason: lock.signal.reason?.reason }), { once: true });
    process.send({ holding: -1, long });
  }

  // Classes per schedule: the job decorators take their key when the class is defined.
  class Resource {
    constructor(locks) {
      this.locks = locks;
    }
    async write(key, sid) {
      await critical(this.locks.current(key), sid, true);
    }
    async job(tick, sid) {
      // The owner lease this run went under (`@OnOneInstance` keeps it as `<key>:owner`).
      const owner = this.locks.current(`${KEY}:owner`)?.fencingToken;
      // The own run probe's run (see `ownRunProbe`): it goes on until told, whatever it hears.
      const hold = ownRunHolds.get(tick);
      ranTicks.add(tick);
      hold?.entered();
      await critical(this.locks.current(), sid, true, { tick, owner }, hold?.over, hold !== undefined);
    }
  }
  Injectable()(Resource);
  Reflect.defineMetadata('design:paramtypes', [LockService], Resource);
  decorate(Resource, 'write', Locked('<0>', { waitTimeout }));
  if (config.WORKLOAD === 'job') decorate(Resource, 'job', OnOneInstance({ key: KEY, ttl }), WithoutOverlapping());

  /** The own run probe's held runs, by tick: `entered()` as the run begins, `over()` once told to end. */
  const ownRunHolds = new Map();
  /** The ticks whose run began here (the probe's). */
  const ranTicks = new Set();
  /** The section each lock entered belongs to: a `lost` event names its key and fencing token. */
  const holders = new LostHolders();
  let sections = 0;
  const sid = (chain) => `${P}.${chain}.${sections++}`;

  // A leader writes with its token while it leads; its term is one section, from the
  // acquired hook to the lost hook.
  let term;
  class Leader {
    onLeadershipAcquired(lock) {
      const id = sid('leader');
      rec({ ev: 'invoke', sid: id, key: KEY, kind: 'leader' });
      term = { id, over: false };
      const current = term;
      current.done = critical(lock, id, true, {}, () => current.over);
    }
    async onLeadershipLost() {
      const current = term;
      term = undefined;
      rec({ ev: 'leadership-lost', sid: current?.id });
      if (current === undefined) return;
      current.over = true;
      await current.done;
      rec({ ev: 'ok', sid: current.id });
    }
  }
  Injectable()(Leader);
  LeaderElection(KEY, { ttl })(Leader);
  // The hand-back probe's election (runner.mjs, LONG_LEADER: its ttl, past shutdownTimeout; the
  // worker whose links are cut as it closes, in leader schedules): a key nobody else asks for,
  // so that this worker leads it as it closes, and its hand-back meets Redis out of reach.
  class LongLeader {
    onLeadershipAcquired(lock) {
      rec({ ev: 'lease', key: lock.key, token: lock.fencingToken });
    }
  }
  Injectable()(LongLeader);
  if (config.LONG_LEADER) LeaderElection(`${KEY}:long`, { ttl: Number(config.LONG_LEADER) })(LongLeader);

  const cluster = config.CLUSTER_NODES ? new Cluster(JSON.parse(config.CLUSTER_NODES), { natMap: JSON.parse(config.NAT_MAP) }) : undefined;
  cluster?.on('+node', userPromptly);
  const userRefreshes = cluster && trackUserRefreshes(cluster);
  // node-redis' default reconnect strategy; the application closes its own client with destroy().
  const nodeRedis = config.DRIVER === 'node-redis' ? (await import('redis')).createClient({ url: config.REDIS_URL }) : undefined;
  nodeRedis?.on('error', () => undefined);
  await nodeRedis?.connect();
  // Quorum mode: the module is given the three masters' URLs (through this worker's proxies).
  const quorum = config.QUORUM_URLS ? handed ?? JSON.parse(config.QUORUM_URLS) : undefined;
  class AppModule {}
  // A lock board (no HTTP server here: its controller is called as a request would call it).
  const boardModule = RedisLockBoardModule.register({ path: 'locks', allowWithoutGuards: true });
  const boardController = boardModule.controllers[0];
  Module({
    // instanceName: the owner tokens name the worker, so that what a close leaves in Redis names its owner.
    imports: [RedisLockModule.forRoot({ redis: cluster ?? nodeRedis ?? quorum ?? handedSingle ?? config.REDIS_URL, ttl, waitTimeout, shutdownTimeout, instanceName: P, isGlobal: true }), boardModule],
    providers: config.WORKLOAD === 'leader' ? [Resource, Leader, ...(config.LONG_LEADER ? [LongLeader] : [])] : [Resource],
  })(AppModule);
  const app = await NestFactory.createApplicationContext(AppModule, { logger: false });
  const locks = app.get(LockService);
  const board = app.get(boardController);
  const resource = app.get(Resource);
  // When this worker took the job's owner lease, with which token: a run under a lease taken
  // before a data loss is one Redis forgot (checker.mjs's job-once).
  const leases =
    config.WORKLOAD === 'job' &&
    locks.events$.subscribe((event) => {
      if (event.type === 'acquired' && event.key === `${KEY}:owner`) rec({ ev: 'lease', key: event.key, token: event.fencingToken });
      // Why a tick did not run here: a trace that shows a tick skipped says which lock decided it.
      if (event.type === 'skipped') rec({ ev: 'skip', key: event.key, reason: event.reason });
    });

  // Every lost event, recorded with its section (the checker's told-after-release judges those
  // after the section's exit; the others say what the aborted signal already said).
  const lostEvents = locks.events$.subscribe((event) => {
    if (event.type === 'lost') {
      const sid = holders.sectionOf(event.key, event.fencingToken);
      if (sid !== undefined) rec({ ev: 'told', sid, how: 'lost event', reason: event.reason });
    }
  });

  let finishing = false;
  /** The locks the quorum probes hold, by key (see `holdProbeKey`). */
  const probeHeld = new Map();
  /** The owed give-back probe's rival's call (see `owedProbe`). */
  let owedRival;
  /** Ends the resent release probe's section (see `resentProbe`). */
  let resentOpen;
  /** The unrenewed handover probe's held lock (see `unrenewedProbe`). */
  let unrenewedHeld;
  /**
   * A quorum probe's lock of a key of its own, with a long lease (no renewal puts a copy back, or
   * is sent a paused master, while the probe runs): its Redis key, answered to the runner.
   */
  async function holdProbeKey(key) {
    const held = await locks.acquire(key, { ttl: 10_000 }).catch(() => undefined);
    if (held !== undefined) probeHeld.set(key, held);
    return { key: held === undefined ? null : heldLockOf(held)?.lockKey ?? null };
  }
  async function releaseProbeKey(key) {
    await probeHeld.get(key)?.release().catch(() => undefined);
    probeHeld.delete(key);
  }

  /**
   * Reads that requests would make while the application closes (the lock board's list, an
   * inspect(), an isLocked()), in a loop until `done()`: each answers or is refused, and leaves
   * no promise rejection unhandled (the checker's `unhandled-rejection`): a read the lock service
   * no longer waits for (asked once its shutdown began) may still fail later, as its connection
   * closes (b15d289: the board's list, whose SCAN and inspections go on after the refusal).
   */
  async function readsWhileClosing(done) {
    for (let i = 0; i < 1_000 && closeReads && !done(); i++) {
      await Promise.allSettled(lateReads());
      await sleep(2);
    }
  }

  /**
   * The reads of `readsWhileClosing`: on one server only, on the module's own connection. On a
   * Cluster they go out on this worker's own client, and a node just reset (a fault healed as the
   * close began) has that client refresh its slot map, which the library's subscriber Cluster
   * follows: seed 225 of `--deletes --drop-messages --target cluster --workload rwlock` then left
   * the refresh's 100 ms disconnect timer past the close's bound (left-alive-after-close) in 2 of 4
   * replays, with the board's list or without it, and in none of 5 without these reads. That is a
   * finding of its own (docs/explorer.md), not what these reads are for. Nor on a client handed
   * in (`--handed --target single`): the board's list refused after the close still sends its
   * INFO and SCAN there (b15d289), which `sent-after-close` would take for the engine's.
   */
  const lateReads = () => (closeReads ? [board.list({}), locks.inspect(KEY), locks.isLocked(KEY)] : []);
  const closeReads = config.REDIS_URL !== undefined && config.DRIVER === undefined && !config.HANDED;

  async function call(id, kind, body, extra = {}) {
    rec({ ev: 'invoke', sid: id, key: KEY, kind, ...extra });
    try {
      await body();
      rec({ ev: 'ok', sid: id });
    } catch (error) {
      const outcome = error?.name === 'LockNotAcquiredError' ? (error.cause ? 'error' : 'timeout') : 'error';
      rec({ ev: 'fail', sid: id, error: `${error?.name}: ${error?.message}`, outcome });
    }
  }

  async function chain(c) {
    while (!finishing) {
      const id = sid(c);
      if (config.WORKLOAD === 'mutex') {
        if (c === 0) await call(id, 'mutex', () => resource.write(KEY, id));
        else await call(id, 'mutex', () => locks.using(KEY, (lock) => critical(lock, id, true)));
      } else if (config.WORKLOAD === 'semaphore') {
        const limit = Number(config.LIMIT);
        await call(id, 'semaphore', () => locks.using(KEY, (lock) => critical(lock, id, false), { limit }), { limit });
      } else if (config.WORKLOAD === 'rwlock') {
        const mode = random() < 0.6 ? 'read' : 'write';
        await call(id, mode, () => locks.using(KEY, (lock) => critical(lock, id, mode === 'write'), { mode }));
      } else if (config.WORKLOAD === 'greedy') {
        // A burst of calls, each made in the turn the last one's release came back: this
        // process parks the lock between them (lib/core/engine/lock-parking.ts) while the other
        // workers' callers wait as barging waiters.
        const rounds = 2 + Math.floor(random() * 7);
        for (let round = 0; round < rounds && !finishing; round++) {
          const rid = round === 0 ? id : sid(c);
          await call(rid, 'mutex', () => locks.using(KEY, (lock) => critical(lock, rid, true), { fairness: 'barging' }), { fairness: 'barging' });
        }
      } else if (config.WORKLOAD === 'transfer') {
        const accounts = ['acct-a', 'acct-b', 'acct-c'].map((a) => `${KEY}:${a}`);
        const from = Math.floor(random() * 3);
        const keys = [accounts[from], accounts[(from + 1 + Math.floor(random() * 2)) % 3]];
        await call(id, 'transfer', () => locks.using(keys, (lock) => critical(lock, id, true)), { keys });
      }
      await sleep(Math.floor(random() * 20));
    }
  }

  /**
   * `--freeze` schedules (READS): isLocked() and inspect() of the key in turn, every 50 ms until
   * the workload finishes, each recorded with when it was asked and when it settled, answered or
   * refused (the checker's read-unbounded: Redis frozen, a read is refused within an attempt's
   * 1 s grace, not held for as long as Redis is gone).
   */
  async function reads() {
    for (let i = 0; !finishing; i++) {
      const what = i % 2 === 0 ? 'isLocked' : 'inspect';
      const t = mono();
      let outcome = 'answered';
      try {
        await (what === 'isLocked' ? locks.isLocked(KEY) : locks.inspect(KEY));
      } catch (error) {
        outcome = `refused: ${error?.name}: ${error?.message}`;
      }
      rec({ ev: 'read', what, t, done: mono(), outcome });
      await sleep(50);
    }
  }

  const jobs = new Set();
  const readLoop = config.READS ? reads() : Promise.resolve();
  const chains = Promise.all([readLoop, config.WORKLOAD === 'job' || config.WORKLOAD === 'leader' ? Promise.resolve() : Promise.all(Array.from({ length: Number(config.CHAINS ?? 2) }, (_, c) => chain(c)))]);
  /**
   * The permit probe's ask for every permit but one, not waiting: whether Redis refused it (else
   * the permits were taken and given back). Refused is a busy answer: a LockNotAcquiredError with
   * no cause. One with a cause says nothing of the count, and is thrown: its one attempt failed, or
   * Redis granted it and the reply came after the grant's lease had run out here, given back (a
   * stall: Cluster semaphore seed 60066 of --deletes, on a loaded machine, reported `free-refused`
   * for an ask whose worker stalled 832 ms of its 880, its second section lost `expired` meanwhile).
   */
  async function refusedPermits(limit) {
    try {
      await (await locks.acquire(KEY, { limit, permits: limit - 1, waitTimeout: 0 })).release();
      return false;
    } catch (error) {
      if (error?.name === 'LockNotAcquiredError' && error.cause === undefined) return true;
      // In the trace (checker.mjs judges nothing of it): why the ask told nothing.
      rec({ ev: 'probe-ask-failed', error: String(error?.cause?.message ?? error?.message ?? error) });
      throw error;
    }
  }
  /**
   * The permit probe's second section (`sid`): once in (`secondIn`), it waits for `gate`, then
   * runs `code` with its lock; `b`, the call.
   */
  function probeSecond(sid, limit, gate, code) {
    let entered;
    const secondIn = new Promise((resolve) => (entered = resolve));
    const b = call(sid, 'semaphore', () => locks.using(KEY, async (lock) => {
      entered();
      await gate;
      return code(lock);
    }, { limit }), { limit });
    return { secondIn, b };
  }
  // Which client the module was given: a Cluster or node-redis client of this worker's, or a URL.
  rec({ ev: 'ready', client: nodeRedis !== undefined ? 'node-redis' : cluster !== undefined ? 'ioredis Cluster' : quorum !== undefined ? 'quorum' : 'url' });
  return {
    tick(tick) {
      if (finishing) return;
      const id = sid('job');
      const run = call(id, 'job', () => resource.job(tick, id));
      jobs.add(run);
      void run.then(() => jobs.delete(run));
    },
    /** The chains end (their calls settle); the application stays open (see `permitProbe`). */
    async drain() {
      finishing = true;
      await chains;
      await Promise.all(jobs);
    },
    /**
     * The permit probe (runner.mjs, `--deletes` semaphore schedules that drain): once every chain
     * has ended, two sections of this worker hold a permit each; the runner deletes the first
     * one's permit key (an eviction) while the second holds, the first is told at its next
     * renewal and releases, then the second. Nothing calls after them: what the first one's
     * release leaves in the holders hash stays for the store scan (checker.mjs, store-leftover).
     */
    async permitProbe() {
      const limit = Number(config.LIMIT);
      // Bounded whatever happens: told or not, each section ends within a few ttls.
      const bound = mono() + 5 * ttl;
      const [one, two] = [sid('probe'), sid('probe')];
      let first;
      let firstDone = false;
      // The asks are made from here: inside a section of the key they would be re-entries.
      let told;
      const toldFirst = new Promise((resolve) => (told = resolve));
      let answered;
      const asked = new Promise((resolve) => (answered = resolve));
      const a = call(one, 'semaphore', () => locks.using(KEY, async (lock) => {
        first = lock;
        await critical(lock, one, false, {}, () => mono() > bound);
        if (lock.signal.reason?.reason === 'refused') {
          told(true);
          await asked;
        }
      }, { limit }), { limit }).then(() => {
        firstDone = true;
        told(false);
      });
      while (first === undefined && !firstDone && mono() < bound) await sleep(2);
      let counted;
      const scored = new Promise((resolve) => (counted = resolve));
      const { secondIn, b } = probeSecond(two, limit, scored, (lock) => {
        const held = first === undefined ? undefined : heldLockOf(first);
        process.send({ probeHolding: { key: typeof held?.lockKey === 'string' ? held.lockKey : null, token: typeof held?.token === 'string' ? held.token : null } });
        return critical(lock, two, false, {}, () => firstDone || mono() > bound);
      });
      // A caller refused while both hold: its count scores them with their lease deadlines, as
      // the fast path that let them in did not (a holder unscored is looked at by the next count).
      await Promise.race([secondIn, b]);
      await refusedPermits(limit).catch(() => undefined);
      counted();
      // Told its permit is gone, the first holds nothing: the permits the second does not hold
      // are free at once (the renewal that told dropped its entry), not at its old deadline.
      if (await toldFirst) {
        const t = mono();
        if (await refusedPermits(limit).catch(() => false)) rec({ ev: 'free-refused', permits: limit - 1, t, done: mono() });
      }
      answered();
      await Promise.all([a, b]);
    },
    /**
     * The permit probe's second part (runner.mjs): two sections of this worker hold a permit
     * each, counted with their lease deadlines; right after a renewal of the first (the next is a
     * third of a ttl away), it answers its permit key, which the runner deletes (an eviction) and
     * says so (`deleted`), and the first releases at once, before any renewal of its meets the gone
     * key: that release must drop its entry (docs/redis-data.md), so that the permits the second
     * does not hold are free at once (the checker's `free-refused`; an entry left counted is also
     * a closed worker's token for the store scan, `store-leftover`).
     */
    async permitReleaseProbe(deleted) {
      const limit = Number(config.LIMIT);
      const bound = mono() + 5 * ttl;
      const [one, two] = [sid('probe'), sid('probe')];
      let first;
      let firstDone = false;
      let gone = false;
      const a = call(one, 'semaphore', () => locks.using(KEY, async (lock) => {
        first = lock;
        await critical(lock, one, false, {}, () => gone || mono() > bound);
      }, { limit }), { limit }).then(() => (firstDone = true));
      while (first === undefined && !firstDone && mono() < bound) await sleep(2);
      let over;
      const ended = new Promise((resolve) => (over = resolve));
      const { secondIn, b } = probeSecond(two, limit, ended, (lock) => critical(lock, two, false, {}, () => true));
      await Promise.race([secondIn, b]);
      // Scored (see permitProbe): a holder never scored is looked at by the next count whatever its deadline.
      await refusedPermits(limit).catch(() => undefined);
      const held = first === undefined || firstDone ? undefined : heldLockOf(first);
      if (held !== undefined) {
        // Its next renewal, so that the release goes out a whole renewal interval before the one after.
        let subscription;
        let timer;
        await new Promise((resolve) => {
          // Not past two ttls: a timer left running would keep the process alive past its close.
          timer = setTimeout(resolve, 2 * ttl);
          subscription = locks.events$.subscribe((event) => event.type === 'renewed' && event.key === KEY && event.fencingToken === first.fencingToken && resolve());
        });
        clearTimeout(timer);
        subscription.unsubscribe();
      }
      process.send({ probeHolding: { key: typeof held?.lockKey === 'string' ? held.lockKey : null, token: typeof held?.token === 'string' ? held.token : null } });
      gone = (await deleted) === true;
      await a;
      if (gone) {
        const t = mono();
        if (await refusedPermits(limit).catch(() => false)) rec({ ev: 'free-refused', permits: limit - 1, how: 'released', t, done: mono() });
      }
      over();
      await b;
    },
    /**
     * The permit probe's third part (runner.mjs): two callers of this worker hold a permit each
     * (a 5 s lease, which the due set's expiry follows), and a refused caller's count scores them
     * (the due set written); it answers the holders hash's name, which the runner deletes (an
     * eviction: the due set stays) and says so; then a third caller takes a permit, the two give
     * theirs back, then the third. No call is recorded as a section: what the last release leaves
     * is judged by the store scan after the close (docs/redis-data.md: a fast path that finds the
     * due set without its hash leaves the caller to the full path, which deletes the set; else the
     * last release leaves it, naming the first two, `store-leftover`).
     */
    async permitDueProbe(deleted) {
      const limit = Number(config.LIMIT);
      const take = () => locks.acquire(KEY, { limit, ttl: 5_000, waitTimeout: 0 }).catch(() => undefined);
      const held = [await take(), await take()];
      await refusedPermits(limit).catch(() => undefined);
      const permit = held[0] === undefined ? undefined : heldLockOf(held[0])?.lockKey;
      process.send({ probeHolding: { key: typeof permit === 'string' ? permit.replace(/:permit:[^:]+$/, ':holders') : null } });
      await deleted;
      const third = await take();
      for (const lock of held) await lock?.release().catch(() => undefined);
      await third?.release().catch(() => undefined);
    },
    /**
     * The bare-majority probe (bare-majority-probe.mjs, quorum `--silence` schedules that drain):
     * `hold` takes a lock of a key of its own with a long lease (no renewal puts a copy back while
     * the probe runs) and answers its Redis key; `rival` asks `isLocked()` (the round that leaves
     * the paused master unanswered), waits past the silence threshold and polls it as a call of
     * its own, recorded as any (its `fail` is what the checker's `minority-fails-quorum` judges);
     * `release` gives the held lock back.
     */
    async bareProbe(step) {
      const key = `${KEY}:bare`;
      if (step === 'hold') return holdProbeKey(key);
      if (step === 'rival') {
        await locks.isLocked(key).catch(() => undefined);
        await sleep(1_200);
        const id = sid('bare');
        await call(id, 'mutex', async () => (await locks.acquire(key, { waitTimeout: 500 })).release());
        return {};
      }
      await releaseProbeKey(key);
      return {};
    },
    /**
     * The owed give-back probe (owed-give-back-probe.mjs, after the bare-majority probe): `hold`
     * takes a lock of a key of its own (`holdProbeKey`); `rival` waits for that key as a call of its
     * own, recorded as any (its lease 2 s: a round gives a master 200 ms), says `owedEntered` once
     * in and holds until told `release` and its store saw master 2 answer again (a loaded machine
     * may run this process' socket reads after the runner's word), then answers; `release` gives
     * the held lock back.
     */
    async owedProbe(step) {
      const key = `${KEY}:owed`;
      if (step === 'hold') return holdProbeKey(key);
      if (step === 'rival') {
        let openedAt;
        const since = mono();
        // Master 2's return, or 3 s past the runner's word should it never come.
        const over = () => openedAt !== undefined && ((lastComeback?.node === 2 && lastComeback.t > since) || mono() > openedAt + 3_000);
        const id = sid('owed');
        // Its first poll's give-back: the runner has the holder release then.
        onGiveBack = (lock) => {
          if (!lock.endsWith(`{${key}}`)) return;
          onGiveBack = undefined;
          process.send({ owedGaveBack: true });
        };
        owedRival = {
          open: () => (openedAt = mono()),
          done: call(id, 'mutex', () => locks.using(key, (lock) => (process.send({ owedEntered: true }), critical(lock, id, false, {}, over)), { ttl: 2_000, waitTimeout: 5_000 }), { key }),
        };
        return undefined;
      }
      await releaseProbeKey(key);
      onGiveBack = undefined;
      owedRival?.open();
      await owedRival?.done;
      owedRival = undefined;
      return {};
    },
    /**
     * The resent release probe (resent-release-probe.mjs, one server): `hold` enters a lock of a
     * key of its own (a 5 s lease: no renewal goes out while the probe runs) in a section recorded
     * as any, answers `resentEntered` with its Redis key and holds until told `release`; the
     * section then ends and its call releases, and `resentDone` answers once the call settled.
     */
    async resentProbe(step) {
      if (step === 'release') {
        resentOpen?.();
        return;
      }
      const key = `${KEY}:resent`;
      let open = false;
      resentOpen = () => (open = true);
      const id = sid('resent');
      await call(id, 'mutex', () => locks.using(key, (lock) => {
        // Told at the section's first step, past the inspect() a section may ask first (whose
        // reply the runner's drop would hold up to its 1 s bound).
        let told = false;
        const over = () => {
          if (!told) process.send({ resentEntered: { key: heldLockOf(lock)?.lockKey ?? null } });
          told = true;
          return open;
        };
        return critical(lock, id, false, {}, over);
      }, { ttl: 5_000 }), { key, ttl: 5_000 });
      resentOpen = undefined;
      process.send({ resentDone: true });
    },
    /**
     * The own run probe (own-run-probe.mjs, one server, job schedules that drain): `hold` calls
     * the job for `tick` as a tick would, and a run that begins goes on, writing nothing once told
     * of a loss, until `release`: answers `ownRunEntered` (whether it ran) once it began or its
     * call settled without running; `tick` calls the job as a tick does, answered `ownRunTicked`
     * (whether it ran) once settled; `release` ends the held run, answered `ownRunDone` once its
     * call settled.
     */
    async ownRunProbe({ step, tick }) {
      if (step === 'release') {
        const held = [...ownRunHolds.values()];
        for (const hold of held) hold.open = true;
        await Promise.all(held.map((hold) => hold.done));
        ownRunHolds.clear();
        process.send({ ownRunDone: true });
        return;
      }
      const id = sid('job');
      if (step === 'tick') {
        await call(id, 'job', () => resource.job(tick, id));
        process.send({ ownRunTicked: ranTicks.has(tick) });
        return;
      }
      let answered = false;
      const answer = (ran) => {
        if (!answered) process.send({ ownRunEntered: ran });
        answered = true;
      };
      const hold = { open: false, entered: () => answer(true) };
      hold.over = () => hold.open;
      ownRunHolds.set(tick, hold);
      hold.done = call(id, 'job', () => resource.job(tick, id));
      await hold.done;
      answer(false);
    },
    /**
     * The unrenewed handover probe (unrenewed-probe.mjs, one server): `hold` takes a lock of a key
     * of its own, answered `unrenewedHeld`; `release` gives it back. `wait` (another worker) waits
     * for it with `autoRenew: false` and a 1.5 s ttl in a section recorded as any, answered
     * `unrenewedWaiting` as it begins: the release hands the lock over, and the section holds
     * until the lock's first renewal (the grant lease's), then has the runner read Redis' lease
     * of it with the end its ttl sets (`ttlEnd`: its lease's start, the waiter's last attempt,
     * plus the ttl; checker.mjs's `lease-past-ttl`), and ends; `unrenewedDone` once its call settled.
     */
    async unrenewedProbe(step) {
      const key = `${KEY}:unrenewed`;
      if (step === 'hold') {
        unrenewedHeld = await locks.acquire(key).catch(() => undefined);
        process.send({ unrenewedHeld: unrenewedHeld !== undefined });
        return;
      }
      if (step === 'release') {
        await unrenewedHeld?.release().catch(() => undefined);
        unrenewedHeld = undefined;
        return;
      }
      const id = sid('unrenewed');
      const ttlMs = 1_500;
      const bound = mono() + 3 * ttlMs;
      const waited = call(id, 'mutex', () => locks.using(key, async (lock) => {
        let renewed = false;
        const subscription = locks.events$.subscribe((event) => event.type === 'renewed' && event.key === key && event.fencingToken === lock.fencingToken && (renewed = true));
        try {
          await critical(lock, id, false, {}, () => renewed || mono() > bound);
        } finally {
          subscription.unsubscribe();
        }
        const held = heldLockOf(lock);
        if (!renewed || !lock.held || typeof held?.acquiredAt !== 'number' || typeof held.lockKey !== 'string') return;
        const since = mono() - (performance.now() - held.acquiredAt);
        process.send({ observe: { sid: id, locks: [{ key: held.lockKey, token: held.token, t: mono(), leaseLeft: held.deadline - performance.now(), ttlEnd: since + ttlMs }] } }, () => undefined);
      }, { autoRenew: false, ttl: ttlMs, waitTimeout: 2 * ttlMs }), { key, ttl: ttlMs, autoRenew: false });
      process.send({ unrenewedWaiting: true });
      await waited;
      process.send({ unrenewedDone: true });
    },
    async finish(abrupt) {
      finishing = true;
      if (!abrupt) {
        await chains;
        await Promise.all(jobs);
      }
      rec({ ev: 'closing', shutdownTimeout });
      let closeDone = false;
      const reads = readsWhileClosing(() => closeDone);
      await app.close();
      const closedAt = mono();
      appClosed = true;
      closeDone = true;
      rec({ ev: 'closed', t: closedAt });
      await reads;
      // And once more after the close, as a request that came in late would: refused, nothing left unhandled.
      await Promise.allSettled(lateReads());
      await chains;
      await Promise.all(jobs);
      if (leases) leases.unsubscribe();
      lostEvents.unsubscribe();
      // This worker's own client is the user's to close; a refresh of its slot map still under way
      // (rare: Redis out of reach as the close began) moves the moment the bound counts from.
      const waited = cluster !== undefined && (await closeOwnCluster(cluster, userRefreshes));
      nodeRedis?.destroy();
      const since = waited ? mono() : closedAt;
      // A few ms when nothing stays (the sockets' closes): the bound is waited out only for what does.
      const left = await leftAlive(baseline, since);
      rec({ ev: 'alive-after-close', left, since, bound: LEFT_ALIVE_BOUND, ...(left.length > 0 && timerStacks !== undefined && { stacks: pendingTimerStacks() }) });
      rec({ ev: 'done' });
      // Handed clients: what the closed application still sends on them is recorded until exit.
      if (handed !== undefined) {
        handedOpen = handed;
        return;
      }
      closeSync(history.fd);
      history = undefined;
    },
  };
}

// Node ends a process on an unhandled rejection by default: record it (the checker's
// `unhandled-rejection`) and go on, so that the rest of the history still counts.
process.on('unhandledRejection', (reason) => {
  rec({ ev: 'unhandled', error: reason instanceof Error ? `${reason.name}: ${reason.message}` : String(reason) });
});

let current;
/** The runner's word that it deleted the permit probe's key (`permitReleaseProbe`). */
let probeDeleted;
/** The quorum clients handed to a closed application (`HANDED`), open until the runner says `closeHanded`. */
let handedOpen;
process.on('message', (message) => {
  if (message.start) {
    void start(message.start).then((running) => {
      current = running;
      process.send({ ready: true });
    });
  } else if (message.tick !== undefined) {
    current?.tick(message.tick);
  } else if (message.drain) {
    void current?.drain().then(() => process.send({ drained: true }));
  } else if (typeof message.bare === 'string') {
    void current?.bareProbe(message.bare).then((answer) => process.send({ bared: answer }));
  } else if (typeof message.owed === 'string') {
    void current?.owedProbe(message.owed).then((answer) => answer !== undefined && process.send({ owedDone: answer }));
  } else if (message.ownRun !== undefined) {
    void current?.ownRunProbe(message.ownRun);
  } else if (typeof message.unrenewed === 'string') {
    void current?.unrenewedProbe(message.unrenewed);
  } else if (typeof message.resent === 'string') {
    void current?.resentProbe(message.resent);
  } else if (message.probe === 'permit') {
    void current?.permitProbe().then(() => process.send({ probed: true }));
  } else if (message.probe === 'permit-due') {
    const deleted = new Promise((resolve) => (probeDeleted = resolve));
    void current?.permitDueProbe(deleted).then(() => process.send({ probed: true }));
  } else if (message.probe === 'permit-release') {
    const deleted = new Promise((resolve) => (probeDeleted = resolve));
    void current?.permitReleaseProbe(deleted).then(() => process.send({ probed: true }));
  } else if (message.probeDeleted !== undefined) {
    probeDeleted?.(message.probeDeleted);
  } else if (message.finish) {
    const running = current;
    current = undefined;
    void running?.finish(message.abrupt === true).then(() => process.send({ finished: true }));
  } else if (message.closeHanded) {
    // The runner resumed the masters and gave their answers time to come: the record ends here.
    for (const client of handedOpen ?? []) client.disconnect();
    handedOpen = undefined;
    if (history !== undefined) {
      closeSync(history.fd);
      history = undefined;
    }
    process.send({ handedClosed: true });
  } else if (message.exit) {
    clearInterval(stallWatch);
    void register.quit().then(() => process.disconnect());
  }
});
process.send({ loaded: true });
