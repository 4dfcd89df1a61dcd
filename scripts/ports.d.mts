export function isFree(port: number): Promise<boolean>;
export function waitForPing(port: number, timeoutMs?: number): Promise<void>;
export function killOnExit<T>(child: T): T;
