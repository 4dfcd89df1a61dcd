import { RedisLockError } from '../../../errors/redis-lock.error.js';
import { shutDownRefusal } from '../../../errors/shutdown-reason.js';
import { now } from '../../time/clock.js';
import { driftMargin } from '../../options/lock-options.js';
import { GONE, NOT_OURS, RENEWED, type LockScripts } from '../redis/lock-scripts.js';
import type { AcquireReply, ReleaseReply, ScriptKeys } from '../lock-store.js';
import { RenewalRefusal, type LockSnapshot, type LockStore, type RenewalOutcome, type RenewalPart, type RenewalRequest } from '../lock-store.js';
import { DeadlineSweeper } from '../../engine/deadline-sweeper.js';
import { QuorumRound, type Answer } from './quorum-round.js';
import { QuorumSilence, SilentMaster } from './quorum-silence.js';
import { LOCK_KEY_SUFFIXES } from '../../keys/lock-key.js';
import { LAST_ATTEMPT_GRACE_MS } from '../../engine/waiter-timing.js';
import { tokenSince } from '../../engine/holder.js';
import { RecentMap, RecentSet } from './recent-entries.js';
import { MissedReleases, type MissedRelease } from './missed-releases.js';
import { majorityPttl } from '../../engine/lease-left.js';
import { setImmediate } from '../../time/real-timers.js';
import { LastingRefusalError, QuorumUnavailableError, holdsForeignData, lastingRefusal, passes, passingReply, shownReply, storeFailure, type LastingRefusal } from '../../engine/store-failure.js';
import { quoteKey } from '../../keys/quote-key.js';
import { clientsClosed } from '../../engine/clients-closed.js';

/** A master's answer for one lock of a renewal: its script's code, or its refusal alone (see `LockScripts.renewElsewhere`). */
type RenewalCode = number | RenewalRefusal;

/**
 * Quorum mode (the Redlock algorithm) over N independent Redis masters. A lock is held when a
 * majority of nodes granted it within its validity time (ttl minus the time the round took
 * minus the drift margin); it is renewed on a majority and released on all. A node that does
 * not answer within its share of the lease counts as failed.
 *
 * Fencing: each node keeps its own counter, and counters of different nodes are not
 * comparable. The token handed out is held by a majority of counters before the lock is handed
 * out; any later majority shares a node with this one, so the next token is higher, as long as
 * that node kept its counter. When a majority granted with one and the same counter, the highest
 * any node answered with, that majority holds it already: the round ends there (a slow or frozen
 * node is not waited for), and the other nodes are raised to it once they answered, without
 * waiting (best effort: a raise that fails is not made again). Otherwise the highest counter of the
 * granting nodes is written back to every node, and a majority must confirm it before the lock is
 * handed out. A renewal that finds a node restarted empty puts the lock and the
 * counter back there. A node that loses its counter between two acquisitions of a key, with
 * no renewal in between to restore it, or has it rolled back (a failover of a Sentinel group or
 * a Cluster entry to a replica that missed the last acquisitions, an older snapshot), has it set
 * to the acquiring instance's clock (the seed of `QUORUM_ACQUIRE`, which raises any counter
 * below it), above the tokens before within the bound docs/redis-data.md gives.
 */
/** How many missed releases are kept for shutdown, by master: the newest this many at least, twice as many at most (see `RecentMap`). */
const MAX_MISSED = 10_000;

/** How many released tokens are remembered, as `MAX_MISSED` (see `releasedTokens`). */
const MAX_RELEASED_TOKENS = 10_000;

/**
 * How long a release round waits for a majority's answer: three quarters of what a holder's
 * release is given at least (`LAST_ATTEMPT_GRACE_MS`), so that the round's own answer (a refused
 * majority, say) comes before the holder gives up on it in the lock's last second. A node busy for a moment (a loaded host, the fork of a
 * background save) is no reason to call a release unconfirmed while its lease runs on; a round
 * ends at once when a majority released. (Not when a majority refused: a node that does not
 * answer may hold a copy, and counts as missed, sent again at shutdown, only once its time is up.)
 */
const RELEASE_ROUND_MS = Math.floor((LAST_ATTEMPT_GRACE_MS * 3) / 4);

/** How long a round with no lease to share out (a give-back, a check, an inspection) waits for a node. */
const UNLEASED_ROUND_MS = 200;

/** What a round answers for a master whose client is closed at the shutdown: nothing was sent (see `askWithin`). */
const UNSENT_ON_CLOSED = new Error('The client is closed: not sent');

/** Every master's answer in a round that starts after app.close() took what was owed (see `askWithin`). */
const CLOSED = shutDownRefusal('LockService is shut down: nothing more is sent to the Redis masters.');

export class QuorumStore implements LockStore {
  readonly queues = false;
  private readonly majority: number;

  constructor(private readonly nodes: LockScripts[]) {
    this.majority = Math.floor(nodes.length / 2) + 1;
    this.silence = new QuorumSilence(nodes.length, (index) => this.answersAgain(index));
    this.owedFloors = nodes.map(() => new RecentMap(MAX_MISSED));
  }

  /**
   * `unfenced`: the caller takes no fencing token (`fencing: false`), so nothing is written back
   * to the nodes' counters (see the class comment): one round to the nodes instead of two.
   */
  acquire(keys: ScriptKeys, token: string, ttl: number, _enqueue: boolean, _waiterLease: number, unfenced = false): Promise<AcquireReply> {
    const startedAt = now();
    // The attempts of one acquisition share its token: one given back is not this one's release,
    // and a late grant of the one before must not be given back from under it.
    if (this.releasedTokens.size > 0) this.releasedTokens.delete(token);
    // Its earlier attempts' give-backs owed to a master are this attempt's now: a copy one left
    // there is granted again to it, and its own release or leave ends it.
    if (this.missedReleases.size > 0) this.missedReleases.deleteEverywhere(keys.lock, token);
    // Without fencing a granting majority decides; with it, a majority that granted with one and
    // the same counter (which then holds the token already, see the class comment).
    const resent = (node: LockScripts) => (reply: Promise<AcquireReply>) => this.giveBackIfReleased(node, keys.lock, token, reply);
    // Until every master's command has settled, a grant resent after NOSCRIPT may still land.
    let acquiring = this.acquiring.get(token);
    if (acquiring === undefined) this.acquiring.set(token, (acquiring = { rounds: 0, released: false }));
    acquiring.rounds++;
    acquiring.released = false;
    const settled = () => {
      if (--acquiring.rounds === 0) this.acquiring.delete(token);
    };
    // One seed for every master: a new key's counters start equal, and nothing is written back.
    // At least 1, as every token is (0 means no token): a clock at 0 or before, as a test's fake
    // timers may set it, raises no counter, which then counts on from where it is.
    const seed = Math.max(1, Date.now());
    const replies: Promise<AcquireReply>[] = [];
    const question = (node: LockScripts, index: number) => (replies[index] = node.quorumAcquire(keys.lock, token, ttl, unfenced, seed, resent(node)));
    const round = unfenced ? this.ask(ttl, question, grantedHere, this.majority, settled) : this.ask(ttl, question, oneCounterReaches(this.majority), 1, settled);
    return round.then((answers) => {
      let granted = 0;
      let busy = 0;
      let highest = 0;
      let longestBusy = -Infinity;
      for (const answer of answers) {
        if (answer === undefined || !answer.ok) continue;
        const reply = answer.value;
        if (reply.acquired) {
          granted++;
          if (reply.fencingToken > highest) highest = reply.fencingToken;
        } else {
          busy++;
          if (reply.pttl > longestBusy) longestBusy = reply.pttl;
        }
      }
      if (granted >= this.majority && now() - startedAt < ttl - driftMargin(ttl)) {
        if (unfenced) return { acquired: true, fencingToken: highest };
        const agreed = counterOfMajority(answers, this.majority);
        if (agreed === undefined) return this.raiseFloors(keys, token, ttl, startedAt, highest);
        this.catchUp(keys.fence, agreed, answers, replies);
        return { acquired: true, fencingToken: agreed };
      }
      if (granted >= this.majority) throw this.tooLate(keys, token, startedAt, ttl);
      return this.giveBack(keys, token, granted, busy, longestBusy, answers);
    });
  }

