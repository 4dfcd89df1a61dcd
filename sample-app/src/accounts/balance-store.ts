import { Injectable } from '@nestjs/common';
import { FencedWriteRefusedError } from 'nestjs-redis-lock';
import { Database } from './database.js';

/**
 * Balances in PostgreSQL, read and written separately on purpose: a read-modify-write spread
 * over two round trips and a pause is exactly what a lock has to protect. A write under a lock
 * carries the lock's fencing token, and the row refuses a token lower than the one that last
 * wrote it, so a holder that lost its lock while its write was on its way cannot overwrite a
 * newer holder's balance.
 */
@Injectable()
export class BalanceStore {
  constructor(private readonly db: Database) {}

  async read(accountId: string): Promise<number> {
    const rows = await this.db.query<{ balance: string | number }>('SELECT balance FROM accounts WHERE id = $1', [accountId]);
    return Number(rows[0]?.balance ?? 0);
  }

  /**
   * Writes `balance`, fenced by `fencingToken` (the `WHERE` of the upsert: the row's fence is
   * not higher), or unfenced without one.
   *
   * @throws FencedWriteRefusedError when a holder with a higher token wrote the row.
   */
  async write(accountId: string, balance: number, fencingToken?: number): Promise<void> {
    if (fencingToken === undefined) {
      await this.db.query('INSERT INTO accounts (id, balance) VALUES ($1, $2) ON CONFLICT (id) DO UPDATE SET balance = EXCLUDED.balance', [accountId, balance]);
      return;
    }
    const written = await this.db.query(
      `INSERT INTO accounts (id, balance, fence) VALUES ($1, $3, $2)
       ON CONFLICT (id) DO UPDATE SET balance = EXCLUDED.balance, fence = EXCLUDED.fence WHERE accounts.fence <= EXCLUDED.fence
       RETURNING fence`,
      [accountId, fencingToken, balance],
    );
    if (written.length === 1) return;
    // Refused. The token that won is read by a statement of its own: the upsert may have waited
    // for a newer holder's commit, which a read in its own statement (its snapshot) would not see.
    const [row] = await this.db.query<{ fence: string | number }>('SELECT fence FROM accounts WHERE id = $1', [accountId]);
    throw new FencedWriteRefusedError(`accounts/${accountId}`, fencingToken, Number(row!.fence));
  }
}
