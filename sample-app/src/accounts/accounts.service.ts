import { Injectable } from '@nestjs/common';
import { Locked, LockService } from 'nestjs-redis-lock';
import { BalanceStore } from './balance-store.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The time between reading a balance and writing it back: where concurrent updates get lost. */
const THINK_MS = 20;

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

  balance(accountId: string): Promise<number> {
    return this.store.read(accountId);
  }

  private async readModifyWrite(accountId: string, amount: number): Promise<number> {
    const balance = await this.store.read(accountId);
    await sleep(THINK_MS);
    // Under a lock, stop before writing if the lock was lost meanwhile.
    this.locks.current()?.signal.throwIfAborted();
    await this.store.write(accountId, balance + amount);
    return balance + amount;
  }
}
