// The Jepsen-style checker of the real-Redis explorer: a pure function over a recorded history.
// Every event carries `t`, a CLOCK_MONOTONIC time in ms that all processes on one machine share.
//
// Events (one object each; `p` is the worker process, `sid` one acquisition of one chain):
//   { ev: 'invoke', p, sid, key, kind, limit?, keys?, ttl?, t }   ttl: a lease the section names (a probe's); kind: 'mutex' | 'semaphore' | 'read' | 'write' | 'job' | 'leader'
//                                                     | 'transfer' (a multi-key lock of `keys`)
//   { ev: 'enter', p, sid, token, tokens?, aborted, tick?, owner?, ownerToken?, t }  the lock handed to
//                                                     user code (job: a tick's run, under the owner
//                                                     lease `owner`; transfer: `tokens`, each key's
//                                                     fencing token; `ownerToken`: the owner token its
//                                                     own key holds, a single-key lock's)
//   { ev: 'leadership-lost', p, sid, t }              onLeadershipLost was called, for the term `sid`
//   { ev: 'closing', p, shutdownTimeout, t }          app.close() began (the module's shutdownTimeout)
//   { ev: 'closed', p, t }                            app.close() resolved
//   { ev: 'alive-after-close', p, left, since, bound, t } what still kept the worker's process alive
//                                                     (process.getActiveResourcesInfo() types) beyond
//                                                     what it held before the application existed, once
//                                                     nothing was (or `bound` ms after `since`, the
//                                                     close's end, passed)
//   { ev: 'store', node, key, type, pttl, tokens, counts?, t } a key the run left in Redis once
//                                                     every live worker closed (fencing counters
//                                                     aside), the owner tokens it still names, and
//                                                     for a semaphore's holders hash `{ used, held }`:
//                                                     its `:used` and its entries' permits (runner.mjs)
//   { ev: 'lease', p, key, token, t }                 job: the worker took the owner lease (`key`); leader:
//                                                     the hand-back probe's election (runner.mjs) led
//   { ev: 'skip', p, key, reason, t }                 job: a call skipped its tick (`key`: the lock that
//                                                     decided it; shown in a trace, judged by nothing)
//   { ev: 'lost', p, sid, reason, t }                 the lock's signal aborted
//   { ev: 'alive', p, sid, key, owned, t }            after a refusal (on a Cluster): whether the lock's
//                                                     key, wherever it lives now, still held its token
//   { ev: 'write', p, sid, token, accepted, t, done } one write to the fencing register
//   { ev: 'inspect', p, sid, held, seenHeld, seenToken, leaseLeft?, seenTtl?, t, done } inspect() of
//                                                     the section's key (`held`: the section held it,
//                                                     by its own deadline, before and after;
//                                                     `leaseLeft`: the lease it counted left as it
//                                                     asked, by that deadline; `seenTtl`: the
//                                                     answer's ttlMs, null when not held)
//   { ev: 'redis-lease', p, sid, key, t, leaseLeft, ours, pttl, done }  one server: Redis' own lease
//                                                     of a key the section entered with (its Redis
//                                                     name), read on the runner's connection (no
//                                                     fault in between) after `t`, before `done`:
//                                                     `ours` when it held the holder's owner token,
//                                                     `pttl` its lease left when read; `leaseLeft` the
//                                                     lease the holder counted left at `t`, by its own
//                                                     deadline (runner.mjs, `observeLeases`); `ttlEnd`:
//                                                     where the holder's ttl ends its lease (a lock
//                                                     without a watchdog, `lease-past-ttl`)
//   { ev: 'exit', p, sid, t }                         user code ended (the call then releases)
//   { ev: 'told', p, sid, how, reason, t }            the section's lock reported lost (`how`: 'lost
//                                                     event' or 'aborted', its signal), at any time
//   { ev: 'ok', p, sid, t } | { ev: 'fail', p, sid, error, outcome, t }   the call settled
//   { ev: 'read', p, what, t, done, outcome }         isLocked() or inspect() (`what`) asked at t, settled at done (`--freeze` schedules)
//   { ev: 'stall', p, t, until }                      the worker's event loop did not run meanwhile;
//                                                     `p` 'runner': the runner's, which carries every
//                                                     link (the fault proxies): every worker's commands
//                                                     and replies waited meanwhile (named in the
//                                                     told-after-release report, excusing nothing)
//   { ev: 'fault', kind, p?, node?, wall?, t, until } injected by the runner (`wall`, restart-empty:
//                                                     the wall clock in ms, Date.now(), as it began;
//                                                     silent-restart: as the frozen master was killed)
//   { ev: 'fault', kind: 'delete-key', key, lock, of, token?, held?, sent, t, until, probe? }  a key of the run deleted
//                                                     from outside (an operator's DEL, an eviction):
//                                                     its Redis name `key` (null: none to delete), the
//                                                     lock it belongs to (`lock`, as sections name it),
//                                                     its class (`of`: owner, guard, queue, fence), the
//                                                     owner token a reader's or permit key names, what
//                                                     a string key held (`held`: a lock's owner token); gone
//                                                     between `sent` and `t`; `probe`: the permit
//                                                     probe's (runner.mjs), judged as any other
//   { ev: 'fault', kind: 'drop-messages', p?, node?, t, until }  what Redis sent the subscriber
//                                                     connections (of `p`, or everyone's) thrown away,
//                                                     then those reset; commands flowed
//   { ev: 'free-refused', p, permits, how?, t, done } the permit probe's caller asking, not waiting, for
//                                                     the permits its second section does not hold, once
//                                                     its first was told its permit is gone (`how`
//                                                     'released': once it released after the deletion,
//                                                     before any renewal of it): refused
//   { ev: 'probe-ask-failed', p, error, t }           that ask neither granted nor refused (its cause;
//                                                     a grant given back after a stall): not judged
//   { ev: 'stuck', p, t }                             the worker did not finish when told to
//   { ev: 'unhandled', p, error, t }                  a promise rejection nobody handled (Node's
//                                                     default would have ended the process)
//   { ev: 'register', seq, key, token, sid, accepted } the fencing register's own log, in its order
//   { ev: 'restart', seq, wall }                      the store restarted empty here, in the register's
//                                                     order (`wall` as in its fault); the register keeps
//                                                     its tokens
//   { ev: 'copy', p, what, node?, lock, token, ttl?, fencingToken?, sent, t }  quorum mode, as the
//                                                     worker's store saw it (worker.mjs, `watchCopies`):
//                                                     master `node` confirmed a copy of the Redis key
//                                                     `lock` under the owner token `token` (`what`:
//                                                     'grant', 'renew' or 'restore'; its command sent at
//                                                     `sent`, its lease `ttl` from then at least), or a
//                                                     release of the token deleted it there ('deleted');
//                                                     'acquired': the store's acquisition begun at `sent`
//                                                     was handed out with `fencingToken`
//
// Returns the violations found, each `{ invariant, message, at }`, some with the `cause` their
// shape points to: `held-up-claim` (a job tick run again by a call made on time, whose claim
// was held up), `stale-grant` (a holder that entered on thawing from a freeze, with a lower token
// than one already inside) or `lease-release-unbounded` (see checkCloses). An empty list means the history keeps what the library promises.

const DATA_LOSS = new Set(['restart-empty', 'silent-restart']);
const SLACK = 15;
/** What app.close() may take beyond its shutdownTimeout: the round trips and connection closes after its bounded waits, on a loaded machine. */
const CLOSE_SLACK = 250;
/** How long quorum mode waits for a master that answers nothing before it asks it nothing more (SILENT_AFTER_MS, lib/core/stores/quorum/quorum-silence.ts; docs/deployment.md: "a second"). */
const SILENT_AFTER = 1_000;
/** How soon after it thaws a leader whose lease ran out while it was frozen hears onLeadershipLost (its deadline timer fires at once). */
const RESUME_BOUND = 100;
/** Faults that may lose, hold up or replay a worker's commands (`p`: one worker's links; none: everyone's), or Redis' own. */
const COMMAND_FAULTS = new Set(['cut', 'delay', 'drop-replies', 'drop-requests', 'reset', 'redis-pause', 'restart-empty', 'migrate', 'long-pause', 'silent-restart']);

/** The worker (instance name) an owner token names: `<hex>.<base64url JSON [host, pid, instance, label]>.<since>`. */
export function tokenOwner(token) {
  try {
    const fields = JSON.parse(Buffer.from(String(token).split('.')[1] ?? '', 'base64url').toString('utf8'));
    return Array.isArray(fields) && typeof fields[2] === 'string' ? fields[2] : undefined;
  } catch {
    return undefined;
  }
}
/** A quorum copy's owner: worker, Redis key and owner token. */
const copyId = (p, lock, token) => `${p}\n${lock}\n${token}`;

/** The masters of `--target quorum` (runner.mjs). */
const QUORUM_MASTERS = 3;

/**
 * The masters on which one owner's copies (its `copy` events, confirmed since `since`) were live
 * at `at`: the newest confirmed by then still within its lease, and no release of the owner's
 * token sent since it.
 */