  /**
   * A majority granted with the counter `fencingToken`, the token handed out: the nodes whose
   * counter may be below it (busy, failed, behind, or not waited for: raised once their grant
   * has answered) are raised to it, and nobody waits for that. The token's order does not need
   * it (that majority holds the token). Without it, a node left behind and a node of that
   * majority restarted empty could form the next majority, whose token only the seed's bound
   * would keep above this one.
   */
  private catchUp(fence: string, fencingToken: number, answers: (Answer<AcquireReply> | undefined)[], replies: Promise<AcquireReply>[]): void {
    const raise = (index: number) => {
      // A grant that answers after app.close(): a raise is best effort, and the clients may be
      // the application's own, still open (see `owedAtShutdown`).
      if (this.closed) return;
      if (this.silence.refusal(index) === undefined) this.silence.track(index, this.nodes[index]!.fenceFloor(fence, fencingToken)).catch(() => undefined);
      else this.owe(index, fence, fencingToken);
    };
    for (let index = 0; index < this.nodes.length; index++) {
      const answer = answers[index];
      if (answer === undefined) {
        replies[index]?.then(
          (reply) => (!reply.acquired || reply.fencingToken < fencingToken) && raise(index),
          () => raise(index),
        );
      } else if (!answer.ok || !answer.value.acquired || answer.value.fencingToken < fencingToken) raise(index);
    }
  }

  /**
   * Writes the token back to every node, not only the granting majority: a node that was busy
   * (or slow) and kept its data must not hand out a lower token to a later majority after a
   * granting node lost its counter. The majority that must confirm is any majority.
   */
  private raiseFloors(keys: ScriptKeys, token: string, ttl: number, startedAt: number, fencingToken: number): Promise<AcquireReply> {
    // A majority of confirmations decides: waiting here too for a node the grant round already
    // waited for (frozen, say) would spend a second node timeout, past what a tryAcquire() waits.
    return this.ask(ttl, (node) => node.fenceFloor(keys.fence, fencingToken), confirmedHere).then((floors) => {
      let confirmed = 0;
      for (let index = 0; index < floors.length; index++) {
        if (floors[index]?.ok === true) confirmed++;
        // A master that did not answer, silent or late: raised once it answers again.
        else if (floors[index] !== undefined) this.owe(index, keys.fence, fencingToken);
      }
      if (confirmed >= this.majority && now() - startedAt < ttl - driftMargin(ttl)) return { acquired: true, fencingToken };
      if (confirmed >= this.majority) throw this.tooLate(keys, token, startedAt, ttl);
      // Granted, but the token could not be written back where a later majority would see it:
      // given back (whole, as giveBack's: the token may attempt again), and the failure is the
      // write-back's (not the grant's, not a busy lock).
      this.releaseRound(keys.lock, token, true).catch(() => undefined);
      // A majority refused for data of another kind at the counter, written since its grant: named.
      throw this.foreignData(floors, keys.lock, 'write back the fencing token of') ?? this.noQuorum('write back the fencing token of', confirmed, floors);
    });
  }

  /**
   * A majority granted, but the rounds took so long that the lease left (ttl less the time taken
   * and the drift margin) is gone, as after an event-loop stall: given back, and said so.
   */
  private tooLate(keys: ScriptKeys, token: string, startedAt: number, ttl: number): RedisLockError {
    // Whole, as giveBack's: the token may attempt again.
    this.releaseRound(keys.lock, token, true).catch(() => undefined);
    return new RedisLockError(
      `Quorum reached to acquire the lock, but only ${now() - startedAt} ms after asking, past its validity (ttl ${ttl} ms less a drift margin of ${driftMargin(ttl)} ms): it was given back.`,
    );
  }

  /**
   * No quorum (or it came too late): gives back what was granted, on every node, without
   * making the caller wait for nodes that do not answer; busy if enough nodes said so.
   */
  private giveBack(keys: ScriptKeys, token: string, granted: number, busy: number, longestBusy: number, answers: (Answer<unknown> | undefined)[]): AcquireReply {
    // Every master answered busy or was asked nothing (silent): nothing to give back (a waiter's
    // polls of a held lock, under a minority failure too). What an earlier attempt of this token
    // may have left on a silent master stays owed to it, as the round would have owed it.
    // Whole (EVAL): the token attempts again, and after a restart EVALSHA's NOSCRIPT retry would
    // run behind that attempt on the master's connection, deleting what it granted.
    const silent = granted > 0 ? 0 : answers.filter((answer) => answer?.ok === false && answer.error instanceof SilentMaster).length;
    if (granted > 0 || busy + silent < this.nodes.length) this.releaseRound(keys.lock, token, true).catch(() => undefined);
    else if (silent > 0) {
      answers.forEach((answer, index) => {
        if (answer?.ok === false) this.owed(index, keys.lock, token, answer.error);
      });
    }
    // Busy too when the masters that did not answer (a minority) make a majority with those that
    // hold it, as `exists` reports it held: a holder on a bare majority, one of it silent, say.
    const failed = this.nodes.length - granted - busy;
    const heldWithFailed = busy > 0 && failed <= this.nodes.length - this.majority && busy + failed >= this.majority;
    if (busy > this.nodes.length - this.majority || (busy > 0 && granted + busy === this.nodes.length) || heldWithFailed) {
      return { acquired: false, pttl: longestBusy };
    }
    throw this.refusedForGood(answers) ?? this.foreignData(answers, keys.lock) ?? this.noQuorum('acquire', granted, answers);
  }

