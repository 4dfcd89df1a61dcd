// Runs seeded fault schedules against a real redis-server and a 3-master Redis Cluster, with
// real worker processes (worker.mjs, on the built package), and checks each recorded history
// with checker.mjs. Used by test/explore/real-redis.spec.ts and by `npm run explore:real`.
import { fork } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { startRedisCluster } from '../../scripts/redis-cluster.mjs';
import { startRedisServer } from '../../scripts/redis-server.mjs';
import { bareMajorityProbe } from './bare-majority-probe.mjs';
import { owedGiveBackProbe } from './owed-give-back-probe.mjs';
import { ownRunProbe } from './own-run-probe.mjs';
import { unrenewedProbe } from './unrenewed-probe.mjs';
import { resentReleaseProbe } from './resent-release-probe.mjs';
import { check } from './checker.mjs';
import { FaultProxy } from './fault-proxy.mjs';

const workerScript = fileURLToPath(new URL('./worker.mjs', import.meta.url));
const mono = () => Number(process.hrtime.bigint()) / 1e6;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

export const WORKLOADS = ['mutex', 'semaphore', 'rwlock', 'job', 'leader', 'transfer', 'greedy'];
/** The workloads the seed's main generator picks from (the list before `transfer`, which a generator of its own draws: the seeds keep their faults). */
const DRAWN_WORKLOADS = ['mutex', 'semaphore', 'rwlock', 'job', 'leader'];
/**
 * What a quorum runs instead (semaphores, read-write locks and barging are refused in quorum
 * mode): the same draw, mapped, so that a quorum schedule keeps the seed's faults.
 */
const QUORUM_WORKLOADS = { mutex: 'mutex', semaphore: 'mutex', rwlock: 'mutex', job: 'job', leader: 'leader' };
/** How a schedule ends: `drain` (the chains finish their calls, then app.close()) or `abrupt` (app.close() while they run). */
export const FINISHES = ['drain', 'abrupt'];
/** The grant lease and a waiter's liveness lease (lib/core/engine/waiter-timing.ts): what a lost command may leave behind lives at most this, or a ttl. */
const WAITER_LEASE_MS = 1_000;
/** How long a worker's links stay cut from the moment it is told to close (`closeCut`): beyond twice its shutdownTimeout (1 s; a worker with a job or a leadership closes in two phases) and the checker's slack. */
const CLOSE_CUT_MS = 2_600;
/**
 * The ttl of the hand-back probe's election (worker.mjs, `LONG_LEADER`), on the worker of a leader
 * schedule whose links are cut as it closes: past its shutdownTimeout and the cut, so that a
 * hand-back waited for without a bound (seeded bug 21) holds the close until the link heals. With
 * the election's 600 ms, a release on a link that answers nothing ends with its lease, within the
 * bound, and the bug went unfound from the twenty-ninth session.
 */
const LONG_LEADER_TTL = 6_000;
/**
 * How long that worker's links stay cut: well past the close's bound (twice its shutdownTimeout
 * and the checker's slack, 2.25 s), so that a hand-back that waits for them to heal breaks it by
 * far more than the worker's stalls of a loaded machine, which the rule does not count (at
 * CLOSE_CUT_MS such a close took 2.6 s, 2.2 s of it counted).
 */
const LONG_LEADER_CUT_MS = 4_500;
/**
 * `--silent-close` (with `--silence`; never drawn): one master frozen from this long before the
 * workers are told to close (past the 1 s after which quorum mode asks a silent master nothing,
 * docs/deployment.md) until every worker closed, so that each close begins with that master
 * silent and releases owed to it.
 */
const SILENT_CLOSE_LEAD_MS = 1_500;
/** The workers' shutdownTimeout in `--silent-close` schedules: well over that second, so that a close waiting for the silent master shows. */
const SILENT_CLOSE_SHUTDOWN_MS = 3_000;
/**
 * `--handed` (with `--silent-close`; quorum; never drawn): the workers hand the module clients of
 * their own and keep them open this long after the frozen master resumed, past their close
 * (docs/deployment.md: nothing is sent after `app.close()` on clients handed in). With
 * `--target single` (no silence): the seed's schedule, its one server frozen across the close as
 * a silent close freezes a master (from `SILENT_CLOSE_LEAD_MS` before it), each worker's client
 * its own (docs/configuration.md: the module never closes a client it was given).
 */
const HANDED_OPEN_MS = 500;
export const FAULT_KINDS = ['pause', 'kill', 'cut', 'delay', 'drop-replies', 'drop-requests', 'reset', 'redis-pause', 'restart-empty', 'migrate', 'long-pause', 'silent-restart', 'delete-key', 'drop-messages', 'foreign-counter'];
/**
 * How often each fault is drawn: a pause (a process frozen past its lease) is what most often
 * breaks a lock. A slot migration is never drawn: it runs in schedules of its own (`migrate`),
 * so that the seeds of the other schedules keep their faults.
 */
const FAULT_WEIGHTS = { pause: 3, kill: 1, cut: 2, delay: 1, 'drop-replies': 1, 'drop-requests': 1, reset: 1, 'redis-pause': 1, 'restart-empty': 1, migrate: 0, 'long-pause': 0, 'silent-restart': 0, 'delete-key': 0, 'drop-messages': 0, 'foreign-counter': 0 };
/**
 * A lock key deleted from outside (`deletes`, `--deletes`; never drawn, so that the seeds keep
 * their schedules): an operator's `DEL`, or an eviction under `maxmemory` with a policy other than
 * `noeviction` (docs/deployment.md). The runner deletes one of the run's keys on a connection of its
 * own, no fault proxy between, at a moment drawn from a generator of its own (`seed ^ 0xde1e`), of
 * a class drawn there too: the lock's own key (`P{K}`: a mutex's, a writer's or the readers' `~r`,
 * a job's run lock or owner lease, an account of a transfer), a guard (a readers hash, a reader's
 * key, a semaphore's holders hash, a permit key or its due set), a queue key, or the fencing
 * counter. Which key of the class is picked among those Redis holds at that moment (none there:
 * any key of the run; none at all: nothing is deleted).
 */
export const DELETED_CLASSES = ['owner', 'owner', 'owner', 'guard', 'guard', 'queue', 'fence'];
/**
 * Release messages lost while commands still flow (`mute`, `--drop-messages`; never drawn): the
 * subscriber connections of one worker (or of every worker) hear nothing for a while (a pub/sub
 * client over its output-buffer limit, a load balancer's idle timeout on a connection that only
 * listens), then are reset, while the command connections go on. Drawn from a generator of its
 * own (`seed ^ 0x5b5c`). Waiters must still get the lock, by their poll.
 */
const MUTE_MS = [300, 1_500];
/**
 * A fencing counter holding a value no fencing token can be (`foreign`, `--foreign-counters`;
 * never drawn): something else writing under the key prefix, or an operator's `SET` by hand, puts
 * past 2^53 (which a double cannot hold exactly) or a negative number in the counters of the run's
 * key; the scripts must refuse to hand a token out of it (b7696f17), and after a while the runner
 * deletes them, as the error the calls get says to, so that the run goes on. Drawn from a
 * generator of its own (`seed ^ 0xf0e1`): when, how long, which value. In quorum mode (its
 * masters' counters, on one master or on a majority: `masters`), only the value past 2^53 is
 * foreign there: a master raises a counter below the caller's seed to it (QUORUM_ACQUIRE), so -5
 * is legal, a counter lost as a restart loses one, and its acquisitions must go on; past 2^53 a
 * master refuses the acquisition (FOREIGNFENCINGCOUNTER), and a majority refuses the call.
 */
const FOREIGN_VALUES = ['9007199254740993', '-5'];
const FOREIGN_MS = [300, 900];
/** How long a key deletion waits for a worker to hold the lock for long (a section of one to two ttls), before it deletes anyway. */
const DELETE_AIM_MS = 400;
/** The faults above: the liveness rule judges what follows them as after no fault (`quietAt`). */
const OUTSIDE_FAULTS = new Set(['delete-key', 'drop-messages']);
/**
 * Quorum silence (`silence`, `--silence`; never drawn, so that the seeds keep their schedules): a
 * master frozen past the 1 s after which quorum mode asks it nothing (SILENT_AFTER_MS,
 * lib/core/stores/quorum/quorum-silence.ts), then resumed (`long-pause`), or killed while frozen
 * and started again empty (`silent-restart`: its scripts gone, so what is sent it on its return
 * meets NOSCRIPT and goes again as EVAL behind what followed). `redis-pause` lasts at most a ttl
 * (600 ms), below that threshold.
 */