function liveCopies(events, since, at) {
  const newest = new Map();
  for (const c of events) {
    if (c.what === 'deleted' || c.sent < since || c.t > at) continue;
    if ((newest.get(c.node)?.sent ?? -Infinity) < c.sent) newest.set(c.node, c);
  }
  const live = new Set();
  for (const [node, c] of newest) {
    if (c.sent + c.ttl <= at) continue;
    if (events.some((d) => d.what === 'deleted' && d.node === node && d.sent >= c.sent && d.sent <= at)) continue;
    live.add(node);
  }
  return live;
}
/** The classes of keys (runner.mjs's `keyClass`) whose deletion takes a lock from its holder: its own key, a guard. */
const HOLDING_CLASSES = new Set(['owner', 'guard']);
/** The classes whose deletion changes what inspect() answers of a held lock: those, and the fencing counter. */
const ANSWERING_CLASSES = new Set(['owner', 'guard', 'fence']);
/** A tick's call made this much (ms) after its first call reached a frozen process late. */
const LATE_TICK = 100;

/** Two holders that may not be inside at once: anything but two readers or two permits. */
function conflicting(a, b) {
  if (a.kind === 'semaphore' || b.kind === 'semaphore') return false;
  return !(a.kind === 'read' && b.kind === 'read');
}

/**
 * @param {{ events: object[], quietAt?: number, ttl?: number, placement?: { lock: number, owner: number }, schedule?: { target?: string } }} history
 * @returns {{ invariant: string, message: string, at: number | undefined }[]}
 */
