// Compiled (not run) by `npm run typecheck`: iovalkey, Valkey GLIDE and ioredis 6 clients (beside the
// ioredis 5 whose types are installed) are accepted by the `redis` option as their packages type
// them, alone or in quorum mode.
import { GlideClient, GlideClusterClient } from '@valkey/valkey-glide';
import { RedisLockModule, type RedisConnection } from 'nestjs-redis-lock';
import { Cluster as Cluster6, Redis as Redis6 } from 'ioredis6';
import { Cluster as ValkeyCluster, Redis as Valkey } from 'iovalkey';

const valkey = new Valkey('redis://localhost:6379');
const valkeyCluster = new ValkeyCluster([{ host: 'localhost', port: 7000 }]);
const ioredis6 = new Redis6('redis://localhost:6379');
const ioredis6Cluster = new Cluster6([{ host: 'localhost', port: 7000 }]);

RedisLockModule.forRoot({ redis: valkey });
RedisLockModule.forRoot({ redis: valkeyCluster });
RedisLockModule.forRoot({ redis: ioredis6 });
RedisLockModule.forRoot({ redis: ioredis6Cluster });
RedisLockModule.forRoot({ redis: [valkey, ioredis6, 'redis://other:6379'] });
export const connections: RedisConnection[] = [valkey, valkeyCluster, ioredis6, ioredis6Cluster];

// Valkey GLIDE 2.x clients, as their `createClient()` resolves them.

export async function glideConnections(): Promise<RedisConnection[]> {
  const glide = await GlideClient.createClient({ addresses: [{ host: 'localhost', port: 6379 }] });
  const glideCluster = await GlideClusterClient.createClient({ addresses: [{ host: 'localhost', port: 7000 }] });
  RedisLockModule.forRoot({ redis: glide });
  RedisLockModule.forRoot({ redis: glideCluster });
  RedisLockModule.forRoot({ redis: [glide, valkey, 'redis://other:6379'] });
  return [glide, glideCluster];
}
