export function isFree(port: number): Promise<boolean>;
export function waitForPing(port: number, timeoutMs?: number): Promise<void>;
