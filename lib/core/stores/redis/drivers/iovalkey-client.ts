/**
 * A client of ioredis' API from another package: iovalkey's `Redis` or `Cluster` (the Valkey
 * project's fork of ioredis, 0.4), or one of an ioredis major other than the one whose types
 * are installed. Described by shape only, so that neither the types nor the runtime of this
 * library need iovalkey installed: the ioredis driver serves it as is. The module never closes
 * it.
 *
 * @example
 * ```ts
 * import { Cluster } from 'iovalkey';
 *
 * RedisLockModule.forRoot({ redis: new Cluster([{ host: '10.0.0.1', port: 7000 }]) });
 * ```
 */
export interface IoValkeyClient {
  defineCommand(name: string, definition: { lua: string; numberOfKeys?: number }): void;
  duplicate(...args: never[]): unknown;
  readonly status: string;
}
