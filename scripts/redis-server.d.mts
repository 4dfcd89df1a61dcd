/** A throwaway `redis-server` on a loopback port. */
export interface RedisServer {
  readonly port: number;
  readonly url: string;
  /** Stops the server (SIGKILL with `kill: true`, like a crash) and waits for it to exit. */
  stop(options?: { kill?: boolean }): Promise<void>;
  /** Starts it again on the same port, empty. */
  start(): Promise<void>;
  /** Freezes the server (SIGSTOP): connections stay open, nothing is answered. */
  pause(): void;
  /** Thaws a paused server (SIGCONT). */
  resume(): void;
}

export function redisServerInstalled(): boolean;
export function assertRedisInstalled(): void;
export function freePort(): Promise<number>;
export function startRedisServer(extraArgs?: string[]): Promise<RedisServer>;
