import { Injectable } from '@nestjs/common';
import { FencedWriteRefusedError } from 'nestjs-redis-lock';
import { Database } from './database.js';

/**
 * Balances in PostgreSQL, read and written separately on purpose: a read-modify-write spread
 * over two round trips and a pause is exactly what a lock has to protect. A read and a write
 * under a lock carry the lock's fencing token, and the row refuses a token lower than the one
 * that last claimed or wrote it, so a holder that lost its lock while its write was on its way
 * cannot overwrite a newer holder's balance, nor have its own overwritten by a newer holder that
 * read before it landed.
 */
@Injectable()
export class BalanceStore {
  constructor(private readonly db: Database) {}

  /**
   * Reads the balance (0 for an account not written yet); with `fencingToken`, a read for update
   * that claims the row with it (the upsert creates an account not written yet at 0), so that a
   * write with a lower token landing before this holder's own is refused: else this holder would
   * overwrite it with a balance computed without it (a lost update).
   *
   * @throws FencedWriteRefusedError (`operation` `'read'`) when a holder with a higher token
   * claimed or wrote the row; nothing is changed.
   */
  async read(accountId: string, fencingToken?: number): Promise<number> {
    if (fencingToken === undefined) {
      const rows = await this.db.query<{ balance: string | number }>('SELECT balance FROM accounts WHERE id = $1', [accountId]);
      return Number(rows[0]?.balance ?? 0);
    }
    const claimed = await this.db.query<{ balance: string | number }>(
      `INSERT INTO accounts (id, balance, fence) VALUES ($1, 0, $2)
       ON CONFLICT (id) DO UPDATE SET fence = EXCLUDED.fence WHERE accounts.fence <= EXCLUDED.fence
       RETURNING balance`,
      [accountId, fencingToken],
    );
    if (claimed.length === 1) return Number(claimed[0]!.balance);
    throw await this.refusal(accountId, fencingToken, 'read');
  }

  /**
   * Writes `balance`, fenced by `fencingToken` (the `WHERE` of the upsert: the row's fence is
   * not higher), or unfenced without one.
   *
   * @throws FencedWriteRefusedError when a holder with a higher token claimed or wrote the row.
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
    throw await this.refusal(accountId, fencingToken, 'write');
  }

  private async refusal(accountId: string, fencingToken: number, operation: 'read' | 'write'): Promise<FencedWriteRefusedError> {
    // The token that won is read by a statement of its own: the upsert may have waited for a
    // newer holder's commit, which a read in its own statement (its snapshot) would not see.
    const [row] = await this.db.query<{ fence: string | number }>('SELECT fence FROM accounts WHERE id = $1', [accountId]);
    return new FencedWriteRefusedError(`accounts/${accountId}`, fencingToken, Number(row!.fence), operation);
  }
}
