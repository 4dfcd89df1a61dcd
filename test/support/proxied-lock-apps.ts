import { afterEach } from 'vitest';
import { TcpProxy } from '../chaos/support/tcp-proxy.js';
import { createLockApp, type LockApp } from './lock-app.js';
import { redisUrl } from './redis.js';

export interface ProxiedLockApps {
  /** A lock application on the test's Redis (`useRedis`), or on `url`. */
  open(url?: string): Promise<LockApp>;
  /** A lock application that reaches Redis through a TCP proxy the test cuts and heals (one per test). */
  throughProxy(): Promise<{ app: LockApp; proxy: TcpProxy }>;
}

/**
 * Lock applications (ttl 30 s) a test opens, all closed after it, and the proxy of
 * `throughProxy`, healed first so that their close is answered.
 */
export function useProxiedLockApps(): ProxiedLockApps {
  const apps: LockApp[] = [];
  let proxy: TcpProxy | undefined;
  afterEach(async () => {
    proxy?.heal();
    await Promise.all(apps.splice(0).map((app) => app.close()));
    await proxy?.close();
    proxy = undefined;
  });
  const open = async (url?: string): Promise<LockApp> => {
    const app = await createLockApp({ ttl: 30_000, ...(url ? { redis: url } : {}) });
    apps.push(app);
    return app;
  };
  return {
    open,
    async throughProxy() {
      proxy = await TcpProxy.start(Number(new URL(redisUrl()).port));
      const viaProxy = new URL(redisUrl());
      viaProxy.port = String(proxy.port);
      return { app: await open(viaProxy.toString()), proxy };
    },
  };
}
