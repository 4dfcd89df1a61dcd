export interface RedisCluster {
  readonly nodes: { host: string; port: number }[];
  stop(): Promise<void>;
}
export function startRedisCluster(masters?: number): Promise<RedisCluster>;
