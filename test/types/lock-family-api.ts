// Compiled (not run) by `npm run typecheck` against the built package with skipLibCheck off:
// the lock family's overloads and options as an application uses them.
import { Injectable } from '@nestjs/common';
import { LockService, LockUpgradeError, Locked, SemaphoreLimitError, UnsupportedLockKindError, type Lock, type MultiKeyLock } from 'nestjs-redis-lock';

export async function family(locks: LockService): Promise<number> {
  const multi: MultiKeyLock = await locks.acquire(['account:a', 'account:b']);
  const tokens: Readonly<Record<string, number>> = multi.fencingTokens;
  const keys: readonly string[] = multi.keys;
  await multi.release();
  const maybe: MultiKeyLock | null = await locks.tryAcquire(['seat:1', 'seat:2']);
  await maybe?.release();
  const moved: number = await locks.using(['account:a', 'account:b'], (lock) => lock.fencingTokens['account:a'] ?? 0);

  const permit: Lock = await locks.acquire('export', { limit: 3, permits: 2 });
  await permit.release();
  const page: string = await locks.using('doc:1', () => 'page', { mode: 'read' });
  // @ts-expect-error a mode is 'read' or 'write'
  await locks.acquire('doc:1', { mode: 'shared' });
  // @ts-expect-error a single key's lock has no per-key tokens
  void permit.fencingTokens;

  try {
    await locks.acquire('export', { limit: 5 });
  } catch (error) {
    if (error instanceof SemaphoreLimitError) return error.limitInUse;
    if (error instanceof UnsupportedLockKindError || error instanceof LockUpgradeError) return -1;
  }
  return tokens['account:b']! + keys.length + moved + page.length;
}

@Injectable()
export class Ledger {
  constructor(readonly locks: LockService) {}

  @Locked(['account:<0>', 'account:<1>'], { waitTimeout: 1_000 })
  async transfer(_from: string, _to: string, _amount: number): Promise<void> {}

  @Locked('export:<0>', { limit: 3, onBusy: 'skip' })
  async export(_tenant: string): Promise<void> {}

  @Locked('doc:<0>', { mode: 'read' })
  async render(_id: string): Promise<void> {}
}
