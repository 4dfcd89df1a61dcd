/** A throwaway PostgreSQL server on a loopback port, its data in a temporary directory. */
export interface PostgresServer {
  readonly port: number;
  /** `postgres://postgres@127.0.0.1:<port>/postgres` (trust authentication). */
  readonly url: string;
  /** The postmaster's pid. */
  readonly pid: number;
  /** Stops the server and deletes its data directory. */
  stop(): Promise<void>;
}

export function postgresBinDir(): string | undefined;
export function postgresInstalled(): boolean;
export function assertPostgresInstalled(): void;
export function startPostgresServer(): Promise<PostgresServer>;
/** A streaming replica of `primary` that applies its changes `applyDelayMs` late (default 0). */
export function startPostgresReplica(primary: PostgresServer, options?: { applyDelayMs?: number }): Promise<PostgresServer>;