  /**
   * So many masters refused `what` in a way asking again cannot change (see `lastingRefusal`:
   * EVALSHA renamed on them, an ACL without it or the lock's keys; for an acquisition, a renewal or
   * a read, and for anything once the shutdown began, a client its owner closed too) that the
   * others can never make a majority: the call ends here (a release or a give-back is not sent
   * again), naming the first one's refusal and what to fix, `then` said after it. A minority's
   * does not. Allocates nothing unless a master refused so (every renewal round asks).
   */
  private refusedForGood(answers: (Answer<unknown> | undefined)[], what: 'acquire' | 'renew' | 'release' | 'give back' | 'check' | 'inspect' = 'acquire', then = ''): LastingRefusalError | undefined {
    // A closed client ends an acquisition or a read, and loses a held lock at its renewal, as on
    // one Redis; a release or give-back it fails waits for its owner to open it again (ioredis'
    // connect()), as on one Redis, until the shutdown, which gives it up then (nothing opens it again).
    const closed = (what !== 'release' && what !== 'give back') || this.shutting;
    let refused = 0;
    let first = -1;
    for (let index = 0; index < answers.length; index++) {
      if (this.lasting(answers[index], index, closed) !== undefined && refused++ === 0) first = index;
    }
    if (refused <= this.nodes.length - this.majority) return undefined;
    const error = (answers[first] as { error: unknown }).error;
    const lasting = this.lasting(answers[first], first, closed)!;
    const call = `Quorum not reached to ${what} the lock: ${refused} of ${this.nodes.length} Redis nodes refused it in a way asking again cannot change, so ${refused === this.nodes.length ? 'none' : 'the others'} can never make the majority of ${this.majority} that ${what === 'acquire' ? 'grants it' : what === 'give back' ? 'gives it back' : what === 'check' || what === 'inspect' ? 'answers the read' : `${what}s it`}; node ${first}`;
    return new LastingRefusalError(storeFailure(error, call, then, lasting === 'client-closed').message, lasting, { cause: error });
  }

  /**
   * So many masters refused `what` for data of another kind under the lock's keys (a hash where its
   * string is, a word or a value past 2^53 where its counter is: see `holdsForeignData`) that the
   * others can never make a majority: asking again changes nothing until that key is deleted there.
   * A RedisLockError names the keys (quoted, bounded) and what to fix, as one Redis's does
   * (`storeFailure`), each master's reply after it (the engine's `holdsForeignData` reads them: an
   * acquisition ends at once). Nothing was written before such a refusal (see `QUORUM_ACQUIRE`).
   */
  private foreignData(answers: (Answer<unknown> | undefined)[], lock: string, what: 'acquire' | 'renew' | 'write back the fencing token of' | 'release' | 'give back' | 'check' | 'inspect' = 'acquire', then = ''): RedisLockError | undefined {
    let refused = 0;
    let first: unknown;
    for (const answer of answers) {
      if (answer?.ok === false && holdsForeignData(answer.error) && refused++ === 0) first = answer.error;
    }
    if (refused <= this.nodes.length - this.majority) return undefined;
    const replies = answers.flatMap((answer, i) => (answer?.ok === false ? [`node ${i}: ${shownReply(answer.error)}`] : []));
    return new RedisLockError(
      `Quorum not reached to ${what} the lock: ${refused} of ${this.nodes.length} Redis nodes refused it for data this library did not write under its keys ${quoteKey(lock)} and ${quoteKey(lock + LOCK_KEY_SUFFIXES.fence)}, so ${refused === this.nodes.length ? 'none' : 'the others'} can never make the majority of ${this.majority}, and asking again changes nothing: something else writes under the module's key prefix; delete that key on those masters, or give the module a keyPrefix of its own${then} (${replies.join('; ')}).`,
      { cause: first },
    );
  }

  /**
   * How master `index` refused for good in `answer` (see `refusedForGood`), if it did; `closed`:
   * any failure of its client counts when that client was closed (asked after such a failure only,
   * see `clientsClosed`). The round's own, no answer in time, counts too: a client its owner closed
   * refuses what it was sent only as its socket closes, which a frozen server or a loaded machine
   * puts off past the round, and asking again through it changes nothing either.
   */
  private lasting(answer: Answer<unknown> | undefined, index: number, closed = false): LastingRefusal | undefined {
    if (answer?.ok !== false) return undefined;
    const { error } = answer;
    return lastingRefusal(error, closed && !(error instanceof RedisLockError) && clientsClosed([this.nodes[index]!.client]));
  }

  /**
   * On every node: each keeps its own counter (see the class comment). Rejects unless a majority
   * pushed it on in time, so that the holder tries again at its next renewal (HeldLock.keepFence).
   */
  async keepFence(fence: string): Promise<void> {
    const answers = await this.ask(Infinity, (node) => node.keepFence(fence), (answer) => answer.ok);
    const kept = answers.filter((answer) => answer?.ok === true).length;
    if (kept < this.majority) throw this.noQuorum('keep the fencing counter of', kept, answers, 'answered');
  }

  async renew(lockKey: string, token: string, ttl: number, fencingToken?: number): Promise<RenewalOutcome> {
    this.renewing++;
    try {
      const answers = await this.ask(ttl, (node) => node.renewCode(lockKey, token, ttl));
      const requests = [{ lockKey, token, ttl, fencingToken }];
      const codes = answers.map((answer) => (answer.ok ? [answer.value] : undefined));
      this.assertRenewable(requests, answers, codes);
      // A key of another type where the lock is (a hash) on a majority: no majority can renew it
      // until that key is deleted there, which `extend()` says of this lock, as one Redis' refusal.
      // (A batch's renewal reads it through pcall: see RENEW_LOOP.)
      const foreign = this.foreignData(answers, lockKey, 'renew');
      if (foreign !== undefined) throw foreign;
      const outcomes = await this.settle(requests, codes);
      // Refused for now by the masters that failed it, every one answering: said so, as by the
      // batch (an extend() of this lock names it), not left undecided as a silence is.
      this.assertNotRefusedForNow(outcomes, answers);
      return outcomes[0]!;
    } finally {
      this.renewing--;
    }
  }

  /** One part: every lock's outcome needs the answers of a majority of nodes. */
  renewBatch(requests: RenewalRequest[]): RenewalPart[] {
    return [{ indexes: requests.map((_, index) => index), outcomes: this.renewAll(requests) }];
  }

