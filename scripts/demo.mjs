// npm run demo: starts three instances of the sample app against REDIS_URL (or a throwaway
// redis-server), fires concurrent requests at the locked and unlocked routes of the first, lets
// the three share a cron job and a leader-held feed, stops the instances holding them, prints
// what happened (who ran what), and exits. With no redis-server installed and no REDIS_URL, it
// runs one instance on the in-memory store instead, and says so. Balances are in PostgreSQL:
// DATABASE_URL's server, shared by the instances, or else PGlite inside each instance. A last
// scenario stalls a holder past its lease while its write is on its way, with and without
// fencing. `--json` prints the figures as JSON as well (the tests read them). A REDIS_URL or a
// DATABASE_URL that does not answer stops it at once, with one line saying so.
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { redisServerInstalled, startRedisServer } from './redis-server.mjs';

const CONCURRENT = 20;
const AMOUNT = 10;
const REPORT_MS = 3_500;
const REPORT_TTL = 1_000;
/** How long a stalled deposit sits between its read and its write: three times its 500 ms lease. */
const STALL_MS = 1_500;
const store = process.env.REDIS_URL || redisServerInstalled() ? 'redis' : 'memory';
// Memory is one process's: instances could not share it, so there is one.
const INSTANCES = store === 'redis' ? ['app-1', 'app-2', 'app-3'] : ['app-1'];
const JOBS_MS = 2_000;
/** Long enough for a handover: the leases of the job and the feed are 3 s, retried every 1 s. */
const HANDOVER_MS = 3_500;
/** The line an instance prints as it shuts down: what it ran and led, as `GET /jobs` answers. */
const FINAL_STATE = 'sample-app final state ';
const mainFile = fileURLToPath(new URL('../sample-app/dist/main.js', import.meta.url));
/** What the instances' `GET /locks` asks for (its OperatorGuard): a token of this run's own. */
const LOCKS_TOKEN = randomUUID();
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Why `url` does not answer PING within a few seconds, or undefined when it does. */
async function pingTrouble(url) {
  const client = new Redis(url, { lazyConnect: true, connectTimeout: 5_000, maxRetriesPerRequest: 0, enableOfflineQueue: false, retryStrategy: () => null });
  // The connection's own error (ECONNREFUSED, ENOTFOUND) says more than the "Connection is
  // closed." a call rejects with after it.
  let connectionError;
  client.on('error', (error) => (connectionError ??= error));
  try {
    await client.connect();
    await client.ping();
    return undefined;
  } catch (error) {
    return (connectionError ?? error).message;
  } finally {
    client.disconnect();
  }
}

/** Why PostgreSQL at `url` does not answer a query, or undefined when it does. */
async function connectTrouble(url) {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.query('SELECT 1');
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message || error.code : String(error);
  } finally {
    await client.end().catch(() => {});
  }
}

/** `url` with its password, if any, left out. */
function shownUrl(url) {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return url;
  }
}

