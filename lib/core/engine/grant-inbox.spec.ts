import { describe, expect, it } from 'vitest';
import { GrantInbox } from './grant-inbox.js';

describe('GrantInbox', () => {
  it('drops a kept grant that a busy reply proves stale, and its later copies', () => {
    const inbox = new GrantInbox(false);
    inbox.deliver(11);
    inbox.staleThrough(12);
    expect(inbox.take()).toBeUndefined();
    const heard: number[] = [];
    inbox.listen((token) => heard.push(token));
    inbox.deliver(11);
    inbox.deliver(12);
    expect(heard).toEqual([]);
    inbox.deliver(13);
    expect(heard).toEqual([13]);
  });

  it('keeps a grant made after the busy attempt ran', () => {
    const inbox = new GrantInbox(false);
    inbox.deliver(13);
    inbox.staleThrough(12);
    expect(inbox.take()).toBe(13);
  });

  it('once grants only wake the waiter, drops none as a copy: a restarted counter sends lower tokens', () => {
    const inbox = new GrantInbox(false);
    inbox.deliver(5);
    inbox.wakeOnEveryGrant();
    expect(inbox.take()).toBe(5);
    const heard: number[] = [];
    inbox.listen((token) => heard.push(token));
    inbox.deliver(2);
    inbox.listen((token) => heard.push(token));
    inbox.deliver(2);
    expect(heard).toEqual([2, 2]);
  });
});
