// npm run demo: starts the sample app against REDIS_URL (or a throwaway redis-server), fires
// concurrent requests at its locked and unlocked routes, prints what happened, and exits.
// `--json` prints the figures as JSON as well (the tests read them).
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { startRedisServer } from './redis-server.mjs';

const CONCURRENT = 20;
const AMOUNT = 10;
const REPORT_MS = 3_500;
const REPORT_TTL = 1_000;
const mainFile = fileURLToPath(new URL('../sample-app/dist/main.js', import.meta.url));

const redis = process.env.REDIS_URL ? undefined : await startRedisServer();
const redisUrl = process.env.REDIS_URL ?? redis.url;
const app = spawn(process.execPath, [mainFile], {
  env: { ...process.env, REDIS_URL: redisUrl, PORT: '0', REPORT_TTL: String(REPORT_TTL) },
  stdio: ['ignore', 'pipe', 'inherit'],
});

try {
  const base = await appUrl(app);
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

  const reportRun = await (await report).json();
  const secondStatus = (await secondReport).status;
  const state = await (await fetch(`${base}/locks`)).json();

  console.log('\nnestjs-redis-lock demo: %d concurrent deposits of %d per scenario\n', CONCURRENT, AMOUNT);
  console.table(
    Object.fromEntries(
      rows.map((row) => [row.scenario, { requests: row.requests, 'ok (201)': row.ok, 'busy (409)': row.conflicts, other: row.other, 'expected balance': row.expected, 'actual balance': row.actual, exact: row.exact ? 'yes' : 'NO' }]),
    ),
  );
  console.log(
    `Report job: ran ${reportRun.ranMs} ms under a ${reportRun.ttl} ms lease; the watchdog renewed it ${reportRun.renewals} times; ` +
      `lock lost: ${reportRun.lockLost ? 'yes' : 'no'}; a second run meanwhile got HTTP ${secondStatus}.`,
  );
  console.log(`Lock events in the app: ${JSON.stringify(state.counts)}\n`);
  if (process.argv.includes('--json')) console.log(JSON.stringify({ rows, report: reportRun, secondReportStatus: secondStatus, counts: state.counts }));

  const safeExact = rows[0].exact && rows[0].ok === CONCURRENT && rows[1].exact;
  if (!safeExact || reportRun.lockLost) {
    console.error('The locked routes did not keep the balance exact: something is wrong.');
    process.exitCode = 1;
  }
} finally {
  app.kill('SIGTERM');
  await once(app, 'exit');
  await redis?.stop();
}

/** Waits for the sample app's "listening on" line. */
async function appUrl(child) {
  let output = '';
  const timeout = setTimeout(() => child.kill('SIGKILL'), 30_000);
  try {
    for await (const chunk of child.stdout) {
      output += chunk;
      const match = /listening on (\S+)/.exec(output);
      if (match) {
        child.stdout.resume();
        return match[1];
      }
    }
  } finally {
    clearTimeout(timeout);
  }
  throw new Error(`The sample app exited before listening:\n${output}`);
}
