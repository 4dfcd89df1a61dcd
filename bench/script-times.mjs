// What each Redis call of an uncontended acquire + release costs the server where it runs: one
// caller in a loop, as the 1-worker row of `npm run bench` runs it, every call timed by SLOWLOG
// (threshold 0) on a server of its own, pinned to core 0 and the caller to core 1 where the
// machine has two. A call's time there is what it adds to the pair's round trips with one
// worker; compare `bench/lua-call-costs.mjs`, which times scripts back to back (warm), and see
// bench/NOTES.md, "The forty-fourth session".
//   npm run build && node bench/script-times.mjs [pairs, default 5000] [contender...]
// Each contender runs in a process of its own (a child of this one), one after the other.
import { spawnSync } from 'node:child_process';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { startRedisServer } from '../scripts/redis-server.mjs';
import { createContender } from './contenders.mjs';

const SELF = fileURLToPath(import.meta.url);
const PINNED = spawnSync('taskset', ['-V']).status === 0 && os.cpus().length >= 2;

if (process.argv[2] === '--child') {
  const [, , , name, url, pairs] = process.argv;
  const contender = await createContender(name, url);
  const admin = new Redis(url);
  for (let i = 0; i < 3_000; i++) await contender.lockCycle(`warm:${i}`);
  await admin.config('SET', 'slowlog-max-len', String(Number(pairs) * 12));
  await admin.config('SET', 'slowlog-log-slower-than', '0');
  await admin.slowlog('RESET');
  for (let i = 0; i < Number(pairs); i++) await contender.lockCycle(`timed:${i}`);
  await admin.config('SET', 'slowlog-log-slower-than', '-1');
  const log = await admin.slowlog('GET', Number(pairs) * 12);
  await contender.close();
  admin.disconnect();
  // A script's own entry is its EVALSHA (the first argument its SHA); the commands it runs are
  // logged too, in capitals, and their time is part of the script's.
  const byCall = new Map();
  for (const [, , usec, args] of log) {
    const [command, sha] = args.map(String);
    if (command === 'slowlog' || command === 'config') continue;
    const call = command === 'evalsha' || command === 'EVALSHA' ? `evalsha ${sha.slice(0, 8)}` : command;
    const entry = byCall.get(call) ?? { calls: 0, usec: 0 };
    entry.calls++;
    entry.usec += Number(usec);
    byCall.set(call, entry);
  }
  const rows = [...byCall].map(([call, { calls, usec }]) => ({ call, perPair: calls / Number(pairs), usPerCall: usec / calls }));
  process.stdout.write(JSON.stringify(rows.filter((row) => row.perPair >= 0.5)));
  process.exit(0);
}

const [pairs = '5000', ...names] = process.argv.slice(2);
const contenders = names.length > 0 ? names : ['redis-semaphore', 'LockService', 'redis-semaphore Semaphore', 'LockService semaphore'];
for (const name of contenders) {
  const server = await startRedisServer();
  const admin = new Redis(server.url);
  const pid = /process_id:(\d+)/.exec(await admin.info('server'))?.[1];
  if (PINNED && pid) spawnSync('taskset', ['-a', '-p', '-c', '0', pid]);
  const command = PINNED ? 'taskset' : process.execPath;
  const args = [...(PINNED ? ['-c', '1', process.execPath] : []), SELF, '--child', name, server.url, pairs];
  const child = spawnSync(command, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  admin.disconnect();
  await server.stop();
  if (child.status !== 0) throw new Error(`${name}: exited with ${child.status}`);
  const rows = JSON.parse(child.stdout);
  // A script's inner commands are inside its time: the pair's server time is its top-level calls'.
  const top = rows.filter((row) => row.call.startsWith('evalsha') || row.call === row.call.toLowerCase());
  const perPair = top.reduce((sum, row) => sum + row.perPair * row.usPerCall, 0);
  console.log(`${name}: ${perPair.toFixed(1)} us of server time per pair`);
  for (const row of rows) console.log(`  ${row.call.padEnd(18)} ${row.perPair.toFixed(2)} per pair, ${row.usPerCall.toFixed(2)} us each`);
}
