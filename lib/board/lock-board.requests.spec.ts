import { describe, expect, it } from 'vitest';
import { crossSiteRead, crossSiteRefusal, listQuery } from './lock-board.requests.js';

const json = { 'content-type': 'application/json', 'x-lock-board': '1' };

describe('crossSiteRefusal', () => {
  it('takes the Origin of the server itself, default ports included', () => {
    expect(crossSiteRefusal({ ...json, host: 'admin.example:8080', origin: 'http://admin.example:8080' })).toBeUndefined();
    expect(crossSiteRefusal({ ...json, host: 'admin.example', origin: 'https://admin.example' })).toBeUndefined();
    expect(crossSiteRefusal({ ...json, host: 'admin.example:443', origin: 'https://admin.example' })).toBeUndefined();
    expect(crossSiteRefusal({ ...json, host: 'ADMIN.example', origin: 'http://admin.example' })).toBeUndefined();
    // HTTP/2: browsers send no Host, the host is in :authority.
    expect(crossSiteRefusal({ ...json, ':authority': 'admin.example:8443', origin: 'https://admin.example:8443' })).toBeUndefined();
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

describe('crossSiteRead', () => {
  it('lets the board page, a navigation to it and clients that are not browsers read', () => {
    expect(crossSiteRead('GET', { host: 'admin.example', 'sec-fetch-site': 'same-origin', origin: 'http://admin.example' })).toBeUndefined();
    expect(crossSiteRead('GET', { host: 'admin.example', 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'navigate' })).toBeUndefined();
    expect(crossSiteRead('GET', { host: 'admin.example', 'sec-fetch-site': 'none' })).toBeUndefined();
    expect(crossSiteRead('GET', { host: 'admin.example' })).toBeUndefined();
    // HTTP/2: the host is in :authority.
    expect(crossSiteRead('GET', { ':authority': 'admin.example:8443', origin: 'https://admin.example:8443' })).toBeUndefined();
  });

  it("refuses a read another site's page makes, by Sec-Fetch-Site or by Origin", () => {
    for (const site of ['cross-site', 'same-site']) expect(crossSiteRead('GET', { host: 'admin.example', 'sec-fetch-site': site, 'sec-fetch-mode': 'cors' })).toMatchObject({ status: 403 });
    expect(crossSiteRead('GET', { host: 'admin.example', origin: 'https://evil.example' })).toMatchObject({ status: 403 });
    expect(crossSiteRead('HEAD', { ':authority': 'admin.example', origin: 'https://evil.example' })).toMatchObject({ status: 403 });
  });

  it('leaves a release to its own checks', () => {
    expect(crossSiteRead('POST', { host: 'admin.example', 'sec-fetch-site': 'cross-site' })).toBeUndefined();
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
