// Starts a throwaway PostgreSQL server (Debian's `postgresql` package, or any initdb/postgres)
// on a free loopback port, with its data in a temporary directory: for the tests, as
// redis-server.mjs does for Redis. Plain JavaScript so that scripts can use it without a build.
import { spawn, spawnSync } from 'node:child_process';
import { appendFileSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { once } from 'node:events';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { killOnExit } from './ports.mjs';
import { freePort } from './redis-server.mjs';

/**
 * Where initdb and postgres are: PG_BIN, else the PATH, else the newest of Debian's
 * /usr/lib/postgresql/<major>/bin (which Debian does not put on the PATH).
 */
export function postgresBinDir() {
  if (process.env.PG_BIN) return existsSync(join(process.env.PG_BIN, 'initdb')) ? process.env.PG_BIN : undefined;
  const probe = spawnSync('initdb', ['--version'], { encoding: 'utf8' });
  if (!probe.error && probe.status === 0) return '';
  const debian = '/usr/lib/postgresql';
  if (!existsSync(debian)) return undefined;
  const majors = readdirSync(debian)
    .filter((name) => /^\d+$/.test(name) && existsSync(join(debian, name, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return majors.length === 0 ? undefined : join(debian, majors[0], 'bin');
}

export function postgresInstalled() {
  return postgresBinDir() !== undefined;
}

export function assertPostgresInstalled() {
  if (!postgresInstalled()) {
    throw new Error(
      'PostgreSQL is not installed, and a real server is needed. Install it (Debian/Ubuntu: `apt-get install -y postgresql`, ' +
        'macOS: `brew install postgresql`), or set PG_BIN to the directory of initdb and postgres.',
    );
  }
}

/**
 * PostgreSQL refuses to run as root: as root, the server runs as the `postgres` user that
 * Debian's package creates (or PG_USER), owning its temporary data directory.
 */
function runAs() {
  if (process.getuid?.() !== 0) return {};
  const name = process.env.PG_USER ?? 'postgres';
  const id = spawnSync('id', ['-u', name], { encoding: 'utf8' });
  const gid = spawnSync('id', ['-g', name], { encoding: 'utf8' });
  if (id.status !== 0 || gid.status !== 0) {
    throw new Error(`PostgreSQL does not run as root, and there is no user "${name}" to run it as: create one (useradd ${name}) or set PG_USER.`);
  }
  return { uid: Number(id.stdout.trim()), gid: Number(gid.stdout.trim()) };
}

/** Starts an empty PostgreSQL (user `postgres`, trust authentication, no fsync) on a free port. */
export async function startPostgresServer() {
  assertPostgresInstalled();
  const bin = postgresBinDir();
  const tool = (name) => (bin === '' ? name : join(bin, name));
  const user = runAs();
  const dir = mkdtempSync(join(tmpdir(), 'nestjs-redis-lock-pg-'));
  if (user.uid !== undefined) chownSync(dir, user.uid, user.gid);
  const data = join(dir, 'data');
  const init = spawnSync(tool('initdb'), ['-D', data, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--no-sync', '--no-instructions'], {
    encoding: 'utf8',
    cwd: dir,
    ...user,
  });
  if (init.status !== 0) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`initdb failed (as ${user.uid === undefined ? userInfo().username : `uid ${user.uid}`}): ${init.stderr || init.error}`);
  }
  return runPostgres({ tool, data, dir, user, settings: ['full_page_writes=off', 'synchronous_commit=off'] });
}

/**
 * Starts a streaming replica of `primary` (`pg_basebackup -R`) on a free port, which applies the
 * primary's changes `applyDelayMs` late (`recovery_min_apply_delay`): a replica whose lag a test
 * can count on, as a read replica under load has.
 */
export async function startPostgresReplica(primary, { applyDelayMs = 0 } = {}) {
  const bin = postgresBinDir();
  const tool = (name) => (bin === '' ? name : join(bin, name));
  const user = runAs();
  const dir = mkdtempSync(join(tmpdir(), 'nestjs-redis-lock-pg-replica-'));
  if (user.uid !== undefined) chownSync(dir, user.uid, user.gid);
  const data = join(dir, 'data');
  const backup = spawnSync(tool('pg_basebackup'), ['-h', '127.0.0.1', '-p', String(primary.port), '-U', 'postgres', '-D', data, '-R', '-X', 'stream'], {
    encoding: 'utf8',
    cwd: dir,
    ...user,
  });
  if (backup.status !== 0) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`pg_basebackup failed: ${backup.stderr || backup.error}`);
  }
  appendFileSync(join(data, 'postgresql.auto.conf'), `\nrecovery_min_apply_delay = '${Math.max(0, Math.floor(applyDelayMs))}ms'\n`);
  return runPostgres({ tool, data, dir, user, settings: [] });
}

/**
 * Runs postgres on the data directory `data` (`settings`: `-c` options) on a free port, trying
 * another port when one is taken meanwhile, and resolves once it accepts connections: a server
 * whose `stop()` ends it (fast shutdown) and deletes `dir`.
 */
async function runPostgres({ tool, data, dir, user, settings }) {
  for (let tries = 0; ; tries++) {
    const port = await freePort();
    const args = ['-D', data, '-p', String(port), '-h', '127.0.0.1', '-k', dir, '-F', ...settings.flatMap((setting) => ['-c', setting]), '-c', 'max_connections=200'];
    const child = killOnExit(spawn(tool('postgres'), args, { stdio: ['ignore', 'ignore', 'pipe'], cwd: dir, ...user }));
    let log = '';
    child.stderr.on('data', (chunk) => {
      if (log.length < 10_000) log += chunk;
    });
    try {
      await waitForReady(port, child, () => log);
    } catch (error) {
      child.kill('SIGKILL');
      if (tries < 4) continue;
      rmSync(dir, { recursive: true, force: true });
      throw error;
    }
    return {
      port,
      url: `postgres://postgres@127.0.0.1:${port}/postgres`,
      pid: child.pid,
      async stop() {
        if (child.exitCode === null && child.signalCode === null) {
          const exited = once(child, 'exit');
          child.kill('SIGCONT');
          child.kill('SIGINT'); // fast shutdown: ends sessions, no checkpoint wait for clients
          await exited;
        }
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }
}

async function waitForReady(port, child, log) {
  const { default: pg } = await import('pg');
  let exited = false;
  child.once('exit', () => (exited = true));
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if (exited) throw new Error(`postgres exited while starting on port ${port}: ${log()}`);
    const client = new pg.Client({ host: '127.0.0.1', port, user: 'postgres', database: 'postgres', connectionTimeoutMillis: 1_000 });
    try {
      await client.connect();
      await client.query('SELECT 1');
      await client.end();
      return;
    } catch {
      await client.end().catch(() => undefined);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  throw new Error(`postgres did not accept connections on port ${port} within 30 s: ${log()}`);
}