if (store === 'memory') {
  console.log(
    '\nNo redis-server on the PATH and no REDIS_URL: running the sample app on the in-memory lock store of\n' +
      'nestjs-redis-lock/testing, as one instance (its locks exclude callers of this one process only).\n' +
      'To run it on Redis, as three instances sharing locks, cron jobs and a leader: install Redis\n' +
      '(Debian/Ubuntu: apt-get install redis-server; macOS: brew install redis) or set REDIS_URL=redis://host:port.',
  );
}
if (process.env.REDIS_URL) {
  // Three instances on a Redis that does not answer would print their stack traces for a minute,
  // then tables of nothing: say so in one line instead.
  const trouble = await pingTrouble(process.env.REDIS_URL);
  if (trouble) {
    console.error(
      `REDIS_URL=${shownUrl(process.env.REDIS_URL)} did not answer PING (${trouble}): start Redis there, or unset REDIS_URL ` +
        'and the demo starts a redis-server of its own (or, with none installed, runs in memory).',
    );
    process.exit(1);
  }
}
if (process.env.DATABASE_URL) {
  // Without it each instance would crash on its pool's unhandled error, none naming DATABASE_URL.
  const trouble = await connectTrouble(process.env.DATABASE_URL);
  if (trouble) {
    console.error(
      `DATABASE_URL=${shownUrl(process.env.DATABASE_URL)} could not be queried (${trouble}): start PostgreSQL there, or unset ` +
        'DATABASE_URL and each instance keeps its balances in PGlite.',
    );
    process.exit(1);
  }
}
const redis = store === 'redis' && !process.env.REDIS_URL ? await startRedisServer() : undefined;
const redisUrl = process.env.REDIS_URL ?? redis?.url;
const apps = INSTANCES.map((instance) =>
  spawn(process.execPath, [mainFile], {
    env: {
      ...process.env,
      REDIS_URL: redisUrl ?? '',
      LOCK_STORE: store,
      PORT: '0',
      REPORT_TTL: String(REPORT_TTL),
      INSTANCE: instance,
      LOCKS_TOKEN,
      // Without DATABASE_URL each instance would have a PGlite of its own; only the first serves balances.
      OPEN_DATABASE: process.env.DATABASE_URL || instance === 'app-1' ? 'at-start' : 'lazy',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  }),
);
// The stalled deposits lose their locks on purpose: their "lock lost" log lines are the
// scenario, reported in the table; anything else an instance logs is passed on.
let stalledLossLines = 0;
for (const app of apps) {
  let pending = '';
  app.stderr.on('data', (chunk) => {
    const lines = (pending + chunk).split('\n');
    pending = lines.pop();
    for (const line of lines) {
      if (line.includes('-stalled-') && line.includes('was lost')) stalledLossLines++;
      else process.stderr.write(line + '\n');
    }
  });
  app.stderr.on('end', () => pending && process.stderr.write(pending));
}

try {
  const bases = await Promise.all(apps.map(appUrl));
  const base = bases[0];
  const run = randomUUID().slice(0, 8);
  const post = (path, body) =>
    fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: body && JSON.stringify(body) });

  const report = post(`/reports/demo-${run}?duration=${REPORT_MS}`);
  const secondReport = (async () => {
    await new Promise((resolve) => setTimeout(resolve, 200));
    return post(`/reports/demo-${run}?duration=100`);
  })();

  const scenarios = [
    { name: 'locked, waits for its turn', route: 'deposit' },
    { name: 'locked, fails fast (409)', route: 'deposit-now' },
    { name: 'no lock', route: 'deposit-unsafe' },
  ];
  const rows = [];
  for (const scenario of scenarios) {
    const account = `${run}-${scenario.route}`;
    const responses = await Promise.all(
      Array.from({ length: CONCURRENT }, () => post(`/accounts/${account}/${scenario.route}`, { amount: AMOUNT })),
    );
    const ok = responses.filter((r) => r.status === 201).length;
    const conflicts = responses.filter((r) => r.status === 409).length;
    const other = responses.length - ok - conflicts;
    const { balance } = await (await fetch(`${base}/accounts/${account}`)).json();
    rows.push({ scenario: scenario.name, requests: CONCURRENT, ok, conflicts, other, expected: ok * AMOUNT, actual: balance, exact: balance === ok * AMOUNT });
  }

  // A holder stalls past its lease between its read and its write (as a paused process does)
  // while another deposit takes the lock and writes: on another instance when the database is
  // shared (DATABASE_URL), else on the first, whose PGlite holds the balances.
  const rival = process.env.DATABASE_URL && bases.length > 1 ? 1 : 0;
  for (const fenced of [true, false]) {
    const account = `${run}-stalled-${fenced ? 'fenced' : 'unfenced'}`;
    const stalled = post(`/accounts/${account}/deposit-stalled?fenced=${fenced}&stallMs=${STALL_MS}`, { amount: AMOUNT });
    await sleep(200);
    const other = fetch(`${bases[rival]}/accounts/${account}/deposit`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ amount: AMOUNT }) });
    const responses = await Promise.all([stalled, other]);
    const ok = responses.filter((r) => r.status === 201).length;
    const conflicts = responses.filter((r) => r.status === 409).length;
    const { balance } = await (await fetch(`${base}/accounts/${account}`)).json();
    rows.push({
      scenario: fenced ? 'paused holder, fenced write' : 'paused holder, unfenced',
      requests: 2,
      ok,
      conflicts,
      other: responses.length - ok - conflicts,
      expected: ok * AMOUNT,
      actual: balance,
      exact: balance === ok * AMOUNT,
      stalledStatus: responses[0].status,
      rivalInstance: INSTANCES[rival],
    });
  }

  const reportRun = await (await report).json();
  const secondStatus = (await secondReport).status;
  const locksAnswer = await fetch(`${base}/locks`, { headers: { authorization: `Bearer ${LOCKS_TOKEN}` } });
  if (!locksAnswer.ok) throw new Error(`GET /locks answered ${locksAnswer.status}: ${await locksAnswer.text()}`);
  const state = await locksAnswer.json();
  // Let the cron job and the feed run for a few more seconds, so that a slow count shows.
  await sleep(JOBS_MS);
  const jobs = store === 'redis' ? await scheduledJobs(bases) : undefined;

  console.log('\nnestjs-redis-lock demo: %d concurrent deposits of %d per scenario\n', CONCURRENT, AMOUNT);
  console.table(
    Object.fromEntries(
      rows.map((row) => [row.scenario, { requests: row.requests, 'ok (201)': row.ok, 'refused (409)': row.conflicts, other: row.other, 'expected balance': row.expected, 'actual balance': row.actual, exact: row.exact ? 'yes' : 'NO' }]),
    ),
  );
  const [fencedRow, unfencedRow] = rows.slice(-2);
  console.log(
    `Paused holder: a deposit took the lock (${STALL_MS / 3} ms lease, not renewed), read the balance and stalled ${STALL_MS} ms before writing, ` +
      `while a deposit on ${fencedRow.rivalInstance} took the lock and wrote. With the fencing token in the row's WHERE, the late write was ` +
      `${fencedRow.stalledStatus === 409 ? 'refused (409)' : `answered ${fencedRow.stalledStatus}`} and the balance is ${fencedRow.exact ? 'exact' : 'WRONG'}; ` +
      `without it, it overwrote the other deposit (balance ${unfencedRow.actual} instead of ${unfencedRow.expected}: ${unfencedRow.exact ? 'no update lost this time' : 'a lost update'}). ` +
      `Balances: ${process.env.DATABASE_URL ? 'PostgreSQL at DATABASE_URL' : 'PGlite (Postgres in WebAssembly) inside the instance'}.`,
  );
  console.log(
    `Report job: ran ${reportRun.ranMs} ms under a ${reportRun.ttl} ms lease; the watchdog renewed it ${reportRun.renewals} times; ` +
      `lock lost: ${reportRun.lockLost ? 'yes' : 'no'}; a second run meanwhile got HTTP ${secondStatus}.`,
  );
  console.log(`Lock events in the app: ${JSON.stringify(state.counts)}\n`);
  if (jobs) printJobs(jobs);
  else console.log('Scheduled jobs and the leader-held feed across instances need Redis: run the demo with Redis to see them hand over.\n');
  if (process.argv.includes('--json')) console.log(JSON.stringify({ store, database: process.env.DATABASE_URL ? 'postgres' : 'pglite', stalledLossLines, rows, report: reportRun, secondReportStatus: secondStatus, counts: state.counts, jobs }));

  const safeExact = rows[0].exact && rows[0].ok === CONCURRENT && rows[1].exact && fencedRow.exact && fencedRow.stalledStatus === 409;
  if (!safeExact || reportRun.lockLost) {
    console.error('The locked routes did not keep the balance exact: something is wrong.');
    process.exitCode = 1;
  }
  if (jobs && (jobs.duplicateTicks.length > 0 || jobs.overlaps > 0 || jobs.feedOverlaps > 0 || !jobs.handover.job.to || !jobs.handover.feed.to)) {
    console.error('A cron tick ran twice, two runs overlapped, two instances led the feed at once, or nobody took over: something is wrong.');
    process.exitCode = 1;
  }
} finally {
  for (const app of apps) if (app.exitCode === null && app.signalCode === null) app.kill('SIGTERM');
  await Promise.all(apps.map((app) => (app.exitCode === null && app.signalCode === null ? once(app, 'exit') : undefined)));
  await redis?.stop();
}

