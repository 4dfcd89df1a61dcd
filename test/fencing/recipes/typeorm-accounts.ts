// The recipe of docs/fencing.md for fenced writes with TypeORM through @nestjs/typeorm (its
// regions are that guide's text, checked by test/fencing-sql.spec.ts, which runs them on a real PostgreSQL).

// #region typeorm-entity
import { Column, Entity, PrimaryColumn } from 'typeorm';

@Entity('accounts')
export class Account {
  @PrimaryColumn('text') id!: string;
  @Column('bigint') balance!: string; // pg returns bigint as a string
  @Column('bigint', { default: 0 }) fence!: string; // the highest fencing token that wrote the row
}
// #endregion

// #region typeorm-migration
import type { MigrationInterface, QueryRunner } from 'typeorm';

export class AddAccountFence1764547200000 implements MigrationInterface {
  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE accounts ADD COLUMN fence bigint NOT NULL DEFAULT 0');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE accounts DROP COLUMN fence');
  }
}
// #endregion

// #region typeorm-service
import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { FencedWriteRefusedError, LockService } from 'nestjs-redis-lock';
import { LessThanOrEqual, Repository } from 'typeorm';

@Injectable()
export class AccountsService {
  constructor(
    @InjectRepository(Account) private readonly accounts: Repository<Account>,
    private readonly locks: LockService,
  ) {}

  deposit(id: string, amount: number): Promise<void> {
    return this.locks.using(`account:${id}`, async (lock) => {
      const balance = await this.loadBalance(id, lock.fencingToken); // not a plain find: the read claims the row
      await this.saveBalance(id, balance + BigInt(amount), lock.fencingToken);
    });
  }

  /**
   * UPDATE accounts SET fence = token WHERE id = ... AND fence <= token, then the read: once the
   * claim is in, no older holder's write lands, so the balance read is the one this holder replaces.
   */
  async loadBalance(id: string, fencingToken: number): Promise<bigint> {
    const token = String(fencingToken);
    const { affected } = await this.accounts.update({ id, fence: LessThanOrEqual(token) }, { fence: token });
    const { balance, fence } = await this.accounts.findOneByOrFail({ id });
    if (affected === 1) return BigInt(balance);
    throw new FencedWriteRefusedError(`accounts/${id}`, fencingToken, Number(fence), 'read');
  }

  /** UPDATE accounts SET balance = ..., fence = token WHERE id = ... AND fence <= token */
  async saveBalance(id: string, balance: bigint, fencingToken: number): Promise<void> {
    const token = String(fencingToken);
    const { affected } = await this.accounts.update({ id, fence: LessThanOrEqual(token) }, { balance: String(balance), fence: token });
    if (affected === 1) return;
    const { fence } = await this.accounts.findOneByOrFail({ id });
    throw new FencedWriteRefusedError(`accounts/${id}`, fencingToken, Number(fence));
  }
}
// #endregion
