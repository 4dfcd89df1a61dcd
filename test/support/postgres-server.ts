export { assertPostgresInstalled, startPostgresServer, type PostgresServer } from '../../scripts/postgres-server.mjs';