/**
 * The cron job and the feed across the three instances: what each ran and led, then the
 * instances holding them are stopped (SIGTERM, a clean shutdown) and the others take over.
 */
async function scheduledJobs(bases) {
  const state = async (i) => (await fetch(`${bases[i]}/jobs`)).json();
  const before = await Promise.all(bases.map((_, i) => state(i)));
  const latestRun = (s) => s.stockCount.at(-1)?.startedAt ?? 0;
  const jobOwner = before.reduce((best, s, i) => (latestRun(s) > latestRun(before[best]) ? i : best), 0);
  const feedLeader = before.findIndex((s) => s.feed.leading);
  const stopped = [...new Set([jobOwner, feedLeader].filter((i) => i >= 0))];
  const final = [...before];
  for (const i of stopped) {
    apps[i].kill('SIGTERM');
    await once(apps[i], 'exit');
    // What it ran and led up to its exit (its runs ended, its feed term closed by
    // onLeadershipLost): the line it prints as it shuts down.
    if (!apps[i].finalState) throw new Error(`${INSTANCES[i]} exited without printing its final state`);
    final[i] = apps[i].finalState;
  }
  await sleep(HANDOVER_MS);
  for (let i = 0; i < bases.length; i++) if (!stopped.includes(i)) final[i] = await state(i);
  const runs = final.flatMap((s) => s.stockCount.map((run) => ({ ...run, instance: s.instance })));
  const ticks = new Map();
  for (const run of runs) ticks.set(run.tick, (ticks.get(run.tick) ?? 0) + 1);
  const duplicateTicks = [...ticks].filter(([, n]) => n > 1).map(([tick]) => tick);
  const sorted = runs.filter((run) => run.endedAt).sort((a, b) => a.startedAt - b.startedAt);
  let overlaps = 0;
  for (let i = 1; i < sorted.length; i++) if (sorted[i].startedAt < sorted[i - 1].endedAt) overlaps++;
  const terms = final.flatMap((s) => s.feed.terms.map((term) => ({ ...term, instance: s.instance }))).sort((a, b) => a.fencingToken - b.fencingToken);
  let feedOverlaps = 0;
  for (let i = 1; i < terms.length; i++) if (terms[i - 1].to === undefined || terms[i].from < terms[i - 1].to) feedOverlaps++;
  const after = final.filter((_, i) => !stopped.includes(i));
  return {
    instances: final.map((s, i) => ({
      instance: s.instance,
      stopped: stopped.includes(i),
      runs: s.stockCount.length,
      slowRuns: s.stockCount.filter((run) => run.endedAt && run.endedAt - run.startedAt > 1_000).length,
      feedTerms: s.feed.terms.map((term) => term.fencingToken),
      published: s.feed.terms.reduce((sum, term) => sum + term.published, 0),
    })),
    ticks: ticks.size,
    // Ticks with no run anywhere: a slow count was still going, or the job was changing hands.
    skippedTicks: ticks.size === 0 ? 0 : Math.max(...ticks.keys()) - Math.min(...ticks.keys()) + 1 - ticks.size,
    duplicateTicks,
    overlaps,
    feedOverlaps,
    // Every run and term, for a failed check to show what happened.
    runs: runs.map(({ instance, tick, fencingToken, startedAt, endedAt }) => ({ instance, tick, fencingToken, startedAt, endedAt })),
    terms,
    handover: {
      job: { from: before[jobOwner].instance, to: after.find((s) => latestRun(s) > Date.now() - HANDOVER_MS)?.instance ?? null },
      feed: { from: feedLeader >= 0 ? before[feedLeader].instance : null, to: after.find((s) => s.feed.leading)?.instance ?? null },
    },
  };
}

