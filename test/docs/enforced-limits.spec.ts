// Found by review. // The docs state each option's and argument's limits (docs/configuration.md "Options": "every
// module and per-call option"; docs/locks.md "Errors": when LockKeyError is thrown;
// docs/lock-family.md "Several keys at once"). Two limits the code enforces are stated nowhere,
// so a newcomer meets them only as a refusal at startup or at call time:
// - `keyPrefix`: at most 256 characters (lib/core/options/lock-options.ts, MAX_KEY_PREFIX_LENGTH);
//   configuration.md says only "not empty ..., no `{` or `}`".
// - a multi-key lock: at most 1,000 keys, and not an empty array, both refused with LockKeyError
//   (lib/core/multi-key/canonical-keys.ts); docs/locks.md's LockKeyError row names only a key
//   that "is not a string, is empty, longer than 1024 characters or not well-formed Unicode".
import 'reflect-metadata';
import { readFileSync, readdirSync } from 'node:fs';
import { Test } from '@nestjs/testing';
import { describe, expect, it } from 'vitest';
import { InvalidLockOptionsError, LockKeyError, LockService } from '../../lib/index.js';
import { RedisLockTestingModule } from '../../lib/testing/index.js';

const docsDir = new URL('../../docs/', import.meta.url);
const docs = readdirSync(docsDir)
  .filter((name) => name.endsWith('.md'))
  .map((name) => readFileSync(new URL(name, docsDir), 'utf8'))
  .join('\n');

describe('limits the code enforces', () => {
  it('keyPrefix: 256 characters accepted, 257 refused; and the docs say so', async () => {
    await Test.createTestingModule({ imports: [RedisLockTestingModule.forRoot({ keyPrefix: 'p'.repeat(256) })] }).compile();
    await expect(Test.createTestingModule({ imports: [RedisLockTestingModule.forRoot({ keyPrefix: 'p'.repeat(257) })] }).compile()).rejects.toBeInstanceOf(InvalidLockOptionsError);
    const row = docs.split('\n').find((line) => line.startsWith('| `keyPrefix` |'))!;
    expect(/256/.test(row), 'docs/configuration.md states the 256-character limit of keyPrefix').toBe(true);
  });

  it('multi-key locks: 1,000 keys accepted, 1,001 and [] refused with LockKeyError; and the docs say so', async () => {
    const moduleRef = await Test.createTestingModule({ imports: [RedisLockTestingModule.forRoot({})] }).compile();
    await moduleRef.init();
    try {
      const locks = moduleRef.get(LockService);
      const keys = (n: number) => Array.from({ length: n }, (_, i) => `s15c-k${i}`);
      const lock = await locks.acquire(keys(1_000));
      await lock.release();
      await expect(locks.acquire(keys(1_001))).rejects.toBeInstanceOf(LockKeyError);
      await expect(locks.acquire([])).rejects.toBeInstanceOf(LockKeyError);
    } finally {
      await moduleRef.close();
    }
    expect(/1,000 keys|1000 keys|at most 1,000 keys/.test(docs), 'docs/ state the 1,000-key limit of a multi-key lock').toBe(true);
    expect(/empty array|no keys/.test(docs), 'docs/ state that an empty array of keys is refused').toBe(true);
  });
});
