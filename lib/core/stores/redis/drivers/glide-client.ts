/**
 * A Valkey GLIDE client (`@valkey/valkey-glide` 2.x): a `GlideClient` or a `GlideClusterClient`,
 * as its `createClient()` resolves it. Described by shape only, so that neither the types nor
 * the runtime of this library need GLIDE installed; the GLIDE driver loads the package when it
 * is handed such a client (for its `Script` class), never otherwise. The module never closes it.
 *
 * @example
 * ```ts
 * import { GlideClusterClient } from '@valkey/valkey-glide';
 *
 * const redis = await GlideClusterClient.createClient({ addresses: [{ host: '10.0.0.1', port: 7000 }] });
 * RedisLockModule.forRoot({ redis });
 * ```
 */
export interface ValkeyGlideClient {
  invokeScript(script: never, options?: never): Promise<unknown>;
  customCommand(args: never, options?: never): Promise<unknown>;
  close(errorMessage?: string): void;
}

/** A GLIDE client, by its shape: `invokeScript` and `customCommand`, and no ioredis `defineCommand`. */
export function isGlideClient(client: unknown): client is ValkeyGlideClient {
  const candidate = client as Record<string, unknown> | null;
  if (candidate === null || typeof candidate !== 'object') return false;
  return typeof candidate.invokeScript === 'function' && typeof candidate.customCommand === 'function' && typeof candidate.defineCommand !== 'function';
}

/** A `GlideClusterClient`: it alone can route a script itself. */
export function isGlideCluster(client: ValkeyGlideClient): boolean {
  return typeof (client as { invokeScriptWithRoute?: unknown }).invokeScriptWithRoute === 'function';
}
