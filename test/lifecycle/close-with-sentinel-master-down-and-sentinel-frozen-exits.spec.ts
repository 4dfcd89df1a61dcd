/**
 * Found by review. Sentinel options (the library's own connections): the master goes down and
 * the sentinel ioredis asks first is frozen (SIGSTOP; a partition is alike), the other two
 * sentinels healthy. Each connection of the library's (its client, its subscriber) reconnects:
 * ioredis' SentinelConnector asks the sentinel for the master on a short-lived client of its own
 * (`connectToSentinel`), sends SENTINEL GET-MASTER-ADDR-BY-NAME and waits for the reply, with no
 * timeout (`sentinelCommandTimeout` is unset), and disconnects that client only once the reply
 * came (`resolve()`'s `finally`). `app.close()` disconnects the connections, which stops neither
 * the question nor its client: the two sockets to the frozen sentinel stay open and keep the
 * process alive for as long as the sentinel is frozen. `promptSentinelClients` readied those
 * clients for a prompt `disconnect()` but nothing called it; `disconnectPromptly` now does, once
 * the connection itself is disconnected. Half a second after the close,
 * nothing but the standard streams may keep the event loop alive (the rule of
 * test/lifecycle/close-with-redis-down-or-frozen-exits.spec.ts, whose fixture this runs).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { Redis } from 'ioredis';
import { expect, it, onTestFinished } from 'vitest';
import { startSentinelDeployment } from '../../scripts/redis-sentinel.mjs';
import { spawnFixture } from '../support/fixture-process.js';

/** The pid of this process' child whose command line (as Redis retitles it: `redis-sentinel 127.0.0.1:port [sentinel]`) passes `test`. */
function childPid(test: (title: string) => boolean): number {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const ppid = Number(readFileSync(`/proc/${entry}/stat`, 'utf8').replace(/^.*\) /s, '').split(' ')[1]);
      const title = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').join(' ');
      if (ppid === process.pid && test(title)) return Number(entry);
    } catch {
      // gone meanwhile
    }
  }
  throw new Error('no such child process');
}

it('app.close() lets the process exit on its own, the Sentinel master down and the first sentinel frozen', { timeout: 60_000 }, async () => {
  const deployment = await startSentinelDeployment();
  const sentinel = deployment.sentinels[0]!;
  const sentinelPid = childPid((title) => title.startsWith('redis-sentinel') && title.includes(`:${sentinel.port} `));
  onTestFinished(async () => {
    process.kill(sentinelPid, 'SIGCONT');
    await deployment.stop();
  });
  const child = spawnFixture(new URL('./fixtures/close-with-redis-down.mjs', import.meta.url), {
    SENTINELS: JSON.stringify(deployment.sentinels),
    NAME: deployment.name,
  });
  // However long its start takes on a loaded machine (the test's timeout bounds it).
  await child.line(/^ready$/);
  // The sentinel the connections asked at startup (the first of the list) is asked first again.
  process.kill(sentinelPid, 'SIGSTOP');
  // Down: SHUTDOWN (not a SIGKILL, whose exit the deployment's stop() would not see).
  const master = new Redis(deployment.masterPort, '127.0.0.1', { retryStrategy: () => null });
  master.on('error', () => undefined);
  await master.call('SHUTDOWN', 'NOSAVE').catch(() => undefined);
  child.endWith('go');
  const [, closed] = await child.line(/^closed (\[.*\])$/);
  const left = JSON.parse(closed!) as string[];
  // Before the fix: [ 'TCPSocketWrap', 'TCPSocketWrap' ], the two questions to the frozen sentinel.
  expect(left.filter((resource) => resource !== 'PipeWrap' && resource !== 'TTYWrap')).toEqual([]);
  await expect.poll(() => child.exit, { timeout: 30_000 }).toEqual({ code: 0 });
});
