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
    const rows = await this.db.query<{ written: string | number | null; highest: string | number | null }>(
      `WITH written AS (
         INSERT INTO accounts (id, balance, fence) VALUES ($1, $3, $2)
         ON CONFLICT (id) DO UPDATE SET balance = EXCLUDED.balance, fence = EXCLUDED.fence WHERE accounts.fence <= EXCLUDED.fence
         RETURNING fence
       )
       SELECT (SELECT fence FROM written) AS written, (SELECT fence FROM accounts WHERE id = $1) AS highest`,
      [accountId, fencingToken, balance],
    );
    if (rows[0]!.written === null) throw new FencedWriteRefusedError(`accounts/${accountId}`, fencingToken, Number(rows[0]!.highest));
  }
}