export const SILENCE_FAULTS = ['long-pause', 'silent-restart'];
const WEIGHTED_FAULTS = FAULT_KINDS.flatMap((kind) => Array(FAULT_WEIGHTS[kind]).fill(kind));
/** Faults of the links between the workers and Redis: one worker's (a partition), or everyone's. */
const NETWORK_FAULTS = new Set(['cut', 'delay', 'drop-replies', 'drop-requests', 'reset']);
/** Worker processes per schedule; each has its own proxied link to each Redis node. */
const WORKERS = 3;

/** A seeded generator (mulberry32): the same seed gives the same schedule. */
export function generator(seed) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let x = state;
    x = Math.imul(x ^ (x >>> 15), x | 1);
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (lo, hi) => lo + Math.floor(next() * (hi - lo + 1)),
    pick: (list) => list[Math.floor(next() * list.length)],
  };
}

/**
 * The schedule of one seed: target, workload, workers and the faults with their times (ms after
 * the workers start). `target` forces single, cluster or quorum; otherwise the seed picks single
 * or cluster (one in three on a Cluster). A quorum (three independent masters, the module given
 * all three) is never drawn: its schedules are asked for, and run a mutex, a job or a leader.
 * `migrate`: a Cluster schedule whose one fault moves the slot of the key in use (see `migrationSchedule`).
 */
export function makeSchedule(seed, { target, workload, migrate = false, driver, silence = false, silentClose = false, handed = false, latency = false, deletes = false, mute = false, freeze = false, foreign = false } = {}) {
  if (freeze) return withFreeze(makeSchedule(seed, { target, workload, driver, deletes, mute, foreign }));
  if (migrate) return migrationSchedule(seed, workload);
  if (silence) return silenceSchedule(seed, { target, workload, silentClose, handed });
  // One server frozen across the close, the workers' clients their own: drawn by nobody, asked for.
  // Closed in the middle of work: a close once idle has no waiter left whose attempt the frozen
  // server holds, to be given back again once it answers.
  // Half of them (a generator of their own: the seed's draws stay) restart the frozen server
  // empty instead of resuming it: its scripts gone, what the clients send again is answered NOSCRIPT.
  if (handed) return { ...makeSchedule(seed, { target, workload }), finish: 'abrupt', closeSilence: 0, shutdownMs: SILENT_CLOSE_SHUTDOWN_MS, handed: true, ...(generator(seed ^ 0x5c22).next() < 1 / 2 && { closeRestart: true }) };
  if (latency) return latencySchedule(seed, { target, workload });
  // Faults drawn by nobody (a seed keeps its schedule), asked for: on top of the seed's own.
  if (deletes || mute || foreign) return withOutsideFaults(makeSchedule(seed, { target, workload, driver }), { deletes, mute, foreign });
  // The client the workers hand the module: drawn by nobody (a seed keeps its schedule), asked for.
  if (driver === 'node-redis') return { ...makeSchedule(seed, { target, workload }), driver };
  const rng = generator(seed);
  const ttl = 600;
  const schedule = {
    seed,
    target: target ?? (rng.next() < 1 / 3 ? 'cluster' : 'single'),
    workload: workload ?? rng.pick(DRAWN_WORKLOADS),
    workers: WORKERS,
    chains: 2,
    ttl,
    limit: 2,
    runMs: 1_500,
    faults: [],
  };
  if (target) rng.next();
  if (workload) rng.next();
  if (schedule.target === 'quorum' && workload === undefined) schedule.workload = QUORUM_WORKLOADS[schedule.workload];
  // Which master a fault hits: always one on a Cluster; on a quorum one, or (half of the link
  // faults) every master of the worker's, a partition that leaves no majority.
  const onNodes = schedule.target === 'cluster' || schedule.target === 'quorum';
  const count = rng.int(1, 3);
  let killed = false;
  for (let i = 0; i < count; i++) {
    let kind = rng.pick(WEIGHTED_FAULTS);
    if (kind === 'kill' && killed) kind = 'pause';
    killed ||= kind === 'kill';
    const at = rng.int(100, 800);
    const fault = { kind, at };
    if (kind === 'pause' || kind === 'kill' || (NETWORK_FAULTS.has(kind) && rng.next() < 0.75)) {
      fault.worker = rng.int(0, schedule.workers - 1);
      // Half of them hit whichever worker holds a lock at that moment (else that one).
      if (rng.next() < 0.5) fault.holder = true;
    }
    if (kind === 'pause') fault.ms = rng.int(ttl / 2, ttl * 2);
    if (kind === 'cut' || kind === 'drop-replies' || kind === 'drop-requests') fault.ms = rng.int(ttl / 2, ttl * 2);
    if (kind === 'delay') Object.assign(fault, { ms: rng.int(200, 800), delay: rng.int(5, ttl / 2) });
    if (kind === 'redis-pause') fault.ms = rng.int(100, ttl);
    if (onNodes && kind !== 'pause' && kind !== 'kill') {
      fault.node = rng.int(0, 2);
      if (schedule.target === 'quorum' && NETWORK_FAULTS.has(kind) && rng.next() < 0.5) delete fault.node;
    }
    schedule.faults.push(fault);
  }
  schedule.faults.sort((a, b) => a.at - b.at);
  // On a Cluster, which master holds the lock's key and (jobs) the owner lease's: part of the
  // schedule, so that a replay puts them where the first run did (a restart-empty of node 1 hits
  // a job only through the keys node 1 holds). Drawn from a generator of its own, so that the
  // seed's other choices stay what they were.
  if (schedule.target === 'cluster') {
    const place = generator(seed ^ 0x5eed);
    schedule.placement = { lock: place.int(0, 2), owner: place.int(0, 2) };
  }
  // Drawn apart too: one schedule in six of those drawn a mutex, semaphore or read-write lock
  // runs multi-key transfers instead; half of them end with app.close() in the middle of work, and
  // a third of those cut one worker's links to Redis as it closes, until CLOSE_CUT_MS later (its
  // close must end within shutdownTimeout all the same, leaving its leases to run out).
  const extra = generator(seed ^ 0x7a14);
  if (extra.next() < 1 / 6 && workload === undefined && ['mutex', 'semaphore', 'rwlock'].includes(schedule.workload)) schedule.workload = 'transfer';
  schedule.finish = extra.pick(FINISHES);
  if (schedule.finish === 'abrupt' && extra.next() < 1 / 3) schedule.closeCut = extra.int(0, schedule.workers - 1);
  return schedule;
}

/**
 * `schedule` (the seed's own draw) with Redis frozen past an attempt's 1 s grace on top (`freeze`,
 * `--freeze`; never drawn): a `redis-pause` (SIGSTOP) of 1.5 to 3 s (on a Cluster, of one master
 * for 1.4 to 1.8 s, under its node timeout),
 * where the drawn ones last at most a ttl, from a generator of its own, so that the seed's other
 * faults stay what they were; and each worker reads the lock (`isLocked()`, `inspect()`) every
 * 50 ms meanwhile (`reads`), which the checker's `read-unbounded` judges: a read Redis does not
 * answer is refused within that grace (docs/guarantees.md), not held for as long as Redis is gone.
 * Not in quorum mode (a quorum's reads wait for each master within a bound of their own).
 */
function withFreeze(schedule) {
  if (schedule.target === 'quorum') throw new Error('--freeze runs on one server or a Cluster, not in quorum mode');
  const rng = generator(schedule.seed ^ 0xf4e2);
  const fault = { kind: 'redis-pause', at: rng.int(200, 900), ms: rng.int(1_500, 3_000), frozen: true };
  if (schedule.target === 'cluster') {
    fault.node = rng.int(0, 2);
    // Under the Cluster's node timeout (2 s, scripts/redis-cluster.mjs): a master frozen longer is
    // marked failed, and with no replica the Cluster answers CLUSTERDOWN until it recovers (the
    // runner's store scan after seed 39203's 2.6 s freeze got it). Still past the grace and slack.
    fault.ms = 1_400 + (fault.ms % 401);
  }
  return { ...schedule, faults: [...schedule.faults, fault].sort((a, b) => a.at - b.at), freeze: true, reads: true };
}

/**
 * `schedule` (the seed's own draw) with a lock key deleted from outside (`deletes`) and/or the
 * release messages of one worker or all lost for a while (`mute`) on top, each drawn from a
 * generator of its own, so that the seed's other faults stay what they were; and the fencing
 * counters holding a value no token can be (`foreign`, see FOREIGN_VALUES). Deletions and lost
 * messages not in quorum mode (no release messages there, and a key deleted on one master is put
 * back by the next renewal).
 */
