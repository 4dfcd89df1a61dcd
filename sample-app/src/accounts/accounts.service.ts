import { ConflictException, Injectable } from '@nestjs/common';
import { Locked, LockService } from 'nestjs-redis-lock';
import { BalanceStore } from './balance-store.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The time between reading a balance and writing it back: where concurrent updates get lost. */
const THINK_MS = 20;
/** The lease of a stalled deposit: shorter than its stall, which it does not renew. */
export const STALLED_TTL_MS = 500;

@Injectable()
export class AccountsService {
  constructor(
    private readonly store: BalanceStore,
    private readonly locks: LockService,
  ) {}

  /** Deposits under the account's lock, waiting up to 5 s for it. */
  @Locked('account:<0>', { waitTimeout: 5_000 })
  deposit(accountId: string, amount: number): Promise<number> {
    return this.readModifyWrite(accountId, amount);
  }

  /** Deposits under the account's lock, or fails at once (409 over HTTP) if it is busy. */
  @Locked('account:<0>', { waitTimeout: 0 })
  depositNow(accountId: string, amount: number): Promise<number> {
    return this.readModifyWrite(accountId, amount);
  }

  /** The same deposit without a lock: concurrent calls overwrite each other's updates. */
  depositUnsafe(accountId: string, amount: number): Promise<number> {
    return this.readModifyWrite(accountId, amount);
  }

  /**
   * A deposit whose holder stalls for `stallMs` between its read and its write, longer than its
   * lease and without renewing it: what a process paused by a long GC or SIGSTOP does. Its write
   * is already past any check of `lock.signal` (a paused process checked before it froze), so
   * only the database can refuse it: with `fenced`, its read and its write carry the lock's
   * fencing token, and the write is refused (`FencedWriteRefusedError`) once a newer holder read
   * or wrote; without, it overwrites.
   */
  async depositStalled(accountId: string, amount: number, stallMs: number, fenced: boolean): Promise<number> {
    const lock = await this.locks.acquire(`account:${accountId}`, { ttl: STALLED_TTL_MS, autoRenew: false, waitTimeout: 5_000, label: 'stalled deposit' });
    try {
      const balance = added(await this.store.read(accountId, fenced ? lock.fencingToken : undefined), amount);
      await sleep(stallMs);
      await this.store.write(accountId, balance, fenced ? lock.fencingToken : undefined);
      return balance;
    } finally {
      await lock.release();
    }
  }

  balance(accountId: string): Promise<number> {
    return this.store.read(accountId);
  }

  private async readModifyWrite(accountId: string, amount: number): Promise<number> {
    // Under a lock, read and write with its fencing token, which the row checks: the read claims
    // the row, so that a write that left before a loss is refused there, not lost when the next
    // holder writes what it read; and stop before writing if the lock was lost meanwhile.
    const lock = this.locks.current();
    const balance = added(await this.store.read(accountId, lock?.fencingToken), amount);
    await sleep(THINK_MS);
    lock?.signal.throwIfAborted();
    await this.store.write(accountId, balance, lock?.fencingToken);
    return balance;
  }
}

/**
 * `balance + amount`, unless JavaScript cannot add it exactly: the bigint column holds more than a
 * number adds exactly (2^53 - 1), and a sum past that would be written rounded, money lost.
 */
function added(balance: number, amount: number): number {
  const sum = balance + amount;
  if (Number.isSafeInteger(sum)) return sum;
  throw new ConflictException('The balance would pass 2^53 - 1, the largest this app adds exactly: nothing was deposited.');
}
