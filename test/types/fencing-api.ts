// Compiled (not run) by `npm run typecheck` against the built package with skipLibCheck off:
// the fenced-write API as an application uses it.
import { Injectable } from '@nestjs/common';
import { Redis } from 'ioredis';
import { createClient } from 'redis';
import { FencedRedis, FencedWriteRefusedError, LockService, RedisLockError, type FencedValue } from 'nestjs-redis-lock';
import { InMemoryLocks } from 'nestjs-redis-lock/testing';

@Injectable()
export class Wallets {
  constructor(
    private readonly locks: LockService,
    private readonly fenced: FencedRedis,
  ) {}

  deposit(id: string, amount: number): Promise<void> {
    return this.locks.using(`wallet:${id}`, async (lock) => {
      const balance: string | null = await this.fenced.hget(`wallet:{${id}}`, 'balance');
      await this.fenced.hset(`wallet:{${id}}`, 'balance', Number(balance) + amount, lock.fencingToken);
      await this.fenced.hset(`wallet:{${id}}`, { balance: 1, by: 'me' }, lock.fencingToken);
      await this.fenced.set(`last:{${id}}`, String(amount), lock.fencingToken);
      const token: number | null = await this.fenced.fence(`wallet:{${id}}`);
      void token;
    });
  }
}

new FencedRedis(new Redis());
new FencedRedis(createClient());
new FencedRedis(new InMemoryLocks());
const value: FencedValue = 3;
void value;

const refused = new FencedWriteRefusedError('k', 1, 2);
const base: RedisLockError = refused;
const fields: [string, number, number] = [refused.key, refused.fencingToken, refused.highestToken];
void base;
void fields;

declare const fenced: FencedRedis;
// The fields of a hash as an application types them: an interface (a DTO) has no index signature,
// and was refused by a Record<string, FencedValue> parameter, asking for a cast.
interface WalletFields {
  balance: number;
  by: string;
  note?: string;
}
declare const walletFields: WalletFields;
void fenced.hset('k', walletFields, 1);
interface WrongFields {
  balance: number;
  at: Date;
}
declare const wrongFields: WrongFields;
// @ts-expect-error field values are strings or numbers, in an interface too
void fenced.hset('k', wrongFields, 1);
// @ts-expect-error a hash write needs a fencing token
void fenced.hset('k', 'field', 'value');
// @ts-expect-error values are strings or numbers
void fenced.set('k', { a: 1 }, 1);
