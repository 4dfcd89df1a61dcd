// Compiled (not run) by `npm run typecheck`: node-redis 5 and 6 clients of every kind are
// accepted by the `redis` option as their factories type them, alone or in quorum mode.
import { RedisLockModule, type RedisConnection } from 'nestjs-redis-lock';
import { createClient, createCluster, createSentinel } from 'redis';
import { createClient as createClient5, createCluster as createCluster5, createSentinel as createSentinel5 } from 'redis5';

const client = createClient({ url: 'redis://localhost:6379' });
const cluster = createCluster({ rootNodes: [{ url: 'redis://localhost:7000' }] });
const sentinel = createSentinel({ name: 'mymaster', sentinelRootNodes: [{ host: 'localhost', port: 26379 }] });
const client5 = createClient5({ url: 'redis://localhost:6379' });
const cluster5 = createCluster5({ rootNodes: [{ url: 'redis://localhost:7000' }] });
const sentinel5 = createSentinel5({ name: 'mymaster', sentinelRootNodes: [{ host: 'localhost', port: 26379 }] });

RedisLockModule.forRoot({ redis: client });
RedisLockModule.forRoot({ redis: cluster });
RedisLockModule.forRoot({ redis: sentinel });
RedisLockModule.forRoot({ redis: client5 });
RedisLockModule.forRoot({ redis: cluster5 });
RedisLockModule.forRoot({ redis: sentinel5 });
RedisLockModule.forRoot({ redis: [client, client5, 'redis://other:6379'] });
export const connections: RedisConnection[] = [client, cluster, sentinel, client5, cluster5, sentinel5];
