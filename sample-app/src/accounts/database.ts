import { Injectable, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';

/** What the balances need of a database: pg's `Pool` and PGlite both answer it. */
interface Sql {
  query(text: string, params: unknown[]): Promise<{ rows: unknown[] }>;
  close(): Promise<unknown>;
}

/** The accounts table: the fence column keeps the highest fencing token that wrote the row. */
const SCHEMA = 'CREATE TABLE IF NOT EXISTS accounts (id text PRIMARY KEY, balance bigint NOT NULL DEFAULT 0, fence bigint NOT NULL DEFAULT 0)';

/**
 * PostgreSQL: the server DATABASE_URL names (shared by every instance), or else PGlite, Postgres
 * compiled to WebAssembly, in this process's memory (so `npm run demo` needs nothing but Node).
 * Opened at startup, before any lock is taken: starting PGlite keeps the event loop busy for
 * a few seconds, which a lock held meanwhile would not survive. (OPEN_DATABASE=lazy waits for
 * the first balance request: the demo's other instances, which serve none, skip PGlite.)
 */
@Injectable()
export class Database implements OnModuleInit, OnApplicationShutdown {
  private opened?: Promise<Sql>;

  constructor(private readonly config: AppConfig) {}

  async onModuleInit(): Promise<void> {
    if (this.config.openDatabase === 'lazy') return;
    this.opened = open(this.config.databaseUrl);
    await this.opened;
  }

  async query<T>(text: string, params: unknown[]): Promise<T[]> {
    this.opened ??= open(this.config.databaseUrl);
    return (await (await this.opened).query(text, params)).rows as T[];
  }

  async onApplicationShutdown(): Promise<void> {
    await (await this.opened?.catch(() => undefined))?.close();
  }
}

async function open(url: string | undefined): Promise<Sql> {
  if (url) {
    const { default: pg } = await import('pg');
    const pool = new pg.Pool({ connectionString: url, max: 5 });
    pool.on('error', () => undefined); // a dropped idle connection: the next query reconnects
    await pool.query(SCHEMA).catch(async (error: unknown) => {
      // Instances starting together race to create it. The losers fail in ways that depend on
      // the moment they looked (23505 or 42710 on its row type, 42P07 on the table): what
      // matters is that the table is there now.
      const { rows } = await pool.query<{ present: boolean }>("SELECT to_regclass('accounts') IS NOT NULL AS present");
      if (rows[0]?.present !== true) throw error;
    });
    return { query: (text, params) => pool.query(text, params), close: () => pool.end() };
  }
  const { PGlite } = await import('@electric-sql/pglite');
  const db = new PGlite();
  await db.exec(SCHEMA);
  return { query: (text, params) => db.query(text, params), close: () => db.close() };
}
