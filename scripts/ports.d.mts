export function isFree(port: number): Promise<boolean>;
export function waitForPing(port: number, timeoutMs?: number): Promise<void>;
export function killOnExit<T>(child: T): T;
/** `count` free loopback ports below the ephemeral range; `companion`: each `port + companion` free too (a Cluster node's bus port). */
export function freeFixedPorts(count: number, companion?: number): Promise<number[]>;
/** A deployment's server whose port another process took (see `waitForOwnServer`). */
export class PortTakenError extends Error {}
/** Resolves once `child` answers PING on `port` and is the process that does; rejects with `PortTakenError` otherwise. */
export function waitForOwnServer(port: number, child: import('node:child_process').ChildProcess, timeoutMs?: number): Promise<void>;
/** Runs `start(ports)` on fresh fixed ports, again on others (three tries in all) while it fails with `PortTakenError`. */
export function onFreshPorts<T>(count: number, companion: number, start: (ports: number[]) => Promise<T>): Promise<T>;
