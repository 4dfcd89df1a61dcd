import { Redis } from 'ioredis';
import { afterEach, beforeEach } from 'vitest';

/**
 * A Redis user of the test's own on `server` (every permission to start with), made before each
 * test and deleted after it: a test takes a command away from it (`rules('-eval')`) to make the
 * library's calls on its connection fail, and gives it back.
 */
export function useAclUser(server: { url(): string }, name: string): { url(): string; rules(...rules: string[]): Promise<unknown> } {
  const user = `${name}-${process.pid}`;
  let admin: Redis;
  beforeEach(async () => {
    admin = new Redis(server.url());
    await admin.call('ACL', 'SETUSER', user, 'on', '>pw', '~*', '&*', '+@all');
  });
  afterEach(async () => {
    await admin.call('ACL', 'DELUSER', user);
    await admin.quit();
  });
  return {
    url: () => {
      const url = new URL(server.url());
      url.username = user;
      url.password = 'pw';
      return url.toString();
    },
    rules: (...rules) => admin.call('ACL', 'SETUSER', user, ...rules),
  };
}
