/**
 * The least-privilege user of docs/deployment.md ("Least-privilege Redis user"), as ACL SETUSER
 * rules with the password `lock-secret`: the commands listed there on keys and channels under the
 * default `lock:` prefix. On a Redis 7 Cluster add `CLUSTER_ACL_RULES`.
 */
export const LOCK_ACL = [
  'on', '>lock-secret', 'resetkeys', '~lock:*', 'resetchannels', '&lock:*', '-@all',
  '+evalsha', '+eval', '+exists', '+subscribe', '+unsubscribe', '+ping', '+info', '+select',
  '+get', '+set', '+del', '+pexpire', '+pttl', '+incr', '+time', '+publish',
  '+lindex', '+lpop', '+rpush', '+lrem', '+zadd', '+zrem', '+zscore', '+zrange',
  '+hget', '+hmget', '+hset', '+hdel', '+hkeys', '+hgetall', '+zrangebyscore',
];

/** What the same user needs in addition on a Redis 7 Cluster (docs/deployment.md). */
export const CLUSTER_ACL_RULES = ['+spublish', '+ssubscribe', '+sunsubscribe', '+cluster|slots', '+cluster|info', '+cluster|nodes', '+client|setname'];
