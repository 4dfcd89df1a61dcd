export interface SentinelDeployment {
  readonly name: string;
  readonly sentinels: { host: string; port: number }[];
  readonly masterPort: number;
  readonly replicaPort: number;
  masterPortNow(): Promise<number>;
  failover(): Promise<number>;
  stop(): Promise<void>;
}
export function startSentinelDeployment(): Promise<SentinelDeployment>;
