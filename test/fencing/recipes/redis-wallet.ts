// The FencedRedis example of docs/fencing.md (the region is that guide's text, checked and run by
// test/fencing-sql.spec.ts).
import { Injectable } from '@nestjs/common';
import { FencedRedis, LockService } from 'nestjs-redis-lock';

// #region redis
@Injectable()
export class WalletService {
  constructor(private readonly locks: LockService, private readonly fenced: FencedRedis) {}

  deposit(id: string, amount: number) {
    return this.locks.using(`wallet:${id}`, async (lock) => {
      const balance = Number((await this.fenced.hget(`wallet:{${id}}`, 'balance', lock.fencingToken)) ?? 0); // claims the wallet
      await this.fenced.hset(`wallet:{${id}}`, { balance: balance + amount, by: 'api-2' }, lock.fencingToken);
    });
  }
}
// #endregion