  private async renewAll(requests: RenewalRequest[]): Promise<RenewalOutcome[]> {
    this.renewing++;
    try {
      const ttl = shortestTtl(requests);
      const answers = await this.ask(ttl, (node) => node.renewCodes(requests));
      const codes = answers.map((answer) => (answer.ok ? answer.value : undefined));
      this.assertRenewable(requests, answers, codes);
      const outcomes = await this.settle(requests, codes);
      this.assertNotRefusedForNow(outcomes, answers);
      return outcomes;
    } finally {
      this.renewing--;
    }
  }

  /**
   * Throws when a majority of the masters refused the renewals for good (see `refusedForGood`): no
   * majority can renew them again, and the engine tells their holders now (lost, reason
   * 'refused', as on one Redis), not as their leases run out. (No renewal of them can have been
   * confirmed: fewer than a majority answered.) What the other masters renewed is given back, as
   * a refused renewal's; not to those that refused so, which would refuse that too.
   */
  private assertRenewable(requests: RenewalRequest[], answers: Answer<unknown>[], codes: (RenewalCode[] | undefined)[]): void {
    const refusal = this.refusedForGood(answers, 'renew');
    if (refusal === undefined) return;
    this.giveBackRefused(requests, codes, requests.map(() => false), (n) => this.lasting(answers[n], n, true) !== undefined);
    throw refusal;
  }

  /**
   * Throws when no renewal of the batch (or the one `renew` sends) was decided because the masters that failed it all
   * refused it for now (LOADING, READONLY, BUSY), every master having answered: the engine warns
   * and each holder keeps that refusal, which its loss names if its lease runs out so (Redis
   * answered, so the loss does not say it was unreachable), as on one Redis. The client's first
   * refusal is the `cause`. A master that did not answer leaves the batch undecided, as before.
   */
  private assertNotRefusedForNow(outcomes: RenewalOutcome[], answers: Answer<unknown>[]): void {
    if (outcomes.some((outcome) => outcome !== undefined)) return;
    const refusals = answers.flatMap((answer) => (answer === undefined || answer.ok ? [] : [answer.error]));
    if (refusals.length === 0 || answers.some((answer) => answer === undefined) || !refusals.every(passingReply)) return;
    const answered = answers.filter((answer) => answer.ok).length;
    // Every failure passes: a QuorumUnavailableError, its cause the first refusal.
    throw this.noQuorum('renew', answered, answers, 'answered');
  }

  /**
   * Decides each renewal from the nodes' codes (a node that did not answer has none), then
   * puts each lock renewed on a majority back on the nodes that had lost it (restarted empty),
   * with SET NX: a rival that took the key there meanwhile keeps it. Without this, a holder
   * renewing on a bare majority would lose exclusion when one more node restarts empty, since
   * a rival would then find the key missing on a majority. The lock was held on a majority all
   * along, so no rival can have held it meanwhile. A lock released while the renewal's round ran
   * is not put back.
   */
  private async settle(requests: RenewalRequest[], codes: (RenewalCode[] | undefined)[]): Promise<RenewalOutcome[]> {
    const outcomes = requests.map((_, i) => this.decide(codes.map((node) => node?.[i])));
    this.giveBackRefused(requests, codes, outcomes);
    const restores = new Map<number, RenewalRequest[]>();
    codes.forEach((node, n) => {
      const lost = requests.filter((_, i) => outcomes[i] === true && node?.[i] === GONE);
      if (lost.length > 0) restores.set(n, lost);
    });
    if (restores.size > 0) {
      const floors = await this.unfencedFloors(shortestTtl(requests), [...restores.values()]);
      await this.ask(shortestTtl(requests), (node, n) => {
        // Released while the renewal's round ran: the release found nothing on this node, and
        // a restore now would put the lock back for a ttl. (A release sent after this check
        // runs after the restore on this connection, and deletes it.)
        const lost = restores.get(n)?.filter(({ token }) => !this.releasedTokens.has(token));
        // Nothing to put back: the node is asked nothing (an empty reply would count as its
        // answer, and a frozen master's would end its silence, see QuorumSilence).
        if (lost === undefined || lost.length === 0) return undefined;
        return Promise.all(
          lost.map(async ({ lockKey, token, ttl, fencingToken }) => {
            await node.restore(lockKey, token, ttl);
            // The node lost the counter too: raise it to the holder's token (or, for a holder
            // without one, the highest counter the nodes kept), so that a later majority through
            // this node cannot hand out a lower one.
            const floor = fencingToken ?? floors.get(lockKey) ?? 0;
            if (floor > 0) await node.fenceFloor(`${lockKey}${LOCK_KEY_SUFFIXES.fence}`, floor);
          }),
        );
      });
    }
    return outcomes;
  }

  /**
   * A renewal refused (no majority can still be this holder's) has just pushed the lease on the
   * masters that renewed it, and a refused lock sends no release (on one Redis it means someone
   * else's key): its copies are given back, owner-checked, so that they do not keep those
   * masters out of the quorum for a ttl (with an even number of masters, out of reach of
   * everyone). To every master but those that said the lock is not there or not this holder's
   * (or that `refusedForGood`): one that did not answer in time may have renewed it all the same
   * (its give-back runs after the renewal on that connection). Owed at shutdown where that fails,
   * and to a silent master, which gets it once it answers again: as `owed` says, not to one silent
   * since before the lock's acquisition began, which no attempt of it reached.
   */
  private giveBackRefused(requests: RenewalRequest[], codes: (RenewalCode[] | undefined)[], outcomes: RenewalOutcome[], refusedForGood?: (node: number) => boolean): void {
    for (let i = 0; i < requests.length; i++) {
      if (outcomes[i] !== false && !(outcomes[i] instanceof RenewalRefusal)) continue;
      const { lockKey, token } = requests[i]!;
      this.released(token);
      codes.forEach((node, n) => {
        const code = node?.[i];
        // A master whose key holds data of another type (a hash) holds nothing of this lock's.
        if (code === GONE || code === NOT_OURS || code instanceof RenewalRefusal || refusedForGood?.(n) === true) return;
        // A silent master is sent nothing (see QuorumSilence): owed, sent once it answers again,
        // unless no attempt of the lock reached it (silent throughout, see `owed`).
        const silent = this.silence.refusal(n);
        if (silent !== undefined) this.owed(n, lockKey, token, silent);
        else this.silence.track(n, this.nodes[n]!.quorumRelease(lockKey, token)).catch((error: unknown) => this.owed(n, lockKey, token, error));
      });
    }
  }

  /**
   * For each lock restored for a holder without a fencing token (`fencing: false`): the highest
   * fencing counter of the nodes that answer, which a restored node's counter is raised to.
   */
  private async unfencedFloors(ttl: number, restores: RenewalRequest[][]): Promise<Map<string, number>> {
    const floors = new Map<string, number>();
    const locks = [...new Set(restores.flat().flatMap((request) => (request.fencingToken === undefined ? [request.lockKey] : [])))];
    if (locks.length === 0) return floors;
    const answers = await this.ask(ttl, (node) => Promise.all(locks.map((lock) => node.ownerAndCounter(lock))));
    locks.forEach((lock, i) => {
      let highest = 0;
      for (const answer of answers) if (answer.ok) highest = Math.max(highest, answer.value[i]?.fencingToken ?? 0);
      floors.set(lock, highest);
    });
    return floors;
  }

