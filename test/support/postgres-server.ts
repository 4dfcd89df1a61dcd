export { assertPostgresInstalled, startPostgresReplica, startPostgresServer, type PostgresServer } from '../../scripts/postgres-server.mjs';
