import pg from 'pg';

/**
 * Resolves once a statement on the server at `url` waits for a lock that another transaction
 * holds: the moment a test can commit that transaction knowing the statement saw it uncommitted.
 */
export async function waitForLockWait(url: string): Promise<void> {
  const probe = new pg.Client({ connectionString: url });
  await probe.connect();
  try {
    for (let tries = 0; ; tries++) {
      const { rows } = await probe.query<{ waiting: number }>("SELECT count(*)::int AS waiting FROM pg_stat_activity WHERE wait_event_type = 'Lock'");
      if (rows[0]!.waiting > 0) return;
      if (tries > 1_000) throw new Error('no statement waited for a lock');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  } finally {
    await probe.end();
  }
}
