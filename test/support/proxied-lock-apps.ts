import { afterEach } from 'vitest';
import { TcpProxy } from '../chaos/support/tcp-proxy.js';
import { createLockApp, type LockApp } from './lock-app.js';
import { redisUrl } from './redis.js';

export interface ProxiedLockApps {
  /** A lock application on the Redis given (the test's, `useRedis`, by default), or on `url`. */
  open(url?: string): Promise<LockApp>;
  /** A lock application that reaches Redis through a TCP proxy the test cuts and heals (one per test). */
  throughProxy(): Promise<{ app: LockApp; proxy: TcpProxy }>;
}

/**
 * Lock applications (ttl 30 s) a test opens, all closed after it, and the proxy of
 * `throughProxy`, healed first so that their close is answered. `server`: the Redis they reach
 * (the test's shared one by default, or a file's own, see `useOwnRedis`).
 */
export function useProxiedLockApps(server: () => string = redisUrl): ProxiedLockApps {
  const apps: LockApp[] = [];
  let proxy: TcpProxy | undefined;
  afterEach(async () => {
    proxy?.heal();
    await Promise.all(apps.splice(0).map((app) => app.close()));
    await proxy?.close();
    proxy = undefined;
  });
  const open = async (url?: string): Promise<LockApp> => {
    const app = await createLockApp({ ttl: 30_000, redis: url ?? server() });
    apps.push(app);
    return app;
  };
  return {
    open,
    async throughProxy() {
      proxy = await TcpProxy.start(Number(new URL(server()).port));
      const viaProxy = new URL(server());
      viaProxy.port = String(proxy.port);
      return { app: await open(viaProxy.toString()), proxy };
    },
  };
}
