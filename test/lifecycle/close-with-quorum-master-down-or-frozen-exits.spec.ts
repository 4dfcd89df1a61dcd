import { describe, expect, it, onTestFinished } from 'vitest';
import { spawnFixture } from '../support/fixture-process.js';
import { startRedisServer } from '../support/redis-server.js';

describe('app.close() in quorum mode with one master (a minority) down or frozen', () => {
  for (const fault of ['killed', 'frozen'] as const) {
    it(`lets the process exit on its own, one master ${fault}`, { timeout: 60_000 }, async () => {
      const servers = await Promise.all([0, 1, 2].map(() => startRedisServer()));
      onTestFinished(async () => {
        for (const server of servers) server.resume();
        await Promise.all(servers.map((server) => server.stop({ kill: true }).catch(() => undefined)));
      });
      const child = spawnFixture(new URL('./fixtures/close-quorum-master-down.mjs', import.meta.url), { QUORUM_URLS: JSON.stringify(servers.map((s) => s.url)) });
      // However long its start takes on a loaded machine (the test's timeout bounds it).
      await child.line(/^ready$/);
      if (fault === 'killed') await servers[2]!.stop({ kill: true });
      else servers[2]!.pause();
      child.endWith('go');
      const [, closed] = await child.line(/^closed (\[.*\])$/);
      console.log(child.output());
      const left = JSON.parse(closed!) as string[];
      expect(left.filter((resource) => resource !== 'PipeWrap' && resource !== 'TTYWrap')).toEqual([]);
      await expect.poll(() => child.exit, { timeout: 30_000 }).toEqual({ code: 0 });
    });
  }
});
