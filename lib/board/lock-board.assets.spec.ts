import { describe, expect, it } from 'vitest';
import { boardPage, escapeHtml } from './lock-board.assets.js';

describe('board page', () => {
  it('escapes the path it is served at wherever it is written', () => {
    const html = boardPage(`/x"><script>alert('1')</script>&`);
    expect(html).not.toContain('<script>alert');
    expect(html).toContain('data-base="/x&quot;&gt;&lt;script&gt;alert(&#39;1&#39;)&lt;/script&gt;&amp;"');
    expect(html.match(/<script/g)).toHaveLength(1); // only the board's own script tag
  });

  it('escapes the five HTML-significant characters', () => {
    expect(escapeHtml(`<a href="x">'&'</a>`)).toBe('&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;');
  });
});
