import pg from 'pg';
import { afterAll, beforeAll } from 'vitest';
import { startPostgresServer, type PostgresServer } from './postgres-server.js';

/**
 * A PostgreSQL server for the tests of a file, with a pool on it, started before them and
 * stopped after them: read `server` and `pool` from the returned object inside the tests.
 */
export function usePostgresPool(): { readonly server: PostgresServer; readonly pool: pg.Pool } {
  const started = {} as { server: PostgresServer; pool: pg.Pool };
  beforeAll(async () => {
    started.server = await startPostgresServer();
    started.pool = new pg.Pool({ connectionString: started.server.url });
    // A client still closing when the server stops at teardown gets 57P01 (terminating
    // connection); the pool re-emits it, and with no listener it would be an uncaught error.
    started.pool.on('error', () => undefined);
  }, 60_000);
  afterAll(async () => {
    await started.pool?.end();
    await started.server?.stop();
  });
  return started;
}
