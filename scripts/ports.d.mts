export function isFree(port: number): Promise<boolean>;
export function waitForPing(port: number, timeoutMs?: number): Promise<void>;
export function killOnExit<T>(child: T): T;
/** `count` free loopback ports below the ephemeral range; `companion`: each `port + companion` free too (a Cluster node's bus port). */
export function freeFixedPorts(count: number, companion?: number): Promise<number[]>;
