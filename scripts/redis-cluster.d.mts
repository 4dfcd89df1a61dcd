export interface RedisCluster {
  readonly nodes: { host: string; port: number }[];
  /** SIGKILLs the master at `index` of `nodes`. */
  kill(index: number): Promise<void>;
  /** Restarts the master at `index` with its data (`SHUTDOWN SAVE`): same port, node id and slots, a new run id. */
  restart(index: number): Promise<void>;
  /** SIGSTOPs the master at `index`: its connections stay open and it answers nothing. */
  pause(index: number): void;
  /** SIGCONTs the master at `index`. */
  resume(index: number): void;
  stop(): Promise<void>;
}
export interface RedisClusterOptions {
  /** `false`: healthy masters keep serving their slots while another master is down. Default `true`. */
  requireFullCoverage?: boolean;
}
export function startRedisCluster(masters?: number, options?: RedisClusterOptions): Promise<RedisCluster>;
