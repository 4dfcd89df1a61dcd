// The recipe of docs/fencing.md for fenced writes with `pg` (its regions are that guide's text, checked
// by test/fencing-sql.spec.ts, which runs them against a real PostgreSQL).

// #region pg
import type { Pool, PoolClient } from 'pg';
import { FencedWriteRefusedError, type LockService } from 'nestjs-redis-lock';

/**
 * Writes account `id`'s balance, unless a holder with a higher fencing token wrote the row:
 * one statement, so the check and the write cannot be split.
 */
export async function saveBalance(db: Pool | PoolClient, id: string, balance: number, fencingToken: number): Promise<void> {
  const { rows } = await db.query<{ written: string | null; highest: string | null }>(
    `WITH written AS (
       UPDATE accounts SET balance = $3, fence = $2 WHERE id = $1 AND fence <= $2 RETURNING fence
     )
     SELECT (SELECT fence FROM written) AS written, (SELECT fence FROM accounts WHERE id = $1) AS highest`,
    [id, fencingToken, balance],
  );
  const { written, highest } = rows[0]!;
  if (written !== null) return;
  if (highest === null) throw new Error(`No account ${id}`);
  throw new FencedWriteRefusedError(`accounts/${id}`, fencingToken, Number(highest));
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
