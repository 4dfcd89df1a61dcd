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
import { EntityNotFoundError, Repository } from 'typeorm';

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
   * UPDATE accounts SET fence = token WHERE id = ... AND fence <= token RETURNING balance: the claim
   * and the read are one statement, so they run on the primary (a find would go to a read
   * replica under TypeORM's `replication`, and could read a balance older than the last write).
   */
  async loadBalance(id: string, fencingToken: number): Promise<bigint> {
    const token = String(fencingToken);
    for (let attempt = 1; ; attempt++) {
      const { raw } = await this.accounts
        .createQueryBuilder()
        .update()
        .set({ fence: token })
        .where('id = :id AND fence <= :token', { id, token })
        .returning(['balance'])
        .execute();
      const [row] = raw as { balance: string }[];
      if (row !== undefined) return BigInt(row.balance);
      await this.refuse(id, fencingToken, 'read', attempt);
    }
  }

  /** UPDATE accounts SET balance = ..., fence = token WHERE id = ... AND fence <= token */
  async saveBalance(id: string, balance: bigint, fencingToken: number): Promise<void> {
    const token = String(fencingToken);
    for (let attempt = 1; ; attempt++) {
      const { raw } = await this.accounts
        .createQueryBuilder()
        .update()
        .set({ balance: String(balance), fence: token })
        .where('id = :id AND fence <= :token', { id, token })
        .returning(['fence'])
        .execute();
      if ((raw as unknown[]).length === 1) return;
      await this.refuse(id, fencingToken, 'write', attempt);
    }
  }

  /**
   * Why the UPDATE took no row, read on the primary (`query()`), not a lagging replica: the fence
   * that refused the token, or no such account (no newer holder owns one). Returns when it finds
   * neither on a first `attempt`: the row was created after the UPDATE looked, which then runs
   * again. Found so again, no new row explains it, and another UPDATE would miss it as well.
   */
  private async refuse(id: string, fencingToken: number, operation: 'read' | 'write', attempt: number): Promise<void> {
    const [row] = (await this.accounts.query('SELECT fence FROM accounts WHERE id = $1', [id])) as { fence: string | null }[];
    // TypeORM quotes the criteria with JSON.stringify, but whole and with U+2028 and the like raw:
    // cut and escaped, as `shown` does.
    if (row === undefined) throw new EntityNotFoundError(Account, { id: escaped(cut(id)) });
    // Not `fence > fencingToken`: a token that is no number (a lock's without fencing) never passes.
    if (!(Number(row.fence) <= fencingToken)) throw new FencedWriteRefusedError(`accounts/${id}`, fencingToken, Number(row.fence), operation);
    if (attempt > 1) {
      throw new Error(`Account ${shown(id)}: the fenced UPDATE took no row, with fence ${row.fence ?? 'NULL'} not above token ${fencingToken}: a NULL fence (the column must be NOT NULL DEFAULT 0), or a trigger that skips the UPDATE`);
    }
  }
}

/**
 * An account id as an error message shows it: cut to 100 characters, quoted by JSON.stringify
 * (which escapes newlines and the other C0 controls, and a lone surrogate the cut may leave), and
 * with what JSON leaves raw escaped too, so that an id from a request cannot forge a log line or
 * flood it.
 */
function shown(id: string): string {
  return escaped(JSON.stringify(cut(id)));
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

/** An account id cut to 100 characters, for an error that quotes it itself. */
function cut(id: string): string {
  return id.length > 100 ? `${id.slice(0, 100)}...` : id;
}
// #endregion
