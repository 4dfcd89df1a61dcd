import { spawnSync } from 'node:child_process';
import { existsSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { removeGlideSocketsSince } from './glide-sockets.js';

describe('the test run\'s clean-up of the socket files Valkey GLIDE leaves in /tmp', () => {
  const made: string[] = [];
  const make = (pid: number, mtime?: Date): string => {
    const path = `/tmp/glide-socket-${pid}-0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0.sock`;
    writeFileSync(path, '');
    if (mtime !== undefined) utimesSync(path, mtime, mtime);
    made.push(path);
    return path;
  };
  afterEach(() => {
    for (const path of made.splice(0)) rmSync(path, { force: true });
  });

  it("removes an ended process' file made during the run, and keeps a live process' and an older one", () => {
    const ended = spawnSync(process.execPath, ['-e', '0']).pid!;
    const since = Date.now() - 60_000;
    const endedFile = make(ended);
    const liveFile = make(process.pid);
    const olderFile = make(ended + 1_000_000, new Date(since - 60_000));

    removeGlideSocketsSince(since);

    expect(existsSync(endedFile)).toBe(false);
    expect(existsSync(liveFile)).toBe(true);
    expect(existsSync(olderFile)).toBe(true);
  });
});
