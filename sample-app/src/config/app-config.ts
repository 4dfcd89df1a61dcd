import { Injectable } from '@nestjs/common';

/** Where the app keeps locks: Redis, or (LOCK_STORE=memory) this process's memory. */
export type Store = 'redis' | 'memory';

export function configuredStore(): Store {
  return process.env.LOCK_STORE === 'memory' ? 'memory' : 'redis';
}

/** What the sample app reads from its environment. */
@Injectable()
export class AppConfig {
  readonly store = configuredStore();
  readonly redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  /** The PostgreSQL server of the balances; without one, PGlite in this process. */
  readonly databaseUrl = process.env.DATABASE_URL || undefined;
  /** `lazy`: open the database on the first balance request, not at startup (see Database). */
  readonly openDatabase = process.env.OPEN_DATABASE === 'lazy' ? 'lazy' : 'at-start';
  readonly port = Number(process.env.PORT ?? 3000);
  /** Lease of the report job's lock, short so that the watchdog visibly renews it. */
  readonly reportTtl = Number(process.env.REPORT_TTL ?? 1_000);
  /** This instance's name in the demo's output. */
  readonly instance = process.env.INSTANCE ?? `pid-${process.pid}`;
  /** The token `GET /locks` asks for (`Authorization: Bearer <token>`); unset, `/locks` lets no one in. */
  readonly locksToken = process.env.LOCKS_TOKEN || undefined;
}