  /**
   * An acquisition sent again as EVAL after NOSCRIPT (a master that lost its scripts: a restart)
   * runs after what was sent behind its first attempt on that connection: a release, say, which
   * found nothing to delete there, and the SET would then stay for the whole ttl. So once such a
   * grant lands, it is given back here if this token's release (or leave) was sent already;
   * otherwise the lock is its caller's, and the release to come deletes it. (Asking the other
   * masters whether the token holds the lock there does not tell: on fresh masters their own
   * resent acquisitions may not have run yet.) Nothing of this runs on the path of a master that
   * has its scripts.
   */
  private giveBackIfReleased(node: LockScripts, lock: string, token: string, reply: Promise<AcquireReply>): void {
    // Its round has this command out still: the token is acquiring until the reply has settled.
    const acquiring = this.acquiring.get(token);
    reply
      .then((answer) => {
        if (answer.acquired && (acquiring?.released === true || this.releasedTokens.has(token))) return node.quorumRelease(lock, token);
      })
      .catch(() => undefined);
  }

  /**
   * Tokens whose release (or leave) was sent and that have not attempted again since, as far as
   * anything may still ask: a renewal's restore (see `settle`), a missed release sent once its
   * master answers again (see `answersAgain`), a grant resent after NOSCRIPT that lands later
   * (see `giveBackIfReleased`; while its round has a command out, `acquiring` tells). A holder's
   * release is its token's last act: it is kept here only when one of them may ask, which a
   * healthy round leaves to none. (Kept for every release, 10,000 of them cost a pair about 2 us
   * of Node CPU on Node 20, mostly the garbage collector's, for tokens nothing asked about.) A
   * give-back's token may attempt again, so whether it came last changes: it is always kept.
   * Bounded: the newest `MAX_RELEASED_TOKENS` at least, twice as many at most (an older one's
   * grant then keeps its copy for its ttl).
   */
  private readonly releasedTokens = new RecentSet<string>(MAX_RELEASED_TOKENS);
  /**
   * By token: its acquisition rounds with a command still out on some master (the last one's
   * reply mostly comes after the caller has the lock and released it), and whether its release
   * was sent since its last attempt began. Gone when they have all settled: young garbage.
   */
  private readonly acquiring = new Map<string, { rounds: number; released: boolean }>();
  /** Renewal rounds in flight, whose restores ask whether a lock was released meanwhile. */
  private renewing = 0;

  /** `last`: a holder's release, after which its token never attempts again. */
  private released(token: string, last = false): void {
    const acquiring = this.acquiring.get(token);
    if (acquiring !== undefined) acquiring.released = true;
    if (!last || this.renewing > 0) this.releasedTokens.add(token);
  }

  /**
   * Resets of every node's connection (see `LockStore.connectionResets`): a release a node's client
   * sent again after a reset is refused there by its own first run, which must not read as a loss.
   */
  connectionResets(): number {
    let resets = 0;
    for (const node of this.nodes) resets += node.connectionResets();
    return resets;
  }

  release(keys: ScriptKeys, token: string, _waiterLease?: number): Promise<ReleaseReply> {
    return this.releaseRound(keys.lock, token, false);
  }

  /** `release`; `whole`: sent as EVAL (a give-back whose token attempts again, see `giveBack`). */
  private releaseRound(lock: string, token: string, whole: boolean): Promise<ReleaseReply> {
    // A majority that released decides: the other nodes' DEL still runs, nobody waits for it.
    this.released(token, !whole);
    // A release a master missed is sent again once it answers, if its token's release came last.
    const missed = (index: number, error?: unknown) => {
      if (!whole) this.releasedTokens.add(token);
      if (error === undefined) this.missed(index, lock, token);
      else this.owed(index, lock, token, error);
    };
    // The nodes the round did not wait for, by index, owed until they answer. A straggler's
    // answer may be handled before the continuation below records it (replies settled in one
    // turn): `true` then says it answered, and it is not recorded.
    const unanswered: (MissedRelease | true | undefined)[] = [];
    const forgetOwed = (index: number): void => {
      const owed = unanswered[index];
      if (owed === undefined) unanswered[index] = true;
      else if (owed !== true) this.unanswered.delete(owed);
      // A round that timed out counted it as missed: it answered since (a late failure owes it again).
      this.missedReleases.delete(index, lock, token);
    };
    return this.askWithin(
      RELEASE_ROUND_MS,
      (node) => node.quorumRelease(lock, token, whole),
      releasedHere,
      (index) => {
        // Failed after the round: owed as a missed release, once.
        forgetOwed(index);
        missed(index);
      },
      forgetOwed,
    ).then((answers) => {
      let released = 0;
      let refused = 0;
      for (let index = 0; index < answers.length; index++) {
        const answer = answers[index];
        if (answer === undefined) {
          // Not waited for (a majority released first): should the node not answer before
          // shutdown (frozen, and NOSCRIPT once it resumes, to a client closed meanwhile), shutdown
          // sends it again. One that answered already (late failures are owed as missed) is not.
          if (unanswered[index] === true) continue;
          const owed = { index, lock, token };
          unanswered[index] = owed;
          this.unanswered.add(owed);
        } else if (!answer.ok) {
          // Timed out, unless it answered (or failed, owed then) in the turn the round ended.
          if (unanswered[index] !== true) missed(index, answer.error);
        } else if (answer.value.released) released++;
        else refused++;
      }
      if (released >= this.majority) return { released: true };
      // Not this owner's on so many nodes that no majority can have held it for this owner.
      if (refused > this.nodes.length - this.majority) return { released: false };
      // Neither: the release is unconfirmed (its lease ends on its own where it is left), or
      // refused for good by a majority, said so (the engine gives up sending it again).
      const then = '; its lease ends on its own on the masters that refused it';
      throw this.refusedForGood(answers, 'release', then) ?? this.foreignData(answers, lock, 'release', then) ?? this.noQuorum('release', released, answers);
    });
  }

  /**
   * Releases some nodes did not confirm (their connection failed, or they did not answer in
   * time), by node: a majority's release frees the lock, but such a node keeps its copy for the
   * ttl. `app.close()` sends them again (see `owedAtShutdown`), owner-checked. Bounded by
   * `MAX_MISSED` by master: older ones are dropped (their leases end on their own).
   */
  private readonly missedReleases = new MissedReleases(MAX_MISSED);
  /** Releases of rounds that ended on a released majority, to the nodes that have not answered yet (bounded as `missedReleases`). */
  private readonly unanswered = new RecentSet<MissedRelease>(MAX_MISSED);