function withOutsideFaults(schedule, { deletes, mute, foreign }) {
  if (schedule.target === 'quorum' && (deletes || mute)) throw new Error('--deletes and --drop-messages run on one server or a Cluster, not in quorum mode');
  const faults = [...schedule.faults];
  if (deletes) {
    const rng = generator(schedule.seed ^ 0xde1e);
    faults.push({ kind: 'delete-key', at: rng.int(100, 900), of: rng.pick(DELETED_CLASSES), pick: rng.int(0, 2 ** 30) });
  }
  if (mute) {
    const rng = generator(schedule.seed ^ 0x5b5c);
    const fault = { kind: 'drop-messages', at: rng.int(100, 900), ms: rng.int(MUTE_MS[0], MUTE_MS[1]) };
    if (rng.next() < 0.75) fault.worker = rng.int(0, schedule.workers - 1);
    if (schedule.target === 'cluster') fault.node = schedule.placement?.lock ?? rng.int(0, 2);
    faults.push(fault);
  }
  if (foreign) {
    const rng = generator(schedule.seed ^ 0xf0e1);
    const fault = { kind: 'foreign-counter', at: rng.int(100, 900), ms: rng.int(FOREIGN_MS[0], FOREIGN_MS[1]), value: rng.pick(FOREIGN_VALUES) };
    // Quorum mode: on one master, or on a majority (two, or all three), drawn after the rest, so
    // that a seed's other schedules keep theirs (see FOREIGN_VALUES for what each master must do).
    if (schedule.target === 'quorum') {
      if (rng.next() < 1 / 2) fault.masters = [rng.int(0, 2)];
      else {
        const spared = rng.int(0, 3);
        fault.masters = [0, 1, 2].filter((master) => master !== spared);
      }
    }
    faults.push(fault);
  }
  return { ...schedule, faults: faults.sort((a, b) => a.at - b.at), ...(deletes && { deletes: true }), ...(mute && { mute: true }), ...(foreign && { foreign: true }) };
}

/**
 * The class of a key of the run (`DELETED_CLASSES`) from its Redis name: `owner` (ends with the
 * hash tag: `P{K}`, `P{K:owner}`, `P{K:acct-a}`), `fence`, `queue` (`:queue`, `:waiters`, `:sq`,
 * `:sw`, a barging waiters' `:wanted`), else `guard` (`:readers`, `:reader:<token>`, `:holders`,
 * `:permit:<token>`, `:due`).
 */
export function keyClass(name) {
  if (name.endsWith('}')) return 'owner';
  if (name.endsWith(':fence')) return 'fence';
  if (/:(?:queue|waiters|sq|sw|wanted)$/.test(name)) return 'queue';
  return 'guard';
}

/**
 * The lock (as the workers name it: the schedule's key, `<key>:owner`, `<key>:acct-a`) whose
 * keys include the Redis key `name` (`lock:{<lock>}...`).
 */
export function lockOfKey(name) {
  return /\{(.*)\}/.exec(name)?.[1];
}

/**
 * Deletes one key of the run's lock `key` on the servers `nodes` (every master of a Cluster: the
 * key is deleted where it lives), on connections of the runner's own: of the class `fault.of` if
 * Redis holds one now (else any of the run's keys), picked by `fault.pick` among them in name
 * order. Returns what the checker needs: the Redis key deleted (`key`), its lock (`lock`), its
 * class (`of`), the owner token a reader's or permit key names (`token`), what a string key held
 * (`held`: a lock's owner token, a permit's too), and when the DEL was sent (`sent`,
 * CLOCK_MONOTONIC ms); nothing deleted: `{ key: null }`.
 */
async function deleteKey(nodes, key, fault) {
  const found = [];
  for (const { host = '127.0.0.1', port } of nodes) {
    const redis = new Redis(port, host, { maxRetriesPerRequest: 1 });
    try {
      for (const name of await keysOfRun(redis, key)) found.push({ name, host, port });
    } finally {
      redis.disconnect();
    }
  }
  found.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const ofClass = found.filter((k) => keyClass(k.name) === fault.of);
  // `fault.name`: that key and no other (the permit probe's), if Redis holds it.
  const among = fault.name !== undefined ? found.filter((k) => k.name === fault.name) : ofClass.length > 0 ? ofClass : found;
  const choice = among[fault.pick % Math.max(1, among.length)];
  if (choice === undefined) return { key: null };
  const redis = new Redis(choice.port, choice.host, { maxRetriesPerRequest: 1 });
  try {
    // The key is gone at some moment between `sent` and the event's `t` (taken once DEL answered).
    const sent = mono();
    // What a string key held goes with its DEL, in one script: the owner token of a lock's own key
    // (`held`), whose holder the deletion took, even one whose grant was still on its way to it.
    const [deleted, held] = await redis.eval(DEL_READING, 1, choice.name);
    const token = /:(?:reader|permit):([^:]+)$/.exec(choice.name)?.[1];
    return { key: choice.name, lock: lockOfKey(choice.name), of: keyClass(choice.name), deleted, sent, ...(token !== undefined && { token }), ...(typeof held === 'string' && { held }) };
  } finally {
    redis.disconnect();
  }
}

/**
 * Writes `fault.value` into every fencing counter of the run's lock `key` on the servers `nodes`
 * (where each lives), on connections of the runner's own, its expiry kept, and deletes them
 * `fault.ms` later. Returns what the checker needs: the counters written (`keys`), the value, and
 * when the writes were sent (`sent`) and the counters deleted (`deletedAt`, CLOCK_MONOTONIC ms).
 */
async function foreignCounters(nodes, key, fault) {
  const written = [];
  const sent = mono();
  for (const { host = '127.0.0.1', port } of nodes) {
    const redis = new Redis(port, host, { maxRetriesPerRequest: 1 });
    try {
      for (const name of await keysOfRun(redis, key)) if (keyClass(name) === 'fence') written.push({ name, host, port });
      for (const { name } of written.filter((k) => k.port === port && k.host === host)) await redis.set(name, fault.value, 'KEEPTTL');
    } finally {
      redis.disconnect();
    }
  }
  await sleep(fault.ms);
  for (const { name, host, port } of written) {
    const redis = new Redis(port, host, { maxRetriesPerRequest: 1 });
    try {
      await redis.del(name);
    } finally {
      redis.disconnect();
    }
  }
  return { keys: written.map((k) => k.name), value: fault.value, sent, deletedAt: mono() };
}

/** Every key of the run's lock `key` on one node, by SCAN (the run's key holds no glob character). */
async function keysOfRun(redis, key) {
  const found = [];
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `*${key}*`, 'COUNT', 1000);
    cursor = next;
    found.push(...keys);
  } while (cursor !== '0');
  return found;
}

/** DEL of KEYS[1], and the value it held when a string (false otherwise): `{deleted, value}`. */
const DEL_READING = `local value = false
if redis.call('TYPE', KEYS[1]).ok == 'string' then value = redis.call('GET', KEYS[1]) end
return {redis.call('DEL', KEYS[1]), value}`;

/** Deletes the permit key `name` the probe's holder answered (none: nothing), recorded as a fault; whether it was there. */
async function deleteProbed(nodes, key, name, record) {
  if (typeof name !== 'string') return false;
  const event = { ev: 'fault', kind: 'delete-key', probe: true, t: mono() };
  Object.assign(event, await deleteKey(nodes, key, { of: 'guard', pick: 0, name }));
  event.t = mono();
  event.until = event.t;
  record(event);
  return event.key !== null;
}

/**
 * The permit probe (`--deletes` semaphore schedules that drain; it draws nothing, so a seed's
 * schedule up to it is what it was): a drawn deletion of a permit key is swept up by the next
 * count that finds it overdue, so what its holder's release leaves behind shows only when no call
 * comes after it, which the run's chains rarely allow. Here every chain ends first (the
 * applications stay open), and once no fault can excuse what a worker leaves (checker.mjs:
 * `after`, a ttl and the grant lease past the last fault), one worker holds two permits in two
 * sections; the runner deletes the first one's permit key (an eviction) while the second holds,
 * the first is told at its next renewal (`told-of-deletion`) and releases, then the second. Then
 * again, but the first releases at once after the deletion, before a renewal of its meets the
 * gone key (which drops its entry itself, so that the release finds nothing to leave). The close
 * and the store scan follow with no other call: an entry a first release left counted is a closed
 * worker's token in the holders hash (`store-leftover`). Returns whether a key was deleted.
 */
