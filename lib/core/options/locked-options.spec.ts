import { describe, expect, it } from 'vitest';
import { InvalidLockOptionsError } from '../../errors/invalid-lock-options.error.js';
import { checkLockedOptions } from './locked-options.js';

describe('checkLockedOptions: fairness', () => {
  it('takes fifo and barging on a mutex', () => {
    expect(checkLockedOptions({ fairness: 'barging' }, 'Stock.take')).toBe('throw');
    expect(checkLockedOptions({ fairness: 'fifo', limit: 2 }, 'Stock.take')).toBe('throw');
  });

  it('refuses, at decoration, a bad value and barging for a semaphore or a read lock, naming the option and the method', () => {
    expect(() => checkLockedOptions({ fairness: 'fast' as never }, 'Stock.take')).toThrow(InvalidLockOptionsError);
    expect(() => checkLockedOptions({ fairness: 'barging', limit: 2 }, 'Stock.take')).toThrow(/@Locked on Stock\.take: Option "fairness".*semaphore/);
    expect(() => checkLockedOptions({ fairness: 'barging', mode: 'read' }, 'Stock.read')).toThrow(/@Locked on Stock\.read: Option "fairness".*read lock/);
  });
});