  /**
   * A release (or leave) master `index` did not confirm, owed to it: unless it was skipped as
   * silent and has been sent nothing since the acquisition began, so that no attempt reached it.
   * (Under load, a silence owes thousands of releases otherwise, and the bound would drop the
   * few that matter: acquisitions from before it.) Nor when that master refused it for good
   * (NOPERM, EVALSHA renamed: see `lastingRefusal`): sent again, once it answers again or at
   * `app.close()`, it would only be refused alike, as on one Redis, where such a release is given
   * up; its copy there ends with its lease. (A client its owner closed is such a refusal from the
   * shutdown on, as for a majority's in `refusedForGood`: nothing opens it again then. Before, the
   * owner may open it again, ioredis' connect(), as on one Redis: it stays owed.)
   */
  private owed(index: number, lock: string, token: string, error: unknown): void {
    if (this.lasting({ ok: false, error }, index, this.shutting) !== undefined) return;
    if (error instanceof SilentMaster) {
      const since = tokenSince(token);
      if (since !== undefined && this.silence.skippedThroughout(index, since)) return;
    }
    this.missed(index, lock, token);
  }

  private missed(index: number, lock: string, token: string): void {
    // A round that ends after app.close() took the list (past shutdownTimeout): nobody would send
    // it but `answersAgain`, on clients handed in that the application keeps open.
    if (this.closed) return;
    this.missedReleases.add(index, lock, token);
  }

  /**
   * Shutdown: the releases nodes missed or have not answered, sent again (an owner-checked DEL:
   * harmless where it is gone), and the answers of the masters that answer waited for. A silent
   * master's are not: frozen, it answers none before `shutdownTimeout`, which would make every
   * close under a minority failure take all of it; what was written to its connection still runs
   * once it resumes. Nor, past that point, those of a master that falls silent while the close
   * waits (frozen just before it: not silent yet when the close began). One turn of the event loop is waited for all the same: a client that writes
   * its commands then (node-redis) has written them before the application closes it.
   */
  owedAtShutdown(): Promise<unknown> {
    const owed = [...this.missedReleases.takeAll(), ...this.unanswered];
    this.unanswered.clear();
    // The raises owed are dropped, not sent: best effort (see the class comment), and a master
    // that answers again after the close must not get them then, on clients handed in that the
    // application keeps open.
    this.closed = true;
    for (const floors of this.owedFloors) floors.clear();
    const silent = this.nodes.map((_, index) => this.silence.refusal(index) !== undefined);
    const answers: Promise<unknown>[] = [];
    const waited = new Set<number>();
    let unanswered = false;
    for (const { index, lock, token } of owed) {
      // A client its owner closed (owed while the application ran, when the owner might have opened
      // it again) would only fail it at once: given up, as `owed` gives up such a release from the
      // shutdown on. Its copy ends with its lease.
      if (this.shutting && clientsClosed([this.nodes[index]!.client])) continue;
      const sent = this.nodes[index]!.quorumRelease(lock, token);
      if (!silent[index]) {
        // Counted, so that the wait below sees whether this master still answers.
        answers.push(this.silence.track(index, sent));
        waited.add(index);
      } else {
        sent.catch(() => undefined);
        unanswered = true;
      }
    }
    if (unanswered) answers.push(new Promise((resolve) => setImmediate(resolve)));
    return this.silence.settledOrSilent([...waited], Promise.allSettled(answers));
  }

  /**
   * Nobody queues in quorum mode, but an acquisition the caller stopped waiting for (its signal,
   * its waitTimeout, a node's slow answer) may still take the lock on some nodes, a majority
   * even: it is given back on every node, owner-checked (the engine calls this at once, behind
   * the attempt on each node's connection, and again once the attempt has settled).
   */
  async leave(keys: ScriptKeys, token: string): Promise<void> {
    this.released(token);
    // A node that answers after the round ran the release: no longer owed (a late failure stays so).
    const answeredLate = (index: number) => this.missedReleases.delete(index, keys.lock, token);
    const answers = await this.askWithin(UNLEASED_ROUND_MS, (node) => node.quorumRelease(keys.lock, token), undefined, undefined, answeredLate);
    let answered = 0;
    answers.forEach((answer, index) => (answer.ok ? answered++ : this.owed(index, keys.lock, token, answer.error)));
    // Not a majority: what the attempt took may hold the lock against everyone, so the engine
    // sends it again, unless a majority refused it for good (it would be refused alike, as the
    // attempt was); a minority that missed it is owed at shutdown, as a release's is.
    if (answered < this.majority) throw this.refusedForGood(answers, 'give back') ?? this.foreignData(answers, keys.lock, 'give back') ?? this.noQuorum('give back', answered, answers);
  }

  /**
   * Held when a majority of the masters hold the key, or when the masters that answered cannot
   * rule that out (those that did not answer would make a majority with those holding it): under
   * a minority failure a held lock is not reported free. Refused for good by a majority (NOPERM,
   * EVALSHA renamed, a client its owner closed), it says what to fix, as on one Redis
   * (`refusedForGood`); so does `inspect`.
   */
  async exists(lockKey: string): Promise<boolean> {
    const answers = await this.ask(Infinity, (node) => node.exists(lockKey));
    const held = answers.filter((answer) => answer.ok && answer.value).length;
    const answered = answers.filter((answer) => answer.ok).length;
    if (answered < this.majority) throw this.refusedForGood(answers, 'check') ?? this.foreignData(answers, lockKey, 'check') ?? this.noQuorum('check', answered, answers, 'answered');
    return held >= this.majority || (held > 0 && held + this.nodes.length - answered >= this.majority);
  }

  /**
   * The majority's view: held by the owner a majority of the masters hold (the lease left is the
   * one a majority of its copies still have: a copy that missed renewals does not shorten it), or, under a minority failure, by the one the masters that answered
   * cannot rule out (the most copies, enough with the silent masters to make a majority); and
   * the fencing token of the holder, or of the latest acquisition (see `tokenOf`).
   */
  async inspect(keys: ScriptKeys): Promise<LockSnapshot> {
    const answers = await this.ask(Infinity, (node) => node.inspect(keys));
    const snapshots = answers.flatMap((answer) => (answer.ok ? [answer.value] : []));
    if (snapshots.length < this.majority) throw this.refusedForGood(answers, 'inspect') ?? this.foreignData(answers, keys.lock, 'inspect') ?? this.noQuorum('inspect', snapshots.length, answers, 'answered');
    const silent = this.nodes.length - snapshots.length;
    const votes = new Map<string, number[]>();
    for (const { owner, pttl } of snapshots) if (owner !== null) votes.set(owner, [...(votes.get(owner) ?? []), pttl]);
    const [owner, pttls] = [...votes].filter(([, ttls]) => ttls.length + silent >= this.majority).sort(([, a], [, b]) => b.length - a.length)[0] ?? [null, []];
    return { owner, pttl: majorityPttl(pttls, this.majority), fencingToken: this.tokenOf(snapshots, owner), waiters: 0 };
  }

