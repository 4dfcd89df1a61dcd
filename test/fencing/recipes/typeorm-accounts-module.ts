import { Test, type TestingModule } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import { RedisLockModule } from 'nestjs-redis-lock';
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
