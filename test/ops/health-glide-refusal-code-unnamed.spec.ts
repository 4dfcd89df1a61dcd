import { describe, expect, it, onTestFinished } from 'vitest';
import { RedisLockHealthIndicator } from '../../lib/terminus/index.js';
import { openClient, type HandedClientName } from '../support/handed-clients.js';
import { useOwnServer } from '../support/own-server.js';
import { terminusLockModule } from '../support/terminus-app.js';

/**
 * Found by a defect hunt (drivers). Without showDetails the Terminus indicator tells a node's
 * error by its Redis error code only ("Redis refused it: OOM"), as docs/observability.md says of a
 * server over maxmemory with noeviction, whose refusal of the check's write the node's error names.
 * Valkey GLIDE words a code it has no name of its own for as "OOM: command not allowed ..." (a
 * colon after the code), which the code's pattern (the code, then a space) did not take: the node
 * read "the client failed (showDetails: true shows its error)", naming nothing, on GLIDE only.
 */
describe('the Terminus indicator, a node over maxmemory (noeviction)', () => {
  const server = useOwnServer();

  it.each(['GLIDE', 'iovalkey'] as HandedClientName[])('names the refusal by its code, OOM (%s)', { timeout: 20_000 }, async (name) => {
    const handed = await openClient(name, server.url());
    onTestFinished(() => handed.close());
    const moduleRef = await terminusLockModule(handed.client);
    onTestFinished(() => moduleRef.close());
    const admin = server.admin();
    await admin.config('SET', 'maxmemory-policy', 'noeviction');
    await admin.config('SET', 'maxmemory', '1');
    onTestFinished(async () => void (await admin.config('SET', 'maxmemory', '0')));
    const health = await moduleRef.get(RedisLockHealthIndicator).isHealthy('locks');
    const nodes = (health as { locks?: { status?: string; nodes?: { error?: string }[] } }).locks?.nodes;
    expect(health.locks?.status).toBe('down');
    // Failed on GLIDE: "the client failed (showDetails: true shows its error)".
    expect(nodes?.[0]?.error, JSON.stringify(health)).toBe('Redis refused it: OOM');
  });
});
