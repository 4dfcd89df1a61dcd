/**
 * Found by review (forty-second session): the errors `@LeaderElection()` throws when a class is
 * defined (an option that is no option, a bad ttl, a second election on the class, a key no lock
 * can have) named it `@LeaderElection() on <class name>` with the name as it is. A class name set
 * at runtime (a mixin, a class made by a factory) can hold a newline that forges a log line, or
 * thousands of characters; the other decorators and the startup checks show it quoted, escaped
 * and cut, as keys are.
 */
import { describe, expect, it } from 'vitest';
import { LeaderElection } from '../../lib/index.js';

const FORGED = `\nERROR [RedisLock] forged line ${'x'.repeat(3_000)}`;

function classNamed(name: string): new () => object {
  return { [name]: class {} }[name]!;
}

function refusal(apply: () => void): Error {
  try {
    apply();
  } catch (error) {
    return error as Error;
  }
  throw new Error('the decorator did not throw');
}

describe('@LeaderElection() errors naming the class', () => {
  it.each([
    ['an option that is no option', (type: Function) => LeaderElection('feed', { tll: '1s' } as never)(type)],
    ['a bad ttl', (type: Function) => LeaderElection('feed', { ttl: 'soon' as never })(type)],
    ['a key no lock can have', (type: Function) => LeaderElection('')(type)],
    [
      'a second election on the class',
      (type: Function) => {
        LeaderElection('feed')(type);
        LeaderElection('other')(type);
      },
    ],
  ])('show a class name set at runtime escaped and cut (%s)', (_, apply) => {
    const error = refusal(() => apply(classNamed(`PriceFeed${FORGED}`)));
    expect(error.message).toContain('@LeaderElection() on "PriceFeed');
    // Failed: the message held the raw newline and all 3,000 characters of the name.
    expect(error.message).not.toMatch(/\n/);
    expect(error.message.length).toBeLessThan(1_000);
  });
});