function printJobs(jobs) {
  console.log('Scheduled jobs across %d instances: a cron job every second under @OnOneInstance() + @WithoutOverlapping(), and a @LeaderElection feed\n', INSTANCES.length);
  console.table(
    Object.fromEntries(
      jobs.instances.map((row) => [
        row.instance + (row.stopped ? ' (stopped)' : ''),
        { 'stock counts run': row.runs, 'slow ones': row.slowRuns, 'feed terms (fencing tokens)': row.feedTerms.join(', ') || '-', 'prices published': row.published },
      ]),
    ),
  );
  console.log(
    `${jobs.ticks} cron ticks ran, each on one instance (ran twice: ${jobs.duplicateTicks.length}; overlapping runs: ${jobs.overlaps}); ` +
      `${jobs.skippedTicks} ticks were skipped on every instance (a slow count was still running, or the job was changing hands). Stopping ${jobs.handover.job.from} moved the job to ${jobs.handover.job.to ?? 'nobody yet'}; ` +
      `stopping ${jobs.handover.feed.from} moved the feed to ${jobs.handover.feed.to ?? 'nobody yet'}.\n`,
  );
}

/**
 * Waits for the sample app's "listening on" line. Its stdout stays read afterwards (a stream
 * left unread, or destroyed as leaving a `for await` loop would, makes the app's next log line
 * fail with EPIPE); what it prints later is passed on to the demo's stderr.
 */
function appUrl(child) {
  return new Promise((resolve, reject) => {
    let output = '';
    let listening = false;
    // Generous: PGlite takes a few seconds to start, more on a busy machine.
    const timeout = setTimeout(() => child.kill('SIGKILL'), 120_000);
    let pending = '';
    child.stdout.on('data', (chunk) => {
      if (listening) {
        const lines = (pending + chunk).split('\n');
        pending = lines.pop();
        for (const line of lines) {
          if (line.startsWith(FINAL_STATE)) child.finalState = JSON.parse(line.slice(FINAL_STATE.length));
          else process.stderr.write(line + '\n');
        }
        return;
      }
      output += chunk;
      const match = /listening on (\S+)/.exec(output);
      if (!match) return;
      listening = true;
      pending = output.slice(match.index + match[0].length).replace(/^[^\n]*\n?/, '');
      clearTimeout(timeout);
      resolve(match[1]);
    });
    child.once('exit', () => {
      clearTimeout(timeout);
      if (!listening) reject(new Error(`The sample app exited before listening:\n${output}`));
    });
  });
}
