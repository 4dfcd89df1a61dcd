import { GlideClient, GlideClusterClient } from '@valkey/valkey-glide';
import { Cluster as Cluster6, Redis as Redis6 } from 'ioredis6';
import { Cluster as ValkeyCluster, Redis as Valkey } from 'iovalkey';
import type { RedisLockModuleOptions } from '../../lib/index.js';
import { createLockApp, type LockApp } from './lock-app.js';

/** A server (`redis://` URL, with its database) or the seed nodes of a Cluster. */
export type Target = string | { host: string; port: number }[];

/** A client the test opened to hand to the module, and what the test does with it. */
export interface HandedClient {
  /** The client, as the `redis` option takes it. */
  readonly client: RedisLockModuleOptions['redis'];
  /** Whether the client is still usable (the module must never close a client it was handed). */
  isOpen(): boolean;
  close(): void;
}

/** What the tests use of a client with ioredis' API, whatever its package. */
interface IoClient {
  readonly status: string;
  on(event: 'error', listener: (error: unknown) => void): unknown;
  ping(): Promise<unknown>;
  disconnect(): void;
}

async function ioHanded(client: IoClient): Promise<HandedClient> {
  client.on('error', () => undefined); // errors are the test's to see, not printed
  await client.ping();
  return { client: client as unknown as RedisLockModuleOptions['redis'], isOpen: () => client.status !== 'end', close: () => client.disconnect() };
}

/**
 * A GLIDE client: `GlideClient` on the URL's host, port and database, `GlideClusterClient` on
 * the seed nodes. A request timeout above GLIDE's 250 ms default, so that a loaded test machine
 * does not fail commands a quiet one answers in time.
 */
async function glideHanded(target: Target): Promise<HandedClient> {
  const options = { requestTimeout: 2_000 };
  let client: GlideClient | GlideClusterClient;
  if (typeof target === 'string') {
    const url = new URL(target);
    const databaseId = Number(url.pathname.slice(1) || '0');
    client = await GlideClient.createClient({ addresses: [{ host: url.hostname, port: Number(url.port || 6379) }], databaseId, ...options });
  } else {
    client = await GlideClusterClient.createClient({ addresses: target, ...options });
  }
  return {
    client,
    isOpen: () => !(client as unknown as { isClosed: boolean }).isClosed,
    close: () => client.close(),
  };
}

/** The clients handed in by the tests of this file's users, each from the package the library accepts. */
export const HANDED_CLIENTS = {
  /** iovalkey 0.4, Valkey's fork of ioredis. */
  iovalkey: (target: Target) => ioHanded(typeof target === 'string' ? new Valkey(target) : new ValkeyCluster(target)),
  /** ioredis 6 (the other tests use ioredis 5). */
  'ioredis 6': (target: Target) => ioHanded(typeof target === 'string' ? new Redis6(target) : new Cluster6(target)),
  /** Valkey GLIDE 2.5. */
  GLIDE: glideHanded,
} satisfies Record<string, (target: Target) => Promise<HandedClient>>;

export type HandedClientName = keyof typeof HANDED_CLIENTS;

/** A connected client of `name` on `target`. */
export function openClient(name: HandedClientName, target: Target): Promise<HandedClient> {
  return HANDED_CLIENTS[name](target);
}

/**
 * A lock app on a client the test opened. The module must not close it: closing the app checks
 * it is still open, then closes it.
 */
export async function handedLockApp(handed: HandedClient, options: Partial<RedisLockModuleOptions> = {}): Promise<LockApp> {
  const app = await createLockApp({ redis: handed.client, ...options });
  return {
    ...app,
    async close() {
      await app.close();
      const open = handed.isOpen();
      handed.close();
      if (!open) throw new Error('the module closed the client it was handed');
    },
  };
}
