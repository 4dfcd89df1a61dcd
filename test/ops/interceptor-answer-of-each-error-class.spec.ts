/**
 * Review (HTTP answers): what `LockConflictInterceptor` answers for each error class of
 * lib/errors that can reach a route, pinned in one place so that each answer stays deliberate:
 * - what the client or the moment is to blame for: 409 (a busy lock, a lock lost to another
 *   operation, a refused fenced write), 503 (Redis unavailable for now, with `Retry-After: 1`; the
 *   application closing, without), 400 (a bad key from the request);
 * - what the code or the operator is to fix: 500, logged by Nest with the library's message (an
 *   option refused at call time, a semaphore asked for with two limits, a read lock upgraded, a
 *   token asked of a lock without fencing, a kind of lock the store cannot serve, a plain
 *   `RedisLockError` such as a refusal for good).
 * The key, from a request here, never reaches the client, and reaches a log line escaped and cut.
 */
import { Controller, Get, Param, type INestApplication } from '@nestjs/common';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  FencedWriteRefusedError,
  InvalidLockOptionsError,
  LockKeyError,
  LockNotAcquiredError,
  LockServiceClosedError,
  LockUpgradeError,
  NoFencingTokenError,
  RedisLockError,
  RedisLockModule,
  RedisUnansweredError,
  RedisUnavailableError,
  SemaphoreLimitError,
  UnsupportedLockKindError,
} from '../../lib/index.js';
import { quoteKey } from '../../lib/core/keys/quote-key.js';
import { createHttpApp, listenOnLoopback } from '../support/http-app.js';
import { CapturedLogs } from '../support/lock-app.js';
import { redisUrl, useRedis } from '../support/redis.js';

const HOSTILE = `k\n[WARN] forged ${'x'.repeat(500)}`;

const ERRORS: Record<string, () => Error> = {
  busy: () => new LockNotAcquiredError(HOSTILE, 5, undefined, 0),
  'fenced-refused': () => new FencedWriteRefusedError(HOSTILE, 3, 4),
  'bad-key': () => new LockKeyError(`Lock key ${quoteKey(HOSTILE)} is too long.`),
  unavailable: () => new RedisUnavailableError(`isLocked(${quoteKey(HOSTILE)}): Redis could not be asked (connect ECONNREFUSED).`),
  unanswered: () => new RedisUnansweredError(`isLocked(${quoteKey(HOSTILE)}): Redis did not answer within 1000 ms.`),
  closed: () => new LockServiceClosedError(`isLocked(${quoteKey(HOSTILE)}): LockService is shut down.`),
  'invalid-options': () => new InvalidLockOptionsError('ttl', -1, 'a duration', `acquire(${quoteKey(HOSTILE)})`),
  'semaphore-limit': () => new SemaphoreLimitError(3, 5, `Semaphore ${quoteKey(HOSTILE)} is in use with limit 3, not 5.`),
  upgrade: () => new LockUpgradeError(HOSTILE, `Lock ${quoteKey(HOSTILE)}: the chain holds its read lock.`),
  'no-fencing-token': () => new NoFencingTokenError(HOSTILE, `Lock ${quoteKey(HOSTILE)} was taken with fencing: false.`),
  'unsupported-kind': () => new UnsupportedLockKindError(`acquire(${quoteKey(HOSTILE)}): a semaphore is not available in quorum mode.`),
  'plain-lock-error': () => new RedisLockError(`isLocked(${quoteKey(HOSTILE)}): Redis refused it (NOPERM ...).`),
};

@Controller('errors')
class ErrorsController {
  @Get(':name')
  raise(@Param('name') name: string): never {
    throw ERRORS[name]!();
  }
}

describe('LockConflictInterceptor: the answer to each error class', () => {
  useRedis();
  let app: INestApplication;
  let url: string;
  const logs = new CapturedLogs();
  beforeAll(async () => {
    app = await createHttpApp({ imports: [RedisLockModule.forRoot({ redis: redisUrl(), isGlobal: true })], controllers: [ErrorsController] }, { logs, logger: logs });
    url = `${await listenOnLoopback(app)}/errors`;
  });
  afterAll(() => app?.close());

  it.each([
    ['busy', 409, null, false],
    ['fenced-refused', 409, null, false],
    ['bad-key', 400, null, false],
    ['unavailable', 503, '1', false],
    ['unanswered', 503, '1', false],
    ['closed', 503, null, false],
    ['invalid-options', 500, null, true],
    ['semaphore-limit', 500, null, true],
    ['upgrade', 500, null, true],
    ['no-fencing-token', 500, null, true],
    ['unsupported-kind', 500, null, true],
    ['plain-lock-error', 500, null, true],
  ] as const)('%s: %i (Retry-After %s), logged by Nest: %s', async (name, status, retryAfter, logged) => {
    const before = logs.lines.length;
    const response = await fetch(`${url}/${name}`);
    const body = (await response.json()) as { message: string };
    expect(response.status).toBe(status);
    expect(response.headers.get('retry-after')).toBe(retryAfter);
    expect(body.message).not.toContain('forged');
    const errors = logs.lines.slice(before).filter((line) => line.level === 'error');
    expect(errors.length > 0).toBe(logged);
    for (const line of errors) expect(line.message).not.toContain('\n[WARN] forged');
  });
});