export function check(history) {
  const events = [...history.events];
  const violations = [];
  const violate = (invariant, message, at) => violations.push({ invariant, message, at });

  const sections = new Map();
  const faults = [];
  const stalls = new Map();
  const kills = new Map();
  const registerLog = [];
  const leases = [];
  const heard = new Map();
  const closing = new Map();
  const closed = new Map();
  /** Each worker's quorum silence as its store saw it (`silence` events, in its order). */
  const silences = new Map();
  /** Each worker's polls that every master answered busy or was not asked (one silent), which sent a give-back all the same. */
  const busyPollsGivingBack = new Map();
  const store = [];
  const reads = [];
  /** The `alive-after-close` events that name something left (judged once every stall is known). */
  const leftAlive = [];
  const quorumAcquired = [];
  const copies = new Map();
  let endOfHistory = 0;
  for (const event of events) {
    if (typeof event.t === 'number' && event.ev !== 'store') endOfHistory = Math.max(endOfHistory, event.until ?? event.t, event.done ?? event.t);
    switch (event.ev) {
      case 'invoke':
        sections.set(event.sid, { sid: event.sid, p: event.p, key: event.key, keys: event.keys, kind: event.kind, limit: event.limit, ttl: event.ttl, invoke: event.t, writes: [] });
        break;
      case 'leadership-lost':
        if (event.sid !== undefined && !heard.has(event.sid)) heard.set(event.sid, event.t);
        break;
      case 'closing':
        closing.set(event.p, event);
        break;
      case 'free-refused':
        // docs/redis-data.md: a renewal that finds a permit key gone drops its holder's entry, so
        // the holder told of that loss holds nothing; the probe runs once every fault is over.
        // So does a release that meets the gone permit key first (the probe's second part, `how`).
        violate('free-refused', `${event.p}'s permit probe was refused ${event.permits} permit(s) at ${fmt(event.t)}, which only its first section, ${event.how === 'released' ? 'released once its permit was gone' : 'told its permit was gone'}, could still have counted`, event.t);
        break;
      case 'closed':
        closed.set(event.p, event.t);
        break;
      case 'busy-poll':
        if (event.gaveBack > 0) busyPollsGivingBack.set(event.p, [...(busyPollsGivingBack.get(event.p) ?? []), event]);
        break;
      case 'handed-send':
      case 'silence':
        if (!silences.has(event.p)) silences.set(event.p, []);
        silences.get(event.p).push(event);
        break;
      case 'alive-after-close':
        if (event.left.length > 0) leftAlive.push(event);
        break;
      case 'store':
        store.push(event);
        break;
      case 'read':
        reads.push(event);
        break;
      case 'enter':
      case 'redis-lease':
      case 'told':
      case 'lost':
      case 'alive':
      case 'inspect':
      case 'exit':
      case 'ok':
      case 'fail':
      case 'write': {
        const section = sections.get(event.sid);
        if (!section) {
          violate('history', `${event.ev} of ${event.sid} without its invoke`, event.t);
          break;
        }
        if (event.ev === 'enter') {
          Object.assign(section, { enter: event.t, token: event.token, tokens: event.tokens, abortedAtEnter: event.aborted === true, tick: event.tick, owner: event.owner, ownerToken: event.ownerToken });
          // docs/guarantees.md: a fencing token is a whole number from 1 to 2^53 - 1, exact in a
          // double (a counter holding another value, written by hand, refuses the call instead).
          for (const token of [event.token, ...Object.values(event.tokens ?? {})]) {
            if (token != null && !(Number.isSafeInteger(token) && token >= 1)) violate('token-range', `${event.sid} entered with the fencing token ${token}, which no fencing token can be (a whole number from 1 to 2^53 - 1)`, event.t);
          }
        }
        else if (event.ev === 'lost') {
          section.lost ??= event.t;
          section.lostReason ??= event.reason;
        } else if (event.ev === 'alive') section.ownedAfterRefusal ||= event.owned === true;
        else if (event.ev === 'told') (section.told ??= []).push(event);
        else if (event.ev === 'inspect') (section.inspects ??= []).push(event);
        else if (event.ev === 'redis-lease') (section.redisLeases ??= []).push(event);
        else if (event.ev === 'exit') section.exit = event.t;
        else if (event.ev === 'ok') section.ok = event.t;
        else if (event.ev === 'fail') Object.assign(section, { fail: event.t, error: event.error, outcome: event.outcome });
        else section.writes.push(event);
        break;
      }
      case 'fault':
        faults.push(event);
        if (event.kind === 'kill') kills.set(event.p, event.t);
        break;
      case 'stall':
        if (!stalls.has(event.p)) stalls.set(event.p, []);
        stalls.get(event.p).push(event);
        break;
      case 'lease':
        leases.push(event);
        break;
      case 'stuck':
        violate('liveness', `worker ${event.p} did not finish within its bound after it was told to stop`, event.t);
        break;
      case 'unhandled':
        violate('unhandled-rejection', `worker ${event.p} left a promise rejection unhandled (${String(event.error).slice(0, 300)})`, event.t);
        break;
      case 'register':
      case 'restart':
        registerLog.push(event);
        break;
      case 'copy':
        if (event.what === 'acquired') quorumAcquired.push(event);
        else {
          const id = copyId(event.p, event.lock, event.token);
          if (!copies.has(id)) copies.set(id, []);
          copies.get(id).push(event);
        }
        break;
    }
  }

  const overlaps = (from, to, a, b) => from <= b && a <= to;
  // The restarts that lost data a lock relies on. On one server or a Cluster master, each. A
  // quorum's lock is on a majority of its masters, and a renewal puts it back on one that
  // restarted empty (a third of the ttl later), so one master's restart loses nothing while the
  // holder's copies on the other two are live. They may not be: a master the holder could not
  // reach (a link fault, that master paused or restarted too) keeps the copy only to the end of
  // the lease it last renewed there, and the holder's renewals, accepted by the other two, go
  // on; the restart of one of those two then leaves one copy, and a rival takes the other two
  // (seed 28 of `--target quorum`: the holder's requests to one master thrown away, another
  // master restarted empty). That is Redlock's restart without persistence (docs/deployment.md,
  // "A quorum node that restarts empty"), so a quorum's restart is judged a loss when another
  // master was out of some worker's reach within a ttl of it (before: its copy lapsing; after:
  // the put-back not yet done).
  // A holder stands on a bare majority without any fault, too: under contention the third
  // master's key can be a rival's (an attempt that will give it back) at the holder's grant and
  // at each renewal since, so no renewal put the holder's copy there (seed 610002 of the quorum
  // schedules: two workers' multi-key transfers kept it on one master for 700 ms while another
  // master was paused; that master's restart then left the holder one copy, told at its release).
  // So a restart is a loss too when a holder's copies, as its worker recorded them, stood on a
  // bare majority that included the restarted master.
  const ttlOf = history.ttl ?? Infinity;
  const restarts = faults.filter((f) => DATA_LOSS.has(f.kind));
  const otherMasterOut = (f) =>
    faults.some((g) => g !== f && COMMAND_FAULTS.has(g.kind) && g.node !== f.node && overlaps(f.t - ttlOf - SLACK, (f.until ?? f.t) + ttlOf + SLACK, g.t, g.until ?? g.t));
  const majority = Math.floor(QUORUM_MASTERS / 2) + 1;
  const bareMajorityOn = (f) =>
    quorumAcquired.some((q) => {
      const nodes = liveCopies(copies.get(copyId(q.p, q.lock, q.token)) ?? [], q.sent, f.t);
      return nodes.has(f.node) && nodes.size === majority;
    });
  const lossFaults = new Set(history.schedule?.target === 'quorum' ? restarts.filter((f) => otherMasterOut(f) || bareMajorityOn(f)) : restarts);
  const isLoss = (f) => lossFaults.has(f);
  const dataLoss = (from, to) => faults.some((f) => isLoss(f) && overlaps(from, to, f.t, f.until ?? f.t));
  // A data loss voids leases, not the order of fencing tokens: a counter the restart lost starts
  // again at the server's clock in ms (NEXT_FENCING, lib/core/stores/redis/fence-lua.ts), and the
  // restart (no persistence: nothing comes back) began at `wall` ms on the same clock, so every
  // later token is at least `wall`. Only a lost counter that had run ahead of the clock, having
  // handed out more tokens than milliseconds passed since it was seeded (the documented bound),
  // lets them go back. A run's key is fresh, its counter seeded at its first grant, a few
  // hundred tokens at most over a run of seconds: it stays far below the clock, but a counter
  // the history shows at or past `wall` (the highest token entered before the restart) is
  // judged as the rollback it would be. Counters a grant took without a holder entering are not
  // seen: one that ran ahead by those alone would read as tokens going back, a violation
  // reported rather than one hidden.
  const allTokens = (s) => (s.tokens === undefined ? [s.token] : Object.values(s.tokens)).filter((token) => typeof token === 'number');
  const ranAhead = (f) => f.wall !== undefined && [...sections.values()].some((s) => s.enter !== undefined && s.enter <= f.t && allTokens(s).some((token) => token >= f.wall));
  // A quorum master's lost counter starts again at the acquiring worker's clock (docs/redis-data.md),
  // the machine's, which the runner's `wall` reads too: the same bound, give or take a seed read
  // before the restart by an acquisition that reached the master after it (still far above a
  // run's few hundred tokens).
  const rollbacks = faults.filter((f) => isLoss(f) && ranAhead(f));
  const tokensGoBack = (from, to) => rollbacks.some((f) => overlaps(from, to, f.t, f.until ?? f.t));
  // A holder whose data was lost is told at its next renewal, at the latest by its lease
  // deadline: a ttl after the loss. Until then, and only then, a rival beside it is excused.
  const ttl = history.ttl ?? Infinity;
  const lossExcuses = (from, at) =>
    faults.some((f) => isLoss(f) && overlaps(from, at, f.t, f.until ?? f.t) && at <= (f.until ?? f.t) + ttl + SLACK);
  // Holder `s` was running its code when its process froze (SIGSTOP, or its event loop held
  // up), and was still frozen at `at`. A holder runs its deadline timer and learns of a loss
  // before its lease runs out in Redis, unless it is frozen then: so a rival can enter beside a
  // holder only while that holder is frozen (it learns as soon as it thaws). This is the
  // documented gap that only fencing closes; code that had not started when the freeze began
  // gets no such excuse. SLACK covers the few ms between the thaw and the record of the loss.
  const freezes = (p) => [...faults.filter((f) => f.kind === 'pause' && f.p === p), ...(stalls.get(p) ?? [])];
  const frozenAt = (s, at) => freezes(s.p).some((f) => s.enter <= f.t + SLACK && f.t - SLACK <= at && at <= f.until + SLACK);
  // The shape of a stale grant: `b` entered on thawing, with a lower token than a holder
  // already inside, so it was granted before them and its grant ran out while it was frozen.
  const staleGrant = (b, others) =>
    others.some((s) => s !== b && s.token > b.token) && freezes(b.p).some((f) => f.until - SLACK <= b.enter && b.enter <= f.until + 4 * SLACK);
  const ended = (s) => s.exit ?? kills.get(s.p) ?? endOfHistory;
  // Until when the holder may believe it holds: its code's end, or the moment it knew it lost.
  const trustedEnd = (s) => Math.min(ended(s), s.lost ?? Infinity, s.abortedAtEnter ? s.enter : Infinity);
  const name = (s) => `${s.sid} (${s.kind}, token ${s.token})`;

  // Keys deleted from outside (an operator's DEL, an eviction; runner.mjs's `--deletes`):
  // docs/deployment.md, "Redis must not evict lock keys": the next caller is let in "while the
  // holder still works (until its next renewal)". So a rival beside a holder whose lock's own key
  // or guard was deleted is excused within a ttl of the deletion, as after a data loss but for that
  // lock alone; and the holder must be told (`told-of-deletion`, below).
  const deletions = faults.filter((f) => f.kind === 'delete-key' && typeof f.key === 'string');
  /** A deletion of `lock`'s keys of a class in `classes`, sent by `to` and done after `from`. */
  const deletedBetween = (lock, from, to, classes = HOLDING_CLASSES) =>
    deletions.find((f) => f.lock === lock && classes.has(f.of) && (f.sent ?? f.t) <= to + SLACK && f.t >= from - SLACK);
  /**
   * A deletion of a key of section `s`'s own grant, sent by `to` and done after its call began
   * (before its entry or after): a permit or reader key named by its owner token (`token`), or a
   * lock's own key found holding that token (`held`). Such a key exists only once Redis granted that
   * token (the runner deletes what it found, `deleted` 1), so its deletion took this holder's grant,
   * even before the worker recorded the entry (a grant's reply, or a release's grant message, still
   * on its way or unread in a stall: a waiter handed a grant enters without asking Redis again,
   * `Acquisition.takeGrant`).
   */
  const ownKeyDeleted = (s, to, only) =>
    s.ownerToken !== undefined &&
    (only === undefined ? deletions : [only]).some((f) => (f.token === s.ownerToken || f.held === s.ownerToken) && f.lock === s.key && f.deleted !== 0 && (f.sent ?? f.t) <= to + SLACK && f.t >= s.invoke - SLACK);
  /** A rival `b` entered beside a holder of `key` within a ttl of a deletion of that lock's own key or a guard. */
  const deletionExcuses = (key, enter) => deletions.some((f) => f.lock === key && HOLDING_CLASSES.has(f.of) && (f.sent ?? f.t) <= enter + SLACK && enter <= f.t + ttl + SLACK);

  // Quorum mode: a restart excuses two holders only when it took a copy the earlier holder's
  // majority stood on. `a` believes it holds at `b`'s entry, so its last majority of
  // confirmations (a grant, renewal or put-back each, on its masters) leaves leases running past
  // then: the masters that granted `b` (a majority, which shares one with `a`'s) cannot have held
  // `a`'s copy when they did, unless a restart took it, or something deleted it. So a master that
  // granted `b` while a copy of `a` it had confirmed (after `a`'s acquisition began, before `b`'s
  // command there was sent) was still within its lease, and that was not restarted in between,
  // is no data loss: the pair is judged as if there had been none. Where a copy's confirmation
  // and a rival's grant crossed, or the workers recorded no copies (another build's layout), the
  // restart excuses as before (its own timing rules above).
  const quorumTarget = history.schedule?.target === 'quorum';
  const acquiredOf = (s) =>
    quorumAcquired.filter((q) => q.p === s.p && q.fencingToken === s.token && String(q.lock).endsWith(`{${s.key}}`) && q.t <= s.enter + SLACK).at(-1);
  /** The first copy of `a` a master confirmed and then granted `b` within its lease, with no restart of that master between; `undefined` if none. */
  const copyTakenUnexcused = (a, b) => {
    if (!quorumTarget) return undefined;
    const qa = acquiredOf(a);
    const qb = acquiredOf(b);
    if (qa === undefined || qb === undefined) return undefined;
    const ofA = (copies.get(copyId(qa.p, qa.lock, qa.token)) ?? []).filter((c) => c.what !== 'deleted' && c.sent >= qa.sent);
    const grantsB = (copies.get(copyId(qb.p, qb.lock, qb.token)) ?? []).filter((c) => c.what === 'grant' && c.sent >= qb.sent && c.t <= b.enter);
    for (const grant of grantsB) {
      for (const copy of ofA) {
        if (copy.node !== grant.node || copy.t > grant.sent || grant.t + 2 >= copy.sent + copy.ttl) continue;
        if (faults.some((f) => DATA_LOSS.has(f.kind) && f.node === grant.node && f.t <= grant.t && (f.until ?? f.t) >= copy.sent)) continue;
        const deleted = (copies.get(copyId(qa.p, qa.lock, qa.token)) ?? []).find((c) => c.what === 'deleted' && c.node === grant.node && c.sent >= copy.sent && c.t <= grant.t + SLACK);
        return { copy, grant, deleted };
      }
    }
    return undefined;
  };

  // A multi-key section holds each of its keys as a lock of its own: one holder per key, with that key's token.
  const entered = [...sections.values()]
    .filter((s) => s.enter !== undefined)
    .flatMap((s) => (s.keys === undefined ? [s] : s.keys.map((key) => ({ ...s, key, token: s.tokens?.[key] ?? s.token }))))
    .sort((a, b) => a.enter - b.enter);
  const byKey = new Map();
  for (const s of entered) {
    if (!byKey.has(s.key)) byKey.set(s.key, []);
    byKey.get(s.key).push(s);
  }

  for (const [key, list] of byKey) {
    for (let i = 0; i < list.length; i++) {
      const a = list[i];
      for (let j = i + 1; j < list.length; j++) {
        const b = list[j];
        const window = [Math.min(a.invoke, b.invoke), b.enter];
        // Fencing tokens: unique per acquisition, and higher for an acquisition that began after another was given back.
        if (a.token === b.token && !tokensGoBack(...window)) {
          violate('unique-token', `${name(a)} and ${name(b)} on "${key}" got the same fencing token`, b.enter);
        }
        if (a.ok !== undefined && a.ok < b.invoke && b.token <= a.token && !tokensGoBack(a.invoke, b.enter)) {
          violate('token-order', `${name(b)} on "${key}" was asked for after ${name(a)} was released, but its token is not higher`, b.enter);
        }
        // A loss of Redis' data excuses two holders on two processes; two runs of one job on one
        // worker never overlap, whatever Redis holds (the orchestrator knows its own runs).
        const oneInstanceRuns = a.kind === 'job' && b.kind === 'job' && a.p === b.p;
        // Both believed they held it at b's entry (one that entered already told of a loss did
        // not). Two runs on one worker: the first until its code ended, told of a loss or not
        // (docs/jobs-and-leaders.md: a call skips while a run of its key goes on on its instance).
        const held = (s) => (oneInstanceRuns && s.exit !== undefined ? s.exit : trustedEnd(s));
        if (b.enter >= held(a) || b.enter >= held(b)) continue;
        if (!conflicting(a, b)) continue;
        const unexcused = copyTakenUnexcused(a, b);
        if (!oneInstanceRuns && lossExcuses(...window) && unexcused === undefined) continue;
        if (!oneInstanceRuns && deletionExcuses(key, b.enter)) continue;
        // Only the earlier holder is excused: code already running when a pause began. A holder
        // that enters late (its reply handled after a pause) must find its signal aborted.
        if (frozenAt(a, b.enter)) continue;
        const copy = unexcused && ` (master ${unexcused.grant.node} granted it at ${fmt(unexcused.grant.t)}, within the lease of ${a.sid}'s copy it had confirmed at ${fmt(unexcused.copy.t)}, ${unexcused.copy.what}, and was not restarted in between${unexcused.deleted ? `; a release of ${a.sid}'s token sent at ${fmt(unexcused.deleted.sent)} deleted that copy` : ''})`;
        violations.push({
          invariant: a.kind === 'read' || b.kind === 'read' ? 'reader-writer' : 'exclusion',
          message: `${name(b)} entered "${key}" at ${fmt(b.enter)} while ${name(a)} (since ${fmt(a.enter)}) ${oneInstanceRuns ? `still ran on ${a.p}${a.lost !== undefined && a.lost <= b.enter ? `, told of a loss at ${fmt(a.lost)}` : ''}` : 'still held it and had not been told of a loss'}${copy ?? ''}`,
          at: b.enter,
          ...(staleGrant(b, [a]) ? { cause: 'stale-grant' } : unexcused?.deleted ? { cause: 'quorum-copy-deleted' } : {}),
        });
      }
    }

    // Semaphores: never more holders inside than the limit (those that could not know of a loss aside).
    const permits = list.filter((s) => s.kind === 'semaphore');
    for (const b of permits) {
      const inside = permits.filter((s) => s.enter <= b.enter && b.enter < trustedEnd(s));
      if (inside.length <= b.limit) continue;
      const from = Math.min(...inside.map((s) => s.invoke));
      if (lossExcuses(from, b.enter) || deletionExcuses(key, b.enter) || inside.some((s) => s !== b && frozenAt(s, b.enter))) continue;
      violations.push({
        invariant: 'semaphore-limit',
        message: `${inside.length} holders inside semaphore "${key}" (limit ${b.limit}) at ${fmt(b.enter)}: ${inside.map(name).join(', ')}`,
        at: b.enter,
        ...(staleGrant(b, inside) ? { cause: 'stale-grant' } : {}),
      });
    }
  }

  // Quorum mode: a holder's copies stand on a majority of masters, and one master's restart
  // empty loses nothing while it holds the others (a renewal puts the lock back there); so its
  // own store never takes one of them from under it. A release (or give-back, or a resend of
  // one) of the holder's own owner token that deleted a copy of it, sent after the acquisition
  // handed out began and before the holder's code ended or it was told of a loss (the loss's own
  // give-back goes out in the same turn as the abort: SLACK), is the defect f5fe742 fixed: a
  // give-back owed to a silent master resent on its return over the token's later grant. It
  // breaks exclusion only with one more fault (a restart, a copy lapsing), hence this invariant
  // of its own.
  if (quorumTarget) {
    for (const s of entered) {
      if (s.abortedAtEnter) continue;
      const q = acquiredOf(s);
      if (q === undefined) continue;
      const end = trustedEnd(s);
      const deleted = (copies.get(copyId(q.p, q.lock, q.token)) ?? []).find((c) => c.what === 'deleted' && c.sent >= q.sent && c.sent + SLACK < end);
      if (deleted === undefined) continue;
      violate('copy-deleted-while-held', `a release of ${name(s)}'s own owner token on "${s.key}", sent at ${fmt(deleted.sent)} (${deleted.sent < s.enter ? `${fmt(s.enter - deleted.sent)} before it entered, its acquisition under way` : `${fmt(deleted.sent - s.enter)} after it entered`}; before its code ended or it was told of a loss), deleted its copy on master ${deleted.node}`, deleted.t);
    }
  }

  // A refusal is Redis' word that the lock is gone or another's: never for a key that still
  // holds the holder's token (a slot half moved between two masters must not read as gone).
  for (const s of entered) {
    if (s.lostReason === 'refused' && s.ownedAfterRefusal && !deletedBetween(s.key, s.enter, s.lost)) {
      violate('false-loss', `${name(s)} on "${s.key}" was told its renewal was refused at ${fmt(s.lost)}, but its key still held its token`, s.lost);
    }
  }

  // The owner lease run `s` went under: the last one its process took with that token before it entered.
  const leaseOf = (s) => leases.filter((l) => l.p === s.p && l.token === s.owner && l.t <= s.enter).at(-1);
  // A data loss that wiped the owner lease (and its fencing counter): its owner goes on running
  // ticks under it until its next renewal is refused, or its deadline passes (a ttl after the
  // loss at most), while another instance finds the lease gone, takes it, and runs the same
  // ticks. The lock promises nothing across a loss of Redis' data, so such a tick is excused:
  // one run under a lease taken before the loss, entered after it began and within a ttl of it,
  // and every other under a lease taken after it began; on a Cluster, a loss of the master that
  // holds the lease.
  const ownerNode = history.placement?.owner;
  // A deletion of the owner lease from outside (`<key>:owner`) is such a loss too, of that lease alone.
  const ownerLeaseLost = (runs) =>
    faults.some(
      (f) =>
        ((isLoss(f) && (f.node === undefined || ownerNode === undefined || f.node === ownerNode)) || (f.kind === 'delete-key' && f.lock === `${runs[0].key}:owner`)) &&
        runs.some((stale) => {
          const lease = leaseOf(stale);
          if (lease === undefined || lease.t > f.t || stale.enter < f.t || stale.enter > (f.until ?? f.t) + ttl + SLACK) return false;
          return runs.every((s) => s === stale || (leaseOf(s)?.t ?? -Infinity) >= f.t);
        }),
    );

  // Each tick of an @OnOneInstance job runs at most once.
  const ticks = new Map();
  for (const s of entered) {
    if (s.kind !== 'job') continue;
    const id = `${s.key}#${s.tick}`;
    if (!ticks.has(id)) ticks.set(id, []);
    ticks.get(id).push(s);
  }
  for (const [id, all] of ticks) {
    all.sort((a, b) => a.enter - b.enter);
    // A call made well after the tick's first call reached its process late (it was frozen when
    // the tick fired), as a late cron timer would: to the library it is a new call.
    // It may run under a lease taken after the first run's (a new owner), never under the same
    // or an older one.
    const late = (s) => s.invoke > Math.min(...all.map((r) => r.invoke)) + LATE_TICK;
    const runs = all.filter((s, i) => i === 0 || !(late(s) && s.owner !== undefined && all[0].owner !== undefined && s.owner > all[0].owner));
    if (runs.length < 2) continue;
    const from = Math.min(...runs.map((s) => s.invoke));
    if (dataLoss(from, runs[runs.length - 1].enter) || ownerLeaseLost(runs)) continue;
    // Calls made on time that ran after the first run: their claim of the owner lease was held
    // up (network, Redis) until the owner's lease ran out.
    const heldUp = runs.slice(1).every((s) => !late(s));
    violations.push({
      invariant: 'job-once',
      message: `tick ${id} ran ${runs.length} times: ${runs.map((s) => `${s.sid} at ${fmt(s.enter)} (token ${s.token}, called at ${fmt(s.invoke)})`).join(', ')}`,
      at: runs[1].enter,
      ...(heldUp ? { cause: 'held-up-claim' } : {}),
    });
  }

  // The register, in its own order: accepted tokens never decrease (a stale write after a pause
  // is refused), the highest token's writes go through, one token belongs to one acquisition.
  // A restart that lost the counters changes none of it: the register keeps its highest token,
  // and a holder from before the restart that writes after a new one did is refused (that is
  // what fencing is for). Only after a restart the tokens went back across (`rollbacks`; the
  // highest token the register saw at or past the clock) does the register start a new era.
  const logs = new Map();
  let lossSeen = false;
  let seen = -Infinity;
  for (const entry of [...registerLog].sort((a, b) => a.seq - b.seq)) {
    if (entry.ev === 'restart') {
      if (entry.wall !== undefined && seen >= entry.wall) {
        logs.clear();
        lossSeen = true;
      }
      continue;
    }
    seen = Math.max(seen, entry.token);
    if (!logs.has(entry.key)) logs.set(entry.key, { highest: -Infinity, owners: new Map() });
    const log = logs.get(entry.key);
    const owner = log.owners.get(entry.token);
    const pair = [sections.get(owner), sections.get(entry.sid)];
    const acrossLoss = pair.every((s) => s?.enter !== undefined) && tokensGoBack(Math.min(...pair.map((s) => s.invoke)), Math.max(...pair.map((s) => s.enter)));
    if (owner !== undefined && owner !== entry.sid && !acrossLoss) {
      violate('unique-token', `the register saw token ${entry.token} on "${entry.key}" from ${owner} and from ${entry.sid}`, undefined);
    }
    log.owners.set(entry.token, entry.sid);
    // The rightful holder's write (a token at least the highest accepted) must go through.
    if (!entry.accepted && entry.token >= log.highest && !lossSeen) {
      violate('fencing', `the register refused token ${entry.token} on "${entry.key}" (from ${entry.sid}) although its highest was ${log.highest}`, undefined);
    }
    if (!entry.accepted) continue;
    if (entry.token < log.highest) {
      violate('register-monotonic', `the register accepted token ${entry.token} on "${entry.key}" (from ${entry.sid}) after token ${log.highest}`, undefined);
    }
    log.highest = Math.max(log.highest, entry.token);
  }

  // Liveness: every call of a live worker settles; once faults stop, waiters get in.
  const quietAt = history.quietAt ?? Infinity;
  for (const s of sections.values()) {
    if (kills.has(s.p)) continue;
    if (s.ok === undefined && s.fail === undefined) {
      violate('liveness', `${s.sid} on "${s.key}" never settled (called at ${fmt(s.invoke)})`, s.invoke);
    } else if (s.outcome === 'timeout' && s.invoke > quietAt + (history.ttl ?? 0)) {
      violate('liveness', `${s.sid} on "${s.key}" timed out waiting although every fault had ended at ${fmt(quietAt)}`, s.fail);
    }
  }

  checkToldOfDeletion(entered, deletions, { kills, freezes, faults, trustedEnd, ttl, single: history.schedule?.target === 'single', ownKeyDeleted, name, violate });
  checkToldAfterRelease(sections, { faults, freezes, dataLoss, closing, deletedBetween, ownKeyDeleted, violate });
  // The run's fencing counters written from outside (`--foreign-counters`), then deleted: a counter
  // of `lock` holding another value, or none, from the write's send to the deletion's end.
  const foreignBetween = (lock, from, to) =>
    faults.some((f) => f.kind === 'foreign-counter' && (f.keys ?? []).some((k) => /\{(.*)\}/.exec(k)?.[1] === lock) && (f.sent ?? f.t) <= to + SLACK && (f.until ?? f.t) >= from - SLACK);
  checkInspections(sections, { dataLoss, deletedBetween, foreignBetween, violate, quorum: quorumTarget });
  checkLeaders(entered, { heard, closed, kills, freezes, frozenAt, lossExcuses, deletionExcuses, name, violate });
  checkCloses({ closing, closed, freezes, faults, sections, leases, violations });
  checkLeftAlive(leftAlive, { freezes, violate });
  checkCloseSilentMaster({ closing, closed, silences, freezes, faults, sections, violations });
  if (quorumTarget) checkMinorityFailure(sections, { faults, silences, freezes, violate });
  checkSentAfterClose({ closed, silences, violate });
  // docs/deployment.md (quorum): what a failed attempt took is given back; a poll every master
  // answered busy or was not asked (silent) took nothing, so it sends nothing (each give-back is
  // a round of EVALs, the script's text, to every answering master: under a minority failure a
  // waiter's polls doubled the commands on the masters left).
  for (const [p, polls] of busyPollsGivingBack) {
    violate('busy-poll-gives-back', `${p} sent a give-back after ${polls.length} poll(s) that every master answered busy or was not asked (${polls[0].silent} silent), the first at ${fmt(polls[0].t)}: they took nothing`, polls[0].t);
  }
  checkReads(reads, { freezes, violations });
  checkStore(store, { closing, kills, faults, ttl, graceMs: history.graceMs ?? 1_000, violate });
  return violations;
}

