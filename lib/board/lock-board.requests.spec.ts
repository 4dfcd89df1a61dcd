import { describe, expect, it } from 'vitest';
import { crossSiteRefusal, listQuery } from './lock-board.requests.js';

const json = { 'content-type': 'application/json', 'x-lock-board': '1' };

describe('crossSiteRefusal', () => {
  it('takes the Origin of the server itself, default ports included', () => {
    expect(crossSiteRefusal({ ...json, host: 'admin.example:8080', origin: 'http://admin.example:8080' })).toBeUndefined();
    expect(crossSiteRefusal({ ...json, host: 'admin.example', origin: 'https://admin.example' })).toBeUndefined();
    expect(crossSiteRefusal({ ...json, host: 'admin.example:443', origin: 'https://admin.example' })).toBeUndefined();
    expect(crossSiteRefusal({ ...json, host: 'ADMIN.example', origin: 'http://admin.example' })).toBeUndefined();
  });

  it('refuses another host, port or scheme, and origins that are not http(s)', () => {
    for (const origin of ['http://admin.example.evil', 'http://admin.example:8081', 'file://', 'null', 'chrome-extension://abc', 'not a url']) {
      expect(crossSiteRefusal({ ...json, host: 'admin.example:8080', origin })).toMatchObject({ status: 403 });
    }
    expect(crossSiteRefusal({ ...json, origin: 'http://admin.example' })).toMatchObject({ status: 403 }); // no Host to compare with
  });

  it('cuts what it repeats of the request', () => {
    const refused = crossSiteRefusal({ 'content-type': `text/${'x'.repeat(5_000)}` });
    expect(refused).toMatchObject({ status: 415 });
    expect(refused!.message.length).toBeLessThan(200);
  });
});

describe('listQuery', () => {
  it('takes one cursor and nothing else', () => {
    expect(listQuery({})).toEqual({ cursor: '0' });
    expect(listQuery({ cursor: '17' })).toEqual({ cursor: '17' });
    expect(listQuery({ cursor: ['1', '2'] })).toEqual({ problem: expect.stringContaining('"cursor"') });
    expect(listQuery({ cursor: { a: '1' } })).toEqual({ problem: expect.stringContaining('"cursor"') });
    expect(listQuery({ ['<b>'.repeat(100)]: '1' })).toEqual({ problem: expect.stringMatching(/^Unknown query parameter "(<b>)+…"/) });
  });
});