async function permitProbe(live, nodes, key, after, record) {
  for (const worker of live) worker.send({ drain: true });
  // A worker not drained in time is found stuck by the finish.
  if ((await Promise.all(live.map((w) => w.next('drained', 20_000)))).some((m) => m === undefined)) return false;
  await sleep(Math.max(0, after - mono()));
  const [worker] = live;
  worker.send({ probe: 'permit' });
  const holding = (await worker.next('probeHolding', 10_000))?.probeHolding;
  const deleted = await deleteProbed(nodes, key, holding?.key, record);
  await worker.next('probed', 20_000);
  // The second part (worker.mjs, `permitReleaseProbe`): the first holder releases at once after
  // the deletion, before a renewal of its meets the gone key (which would drop its entry itself).
  worker.send({ probe: 'permit-release' });
  const gone = await deleteProbed(nodes, key, (await worker.next('probeHolding', 10_000))?.probeHolding?.key, record);
  worker.send({ probeDeleted: gone });
  await worker.next('probed', 20_000);
  // The third part (worker.mjs, `permitDueProbe`): the holders hash deleted beside its due set,
  // then a caller in and out after the two holders: the last release must leave no due set.
  worker.send({ probe: 'permit-due' });
  const hash = await deleteProbed(nodes, key, (await worker.next('probeHolding', 10_000))?.probeHolding?.key, record);
  worker.send({ probeDeleted: hash });
  await worker.next('probed', 20_000);
  return deleted || gone || hash;
}

/**
 * The quorum schedule of `seed` (the same draw: workload, faults, finish) with one or two masters
 * silenced on top, drawn from a generator of their own (`seed ^ 0x51e4`): one master frozen for
 * 1.2 to 3 s and resumed (`long-pause`), or frozen 1.2 to 2.5 s, killed as it is, down 0 to 600 ms
 * and started again empty (`silent-restart`); in one schedule in three a second one on another
 * master, starting within 400 ms of the first (two masters silent at once: too few are left for
 * a majority, so every master is asked again, and both answer again to attempts already on their
 * way). Half of these schedules run a ttl of 2 s instead of 600 ms, so that the copies a silent
 * master kept of locks taken before it froze outlive its silence, and the releases it missed
 * matter when they are sent on its return. The run goes on `settleMs` after the last fault ended,
 * so that the workers meet the masters' return before they close.
 */
function silenceSchedule(seed, { target = 'quorum', workload, silentClose = false, handed = false } = {}) {
  if (target !== 'quorum') throw new Error('silence schedules silence quorum masters: they need the quorum target');
  const schedule = makeSchedule(seed, { target, workload });
  const rng = generator(seed ^ 0x51e4);
  const silenced = (node, at) => {
    const kind = rng.pick(SILENCE_FAULTS);
    return kind === 'long-pause' ? { kind, at, node, ms: rng.int(1_200, 3_000) } : { kind, at, node, ms: rng.int(1_200, 2_500), down: rng.int(0, 600) };
  };
  const first = silenced(rng.int(0, 2), rng.int(100, 700));
  const faults = [first];
  if (rng.next() < 1 / 3) faults.push(silenced((first.node + rng.int(1, 2)) % 3, first.at + rng.int(0, 400)));
  if (rng.next() < 1 / 2) schedule.ttl = 2_000;
  schedule.faults = [...schedule.faults, ...faults].sort((a, b) => a.at - b.at);
  if (silentClose) {
    // Drawn from a generator of its own: the silence schedule's draws stay what they were.
    schedule.closeSilence = generator(seed ^ 0x51e5).int(0, 2);
    schedule.shutdownMs = SILENT_CLOSE_SHUTDOWN_MS;
    if (handed) schedule.handed = true;
  }
  return { ...schedule, silence: true, settleMs: 800 };
}

/**
 * The quorum schedule of `seed` (the same draw: workload, faults, finish) on masters far away, as
 * in three zones: every worker's link to every master is 10 to 30 ms long each way for the whole
 * run (a fault's delay replaces it while it lasts), and one master restarts empty at 150 to 900
 * ms, on top of the seed's faults; drawn from a generator of their own (`seed ^ 0x1a7e`). On a
 * link that long, a command answered NOSCRIPT by the restarted master is sent again as EVAL only
 * a round trip later, after what the process sent it meanwhile: a waiter's next attempt, 2.5 ms
 * or more after a give-back (the shape 9b54bbb fixed: a give-back's EVAL retry ran after the
 * same token's next attempt and deleted its grant there). On localhost that round trip is a
 * fraction of a millisecond, and the restart's first give-back loads the script for everyone.
 */
function latencySchedule(seed, { target = 'quorum', workload } = {}) {
  const schedule = makeSchedule(seed, { target, workload });
  const rng = generator(seed ^ 0x1a7e);
  const latency = rng.int(10, 30);
  const restart = { kind: 'restart-empty', at: rng.int(150, 900), node: rng.int(0, 2) };
  // One server (thirty-ninth session): the same draws, the restart of the server itself; a
  // Cluster's restarts one master (FLUSHALL, its connections closed), as a drawn one does.
  if (schedule.target === 'single') delete restart.node;
  return { ...schedule, latency, faults: [...schedule.faults, restart].sort((a, b) => a.at - b.at) };
}

/**
 * A slot migration under way while every worker holds several keys of that slot, renewed in one
 * batch: with a semaphore whose limit is every chain of every worker, both chains of a worker hold a permit at once
 * (`<lock>:permit:<token>`, one slot), and each section lasts about a ttl, so that renewals
 * run while the slot is half moved. The seed picks when the migration starts, which master
 * receives the slot, the order in which its keys move (one at a time) and the pauses between
 * them: some pause must come after the first permit of a worker's batch moved and before
 * another one did, which is when the renewal goes to the importing node for both.
 */
function migrationSchedule(seed, workload = 'semaphore') {
  const rng = generator(seed);
  const ttl = 600;
  const fault = { kind: 'migrate', at: rng.int(100, 500), to: rng.int(1, 2), order: rng.int(1, 2 ** 31), gap: [rng.int(50, 150), rng.int(250, 450)] };
  return { seed, target: 'cluster', workload, migrate: true, workers: WORKERS, chains: 2, ttl, limit: 6, writes: 30, runMs: 1_500, faults: [fault], finish: 'drain' };
}

/** Describes a fault in a few words, for summaries and traces. */
export function describeFault(fault) {
  if (fault.kind === 'migrate') return `migrate the slot to the ${fault.to === 1 ? 'next' : 'other'} master, a key at a time (pauses ${fault.gap[0]}-${fault.gap[1]} ms, order ${fault.order}) at ${fault.at} ms`;
  const where = `${fault.worker !== undefined ? ` ${fault.holder ? 'holder, else worker' : 'worker'} ${fault.worker}` : ''}${fault.node !== undefined ? ` node ${fault.node}` : ''}`;
  const howLong = fault.ms !== undefined ? ` ${fault.ms} ms${fault.down !== undefined ? `, down ${fault.down} ms` : ''}` : '';
  const delay = fault.delay !== undefined ? ` (+${fault.delay} ms each way)` : '';
  if (fault.kind === 'delete-key') return `delete-key (${fault.of === 'owner' ? "the lock's own key" : `a ${fault.of} key`}) at ${fault.at} ms`;
  return `${fault.kind}${where}${howLong}${delay} at ${fault.at} ms`;
}

/** Where a Cluster schedule's keys live, in a few words (nothing on one server). */
export function describePlacement(schedule) {
  if (!schedule.placement) return '';
  const { lock, owner } = schedule.placement;
  return ` (lock on node ${lock}${schedule.workload === 'job' ? `, owner lease on node ${owner}` : ''})`;
}

/**
 * The Redis deployments the schedules run on, started once: a single server and (when asked)
 * a 3-master Cluster, the fencing register's own server, and for each worker slot its own
 * fault proxy to each Redis node (so that one worker can be cut off while the others go on).
 */
export async function startEnvironment({ cluster = true, quorum = false } = {}) {
  const registerServer = await startRedisServer();
  const server = await startRedisServer();
  const links = await Promise.all(Array.from({ length: WORKERS }, () => FaultProxy.start(server.port)));
  const environment = {
    register: new Redis(registerServer.url),
    single: { server, links: links.map((proxy) => [proxy]), config: links.map((proxy) => ({ REDIS_URL: proxy.url })), observer: leaseObserver(server.url) },
    cluster: undefined,
    quorum: undefined,
    registerUrl: registerServer.url,
    pools: {},
    async stop() {
      const workers = Object.values(environment.pools).flat();
      await Promise.all(workers.map((worker) => worker.exit()));
      await environment.register.quit();
      environment.single.observer.disconnect();
      for (const p of [...environment.single.links, ...(environment.cluster?.links ?? []), ...(environment.quorum?.links ?? [])].flat()) await p.close();
      await environment.cluster?.deployment.stop();
      for (const master of environment.quorum?.servers ?? []) await master.stop();
      await server.stop();
      await registerServer.stop();
    },
  };
  if (cluster) {
    const deployment = await startRedisCluster(3);
    const clusterLinks = [];
    for (let slot = 0; slot < WORKERS; slot++) clusterLinks.push(await Promise.all(deployment.nodes.map((node) => FaultProxy.start(node.port))));
    environment.cluster = {
      deployment,
      links: clusterLinks,
      // The Cluster announces its nodes' own addresses: each worker maps them to its proxies.
      config: clusterLinks.map((proxies) => ({
        CLUSTER_NODES: JSON.stringify(proxies.map((p) => ({ host: '127.0.0.1', port: p.port }))),
        NAT_MAP: JSON.stringify(Object.fromEntries(deployment.nodes.map((node, i) => [`${node.host}:${node.port}`, { host: '127.0.0.1', port: proxies[i].port }]))),
      })),
    };
  }
  if (quorum) {
    // Three independent masters; each worker reaches each through a proxy of its own.
    const servers = [];
    for (let i = 0; i < 3; i++) servers.push(await startRedisServer());
    const quorumLinks = [];
    for (let slot = 0; slot < WORKERS; slot++) quorumLinks.push(await Promise.all(servers.map((master) => FaultProxy.start(master.port))));
    environment.quorum = { servers, links: quorumLinks, config: quorumLinks.map((proxies) => ({ QUORUM_URLS: JSON.stringify(proxies.map((p) => p.url)) })) };
  }
  return environment;
}

