import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { FencedRedis, FencedWriteRefusedError } from '../../lib/index.js';
import { useRedis } from '../support/redis.js';

/**
 * Review (reads for update, 07d1ba0/f371a0b): the headline @example of the `FencedRedis` class
 * (lib/fencing/fenced-redis.ts:32-37) is still the read-modify-write that loses an update:
 *
 *   const balance = Number(await fenced.get(`balance:{${id}}`));            // a plain read
 *   await fenced.set(`balance:{${id}}`, balance + amount, lock.fencingToken);
 *
 * What is wrong: the feature exists because this pattern loses updates (commit 07d1ba0: "fenced
 * writes alone lost an update in fencing-chaos under load"; docs/fencing.md, second timeline:
 * "A plain read claims nothing: it is for display, not for a value to write back"), yet the
 * class-level TSDoc, the first thing an IDE shows for `FencedRedis`, teaches the plain read.
 * The method TSDocs of `get`/`hget` and docs/fencing.md were updated; the class example was not.
 *
 * Correct behaviour: the class example's read passes the token
 * (`fenced.get(`balance:{${id}}`, lock.fencingToken)`), so that running the example under the
 * docs' timeline (A reads and is paused, B reads, A's late write lands, B writes) loses no
 * acknowledged deposit: A's write is refused, B's balance is exact.
 *
 * This spec runs the example's own body, taken from the TSDoc, for two holders on a real Redis,
 * interleaved as in docs/fencing.md's second timeline.
 */

/** The body of `locks.using(..., async (lock) => { ... })` in the class' @example. */
function classExampleBody(): string {
  const source = readFileSync(new URL('../../lib/fencing/fenced-redis.ts', import.meta.url), 'utf8');
  const doc = source.slice(0, source.indexOf('export class FencedRedis'));
  const example = doc.slice(doc.lastIndexOf('@example'));
  const lines = example.split('\n').map((line) => line.replace(/^\s*\* ?/, ''));
  const start = lines.findIndex((line) => line.includes('async (lock) => {'));
  const end = lines.findIndex((line, i) => i > start && line.trim() === '});');
  expect(start, 'the class @example is a locks.using() callback').toBeGreaterThan(-1);
  return lines.slice(start + 1, end).join('\n');
}

type Body = (fenced: FencedRedis, lock: { fencingToken: number }, id: string, amount: number) => Promise<void>;
// eslint-disable-next-line @typescript-eslint/no-empty-function
const AsyncFunction = Object.getPrototypeOf(async () => {}).constructor as new (...args: string[]) => Body;

describe("the FencedRedis class example under docs/fencing.md's second timeline", () => {
  const redis = useRedis();

  it('loses no acknowledged deposit (the paused holder\'s late write is refused)', async () => {
    const body = new AsyncFunction('fenced', 'lock', 'id', 'amount', classExampleBody());
    const id = '7';
    await new FencedRedis(redis).set(`balance:{${id}}`, 100, 40); // written last by token 40

    // A (token 41) reads, then is paused until B has read; B (token 42) writes after A's late write.
    let bRead!: () => void;
    const bHasRead = new Promise<void>((resolve) => (bRead = resolve));
    let aDone!: () => void;
    const aHasWritten = new Promise<void>((resolve) => (aDone = resolve));
    const real = new FencedRedis(redis);
    const holderA = new Proxy(real, {
      get: (target, name) =>
        name === 'set' || name === 'hset'
          ? async (...args: unknown[]) => {
              await bHasRead; // A's write lands late, after B's read
              try {
                return await (target as never as Record<string, (...a: unknown[]) => Promise<unknown>>)[name as string]!(...args);
              } finally {
                aDone();
              }
            }
          : Reflect.get(target, name).bind(target),
    });
    const holderB = new Proxy(real, {
      get: (target, name) => {
        const method = (target as never as Record<string, (...a: unknown[]) => Promise<unknown>>)[name as string]!.bind(target);
        if (name === 'get' || name === 'hget') return async (...args: unknown[]) => method(...args).finally(() => bRead());
        if (name === 'set' || name === 'hset') return async (...args: unknown[]) => (await aHasWritten, method(...args));
        return method;
      },
    });

    const a = body(holderA, { fencingToken: 41 }, id, 10).then(
      () => 10,
      (error: unknown) => {
        if (error instanceof FencedWriteRefusedError) return 0; // A's caller learns its deposit failed
        throw error;
      },
    );
    // B starts once A has read (A is paused at its write until B has read).
    const b = (async () => {
      await new Promise((resolve) => setTimeout(resolve, 50));
      await body(holderB, { fencingToken: 42 }, id, 50);
      return 50;
    })();
    const acknowledged = (await a) + (await b);
    expect(Number(await redis.get(`balance:{${id}}`))).toBe(100 + acknowledged);
  });
});