/** What `told-of-deletion` allows past the holder's lease: the deadline timer's turn on a loaded machine. */
const TOLD_SLACK = 50;
/** On one server, what it allows past the holder's next renewal (a third of a ttl away at most): its round trip on a loaded machine. */
const RENEW_SLACK = 150;

/**
 * `told-of-deletion`: a holder whose lock was taken from it in Redis by a key deleted from
 * outside (its lock's own key, `P{K}`: a mutex's, a writer's, the readers' `~r`, a leader's, a
 * job's run lock, an account of a transfer; a guard: the readers hash for every reader, a reader's
 * own key for that reader, a semaphore's holders hash for every holder, a permit key for its
 * holder) is told of the loss by the end of its lease: its renewals after the deletion are refused
 * (one server: at once; a Cluster: "not known", lost at its deadline), and the last one accepted
 * was sent before it, so its deadline is at most a ttl after it (docs/deployment.md: the next
 * caller is let in "until its next renewal"). On one server, by its next renewal (a third of a
 * ttl away at most) when no fault held its commands up meanwhile. Judged for the holders inside when the DEL was sent
 * (its code running, not told yet), whose lock that key was part of, and for one that entered
 * after the DEL of a key holding its own grant (a permit or reader key naming its token, a lock's
 * own key found holding it: the grant's reply or message still on its way), its renewal and lease
 * counted from its entry; not a killed worker's, and
 * across a freeze (SIGSTOP, a stalled event loop) the bound moves to the thaw. A reader whose `~r`
 * was written again by a new reader, beside the readers hash that still named it, renewed on and
 * was never told (59b7494; its revert is the seeded bug `reader-hash-kept-for-new-readers`).
 */