/**
 * The runner's own connection to a Redis server (no fault proxy between), for `observeLeases`:
 * `leaseOf(key)` reads a key's value and lease left in one step, `[value, pttl]`, or nothing for
 * a key that holds no string (a semaphore's hash, say).
 */
function leaseObserver(url) {
  const observer = new Redis(url, { maxRetriesPerRequest: 2 });
  observer.on('error', () => undefined);
  observer.defineCommand('leaseOf', {
    numberOfKeys: 1,
    lua: `if redis.call('TYPE', KEYS[1]).ok ~= 'string' then return false end
return {redis.call('GET', KEYS[1]), redis.call('PTTL', KEYS[1])}`,
  });
  return observer;
}

/**
 * Reads, on `observer`, Redis' own lease of each key a holder of worker `p` entered with (a
 * worker's `observe` message), and returns the events the checker's `lease-outlasted` judges:
 * `{ ev: 'redis-lease', p, sid, key, t, leaseLeft, ours, pttl, done }`, `ours` when the key holds
 * the holder's owner token, `pttl` as Redis read it between `t` (the worker's ask) and `done`.
 */
async function observeLeases(observer, p, { sid, locks }) {
  const events = [];
  for (const { key, token, t, leaseLeft, ttlEnd } of locks) {
    try {
      const read = await observer.leaseOf(key);
      events.push({ ev: 'redis-lease', p, sid, key, t, leaseLeft, ...(ttlEnd !== undefined && { ttlEnd }), ours: Array.isArray(read) && read[0] === token, pttl: Array.isArray(read) ? read[1] : null, done: mono() });
    } catch {
      // No answer (Redis restarting): nothing to judge.
    }
  }
  return events;
}

/** A long-lived worker process (worker.mjs) that runs one schedule's workload at a time. */
export class Worker {
  constructor(id, registerUrl) {
    this.id = id;
    this.child = fork(workerScript, [], { env: { ...process.env, REGISTER_URL: registerUrl }, stdio: ['ignore', 'ignore', 'pipe', 'ipc'] });
    this.stderr = '';
    this.child.stderr.on('data', (chunk) => (this.stderr = (this.stderr + chunk).slice(-4_000)));
    this.messages = [];
    this.waiters = [];
    /** How many of its chains are inside a lock now, and how many of those for one to two ttls (a long section). */
    this.holding = 0;
    this.holdingLong = 0;
    /** Set by `runSchedule` while a schedule runs: reads Redis' own lease of a holder's keys (`observe` messages). */
    this.onObserve = undefined;
    this.child.on('message', (message) => {
      if ('holding' in message) {
        this.holding += message.holding;
        if (message.long) this.holdingLong += message.holding;
        return;
      }
      if ('observe' in message) {
        this.onObserve?.(message.observe);
        return;
      }
      this.messages.push(message);
      for (const waiter of [...this.waiters]) waiter();
    });
    this.exited = new Promise((resolve) => this.child.once('exit', (code, signal) => resolve({ code, signal })));
    this.gone = false;
    /** Resolves once Nest and the package are imported (`undefined` if that failed). */
    this.loaded = this.next('loaded', 30_000);
    void this.exited.then(() => {
      this.gone = true;
      for (const waiter of [...this.waiters]) waiter();
    });
  }

  /** Resolves with the first message that has `field` (consuming it), or `undefined` after `ms` or at exit. */
  next(field, ms) {
    return new Promise((resolve) => {
      const settle = () => {
        const index = this.messages.findIndex((m) => field in m);
        if (index < 0 && !this.gone) return;
        clearTimeout(timer);
        this.waiters.splice(this.waiters.indexOf(settle), 1);
        resolve(index < 0 ? undefined : this.messages.splice(index, 1)[0]);
      };
      const timer = setTimeout(() => {
        this.waiters.splice(this.waiters.indexOf(settle), 1);
        resolve(undefined);
      }, ms);
      this.waiters.push(settle);
      settle();
    });
  }

  send(message) {
    if (!this.gone && this.child.connected) this.child.send(message, () => {});
  }

  /** Starts a workload (worker.mjs's config) and resolves once it runs; rejects if it does not. */
  async start(config) {
    if ((await this.loaded) === undefined) throw new Error(`worker ${this.id} did not load: ${this.stderr}`);
    this.send({ start: { ID: this.id, ...config } });
    if ((await this.next('ready', 30_000)) === undefined) throw new Error(`worker ${this.id} did not start its workload: ${this.stderr}`);
  }

  /** Ends the workload (its calls settle, its application closes); false if that took over `ms`. */
  async finish(ms = 20_000) {
    this.send({ finish: true });
    return (await this.next('finished', ms)) !== undefined;
  }

  /** Ends the process once its workload is finished. */
  async exit() {
    this.send({ exit: true });
    await Promise.race([this.exited, sleep(5_000).then(() => this.kill())]);
  }

  kill() {
    this.child.kill('SIGCONT');
    this.child.kill('SIGKILL');
    return this.exited;
  }
}

/** The live workers of one target, replacing those a schedule killed. */
async function workersFor(environment, schedule) {
  const pool = (environment.pools[schedule.target] ??= []);
  for (let i = 0; i < schedule.workers; i++) {
    if (pool[i] && !pool[i].gone) continue;
    pool[i] = new Worker(`w${i}`, environment.registerUrl);
  }
  const loaded = await Promise.all(pool.slice(0, schedule.workers).map((w) => w.loaded));
  const failed = loaded.findIndex((m) => m === undefined);
  if (failed >= 0) throw new Error(`worker w${failed} did not load: ${pool[failed].stderr}`);
  return pool.slice(0, schedule.workers);
}

/**
 * Runs one schedule and returns its history, the violations the checker finds, and figures.
 */
