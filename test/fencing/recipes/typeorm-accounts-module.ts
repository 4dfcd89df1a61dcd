import { Test, type TestingModule } from '@nestjs/testing';
import { getRepositoryToken, TypeOrmModule } from '@nestjs/typeorm';
import { RedisLockModule } from 'nestjs-redis-lock';
import type { Repository } from 'typeorm';
import { afterAll, beforeAll } from 'vitest';
import { redisUrl } from '../../support/redis.js';
import { Account, AccountsService } from './typeorm-accounts.js';

/** The TypeORM recipe's module on the PostgreSQL at `url` and the tests' Redis, initialised; close it in the test. */
export async function typeormAccountsModule(url: string): Promise<TestingModule> {
  const moduleRef = await Test.createTestingModule({
    imports: [
      RedisLockModule.forRoot({ redis: redisUrl(), isGlobal: true }),
      TypeOrmModule.forRoot({ type: 'postgres', url, entities: [Account] }),
      TypeOrmModule.forFeature([Account]),
    ],
    providers: [AccountsService],
  }).compile();
  await moduleRef.init();
  return moduleRef;
}

/**
 * The TypeORM recipe's module for the tests of a describe, on the PostgreSQL `url()` names when
 * they start, closed after them: read `moduleRef` and `repository` inside the tests.
 */
export function useTypeormAccounts(url: () => string): { readonly moduleRef: TestingModule; readonly repository: Repository<Account> } {
  const started = {} as { moduleRef: TestingModule; repository: Repository<Account> };
  beforeAll(async () => {
    started.moduleRef = await typeormAccountsModule(url());
    started.repository = started.moduleRef.get<Repository<Account>>(getRepositoryToken(Account));
  }, 60_000);
  afterAll(async () => {
    await started.moduleRef?.close();
  });
  return started;
}