function checkToldOfDeletion(entered, deletions, { kills, freezes, faults, trustedEnd, ttl, single, ownKeyDeleted, name, violate }) {
  for (const f of deletions) {
    const suffix = f.key.slice(f.key.lastIndexOf('}') + 1);
    const affected = (s) => {
      if (f.of === 'owner') return s.kind !== 'semaphore';
      if (suffix === ':readers') return s.kind === 'read';
      if (suffix === ':holders') return s.kind === 'semaphore';
      if (f.token !== undefined && (suffix.startsWith(':reader:') || suffix.startsWith(':permit:'))) return s.ownerToken === f.token;
      return false;
    };
    if (!HOLDING_CLASSES.has(f.of)) continue;
    for (const s of entered) {
      if (s.key !== f.lock || s.abortedAtEnter || trustedEnd(s) <= f.t || !affected(s)) continue;
      // A holder that entered after the DEL is judged only when the key held its own grant:
      // Redis granted it before the DEL, whose reply or release message was still on its way (as
      // told-after-release's `ownKeyDeleted`), so it holds nothing from its entry and learns it
      // as one inside does. Its renewal and lease are counted from its entry at the latest.
      const late = s.enter > (f.sent ?? f.t);
      if (late && !ownKeyDeleted(s, s.enter, f)) continue;
      const from = Math.max(f.t, s.enter);
      // One server refuses the next renewal, a third of a ttl away at most, unless a fault held
      // the holder's commands up or lost them meanwhile (then its lease's end bounds it).
      const soon = from + ttl / 3 + RENEW_SLACK;
      const heldUp = faults.some((g) => COMMAND_FAULTS.has(g.kind) && (g.p === undefined || g.p === s.p) && g.t <= soon && (g.until ?? g.t) >= f.t - ttl);
      const due = single && !heldUp ? soon : from + ttl + TOLD_SLACK;
      // A freeze meanwhile holds its timers back: it is told once it thaws.
      const frozen = freezes(s.p).filter((g) => g.t - SLACK <= due && g.until >= f.t - SLACK);
      const thawed = frozen.length === 0 ? due : thawedAt(freezes(s.p), Math.max(...frozen.map((g) => g.until))) + RESUME_BOUND;
      const bound = Math.max(due, thawed);
      if ((kills.get(s.p) ?? Infinity) <= bound || trustedEnd(s) <= bound) continue;
      violate('told-of-deletion', `${name(s)} on "${s.key}" ${late ? `entered after ${f.key}, its own grant, was deleted from outside at ${fmt(f.t)} (at ${fmt(s.enter)})` : `was inside when ${f.key} was deleted from outside at ${fmt(f.t)}`}, and was still not told of a loss at ${fmt(bound)} (${due === soon ? 'its next renewal, on one server, refused' : 'its lease run out'} by then)`, bound);
    }
  }
}

/** Faults that may hold up a release, or lose it before it reaches Redis, until after its lease ran out there. */
const HOLD_UP_FAULTS = new Set(['cut', 'delay', 'drop-requests', 'redis-pause', 'migrate', 'long-pause', 'silent-restart']);