  /**
   * The fencing token of the holder `owner` (or of the latest acquisition, with none), from the
   * counters of the masters that answered. A token handed out is held by a majority of the
   * counters, and at most `n - majority` counters are above it (a rival's attempt granted where
   * the holder's grant had not landed starts or raises the counter there; such attempts never
   * reach a majority while the lock is held). Sorted highest first, the `n - majority + 1`-th
   * counter is at most the token, the `majority - silent`-th at least: the same counter when
   * every master answered (n odd). Under a minority failure they may differ: then the holder's
   * own counters in between tell (the lowest: a master whose copy landed after a rival's attempt
   * counted above it), else the upper bound, never below a token handed out. A counter lost in
   * a restart is left out.
   */
  private tokenOf(snapshots: LockSnapshot[], owner: string | null): number | null {
    const counters = snapshots.flatMap((snapshot) => (snapshot.fencingToken === null ? [] : [snapshot.fencingToken])).sort((a, b) => b - a);
    if (counters.length === 0) return null;
    const silent = this.nodes.length - snapshots.length;
    const low = counters[Math.min(this.nodes.length - this.majority, counters.length - 1)]!;
    const high = counters[Math.max(0, Math.min(this.majority - silent, counters.length) - 1)]!;
    if (low === high) return low;
    const holders = snapshots.flatMap(({ owner: of, fencingToken }) => (of === owner && owner !== null && fencingToken !== null && fencingToken >= low && fencingToken <= high ? [fencingToken] : []));
    return holders.length > 0 ? Math.min(...holders) : high;
  }

  /** The masters that stopped answering, asked nothing until they answer again. */
  private readonly silence: QuorumSilence;
  /** By master: the fencing floors a silent master was not raised to, by counter key (bounded as `missedReleases`). */
  private readonly owedFloors: RecentMap<string, number>[];

  /** `owedAtShutdown` ran: no release or fencing raise is owed or sent from then on. */
  private closed = false;

  /** The shutdown began (see `shuttingDown`). */
  private shutting = false;

  /**
   * The shutdown begins: from now on a release or give-back that a majority's clients, closed by
   * their owner, fail is refused for good (see `refusedForGood`), and the engine gives it up and
   * names its lock, as on one Redis, rather than sending it again until `shutdownTimeout`.
   */
  shuttingDown(): void {
    this.shutting = true;
  }

  private owe(index: number, fence: string, floor: number): void {
    if (this.closed) return;
    const floors = this.owedFloors[index]!;
    floors.set(fence, Math.max(floor, floors.get(fence) ?? 0));
  }

  /** One timer for every round in flight (see `QuorumRound`). */
  private readonly sweeper = new DeadlineSweeper();

  /**
   * Asks every node at once; a node gets a tenth of the lease (50 to 500 ms; 200 ms without
   * a lease) to answer before it counts as failed. Its command still runs if it answers later.
   * With `majorityCounts`, the round ends as soon as `enough` answers (a majority, unless told)
   * counted: the others' answers are then `undefined`, and nobody waits for a slow minority.
   * A question that gives `undefined` asks that node nothing: its answer is `ok`, with no value.
   */
  private ask<T>(
    ttl: number,
    question: (node: LockScripts, index: number) => Promise<T> | undefined,
    majorityCounts?: (answer: Answer<T>) => boolean,
    enough = this.majority,
    allSettled?: () => void,
  ): Promise<Answer<T>[]> {
    return this.askWithin(ttl === Infinity ? UNLEASED_ROUND_MS : Math.min(500, Math.max(50, Math.floor(ttl / 10))), question, majorityCounts, undefined, undefined, enough, allSettled);
  }

  /**
   * `ask` with a timeout of its own. A refusal asking again cannot change (NOPERM, EVALSHA renamed,
   * from the shutdown on a client its owner closed: see `owed`) that comes after the round ended is
   * an answer (`answeredLate`), not a failure (`failedLate`): what it refused is not owed, it would
   * be refused alike. So in a round that hears late answers only (a leave's, whose timeout owed
   * what was not answered in time): such a refusal ends what the timeout owed, as `owed` would
   * not have owed it.
   */
  private askWithin<T>(
    timeout: number,
    question: (node: LockScripts, index: number) => Promise<T> | undefined,
    majorityCounts?: (answer: Answer<T>) => boolean,
    failedLate?: (index: number) => void,
    answeredLate?: (index: number) => void,
    enough = this.majority,
    allSettled?: () => void,
  ): Promise<Answer<T>[]> {
    const lateFailure =
      (failedLate ?? answeredLate) && ((index: number, error: unknown) => (this.lasting({ ok: false, error }, index, this.shutting) === undefined ? failedLate?.(index) : answeredLate?.(index)));
    const round = new QuorumRound<T>(this.nodes.length, timeout, this.sweeper, enough, majorityCounts, lateFailure, answeredLate, allSettled);
    const silent = this.silentNodes();
    for (let index = 0; index < this.nodes.length; index++) {
      // Past `owedAtShutdown`: a round that starts now (the give-back of an attempt a frozen
      // master answers after app.close()) sends nothing, on clients handed in that the
      // application keeps open. What that attempt took ends with its lease.
      if (this.closed) {
        round.answer(index, { ok: false, error: CLOSED });
        continue;
      }
      // From the shutdown on, a client known closed (by its owner, or its reconnect strategy) is
      // sent nothing: it would fail at once, one refused command per lock still held at the close.
      // Refused for good there (see `lasting`): a release is not owed to it, its copy ends with its
      // lease, and a majority's is given up, as when the command was sent and failed.
      if (this.shutting && clientsClosed([this.nodes[index]!.client])) {
        round.answer(index, { ok: false, error: UNSENT_ON_CLOSED });
        continue;
      }
      if (silent?.[index] !== undefined) {
        this.silence.skipped(index);
        round.answer(index, { ok: false, error: silent[index] });
        continue;
      }
      let reply: Promise<T> | undefined;
      try {
        reply = question(this.nodes[index]!, index);
      } catch (error) {
        round.answer(index, { ok: false, error });
        continue;
      }
      // Nothing sent, so nothing to count: a reply made up here would read as the node's answer
      // (QuorumSilence would take a frozen master for one answering again).
      if (reply === undefined) round.answer(index, { ok: true, value: undefined as T });
      else round.add(index, reply, this.silence);
    }
    round.sent();
    return round.done;
  }

