// The recipe of docs/fencing.md for fenced writes with `pg` (its regions are that guide's text, checked
// by test/fencing-sql.spec.ts, which runs them against a real PostgreSQL).

// #region pg
import type { Pool, PoolClient } from 'pg';
import { FencedWriteRefusedError, type LockService } from 'nestjs-redis-lock';

/**
 * Reads account `id`'s balance for update: claims the row with `fencingToken` as it reads it, so
 * that an older holder's write landing before this holder's own is refused, not overwritten by a
 * balance computed without it. One statement checks, claims and reads.
 */
export async function loadBalance(db: Pool | PoolClient, id: string, fencingToken: number): Promise<bigint> {
  for (let attempt = 1; ; attempt++) {
    const { rows } = await db.query<{ balance: string }>('UPDATE accounts SET fence = $2 WHERE id = $1 AND fence <= $2 RETURNING balance', [id, fencingToken]);
    if (rows.length === 1) return BigInt(rows[0]!.balance); // a bigint column: a number is inexact past 2^53
    await refuse(db, id, fencingToken, 'read', attempt);
  }
}

/**
 * Writes account `id`'s balance, unless a holder with a higher fencing token claimed or wrote the
 * row: one statement checks and writes, so the two cannot be split.
 */
export async function saveBalance(db: Pool | PoolClient, id: string, balance: bigint, fencingToken: number): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    const { rowCount } = await db.query('UPDATE accounts SET balance = $3, fence = $2 WHERE id = $1 AND fence <= $2', [id, fencingToken, String(balance)]);
    if (rowCount === 1) return;
    await refuse(db, id, fencingToken, 'write', attempt);
  }
}

/**
 * Why the UPDATE took no row: a higher token (refused) or no row at all. Returns when it finds
 * neither on a first `attempt`: the row was created after the UPDATE looked, which then runs again
 * (a refusal naming a token not above this one would contradict itself). Found so again, no new row
 * explains it, and another UPDATE would miss it as well, for good.
 */
async function refuse(db: Pool | PoolClient, id: string, fencingToken: number, operation: 'read' | 'write', attempt: number): Promise<void> {
  // The token that won is read by a statement of its own: the UPDATE may have waited for a newer
  // holder's commit, which a read in its own statement (its snapshot) would not see.
  const { rows } = await db.query<{ fence: string | null }>('SELECT fence FROM accounts WHERE id = $1', [id]);
  if (rows.length === 0) throw new Error(`No account ${shown(id)}`);
  const { fence } = rows[0]!;
  // Not `fence > fencingToken`: a token that is no number (a lock's without fencing) never passes.
  if (!(Number(fence) <= fencingToken)) throw new FencedWriteRefusedError(`accounts/${id}`, fencingToken, Number(fence), operation);
  if (attempt > 1) {
    throw new Error(`Account ${shown(id)}: the fenced UPDATE took no row, with fence ${fence ?? 'NULL'} not above token ${fencingToken}: a NULL fence (the column must be NOT NULL DEFAULT 0), or a trigger that skips the UPDATE`);
  }
}

/**
 * An account id as an error message shows it: cut to 100 characters, quoted by JSON.stringify
 * (which escapes newlines and the other C0 controls, and a lone surrogate the cut may leave), and
 * with what JSON leaves raw escaped too, so that an id from a request cannot forge a log line or
 * flood it.
 */
function shown(id: string): string {
  return escaped(JSON.stringify(id.length > 100 ? `${id.slice(0, 100)}...` : id));
}

/**
 * `text` with what JSON.stringify leaves raw but a terminal or log viewer acts on written as
 * `\uXXXX`: DEL and the C1 controls (U+0085 is a newline, U+009B starts an escape sequence),
 * U+2028 and U+2029 (line breaks to many log viewers), and invisible formatting characters
 * (Unicode's Cf: bidi overrides such as U+202E, zero-width characters).
 */
function escaped(text: string): string {
  return text.replace(/[\u007f-\u009f\u2028\u2029\p{Cf}]/gu, (char) => char.split('').map((unit) => `\\u${unit.charCodeAt(0).toString(16).padStart(4, '0')}`).join(''));
}
// #endregion

// #region pg-transfer
/**
 * Moves `amount` from account `from` to account `to` under the multi-key lock of both
 * (`lock.fencingTokens`, by lock key). Each row is claimed and written with its own key's token,
 * in one transaction: a refusal of either row (a newer holder of that key) rolls back both, where
 * two separate fenced writes could leave one applied. Rows are claimed in one order (sorted ids):
 * two transactions claiming them in opposite orders could deadlock.
 */
export async function transfer(pool: Pool, from: string, to: string, amount: number, fencingTokens: Readonly<Record<string, number>>): Promise<void> {
  if (from === to) throw new Error(`A transfer needs two accounts, got ${shown(from)} twice`);
  const token = (id: string) => fencingTokens[`account:${id}`]!;
  const db = await pool.connect();
  try {
    await db.query('BEGIN');
    const balances = new Map<string, bigint>();
    for (const id of [from, to].sort()) balances.set(id, await loadBalance(db, id, token(id)));
    await saveBalance(db, from, balances.get(from)! - BigInt(amount), token(from));
    await saveBalance(db, to, balances.get(to)! + BigInt(amount), token(to));
    await db.query('COMMIT');
  } catch (error) {
    await db.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    db.release();
  }
}
// #endregion

export function deposit(locks: LockService, pool: Pool, id: string, amount: number): Promise<void> {
  // #region pg-usage
  return locks.using(`account:${id}`, async (lock) => {
    const balance = await loadBalance(pool, id, lock.fencingToken); // not a plain SELECT: the read claims the row
    await saveBalance(pool, id, balance + BigInt(amount), lock.fencingToken);
  });
  // #endregion
}