/**
 * `told-after-release`: once its code ended (`exit`; the call then sends its release), a holder
 * is never told of a loss: no lost event, no aborted signal. A release Redis refuses because its
 * first run already released the lock (or handed it over), run again by the client after a
 * connection reset (ioredis resends what a closed connection left unanswered), is not a loss
 * (docs/deployment.md). Excused: a loss Redis really dealt before the release reached it, which
 * needs the holder frozen during its section (its lease may have run out unseen), its lock's own
 * key or a guard deleted from outside after its entry, or its own permit or reader key deleted at
 * any time since its call began (it names the holder's token: the holder's grant), a fault that
 * held the release up or lost it before it reached Redis (a cut, a delay, requests thrown away,
 * Redis paused, a slot migration), on its links or everyone's, between the exit and the loss,
 * a data loss, or the holder's own close (`shutdown`). A section that names its lease (`ttl` in
 * its invoke) is excused by a freeze only as long as a third of it.
 */
function checkToldAfterRelease(sections, { faults, freezes, dataLoss, closing, deletedBetween, ownKeyDeleted, violate }) {
  for (const s of sections.values()) {
    if (s.exit === undefined || s.told === undefined) continue;
    const told = s.told.find((event) => event.t > s.exit);
    if (told === undefined) continue;
    if (told.reason === 'shutdown' || (closing.get(s.p)?.t ?? Infinity) <= told.t) continue;
    if (dataLoss(s.enter ?? s.invoke, told.t)) continue;
    // Its lock's own key or a guard deleted from outside before the release reached Redis: a loss Redis dealt.
    if ((s.keys ?? [s.key]).some((key) => deletedBetween(key, s.enter ?? s.invoke, told.t))) continue;
    // Its own permit or reader key deleted before its entry was recorded, after Redis granted it
    // (Cluster semaphore seed 50320 of --deletes: a grant's message or reply held up by a delay, the
    // DEL done meanwhile, the section short enough that no renewal met the gone key first).
    if (ownKeyDeleted(s, told.t)) continue;
    // A section whose invoke names its lease (`ttl`, the resent release probe's): its watchdog
    // renews it every third of that, so a shorter freeze (a loaded machine's stall) lost nothing.
    const lapsing = (f) => s.ttl === undefined || (f.until ?? f.t) - f.t >= s.ttl / 3;
    if (freezes(s.p).some((f) => f.t - SLACK <= told.t && (f.until ?? f.t) + SLACK >= (s.enter ?? s.invoke) && lapsing(f))) continue;
    if (faults.some((f) => HOLD_UP_FAULTS.has(f.kind) && (f.p === undefined || f.p === s.p) && f.t - SLACK <= told.t && (f.until ?? f.t) + SLACK >= s.exit)) continue;
    // The runner's own stalls hold every link up, as a delay would: named (a loaded machine's
    // timing), not excused, so that a report says whether the release may have waited there.
    const runner = freezes('runner').filter((f) => f.t - SLACK <= told.t && f.until + SLACK >= s.exit);
    const waited = runner.length === 0 ? '' : `; the runner, whose event loop carries every link, stalled meanwhile ${runner.length} time(s), ${fmt(runner.reduce((n, f) => n + f.until - f.t, 0))} in all (longest ${fmt(Math.max(...runner.map((f) => f.until - f.t)))})`;
    violate('told-after-release', `${s.sid} (${s.kind}, token ${s.token}) on "${s.key}" was told of a loss (${told.how}${told.reason ? `, ${told.reason}` : ''}) at ${fmt(told.t)}, ${fmt(told.t - s.exit)} after its code ended and its release was sent${waited}`, told.t);
  }
}

/**
 * `inspect-token`: inspect() of a lock its holder held throughout the question reports the
 * holder's fencing token when it reports the lock held (its doc: "the holder's, when held").
 * Nobody else's acquisition counts while the lock is held, so the key's counter is that token;
 * in quorum mode, the token a majority of the masters reached (a minority may be above it).
 * Excused: a data loss during the section (the lock then promises nothing).
 *
 * `lease-outlasted` (the simulator's "a held lock's local deadline never outlasts its lease in
 * the store", on real Redis): Redis' lease of a lock ends no sooner than the lease its holder
 * counts on. The holder's local deadline is what `held`, its code and its deadline timer go by;
 * a holder counting on more than Redis keeps would run its code after Redis let the lock go to
 * the next caller. Judged with no rival needed, on two readings of Redis' lease: the runner's
 * own, at every entry on one server (`redis-lease`: the key still under the holder's owner
 * token), and inspect()'s answer of the holder's own lock (its fencing token; not in quorum
 * mode, whose answer was the shortest of its masters' leases when this was written, and is the
 * lease a majority of the copies have since: not judged there yet).
 * Either read the lease left after `t`, when the holder counted `leaseLeft` left, and before
 * `done`: Redis' lease ends by `done` plus what it read, at the latest. A lease counted from a
 * later moment than Redis counts it (an attempt that found the lock already its own, its
 * PEXPIRE gone) shows here on every entry that took it, where an exclusion needs a rival to
 * take the lock in the gap and enter before the holder's next renewal is refused.
 */
/** What `lease-past-ttl` allows a lease past its ttl: the renewal's way to Redis, which sets it from there, on a loaded machine. */
const PAST_TTL_SLACK = 150;

function checkInspections(sections, { dataLoss, deletedBetween, foreignBetween, violate, quorum }) {
  const outlasted = (s, seen, redisLeft, how) => {
    const counted = seen.t + seen.leaseLeft;
    const redisEnd = seen.done + redisLeft;
    if (counted <= redisEnd + SLACK) return;
    violate('lease-outlasted', `${s.sid} (${s.kind}, token ${s.token}) on "${seen.key ?? s.key}" counted its lease to ${fmt(counted)} at ${fmt(seen.t)} (${fmt(seen.leaseLeft)} left), but Redis' lease of it ended by ${fmt(redisEnd)} (${fmt(redisLeft)} left as ${how} read it, answered at ${fmt(seen.done)}): its code could go on ${fmt(counted - redisEnd)} after Redis let the lock go`, seen.t);
  };
  for (const s of sections.values()) {
    for (const seen of s.redisLeases ?? []) {
      if (seen.ours && typeof seen.pttl === 'number' && seen.pttl >= 0 && typeof seen.leaseLeft === 'number') outlasted(s, seen, seen.pttl, 'the runner');
      // `lease-past-ttl`: a read that names the end the holder's ttl sets (`ttlEnd`: the
      // unrenewed handover probe's lock, `autoRenew: false`) finds Redis' lease ending by then:
      // read after `t`, it ends at `t` plus what it read at the soonest.
      if (seen.ours && typeof seen.ttlEnd === 'number' && typeof seen.pttl === 'number' && seen.pttl >= 0 && seen.t + seen.pttl > seen.ttlEnd + PAST_TTL_SLACK) {
        violate('lease-past-ttl', `${s.sid} (${s.kind}, token ${s.token}) on "${seen.key ?? s.key}", without a watchdog, had its ttl end at ${fmt(seen.ttlEnd)}, but Redis kept its lease to ${fmt(seen.t + seen.pttl)} at least (${fmt(seen.pttl)} left when read after ${fmt(seen.t)}): held ${fmt(seen.t + seen.pttl - seen.ttlEnd)} past its ttl, kept from the next waiter`, seen.t);
      }
    }
    for (const seen of s.inspects ?? []) {
      if (!seen.held || seen.seenHeld !== true || s.token === undefined) continue;
      if (dataLoss(s.enter ?? s.invoke, seen.done)) continue;
      // A key of the lock deleted from outside meanwhile (its own key, a guard, its fencing counter).
      if (deletedBetween(s.key, s.enter ?? s.invoke, seen.done, ANSWERING_CLASSES)) continue;
      // Its fencing counter written from outside meanwhile, or deleted after (`--foreign-counters`):
      // the counter no longer tells the holder's token (one server: inspect() refuses a counter past
      // 2^53; a quorum's majority answers -5, or the seed a later grant raised it to).
      if (foreignBetween(s.key, s.enter ?? s.invoke, seen.done)) continue;
      if (seen.seenToken !== s.token) {
        violate('inspect-token', `inspect() of "${s.key}" at ${fmt(seen.t)} said it was held with fencing token ${seen.seenToken}, while ${s.sid} held it with token ${s.token}`, seen.t);
        continue;
      }
      if (!quorum && typeof seen.leaseLeft === 'number' && typeof seen.seenTtl === 'number' && seen.seenTtl >= 0) outlasted(s, seen, seen.seenTtl, 'inspect()');
    }
  }
}

/** The end of the freezes (pauses, stalls) of `p` that hold at `at`, one running into the next. */
function thawedAt(freezes, at) {
  let end = at;
  for (let moved = true; moved; ) {
    moved = false;
    for (const f of freezes) {
      if (f.t - SLACK <= end && f.until > end) {
        end = f.until;
        moved = true;
      }
    }
  }
  return end;
}

