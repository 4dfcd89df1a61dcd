import { describe, expect, it } from 'vitest';
import { quoteKey } from './quote-key.js';

describe('quoteKey', () => {
  it('quotes plain keys as before', () => {
    expect(quoteKey('order:42')).toBe('"order:42"');
  });

  it('escapes what could forge a log line or break out of the quotes', () => {
    const shown = quoteKey('a"\n[Nest] 1 - ERROR forged\r\u001b[31m');
    expect(shown).not.toMatch(/[\n\r\u001b]/);
    expect(JSON.parse(shown)).toBe('a"\n[Nest] 1 - ERROR forged\r\u001b[31m');
  });

  it('escapes the C1 controls, line separators and bidirectional overrides JSON leaves raw, and still parses back', () => {
    const key = 'a\u0085b\u009b31mc\u2028d\u2029e\u202ef\u200bg\u007f';
    const shown = quoteKey(key);
    expect(shown).not.toMatch(/[\u007f-\u009f\u2028\u2029\u202e\u200b]/);
    expect(JSON.parse(shown)).toBe(key);
  });

  it('bounds long keys', () => {
    expect(quoteKey('x'.repeat(1_000)).length).toBeLessThan(210);
  });
});
