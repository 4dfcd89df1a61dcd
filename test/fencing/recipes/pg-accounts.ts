// The recipe of docs/fencing.md for fenced writes with `pg` (its regions are that guide's text, checked
// by test/fencing-sql.spec.ts, which runs them against a real PostgreSQL).

// #region pg
import type { Pool, PoolClient } from 'pg';
import { FencedWriteRefusedError, type LockService } from 'nestjs-redis-lock';

/**
 * Writes account `id`'s balance, unless a holder with a higher fencing token wrote the row:
 * one statement checks and writes, so the two cannot be split.
 */
export async function saveBalance(db: Pool | PoolClient, id: string, balance: number, fencingToken: number): Promise<void> {
  const { rowCount } = await db.query('UPDATE accounts SET balance = $3, fence = $2 WHERE id = $1 AND fence <= $2', [id, fencingToken, balance]);
  if (rowCount === 1) return;
  // Refused. The token that won is read by a statement of its own: the UPDATE may have waited
  // for a newer holder's commit, which a read in its own statement (its snapshot) would not see.
  const { rows } = await db.query<{ fence: string }>('SELECT fence FROM accounts WHERE id = $1', [id]);
  if (rows.length === 0) throw new Error(`No account ${id}`);
  throw new FencedWriteRefusedError(`accounts/${id}`, fencingToken, Number(rows[0]!.fence));
}
// #endregion

export function deposit(locks: LockService, pool: Pool, id: string, amount: number): Promise<void> {
  // #region pg-usage
  return locks.using(`account:${id}`, async (lock) => {
    const { rows } = await pool.query<{ balance: string }>('SELECT balance FROM accounts WHERE id = $1', [id]);
    await saveBalance(pool, id, Number(rows[0]!.balance) + amount, lock.fencingToken);
  });
  // #endregion
}
