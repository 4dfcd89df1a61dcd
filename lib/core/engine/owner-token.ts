import { randomFillSync } from 'node:crypto';

const TOKEN_BYTES = 16;
const POOL_TOKENS = 256;
const pool = Buffer.allocUnsafe(TOKEN_BYTES * POOL_TOKENS);
let next = POOL_TOKENS;

/**
 * A new owner token: 128 bits from the system's CSPRNG, as 32 hex characters. Random bytes are
 * drawn 4 KiB at a time (as `crypto.randomUUID()` does), since one system call per lock is a
 * measurable share of a lock's cost.
 */
export function ownerToken(): string {
  if (next === POOL_TOKENS) {
    randomFillSync(pool);
    next = 0;
  }
  const start = next++ * TOKEN_BYTES;
  return pool.toString('hex', start, start + TOKEN_BYTES);
}
