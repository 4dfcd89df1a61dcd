/**
 * Found by review (thirty-fifth session). A GLIDE client handed in: release messages come on a
 * GLIDE client of the library's own, which subscribes as waiters come and go. GLIDE 2 keeps the
 * subscriptions a client wants and has its core reconcile the server's with them in the
 * background. `app.close()` closed that client while it still wanted channels (a waiter's, or
 * one lingering for a second after its last waiter), and the core's next reconciliation, finding
 * the client dropped, logged at ERROR level ("pubsub_synchronizer - Failed to subscribe Exact
 * channels: Internal client has been dropped"), on the console by GLIDE's default: an error line
 * at every shutdown, though nothing had failed. The client now gives its channels up (GLIDE's
 * `unsubscribeLazy`, `sunsubscribeLazy` on a Cluster) before it is closed.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, onTestFinished } from 'vitest';
import { startRedisCluster } from '../../scripts/redis-cluster.mjs';
import { startRedisServer } from '../support/redis-server.js';

/** Runs the fixture to its end; resolves everything it wrote, stdout and stderr (where GLIDE's core logs). */
function run(env: Record<string, string>): Promise<string> {
  const script = fileURLToPath(new URL('./fixtures/glide-close-with-subscription.mjs', import.meta.url));
  const child = spawn(process.execPath, [script], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  onTestFinished(() => void child.kill('SIGKILL'));
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return new Promise((resolve) => child.on('close', () => resolve(output)));
}

describe('app.close() on a GLIDE client with a release channel subscribed', () => {
  it('one server: GLIDE logs no error', { timeout: 60_000 }, async () => {
    const server = await startRedisServer();
    onTestFinished(() => server.stop());
    const output = await run({ REDIS_URL: server.url });
    expect(output).toContain('done');
    expect(output).not.toMatch(/ERROR|pubsub_synchronizer/);
  });

  it('a Cluster: GLIDE logs no error', { timeout: 60_000 }, async () => {
    const cluster = await startRedisCluster(3);
    onTestFinished(() => cluster.stop());
    const output = await run({ CLUSTER_NODES: JSON.stringify(cluster.nodes) });
    expect(output).toContain('done');
    expect(output).not.toMatch(/ERROR|pubsub_synchronizer/);
  });
});
