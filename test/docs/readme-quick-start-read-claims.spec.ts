import { describe, expect, it } from 'vitest';
import { codeBlocks } from './markdown.js';

/**
 * Found by review: the README's first example is a read-modify-write under a lock whose
 * write carries the fencing token and whose read does not: `this.repo.load(accountId)` then
 * `this.repo.save(..., lock.fencingToken)`. docs/fencing.md calls exactly that the second
 * timeline's lost update ("A fenced write alone still loses an update ... So the read of a
 * read-modify-write *claims* the resource"; "A plain read ... is for display, not for a value to
 * write back"). The quick start is what users copy.
 */
describe.each(['README.md', 'docs/getting-started.md'])("the quick-start deposit of %s", (file) => {
  it('passes the fencing token to its read as well as to its write, as docs/fencing.md requires', () => {
    const block = codeBlocks(file).find((b) => b.code.includes('this.repo.save('));
    expect(block, 'the quick-start block').toBeDefined();
    const read = /this\.repo\.load\(([^)]*)\)/.exec(block!.code);
    expect(read?.[1]).toContain('fencingToken');
  });
});