/**
 * Every leader hears onLeadershipLost: a term that lost its lock, or ended with its worker's
 * close, heard it (a killed worker's aside), and heard it before another term began, unless its
 * worker was frozen when that term began (it must hear it then within RESUME_BOUND of thawing)
 * or Redis lost the lease (a data loss: it hears at its next renewal, checked by the first rule).
 */
function checkLeaders(entered, { heard, closed, kills, freezes, frozenAt, lossExcuses, deletionExcuses, name, violate }) {
  const terms = entered.filter((s) => s.kind === 'leader');
  for (const a of terms) {
    const at = heard.get(a.sid);
    if (at === undefined && !kills.has(a.p) && (a.lost !== undefined || closed.has(a.p))) {
      const why = a.lost !== undefined ? `lost its lock at ${fmt(a.lost)}` : `ended with the close of ${a.p} at ${fmt(closed.get(a.p))}`;
      violate('leader-told', `leader term ${name(a)} ${why} and never heard onLeadershipLost`, a.lost ?? closed.get(a.p));
    }
    for (const b of terms) {
      if (b === a || b.enter <= a.enter || (at !== undefined && at <= b.enter)) continue;
      if (kills.has(a.p) && kills.get(a.p) <= b.enter) continue;
      if (b.p !== a.p && lossExcuses(Math.min(a.invoke, b.invoke), b.enter)) continue;
      // Its lease deleted from outside: it hears at its next renewal, which the first rule and told-of-deletion check.
      if (b.p !== a.p && deletionExcuses(a.key, b.enter)) continue;
      if (b.p !== a.p && frozenAt(a, b.enter)) {
        const thawed = thawedAt(freezes(a.p), b.enter);
        if (at === undefined || at <= thawed + RESUME_BOUND) continue;
        violate('leader-told', `leader term ${name(a)} was frozen when ${name(b)} began at ${fmt(b.enter)}, thawed at ${fmt(thawed)}, and heard onLeadershipLost only at ${fmt(at)}`, at);
        break;
      }
      violate('leader-told', `leader term ${name(b)} began at ${fmt(b.enter)} while ${name(a)} (since ${fmt(a.enter)}) had not heard onLeadershipLost (${at === undefined ? 'it never did' : `it did at ${fmt(at)}`})`, b.enter);
      break;
    }
  }
}

/** The 1 s an attempt's answer is waited for, which bounds isLocked() and inspect() too (docs/guarantees.md). */
const READ_BOUND = 1_000;

/**
 * isLocked() and inspect() settle within an attempt's 1 s grace (plus CLOSE_SLACK for a loaded
 * machine), answered or refused, the time their worker was frozen meanwhile not counted: with
 * Redis frozen, or a network cut that resets nothing, and a client without a command timeout,
 * they are refused then (docs/guarantees.md), not held for as long as Redis is gone (the revert of
 * c294d96, seeded bug 83). Judged on the `read` events of `--freeze` schedules (worker.mjs, `reads`).
 */
function checkReads(reads, { freezes, violations }) {
  for (const read of reads) {
    let frozen = 0;
    for (const f of freezes(read.p)) frozen += Math.max(0, Math.min(f.until, read.done) - Math.max(f.t, read.t));
    const took = read.done - read.t;
    if (took - frozen > READ_BOUND + CLOSE_SLACK) {
      violations.push({
        invariant: 'read-unbounded',
        message: `${read.what}() of ${read.p} asked at ${fmt(read.t)} settled (${read.outcome}) ${fmt(took)} later${frozen > 0 ? ` (${fmt(frozen)} of it frozen)` : ''}, beyond an attempt's ${fmt(READ_BOUND)} grace (+${CLOSE_SLACK} ms)`,
        at: read.done,
      });
    }
  }
}

/**
 * app.close() settles within shutdownTimeout (plus CLOSE_SLACK), the time its worker was frozen
 * meanwhile not counted; a worker that ran a job or led has two phases of it (docs/configuration.md,
 * "Shutdown": the jobs and leaders with their leases' hand-back, then the lock service's give-back),
 * so twice that. A close beyond it while Redis was out of its worker's reach (its links cut as it
 * closed) by a job or leader worker has the cause `lease-release-unbounded`: the shape of a defect
 * found here and fixed (docs/explorer.md), where the hand-back of a job's owner lease or of a
 * leadership waited for Redis without a bound.
 */
function checkCloses({ closing, closed, freezes, faults, sections, leases, violations }) {
  for (const [p, start] of closing) {
    const end = closed.get(p);
    if (end === undefined) continue; // a worker killed meanwhile, or one that never finished ('stuck')
    const frozen = frozenBetween(freezes(p), start.t, end);
    const took = end - start.t;
    // A lease of its own is a leadership too (the hand-back probe's election, which has no sections).
    const leaseHeld = [...sections.values()].some((s) => s.p === p && (s.kind === 'job' || s.kind === 'leader')) || leases.some((l) => l.p === p);
    const phases = leaseHeld ? 2 : 1;
    if (took - frozen > phases * start.shutdownTimeout + CLOSE_SLACK) {
      // A close that ended as the link healed (its answers in) waited for it all the same.
      const unreachable = faults.some((f) => f.close && f.p === p && f.t <= start.t + SLACK && (f.until ?? Infinity) >= end - CLOSE_SLACK);
      violations.push({
        invariant: 'close-bound',
        message: `app.close() of ${p} took ${fmt(took)}${frozen > 0 ? ` (${fmt(frozen)} of it frozen)` : ''}, beyond ${phases === 2 ? 'twice ' : ''}its shutdownTimeout of ${fmt(start.shutdownTimeout)} (+${CLOSE_SLACK} ms)`,
        at: end,
        ...(unreachable && leaseHeld ? { cause: 'lease-release-unbounded' } : {}),
      });
    }
  }
}

/**
 * `left-alive-after-close`: what a closed application left keeping its worker's process alive once
 * `bound` ms passed after its close (`since`). Those ms are the worker's running time: a socket
 * closes, and a library timer fires, only when its event loop turns, so a stall (or a pause) of the
 * worker after the close holds them back as it holds a lease's deadline timer back (as the other
 * rules discount freezes). On a loaded machine a Cluster worker stalled 592 of the 663 ms before it
 * looked (seeds 60013, 60055, 60057 of --deletes), its sockets' closes not yet run. So the time it
 * was frozen between the close and its look is not counted, and only that: a timer or socket that
 * keeps the process alive is still found once the worker ran the bound beside its stalls (the
 * worker waits that long, `leftAlive` in worker.mjs; an older worker's look right after a stall
 * that spanned the bound is excused as this cannot tell).
 */
function checkLeftAlive(leftAlive, { freezes, violate }) {
  for (const event of leftAlive) {
    const frozen = frozenBetween(freezes(event.p), event.since, event.t);
    if (event.t - event.since - frozen < event.bound) continue;
    violate('left-alive-after-close', `app.close() of ${event.p} left ${describeLeft(event.left)} keeping its process alive ${fmt(event.t - event.since)} after it resolved (${frozen > 0 ? `${fmt(frozen)} of it stalled; ` : ''}its own connections close within ${fmt(event.bound)})`, event.t);
  }
}

/** How long the freezes (pauses, stalls) of a worker held it between `from` and `to`, overlaps counted once. */
function frozenBetween(freezes, from, to) {
  const merged = [];
  for (const f of [...freezes].sort((x, y) => x.t - y.t)) {
    const a = Math.max(f.t, from);
    const b = Math.min(f.until, to);
    if (b <= a) continue;
    const last = merged.at(-1);
    if (last && a <= last[1]) last[1] = Math.max(last[1], b);
    else merged.push([a, b]);
  }
  return merged.reduce((sum, [a, b]) => sum + b - a, 0);
}

/**
 * docs/deployment.md (quorum): at app.close() the wait for the masters' answers to the releases
 * owed leaves out a master silent by then (one asked nothing since it answered nothing for a
 * second), or one silent for a second while it waits. So a close begun while its worker's store
 * had one master of the three silenced, the others answering, ends within that second (twice for
 * a worker with a job or a leadership: two phases), plus CLOSE_SLACK, whatever its
 * shutdownTimeout. Judged only when the store said so (its `silence` events: silenced, and not
 * answered again before the close began) and no other fault that could hold up the worker's
 * commands overlapped the close.
 */
function checkCloseSilentMaster({ closing, closed, silences, freezes, faults, sections, violations }) {
  for (const [p, start] of closing) {
    const end = closed.get(p);
    if (end === undefined) continue;
    const silent = new Set();
    for (const e of silences.get(p) ?? []) {
      if (e.t > start.t) break;
      if (e.what === 'silenced') silent.add(e.node);
      else silent.delete(e.node);
    }
    if (silent.size !== 1) continue;
    const [node] = silent;
    const other = faults.some((f) => COMMAND_FAULTS.has(f.kind) && f.node !== node && (f.p === undefined || f.p === p) && f.t <= end + SLACK && (f.until ?? f.t) >= start.t - SLACK);
    if (other) continue;
    const phases = [...sections.values()].some((s) => s.p === p && (s.kind === 'job' || s.kind === 'leader')) ? 2 : 1;
    const took = end - start.t - frozenBetween(freezes(p), start.t, end);
    if (took <= phases * SILENT_AFTER + CLOSE_SLACK) continue;
    violations.push({
      invariant: 'close-waits-silent-master',
      message: `app.close() of ${p}, begun with master ${node} silent and the others answering, took ${fmt(took)}, beyond the ${phases === 2 ? 'two seconds' : 'second'} a silent master is waited for (+${CLOSE_SLACK} ms; its shutdownTimeout ${fmt(start.shutdownTimeout)})`,
      at: end,
    });
  }
}

