import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { redisUrl, useRedis } from './support/redis.js';

const runner = fileURLToPath(new URL('./fixtures/es2017/run-rows.mjs', import.meta.url));

/**
 * Found by review. docs/locks.md "Return types": "A generator method (`*rows()`,
 * `async *rows()`) is refused when the class is defined, and a generator returned by another method
 * is refused at the call, before its body runs". Both checks look for native generators:
 * `isGeneratorFunction` (lib/decorators/locked.decorator.ts) by the function's constructor name, and
 * `isGenerator` (lib/core/engine/generator-result.ts) by the `[object AsyncGenerator]` tag. Compiled
 * for ES2017 (the NestJS CLI's tsconfig target for years, still in many upgraded applications),
 * TypeScript turns `async *rows()` into a plain function returning `__asyncGenerator(...)`, a plain
 * object (`[object Object]`): the class is accepted, the call resolves after the release, and the
 * body runs unlocked as the caller iterates (fixture: tsc 6.0.3 output, test/fixtures/es2017/rows.js).
 */
describe('@Locked async *rows() compiled for ES2017', () => {
  useRedis();

  it('is refused (at definition or at the call), never run unlocked', { timeout: 60_000 }, () => {
    const child = spawnSync(process.execPath, [runner], { env: { ...process.env, REDIS_URL: redisUrl() }, encoding: 'utf8', timeout: 30_000 });
    const result = JSON.parse(child.stdout.trim().split('\n')[0] ?? '{}') as { outcome: string; lockedWhileIterating: boolean[] };
    // Before: {"outcome":"ran","lockedWhileIterating":[false]}
    expect(result, child.stderr).toEqual({ outcome: 'refused: RedisLockError', lockedWhileIterating: [] });
  });
});