export async function runSchedule(environment, schedule) {
  const dir = mkdtempSync(join(tmpdir(), 'explore-real-'));
  const target = environment[schedule.target];
  if (!target) throw new Error(`schedule ${schedule.seed} needs a ${schedule.target} target, which this environment did not start`);
  // A fresh key per run: the fencing counters of earlier runs stay behind.
  const fresh = () => `s${schedule.seed}-${Math.random().toString(36).slice(2, 8)}:${schedule.workload}`;
  const key = schedule.placement ? await placedKey(target.deployment, schedule, fresh) : fresh();
  const events = [];
  const record = (event) => events.push(event);
  await environment.register.del('register:log', `register:${key}`);
  // Latency schedules: every link to the masters is long from the start (see `latencySchedule`).
  if (schedule.latency !== undefined) for (const p of target.links.flat()) p.latency(schedule.latency);

  const workers = await workersFor(environment, schedule);
  workers.forEach((worker, i) =>
    worker.send({
      start: {
        ID: worker.id,
        KEY: key,
        WORKLOAD: schedule.workload,
        CHAINS: schedule.chains,
        LIMIT: schedule.limit,
        TTL: schedule.ttl,
        ...(schedule.writes === undefined ? {} : { WRITES: schedule.writes }),
        ...(schedule.reads ? { READS: 1 } : {}),
        SEED: schedule.seed * 31 + i,
        HISTORY: join(dir, `${worker.id}.jsonl`),
        ...target.config[i],
        ...(schedule.driver === undefined ? {} : { DRIVER: schedule.driver }),
        ...(schedule.shutdownMs === undefined ? {} : { SHUTDOWN: schedule.shutdownMs }),
        ...(schedule.handed ? { HANDED: 1 } : {}),
        ...(schedule.workload === 'leader' && schedule.closeCut === i ? { LONG_LEADER: LONG_LEADER_TTL } : {}),
      },
    }),
  );
  // One server: each holder's entry has Redis' own lease of its keys read on the runner's connection.
  const observing = new Set();
  const observed = [];
  for (const worker of workers) {
    worker.onObserve = schedule.target !== 'single' ? undefined : (asked) => {
      const read = observeLeases(environment.single.observer, worker.id, asked).then((read) => observed.push(...read));
      observing.add(read);
      void read.finally(() => observing.delete(read));
    };
  }
  const killed = new Set();
  const timers = [];
  let ticker;
  // The runner's own event loop carries every fault proxy (the links): a gap of it holds up
  // every worker's commands and replies as a delay fault would. Recorded, for the trace.
  let runnerTickAt = mono();
  const runnerStallWatch = setInterval(() => {
    const now = mono();
    if (now - runnerTickAt > 5 + 8) record({ ev: 'stall', p: 'runner', t: runnerTickAt + 5, until: now });
    runnerTickAt = now;
  }, 5);
  const figures = { faults: {} };
  try {
    const ready = await Promise.all(workers.map((w) => w.next('ready', 30_000)));
    const notReady = ready.findIndex((m) => m === undefined);
    if (notReady >= 0) throw new Error(`worker w${notReady} did not start the workload: ${workers[notReady].stderr}`);
    let quietAt = mono();
    const pending = [];
    for (const fault of schedule.faults) {
      figures.faults[fault.kind] = (figures.faults[fault.kind] ?? 0) + 1;
      pending.push(
        new Promise((resolve) => {
          timers.push(setTimeout(() => inject(fault).then(resolve, resolve), fault.at));
        }),
      );
    }
    if (schedule.workload === 'job') {
      let tick = 0;
      ticker = setInterval(() => {
        tick++;
        for (const worker of workers) if (!killed.has(worker)) worker.send({ tick });
      }, 120);
    }

    async function inject(planned) {
      let fault = planned;
      if (planned.holder) {
        const holder = workers.findIndex((w) => w.holding > 0 && !killed.has(w));
        if (holder >= 0) fault = { ...planned, worker: holder };
      }
      const event = { ev: 'fault', kind: fault.kind, t: mono() };
      if (fault.worker !== undefined) event.p = workers[fault.worker].id;
      if (fault.node !== undefined) event.node = fault.node;
      // Every token a lost counter hands out after the restart is at least this (checker.mjs).
      if (fault.kind === 'restart-empty') event.wall = Date.now();
      const slots = fault.worker !== undefined ? [fault.worker] : workers.map((_, i) => i);
      const proxies = slots.flatMap((slot) => (fault.node !== undefined ? [target.links[slot][fault.node]] : target.links[slot]));
      if (fault.kind === 'pause') {
        const worker = workers[fault.worker];
        event.p = worker.id;
        if (!killed.has(worker)) {
          worker.child.kill('SIGSTOP');
          await sleep(fault.ms);
          worker.child.kill('SIGCONT');
        }
      } else if (fault.kind === 'kill') {
        const worker = workers[fault.worker];
        event.p = worker.id;
        killed.add(worker);
        await worker.kill();
      } else if (fault.kind === 'cut' || fault.kind === 'drop-replies' || fault.kind === 'drop-requests') {
        for (const p of proxies) fault.kind === 'cut' ? p.cut() : p.drop(fault.kind === 'drop-replies' ? 'replies' : 'requests');
        await sleep(fault.ms);
        for (const p of proxies) p.heal();
      } else if (fault.kind === 'delay') {
        for (const p of proxies) p.delay(fault.delay);
        await sleep(fault.ms);
        for (const p of proxies) p.heal();
      } else if (fault.kind === 'reset') {
        for (const p of proxies) p.reset();
      } else if (fault.kind === 'redis-pause') {
        if (schedule.target === 'cluster') target.deployment.pause(fault.node);
        else if (schedule.target === 'quorum') target.servers[fault.node].pause();
        else target.server.pause();
        await sleep(fault.ms);
        if (schedule.target === 'cluster') target.deployment.resume(fault.node);
        else if (schedule.target === 'quorum') target.servers[fault.node].resume();
        else target.server.resume();
      } else if (fault.kind === 'long-pause') {
        target.servers[fault.node].pause();
        await sleep(fault.ms);
        target.servers[fault.node].resume();
      } else if (fault.kind === 'silent-restart') {
        // Frozen past the silence threshold, then killed as it is (SIGKILL, no SIGCONT first:
        // it answers nothing more) and, after a while down, started again empty.
        const master = target.servers[fault.node];
        master.pause();
        await sleep(fault.ms);
        event.wall = Date.now();
        await master.stop({ kill: true });
        await sleep(fault.down);
        await master.start();
        await environment.register.rpush('register:log', JSON.stringify(['restart', event.wall]));
      } else if (fault.kind === 'foreign-counter') {
        if (fault.masters !== undefined) event.masters = fault.masters;
        Object.assign(event, await foreignCounters(schedule.target === 'cluster' ? target.deployment.nodes : schedule.target === 'quorum' ? fault.masters.map((master) => target.servers[master]) : [target.server], key, fault));
      } else if (fault.kind === 'migrate') {
        Object.assign(event, await migrateSlot(target.deployment, `lock:{${key}}`, fault));
      } else if (fault.kind === 'delete-key') {
        // An operator's DEL, an eviction: on the runner's own connections, where the key lives; of
        // a key in use, if it can: once a worker holds the lock for long (up to DELETE_AIM_MS later).
        for (const until = mono() + DELETE_AIM_MS; mono() < until && !workers.some((w) => w.holdingLong > 0 && !killed.has(w)); ) await sleep(5);
        Object.assign(event, await deleteKey(schedule.target === 'cluster' ? target.deployment.nodes : [target.server], key, fault));
        event.t = mono();
      } else if (fault.kind === 'drop-messages') {
        // The release messages of one worker (or all) lost: its subscriber connections hear
        // nothing, then are reset; its commands and their replies go on.
        const before = proxies.reduce((n, p) => n + p.mutedChunks, 0);
        for (const p of proxies) p.muteMessages();
        await sleep(fault.ms);
        for (const p of proxies) p.unmuteMessages();
        // What the subscribers did not hear (a chunk holds one message or more).
        event.chunks = proxies.reduce((n, p) => n + p.mutedChunks, 0) - before;
      } else if (fault.kind === 'restart-empty') {
        if (schedule.target === 'cluster') {
          // A master that lost its data and its connections (a restart without persistence,
          // keeping its slots): FLUSHALL and every client connection but ours closed.
          const node = target.deployment.nodes[fault.node];
          const admin = new Redis(node.port, node.host, { maxRetriesPerRequest: 1 });
          await admin.flushall();
          await admin.client('KILL', 'TYPE', 'normal');
          await admin.client('KILL', 'TYPE', 'pubsub');
          await admin.quit();
        } else {
          // One server, or one master of a quorum: killed, and started again without persistence.
          const server = schedule.target === 'quorum' ? target.servers[fault.node] : target.server;
          await server.stop({ kill: true });
          await server.start();
        }
        // The register is not reset: a lost counter starts again at the clock, above the tokens
        // it kept. Its log notes where the restart came, for the checker's judgement of it.
        await environment.register.rpush('register:log', JSON.stringify(['restart', event.wall]));
      }
      event.until = mono();
      // A key deleted from outside, or release messages lost, is over once done: what follows
      // it (a wait that times out, a holder not told) is judged as after no fault at all.
      if (!OUTSIDE_FAULTS.has(fault.kind)) quietAt = Math.max(quietAt, event.until);
      record(event);
    }

    await sleep(schedule.runMs);
    await Promise.all(pending);
    // Silence schedules: the workers go on a while after the masters' return.
    if (schedule.settleMs !== undefined) await sleep(schedule.settleMs);
    clearInterval(ticker);
    ticker = undefined;
    // When the last fault that could lose or hold up a command ended (the permit probe waits out the checker's excuse after it).
    const faultsEnded = quietAt;
    quietAt = Math.max(quietAt, mono());
    const live = workers.filter((w) => !killed.has(w));
    if (schedule.deletes && schedule.workload === 'semaphore' && schedule.finish === 'drain' && live.length > 0) {
      figures.probe = await permitProbe(live, schedule.target === 'cluster' ? target.deployment.nodes : [target.server], key, faultsEnded + schedule.ttl + WAITER_LEASE_MS + 100, record);
    }
    if (schedule.target === 'single' && schedule.workload === 'mutex' && schedule.finish === 'drain' && schedule.driver === undefined && !schedule.deletes && !schedule.mute && !schedule.freeze && live.length > 0) {
      await resentReleaseProbe(live, (w) => target.links[workers.indexOf(w)], target.server, faultsEnded + schedule.ttl + 100, record);
      figures.unrenewed = await unrenewedProbe(live);
      quietAt = Math.max(quietAt, mono());
    }
    if (schedule.target === 'single' && schedule.workload === 'job' && schedule.finish === 'drain' && schedule.driver === undefined && !schedule.handed && live.length > 0) {
      // Killed and started again without persistence, as the drawn restart-empty is.
      const restart = async (wall) => {
        await target.server.stop({ kill: true });
        await target.server.start();
        await environment.register.rpush('register:log', JSON.stringify(['restart', wall]));
      };
      figures.ownRun = await ownRunProbe(live, faultsEnded + schedule.ttl + 100, restart, record);
      quietAt = Math.max(quietAt, mono());
    }
    // Past the checker's window for the last silence (checker.mjs, MASTER_BACK), so that only the probe's own pause counts.
    // Not before a silent close, whose workers must still work as it begins. Its rival waits for a
    // lock held, a master paused (a fault of its own): no liveness is owed before it ends.
    // Then the owed give-back probe, on the chains it drained.
    if (schedule.silence && schedule.closeSilence === undefined && schedule.workload === 'mutex' && schedule.finish === 'drain' && (await bareMajorityProbe(live, target.servers, faultsEnded + 1_600, record))) {
      await owedGiveBackProbe(live, target.servers, record);
      quietAt = Math.max(quietAt, mono());
    }
    let healed = Promise.resolve();
    const cutOff = workers[schedule.closeCut];
    if (cutOff !== undefined && !killed.has(cutOff)) {
      // Redis unreachable for one worker as it closes: nothing arrives, nothing fails.
      const event = { ev: 'fault', kind: 'cut', p: cutOff.id, t: mono(), close: true };
      const proxies = target.links[schedule.closeCut];
      for (const p of proxies) p.cut();
      healed = sleep(schedule.workload === 'leader' ? LONG_LEADER_CUT_MS : CLOSE_CUT_MS).then(() => {
        for (const p of proxies) p.heal();
        event.until = mono();
        record(event);
      });
    }
    let silentClose;
    // Quorum: one master; one server (`--handed --target single`): the server, as a redis-pause.
    const closeFrozen = schedule.closeSilence === undefined ? undefined : schedule.target === 'quorum' ? target.servers[schedule.closeSilence] : target.server;
    if (schedule.closeSilence !== undefined) {
      silentClose = { ev: 'fault', kind: schedule.target === 'quorum' ? 'long-pause' : 'redis-pause', node: schedule.closeSilence, t: mono(), close: true };
      closeFrozen.pause();
      await sleep(SILENT_CLOSE_LEAD_MS);
    }
    for (const worker of live) worker.send({ finish: true, abrupt: schedule.finish === 'abrupt' });
    // Every live worker must settle its calls and close: its waits are bounded (8 s), and so
    // are its releases and its shutdown (1 s); a worker not done within 20 s is stuck.
    await Promise.all(
      live.map(async (worker) => {
        if ((await worker.next('finished', 20_000)) === undefined) {
          record({ ev: 'stuck', p: worker.id, t: mono(), stderr: worker.stderr.slice(-2_000) });
          await worker.kill();
        }
      }),
    );

    if (silentClose !== undefined && schedule.closeRestart) {
      // Killed as it is (frozen) and started again without persistence: the clients' connections
      // reset, ioredis sends again what they left unanswered, and the server, its scripts gone,
      // answers each EVALSHA NOSCRIPT, after the close: a closed application sends no EVAL then.
      const restarted = { ev: 'fault', kind: 'restart-empty', close: true, wall: Date.now(), t: mono() };
      await closeFrozen.stop({ kill: true });
      await closeFrozen.start();
      await environment.register.rpush('register:log', JSON.stringify(['restart', restarted.wall]));
      restarted.until = mono();
      record(restarted);
    } else if (silentClose !== undefined) closeFrozen.resume();
    if (silentClose !== undefined) {
      silentClose.until = mono();
      quietAt = Math.max(quietAt, silentClose.until);
      record(silentClose);
    }
    if (schedule.handed) {
      // The master just resumed answers what the closed applications had sent it; their handed
      // clients stay open meanwhile, and whatever those applications send then is recorded.
      await sleep(HANDED_OPEN_MS);
      for (const worker of live) worker.send({ closeHanded: true });
      await Promise.all(live.map((worker) => worker.next('handedClosed', 5_000)));
    }
    await healed;
    for (const worker of workers) worker.onObserve = undefined;
    await Promise.all(observing);
    // What the run left in Redis, once every live worker closed (not after a stuck one).
    const nodes = schedule.target === 'cluster' ? target.deployment.nodes : schedule.target === 'quorum' ? target.servers : [target.server];
    if (!events.some((e) => e.ev === 'stuck')) events.push(...(await storeSnapshot(nodes, key)));
    events.push(...(await readHistory(workers.map((w) => join(dir, `${w.id}.jsonl`)), environment.register, key)));
    // After the sections' own events: each read belongs to a section whose invoke came first.
    events.push(...observed);
    const history = { schedule, events, quietAt, ttl: schedule.ttl, placement: schedule.placement, graceMs: WAITER_LEASE_MS };
    const violations = check(history);
    Object.assign(figures, {
      sections: events.filter((e) => e.ev === 'invoke').length,
      entered: events.filter((e) => e.ev === 'enter').length,
      failed: events.filter((e) => e.ev === 'fail').length,
      writes: events.filter((e) => e.ev === 'register').length,
      refused: events.filter((e) => e.ev === 'register' && !e.accepted).length,
      lost: events.filter((e) => e.ev === 'lost').length,
      stalls: events.filter((e) => e.ev === 'stall' && e.p !== 'runner').length,
      runnerStalls: events.filter((e) => e.ev === 'stall' && e.p === 'runner').length,
      // Quorum silence, as the workers' stores saw it (worker.mjs, `watchSilence`).
      silenced: events.filter((e) => e.ev === 'silence' && e.what === 'silenced').length,
      // Outside faults: the class of each key deleted (`none`: nothing to delete), the chunks of messages thrown away.
      deleted: events.filter((e) => e.ev === 'fault' && e.kind === 'delete-key' && !e.probe).map((e) => e.of ?? 'none'),
      mutedChunks: events.filter((e) => e.ev === 'fault' && e.kind === 'drop-messages').reduce((n, e) => n + (e.chunks ?? 0), 0),
      comebacks: events.filter((e) => e.ev === 'silence' && e.what === 'comeback' && e.silent).length,
      resent: events.filter((e) => e.ev === 'silence' && e.what === 'comeback').reduce((n, e) => n + e.releases, 0),
    });
    return { schedule, history, violations, figures };
  } finally {
    clearInterval(runnerStallWatch);
    for (const worker of workers) worker.onObserve = undefined;
    for (const timer of timers) clearTimeout(timer);
    clearInterval(ticker);
    for (const worker of workers) worker.child.kill('SIGCONT');
    for (const p of target.links.flat()) {
      p.latency(0);
      p.heal();
    }
    if (schedule.target === 'cluster') for (let i = 0; i < 3; i++) target.deployment.resume(i);
    else if (schedule.target === 'quorum') for (const master of target.servers) master.resume();
    else target.server.resume();
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Moves the slot of `redisKey` to another master as `redis-cli --cluster reshard` does, but a
 * key at a time with pauses between (the half-moved state a real resharding goes through, kept
 * long enough for renewals to meet it): the target IMPORTING and the source MIGRATING the slot,
 * each key MIGRATEd in the seed's order (keys created meanwhile too), then every master told the
 * slot's new owner. Returns what the trace shows: the masters (indexes of `deployment.nodes`)
 * and the keys moved.
 */
export async function migrateSlot(deployment, redisKey, { to, order, gap }) {
  const admins = deployment.nodes.map((node) => new Redis(node.port, node.host, { maxRetriesPerRequest: 1 }));
  try {
    const slot = Number(await admins[0].cluster('KEYSLOT', redisKey));
    const ids = await Promise.all(admins.map((admin) => admin.cluster('MYID')));
    const from = ids.indexOf(await ownerOf(admins[0], slot));
    const dest = (from + to) % admins.length;
    const [src, dst] = [admins[from], admins[dest]];
    const rng = generator(order);
    await dst.cluster('SETSLOT', slot, 'IMPORTING', ids[from]);
    await src.cluster('SETSLOT', slot, 'MIGRATING', ids[dest]);
    const { host, port } = deployment.nodes[dest];
    let moved = 0;
    try {
      for (let round = 0; round < 40; round++) {
        const keys = (await src.cluster('GETKEYSINSLOT', slot, 100)).sort();
        if (keys.length === 0) break;
        await src.migrate(host, port, rng.pick(keys), 0, 5_000, 'REPLACE');
        moved++;
        await sleep(rng.int(gap[0], gap[1]));
      }
    } finally {
      // Whatever is left (keys that kept coming, or a MIGRATE that failed) moves at once: the
      // environment serves the next schedules, which need a Cluster with no slot half moved.
      const left = await src.cluster('GETKEYSINSLOT', slot, 1_000);
      if (left.length > 0) await src.migrate(host, port, '', 0, 5_000, 'REPLACE', 'KEYS', ...left);
      moved += left.length;
      for (const admin of [dst, src, ...admins.filter((a) => a !== src && a !== dst)]) await admin.cluster('SETSLOT', slot, 'NODE', ids[dest]);
    }
    return { from, to: dest, slot, moved };
  } finally {
    for (const admin of admins) admin.disconnect();
  }
}

/**
 * A key from `fresh()` whose lock (and, for a job, owner lease: `<key>:owner`, another hash tag)
 * lives on the master of `deployment.nodes` that `schedule.placement` names.
 */
async function placedKey(deployment, schedule, fresh) {
  const admin = new Redis(deployment.nodes[0].port, deployment.nodes[0].host, { maxRetriesPerRequest: 1 });
  try {
    const ranges = await admin.cluster('SLOTS');
    const nodeOf = async (redisKey) => {
      const slot = Number(await admin.cluster('KEYSLOT', redisKey));
      const port = ranges.find(([lo, hi]) => lo <= slot && slot <= hi)[2][1];
      return deployment.nodes.findIndex((node) => node.port === port);
    };
    for (;;) {
      const key = fresh();
      if ((await nodeOf(`lock:{${key}}`)) !== schedule.placement.lock) continue;
      if (schedule.workload !== 'job' || (await nodeOf(`lock:{${key}:owner}`)) === schedule.placement.owner) return key;
    }
  } finally {
    admin.disconnect();
  }
}

/** The id of the master that serves `slot`, as `admin` sees it (CLUSTER SLOTS). */
async function ownerOf(admin, slot) {
  const ranges = await admin.cluster('SLOTS');
  const range = ranges.find(([lo, hi]) => lo <= slot && slot <= hi);
  return range?.[2]?.[2];
}

/**
 * The events the workers recorded in `files`, and the register's log of writes under `key`
 * (from the register's client `register`).
 */
export async function readHistory(files, register, key) {
  const events = [];
  for (const file of files) {
    let text = '';
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      // a worker killed before its first line
    }
    for (const line of text.split('\n')) {
      if (line === '') continue;
      try {
        events.push(JSON.parse(line));
      } catch {
        // A SIGKILL can only cut the last line short; nothing after it was recorded.
      }
    }
  }
  const log = await register.lrange('register:log', 0, -1);
  log.forEach((entry, seq) => {
    const [token, writer, accepted] = JSON.parse(entry);
    if (token === 'restart') events.push({ ev: 'restart', seq, wall: writer });
    else {
      const [sid, lockKey] = writer.split('|');
      // The schedule's key, or one of its accounts (`<key>:acct-a`, transfer).
      if (lockKey === key || lockKey.startsWith(`${key}:acct-`)) events.push({ ev: 'register', seq, key: lockKey, token: Number(token), sid, accepted: accepted === 1 });
    }
  });
  return events;
}

/**
 * Every key of the run's lock `key` (its accounts and owner lease included) on each Redis node of
 * `nodes` (every master of a Cluster), with its expiry and the owner tokens it still names: its
 * value (a lock or permit), a token in its name (`:permit:<token>`, `:reader:<token>`), a field
 * of a holders or readers hash, a member of a due set, and a place in a queue that is still
 * live on the server's clock (a `:waiters`/`:sw` score ahead of TIME); for a semaphore's holders
 * hash also its count (`:used`) and the permits its entries hold. Fencing counters are left out
 * (the documented leftover). One `{ ev: 'store', ... }` event per key (checker.mjs).
 */
export async function storeSnapshot(nodes, key) {
  const events = [];
  for (const [node, { host = '127.0.0.1', port }] of nodes.entries()) {
    const redis = new Redis(port, host, { maxRetriesPerRequest: 1 });
    try {
      // A Cluster mid-failover (a master marked failed, its replica not promoted yet) answers
      // CLUSTERDOWN to every key read: the node is scanned again once it serves its slots, rather
      // than the run failing on what the Cluster recovers from by itself.
      for (const until = mono() + CLUSTERDOWN_WAIT_MS; ; await sleep(CLUSTERDOWN_RETRY_MS)) {
        try {
          events.push(...(await scanNode(redis, node, key)));
          break;
        } catch (error) {
          if (!/^CLUSTERDOWN/.test(error?.message ?? '') || mono() >= until) throw error;
        }
      }
    } finally {
      redis.disconnect();
    }
  }
  return events;
}

/** How long the store scan waits for a node answering CLUSTERDOWN to serve its slots again (the Cluster's 2 s node timeout, a failover, a loaded machine), and between its tries. */
const CLUSTERDOWN_WAIT_MS = 15_000;
const CLUSTERDOWN_RETRY_MS = 100;

/** One node's part of `storeSnapshot`: every key of the run but its fencing counters, with its expiry and the tokens it names. */
async function scanNode(redis, node, key) {
  const events = [];
  const [seconds, micros] = await redis.time();
  const now = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
  const t = mono();
  let cursor = '0';
  do {
    // The run's key is `s<seed>-<random>:<workload>`: no glob character in it.
    const [next, keys] = await redis.scan(cursor, 'MATCH', `*${key}*`, 'COUNT', 1000);
    cursor = next;
    for (const name of keys) {
      if (name.endsWith(':fence')) continue;
      const [type, pttl] = await Promise.all([redis.type(name), redis.pttl(name)]);
      const tokens = [];
      let counts;
      const named = /:(?:permit|reader):(.+)$/.exec(name)?.[1];
      if (named !== undefined) tokens.push(named);
      // A barging waiter's flag (`1`, see docs/redis-data.md) names nobody: it expires with its waiter lease.
      if (type === 'string' && !name.endsWith(':wanted')) tokens.push(await redis.get(name));
      // A semaphore's holder alone is its `!<token>` field (see docs/redis-data.md).
      else if (type === 'hash') {
        const fields = await redis.hgetall(name);
        tokens.push(...Object.keys(fields).filter((field) => !field.startsWith(':')).map((field) => field.replace(/^!/, '')));
        // A semaphore's count (`:used`) beside what its holders' entries (`<permits>:<fencing token>`) hold.
        if (fields[':used'] !== undefined) {
          let held = 0;
          for (const [field, value] of Object.entries(fields)) if (!field.startsWith(':') && !field.startsWith('!')) held += parseInt(value, 10);
          counts = { used: Number(fields[':used']), held };
        }
      }
      else if (type === 'zset') {
        const scored = await redis.zrange(name, 0, -1, 'WITHSCORES');
        const queue = /:(?:waiters|sw)$/.test(name);
        for (let i = 0; i < scored.length; i += 2) if (!queue || Number(scored[i + 1]) > now) tokens.push(scored[i].split(':')[0]);
      }
      events.push({ ev: 'store', t, node, key: name, type, pttl, tokens: tokens.filter((token) => token !== null && token !== '~r'), ...(counts && { counts }) });
    }
  } while (cursor !== '0');
  return events;
}

/** A readable account of one run: the schedule, what happened, and each violation. */
export function formatResult({ schedule, violations, figures }) {
  const lines = [
    `seed ${schedule.seed}: ${schedule.workload} on ${schedule.target}${schedule.driver === 'node-redis' ? ' (node-redis clients)' : ''}${describePlacement(schedule)}, ${schedule.workers} workers, ttl ${schedule.ttl} ms, ${schedule.finish === 'abrupt' ? `closed in the middle of work${schedule.closeCut !== undefined ? ` (w${schedule.closeCut}'s links cut as it closes)` : ''}` : 'closed once idle'}; faults: ${schedule.faults.map(describeFault).join('; ') || 'none'}`,
    `  ${figures.sections} calls, ${figures.entered} entered, ${figures.failed} failed, ${figures.writes} register writes (${figures.refused} refused), ${figures.lost} losses, ${figures.stalls} stalls (the runner's: ${figures.runnerStalls})${figures.silenced > 0 || figures.comebacks > 0 ? `; quorum silence: ${figures.silenced} master(s) silenced, ${figures.comebacks} answered again, ${figures.resent} missed release(s) resent` : ''}`,
  ];
  for (const v of violations.slice(0, 5)) {
    lines.push(`  VIOLATION ${v.invariant}${v.cause ? ` (${v.cause})` : ''}: ${v.message}`);
  }
  if (violations.length > 5) lines.push(`  ... and ${violations.length - 5} more (${[...new Set(violations.slice(5).map((v) => v.invariant))].join(', ')})`);
  return lines.join('\n');
}