/**
 * docs/deployment.md (quorum): "nothing is sent after `app.close()` on clients handed in", the
 * fencing raises owed to a silent master dropped, a release round that ends after the close owing
 * nothing. A master that answers again after its worker's close (`--handed` keeps the clients
 * open then) may be sent nothing: its `comeback` (worker.mjs's wrap of `answersAgain`) counts the
 * releases it was sent and the floors owed to it, both 0 once the close ran. One server
 * (`--handed --target single`): docs/configuration.md, the same of a client handed in; each command
 * the closed application sends on it is a `handed-send` (worker.mjs wraps its `sendCommand`).
 */
function checkSentAfterClose({ closed, silences, violate }) {
  for (const [p, events] of silences) {
    // docs/deployment.md (quorum): a master that answers again is sent the releases it missed of
    // holders whose release came last (worker.mjs: `left`, those it was owed and never handed).
    const left = events.find((e) => e.what === 'comeback' && (e.left ?? 0) > 0);
    if (left !== undefined) violate('comeback-left-release', `${p}'s master ${left.node}, answering again at ${fmt(left.t)}, was not sent ${left.left} release(s) it missed of holders whose release came last`, left.t);
    const end = closed.get(p);
    if (end === undefined) continue;
    for (const e of events) {
      // Not ioredis' own resend of a command sent before the close that its closed connection
      // left unanswered (the same command, sent again as it reconnects: worker.mjs).
      if (e.ev === 'handed-send' && e.t > end && !e.resend) {
        violate('sent-after-close', `${p}'s closed application (closed at ${fmt(end)}) sent ${e.command} at ${fmt(e.t)} on the client it was handed`, e.t);
        break;
      }
      if (e.what !== 'comeback' || e.t <= end || (e.releases ?? 0) + (e.floors ?? 0) === 0) continue;
      violate('sent-after-close', `${p}'s closed application (closed at ${fmt(end)}) sent master ${e.node}, answering again at ${fmt(e.t)}, ${e.releases} release(s) and owed it ${e.floors} fencing raise(s)`, e.t);
      break;
    }
  }
}

/** How long after a fault of a master ends its part may still count as failed: its silence, then a round that asked it nothing. */
const MASTER_BACK = SILENT_AFTER + 500;

/**
 * docs/deployment.md (quorum): "a minority of failed or frozen nodes changes nothing (a rival's
 * attempt on a lock held on a bare majority that includes a failed master is busy, not a quorum
 * failure ...)". So a call fails on a quorum failure ("Quorum not reached") only when two masters
 * (of three) or more were out around its end: a fault of one master (its Redis frozen, killed or
 * restarted, its links cut, dropped or delayed), from its start to MASTER_BACK after it ended; a
 * fault of no master in particular (a reset of every link, a worker's links cut) counts as all;
 * and a master the worker's store still had silenced as the call failed (its `silence` events:
 * one that came back unasked may stay so a while after its fault). And a round every master left
 * unanswered while the worker or the runner (whose event loop carries every link) was frozen for
 * a third of the round's wait or more: a loaded machine's timing holds every master up alike.
 */
function checkMinorityFailure(sections, { faults, silences, freezes, violate }) {
  for (const s of sections.values()) {
    if (s.fail === undefined || !/Quorum not reached/.test(s.error ?? '')) continue;
    const wait = Number(/no answer within (\d+) ms/.exec(s.error ?? '')?.[1] ?? NaN);
    if (wait > 0 && [s.p, 'runner'].some((p) => frozenBetween(freezes(p), s.fail - wait - SLACK, s.fail) >= wait / 3)) continue;
    const out = new Set();
    for (const e of silences.get(s.p) ?? []) {
      if (e.t > s.fail) break;
      if (e.what === 'silenced') out.add(e.node);
      else out.delete(e.node);
    }
    for (const f of faults) {
      // A master whose counter was written past 2^53 (`--foreign-counters`) refuses every
      // acquisition of the key until the runner deleted it: out, as a failed master is, from the
      // write's send to the deletion (-5 is raised to the seed, and refuses nothing).
      if (f.kind === 'foreign-counter' && f.value !== '-5' && Array.isArray(f.masters) && (f.sent ?? f.t) <= s.fail + SLACK && (f.until ?? f.t) + SLACK >= s.invoke) f.masters.forEach((node) => out.add(node));
      if (!COMMAND_FAULTS.has(f.kind) || (f.p !== undefined && f.p !== s.p)) continue;
      if (f.t > s.fail + SLACK || (f.until ?? f.t) + MASTER_BACK < s.invoke) continue;
      if (f.node === undefined) [0, 1, 2].forEach((node) => out.add(node));
      else out.add(f.node);
    }
    if (out.size >= 2) continue;
    violate('minority-fails-quorum', `${s.sid} of ${s.p} failed on a quorum failure with ${out.size === 0 ? 'every master up' : `only master ${[...out][0]} out`} (${String(s.error).slice(0, 300)})`, s.fail);
  }
}

/**
 * A semaphore's count of permits held agrees with its holders' entries (see above).
 * Once every live worker closed, Redis holds nothing of theirs but fencing counters: no lock,
 * permit or reader key, no holder's entry in a semaphore's or readers' hash, no live place in a
 * queue naming a worker's token, and no key at all without an expiry (queue keys and empty guard
 * structures may stay, as they expire on their own: docs/redis-data.md). Excused: what a killed
 * worker left (its leases run out on their own), and what a worker left when a fault that could
 * lose or hold up its commands (a network fault on its links or everyone's, a Redis pause or
 * restart, a slot migration) or a pause of it ended less than a ttl plus the grant lease before
 * its close began: a command lost then may leave a lease that only its expiry ends.
 */
function checkStore(store, { closing, kills, faults, ttl, graceMs, violate }) {
  const window = (Number.isFinite(ttl) ? ttl : 0) + graceMs + SLACK;
  const excused = (p) => {
    if (kills.has(p)) return 'killed';
    const start = closing.get(p)?.t;
    if (start === undefined) return undefined;
    const fault = faults.find((f) => (f.kind === 'pause' ? f.p === p : COMMAND_FAULTS.has(f.kind) && (f.p === undefined || f.p === p)) && (f.until ?? f.t) >= start - window);
    return fault && `${fault.kind} until ${fmt(fault.until ?? fault.t)}`;
  };
  for (const entry of store) {
    // Every script changes a semaphore's count with its holders (atomically): permits counted
    // that no entry holds are lost until the hash expires, which every acquisition pushes on.
    if (entry.counts !== undefined && entry.counts.used !== entry.counts.held) {
      violate('semaphore-count', `${entry.key} counts ${entry.counts.used} permit(s) held (':used') where its holders' entries hold ${entry.counts.held}`, entry.t);
    }
    if (entry.pttl === -1) {
      violate('store-leftover', `${entry.key} (${entry.type}) was left without an expiry${entry.tokens.length ? `, naming ${entry.tokens.map((t) => tokenOwner(t) ?? t).join(', ')}` : ''}`, entry.t);
      continue;
    }
    const owners = [...new Set(entry.tokens.map((token) => tokenOwner(token) ?? `an unknown token ${token}`))];
    const judged = owners.filter((p) => !excused(p));
    if (judged.length === 0) continue;
    violate('store-leftover', `${entry.key} (${entry.type}, ${entry.pttl} ms left) still held ${judged.join(', ')}'s token after ${judged.length > 1 ? 'they' : 'it'} closed`, entry.t);
  }
}

/** `['Timeout', 'TCPSocketWrap', 'Timeout']` as `2 Timeout, 1 TCPSocketWrap`. */
function describeLeft(types) {
  const counts = new Map();
  for (const type of types) counts.set(type, (counts.get(type) ?? 0) + 1);
  return [...counts].map(([type, n]) => `${n} ${type}`).join(', ');
}

function fmt(ms) {
  return `${Math.round(ms)} ms`;
}

/** The history as readable lines (time from the first event, process, event), for a replay. */
export function trace(history) {
  const events = history.events.filter((e) => typeof e.t === 'number').sort((a, b) => a.t - b.t);
  const origin = events[0]?.t ?? 0;
  return events.map((e) => {
    const { ev, t, p, sid, until, done, ...rest } = e;
    const fields = Object.entries(rest)
      .filter(([, v]) => v !== undefined && v !== false)
      .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
      .join(' ');
    const span = until !== undefined ? `..+${Math.round(until - origin)}` : done !== undefined ? `..+${Math.round(done - origin)}` : '';
    return `+${Math.round(t - origin)}${span} ms ${p ?? 'runner'} ${ev}${sid ? ` ${sid}` : ''}${fields ? ` ${fields}` : ''}`;
  });
}
