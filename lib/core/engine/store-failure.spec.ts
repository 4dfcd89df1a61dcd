import { describe, expect, it } from 'vitest';
import { RedisLockError } from '../../errors/redis-lock.error.js';
import { RedisUnavailableError } from '../../errors/redis-unavailable.error.js';
import { LastingRefusalError, lastingRefusal, storeFailure } from './store-failure.js';

const named = (name: string, message: string, code?: string): Error => Object.assign(new Error(message), { name }, code === undefined ? {} : { code });

const replyError = (message: string): Error => Object.assign(new Error(message), { name: 'ReplyError' });

describe('lastingRefusal', () => {
  it.each([
    ['unknown-command', "ERR unknown command 'evalsha' (the arguments it echoed are left out: they hold a lock's owner token)."],
    ['unknown-command', 'ERR unknown command `evalsha`, with args beginning with: '],
    ['unknown-command', "An error was signalled by the server: - ResponseError: unknown command 'EVAL'"],
    ['unknown-command', 'ERR Error running script (call to f_0123): @user_script:1: @user_script: 1: Unknown Redis command called from script'],
    ['no-permission', "NOPERM this user has no permissions to run the 'evalsha' command"],
    ['no-permission', 'NOPERM this user has no permissions to access one of the keys used as arguments'],
    ['no-permission', "An error was signalled by the server: - PermissionDenied: this user has no permissions to run the 'evalsha' command"],
    ["no-permission", "ERR Error running script (call to f_0123): @user_script:1: @user_script: 1: The user executing the script can't run this command or subcommand"],
  ])('%s: %s', (kind, message) => {
    expect(lastingRefusal(replyError(message), false)).toBe(kind);
  });

  // What passes by, or is cured by waiting, is asked again.
  it.each([
    'read ECONNRESET',
    'Connection is closed.',
    'LOADING Redis is loading the dataset in memory',
    "READONLY You can't write against a read only replica.",
    'MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to no',
    'TRYAGAIN Multiple keys request during rehashing of slot',
    'CLUSTERDOWN The cluster is down',
    'NOSCRIPT No matching script. Please use EVAL.',
    'Reached the max retries per request limit (which is 20). Refer to "maxRetriesPerRequest" option for details.',
    // A password rotated, a Redis restarted with requirepass: a client that reconnects with the
    // password its provider gives it now (node-redis' credentialsProvider, GLIDE's
    // updateConnectionPassword, ioredis' options.password) is answered again.
    'NOAUTH Authentication required.',
    'WRONGPASS invalid username-password pair or user is disabled.',
  ])('asked again: %s', (message) => {
    expect(lastingRefusal(replyError(message), false)).toBeUndefined();
  });

  it('takes any failure of a closed client for one, and of the library’s own only a quorum’s majority refused for good (never a minority)', () => {
    expect(lastingRefusal(new Error('Connection is closed.'), true)).toBe('client-closed');
    expect(lastingRefusal(new LastingRefusalError('Quorum not reached to acquire the lock: 2 of 3 Redis nodes refused it', 'no-permission'), false)).toBe('no-permission');
    expect(lastingRefusal(new RedisLockError('Quorum not reached to acquire the lock: 1 of 3 Redis nodes agreed, 2 needed (node 1: NOPERM this user has no permissions to run the \'evalsha\' command).'), false)).toBeUndefined();
  });

  it('names what to fix, keeping the client’s error as the cause', () => {
    const noperm = replyError("NOPERM this user has no permissions to run the 'evalsha' command");
    const told = storeFailure(noperm, 'isLocked("k")');
    expect(told.message).toMatch(/^isLocked\("k"\): Redis refused it \(NOPERM .*ACL.*Least-privilege Redis user/);
    expect(told.cause).toBe(noperm);
    expect(storeFailure(new Error('Connection is closed.'), 'isLocked("k")', '', true).message).toMatch(/the Redis client was closed .*onApplicationShutdown/);
    expect(storeFailure(new Error('Connection is closed.'), 'isLocked("k")').message).toBe('isLocked("k"): Redis could not be asked (Connection is closed).');
  });
});

describe('storeFailure: what passes is a RedisUnavailableError (503 over HTTP), the rest a plain RedisLockError (500, logged)', () => {
  it.each([
    named('Error', 'connect ECONNREFUSED 127.0.0.1:6379', 'ECONNREFUSED'),
    named('Error', 'read ECONNRESET', 'ECONNRESET'),
    named('Error', "Stream isn't writeable and enableOfflineQueue options is false"),
    named('Error', "Cluster isn't ready and enableOfflineQueue options is false"),
    // An ioredis Cluster's command asked again up to maxRedirections (test/topologies/ioredis-cluster-master-down-too-many-redirections-plain-error.spec.ts).
    named('Error', 'Too many Cluster redirections. Last error: Error: Connection is closed.'),
    // An ioredis or iovalkey Cluster whose slot map no node gave (every master down: test/topologies/ioredis-cluster-all-masters-down-slots-refresh-failed-unavailable.spec.ts).
    named('ClusterAllFailedError', 'Failed to refresh slots cache.'),
    named('Error', 'Command timed out'),
    named('MaxRetriesPerRequestError', 'Reached the max retries per request limit (which is 1). Refer to "maxRetriesPerRequest" option for details.'),
    named('SocketClosedUnexpectedlyError', 'Socket closed unexpectedly'),
    named('ClientOfflineError', 'The client is offline'),
    named('TimeoutError', 'Timeout'),
    named('ConnectionError', 'Connection refused'),
    // Valkey GLIDE's open clientCircuitBreaker (test/api/glide-circuit-breaker-open-plain-redis-lock-error.spec.ts).
    named('CircuitBreakerError', 'Client circuit breaker is open - core unhealthy- CircuitBreakerOpen'),
    replyError('LOADING Redis is loading the dataset in memory'),
    replyError("READONLY You can't write against a read only replica."),
    replyError("ERR Error running script (call to f_0123): @user_script:1: @user_script: 1: -READONLY You can't write against a read only replica."),
    replyError('MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to no'),
    replyError('TRYAGAIN Multiple keys request during rehashing of slot'),
    replyError('CLUSTERDOWN The cluster is down'),
    replyError('BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.'),
    replyError('ERR max number of clients reached'),
    // As Valkey GLIDE words them (test/api/glide-readonly-after-demotion-not-unavailable.spec.ts).
    named('RequestError', "An error was signalled by the server: - ReadOnly: You can't write against a read only replica."),
    named('RequestError', "An error was signalled by the server: - ReadOnly: You can't write against a read only replica. script: 219bb33e7c6773035c720850383aa2ebb63d9904, on @user_script:1."),
    named('RequestError', 'An error was signalled by the server: - BusyLoadingError: Redis is loading the dataset in memory'),
    named('RequestError', 'An error was signalled by the server: - MasterDown: Link with MASTER is down and replica-serve-stale-data is set to no'),
    named('RequestError', 'An error was signalled by the server: - TryAgain: Multiple keys request during rehashing of slot'),
    named('RequestError', 'An error was signalled by the server: - ClusterDown: The cluster is down'),
  ])('unavailable: $message', (error) => {
    const told = storeFailure(error, 'isLocked("k")');
    expect(told).toBeInstanceOf(RedisUnavailableError);
    expect(told.message).toBe(`isLocked("k"): Redis could not be asked (${error.message.replace(/\.$/, '')}).`);
    expect(told.cause).toBe(error);
  });

  it.each([
    // A client closed by its owner, or given up: it sends nothing any more.
    named('Error', 'Connection is closed.'),
    named('ClientClosedError', 'The client is closed'),
    named('ClosingError', 'Client is closed'),
    // Credentials the operator is to fix, a script's error (a bug), a driver's own TypeError.
    replyError('NOAUTH Authentication required.'),
    replyError('WRONGPASS invalid username-password pair or user is disabled.'),
    replyError("ERR Error running script (call to f_0123): @user_script:12: attempt to compare number with nil"),
    new TypeError("Cannot read properties of undefined (reading 'length')"),
    named('RequestError', "An error was signalled by the server: - ResponseError: Error running script (call to f_0123): @user_script:12: attempt to compare number with nil"),
  ])('not unavailable: $message', (error) => {
    const told = storeFailure(error, 'isLocked("k")');
    expect(told).toBeInstanceOf(RedisLockError);
    expect(told).not.toBeInstanceOf(RedisUnavailableError);
  });
});

describe('storeFailure of a fencing counter no token can be (FOREIGNFENCINGCOUNTER, see NEXT_FENCING)', () => {
  it.each([
    ['Redis 7', 'ERR user_script:9: FOREIGNFENCINGCOUNTER 9007199254740993 lock:{k}:fence script: 3367d90eb71d3212f29996c2e39dfbe19c7b6e55, on @user_script:9.'],
    ['Redis 6', 'ERR Error running script (call to f_3367d90eb71d3212f29996c2e39dfbe19c7b6e55): @user_script:9: FOREIGNFENCINGCOUNTER 9007199254740993 lock:{k}:fence '],
  ])('names the counter and its value, as %s words the reply', (_client, message) => {
    const told = storeFailure(replyError(message), 'Lock "k" could not be acquired');
    expect(told).toBeInstanceOf(RedisLockError);
    expect(told).not.toBeInstanceOf(RedisUnavailableError);
    expect(told.message).toBe(
      'Lock "k" could not be acquired: its fencing counter "lock:{k}:fence" holds 9007199254740993, which no fencing token can be (a whole number from 1 to 2^53 - 1, exact in a double), and was left so: ' +
        'a key of the lock holds data this library did not write, so something else writes under its key prefix; delete that key, or give the module a keyPrefix of its own.',
    );
  });

  it('shows a hostile counter name escaped and cut', () => {
    const key = `lock:{\u001b[2J ${'x'.repeat(10_000)}}:fence`;
    const told = storeFailure(replyError(`ERR user_script:9: FOREIGNFENCINGCOUNTER -5 ${key} script: 3367d90eb71d3212f29996c2e39dfbe19c7b6e55, on @user_script:9.`), 'Lock "k" could not be acquired');
    expect(told.message).toContain('its fencing counter "lock:{\\u001b[2J xxx');
    expect(told.message).not.toMatch(/[\u0000-\u001f]/);
    expect(told.message.length).toBeLessThan(1_000);
  });
});