  /**
   * The silent masters' refusals by index (see `QuorumSilence`), or `undefined` when every one is
   * asked: all of them too when too few would be left to make a majority, whose round's own
   * time then decides.
   */
  private silentNodes(): (RedisLockError | undefined)[] | undefined {
    let silent: (RedisLockError | undefined)[] | undefined;
    for (let index = 0; index < this.nodes.length; index++) {
      const refusal = this.silence.refusal(index);
      if (refusal !== undefined) (silent ??= [])[index] = refusal;
    }
    if (silent === undefined || this.nodes.length - silent.filter(Boolean).length < this.majority) return undefined;
    return silent;
  }

  /**
   * Master `index` answers again after it left a round unanswered: what it was not sent meanwhile
   * (silent) or did not answer in time is sent now, rather than left to the leases (the copy of a
   * released lock would keep the key from a majority at the next failure) or to `app.close()`:
   * its missed releases, owner-checked, and the fencing floors it was owed.
   */
  private answersAgain(index: number): void {
    // Nothing is owed after app.close() (see `missed`): nothing is sent on the clients then.
    if (this.closed) return;
    const node = this.nodes[index]!;
    for (const owed of this.missedReleases.of(index)) {
      // Only a token whose release (or leave) came last. One trying again, or holding, may have an
      // attempt on its way here, or granted here, which the release would take from under it: it
      // stays owed (its own release ends it, or app.close()). acquire() forgets a token's entries
      // when it tries again, but a give-back nobody waits for records its own when its round
      // ends, up to RELEASE_ROUND_MS later: after the next attempt began.
      if (!this.releasedTokens.has(owed.token)) continue;
      this.missedReleases.delete(index, owed.lock, owed.token);
      // Whole (EVAL): after a restart, EVALSHA's NOSCRIPT retry would run behind what this process
      // sends the master meanwhile, the token's next attempt among it. Failed, it is owed again,
      // unless refused for good (see `owed`): sent again, it would be refused alike.
      this.silence.track(index, node.quorumRelease(owed.lock, owed.token, true)).catch((error: unknown) => this.owed(index, owed.lock, owed.token, error));
    }
    const floors = this.owedFloors[index]!;
    this.owedFloors[index] = new RecentMap(MAX_MISSED);
    for (const [fence, floor] of floors) this.silence.track(index, node.fenceFloor(fence, floor)).catch(() => undefined);
  }

  /** A majority either way decides; otherwise the outcome is unknown. */
  private decide(votes: (RenewalCode | undefined)[]): RenewalOutcome {
    const yes = votes.filter((vote) => vote === RENEWED).length;
    // A master whose key holds data of another type (a hash, its renewal refused alone: see
    // LockScripts.renewElsewhere) holds nothing of the lock's: a no, which names that data when
    // such masters alone make the loss.
    const refusals = votes.filter((vote) => vote instanceof RenewalRefusal);
    const no = votes.filter((vote) => vote === NOT_OURS || vote === GONE).length + refusals.length;
    if (yes >= this.majority) return true;
    if (refusals.length > this.nodes.length - this.majority) return refusals[0];
    if (no > this.nodes.length - this.majority) return false;
    return undefined;
  }

  /**
   * `answers` of a round that ended early hold `undefined` for the nodes not waited for; `how`:
   * what the `count` nodes did (a read needs answers, not agreement).
   */
  private noQuorum(what: string, count: number, answers: (Answer<unknown> | undefined)[], how = 'agreed'): RedisLockError {
    const failed = answers.flatMap((answer) => (answer === undefined || answer.ok ? [] : [answer.error]));
    const failures = answers.flatMap((answer, i) => (answer === undefined || answer.ok ? [] : [`node ${i}: ${shownReply(answer.error)}`]));
    // Every master that failed it failed in a way that passes (down, refused unsent, silent, a
    // failover's READONLY): the quorum is unavailable for now, 503 over HTTP, as one Redis is. Any
    // other failure (a closed client, a script's error) leaves it a plain error, 500 and logged.
    // It names no call: the engine names it (see `storeFailure`), as one Redis' error.
    const NoQuorum = failed.length > 0 && failed.every(passesOnNode) ? QuorumUnavailableError : RedisLockError;
    return new NoQuorum(
      `Quorum not reached to ${what} the lock: ${count} of ${this.nodes.length} Redis nodes ${how}, ${this.majority} needed (${failures.join('; ')}).`,
      failed.length > 0 ? { cause: failed[0] } : undefined,
    );
  }
}

/**
 * A master's failure of a round that passes: one `passes` of a client's errors, a master left
 * unasked while silent (`SilentMaster`), or one that did not answer within the round's time
 * (`QuorumRound`'s "no answer within N ms").
 */
function passesOnNode(error: unknown): boolean {
  return error instanceof SilentMaster || passes(error) || (error instanceof Error && !(error instanceof RedisLockError) && /^no answer within \d+ ms$/.test(error.message));
}

/** The shortest ttl of a batch (a loop: spreading 100,000 arguments into Math.min overflows the stack). */
function shortestTtl(requests: RenewalRequest[]): number {
  let ttl = Infinity;
  for (const request of requests) ttl = Math.min(ttl, request.ttl);
  return ttl;
}

/**
 * For a fenced acquisition's round, ended by the first answer that counts: the grant that brings
 * the grants with one counter to a majority, since that majority holds the token already.
 * Whichever order the answers come in, a node behind the others does not keep the round waiting
 * for the last node.
 */
function oneCounterReaches(majority: number): (answer: Answer<AcquireReply>) => boolean {
  const grants = new Map<number, number>();
  return (answer) => {
    if (!answer.ok || !answer.value.acquired) return false;
    const counter = answer.value.fencingToken;
    const count = (grants.get(counter) ?? 0) + 1;
    grants.set(counter, count);
    return count === majority;
  };
}

/**
 * The highest counter the nodes granted with, if a majority granted with it: that majority
 * holds the token already. A higher one seen on fewer nodes (one that counted attempts the
 * others missed) is written back instead.
 */
function counterOfMajority(answers: (Answer<AcquireReply> | undefined)[], majority: number): number | undefined {
  let highest = 0;
  let agreeing = 0;
  for (const answer of answers) {
    if (answer?.ok !== true || !answer.value.acquired) continue;
    const counter = answer.value.fencingToken;
    if (counter > highest) [highest, agreeing] = [counter, 1];
    else if (counter === highest) agreeing++;
  }
  return agreeing >= majority ? highest : undefined;
}

function grantedHere(answer: Answer<AcquireReply>): boolean {
  return answer.ok && answer.value.acquired;
}

function confirmedHere(answer: Answer<unknown>): boolean {
  return answer.ok;
}

function releasedHere(answer: Answer<ReleaseReply>): boolean {
  return answer.ok && answer.value.released;
}
