import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { killOnExit, onFreshPorts, PortTakenError, waitForOwnServer } from '../../scripts/ports.mjs';
import { startRedisServer } from './redis-server.js';

const serve = (port: number) => killOnExit(spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' }));

// Two files of a parallel run may pick the same fixed port for their deployments; the loser's
// server exits, the winner's answers its PINGs. Found in a loaded fresh-clone run: a Sentinel
// deployment's "sentinel" answered "ERR unknown command 'SENTINEL'", a redis-server of another file.
describe('waitForOwnServer', () => {
  it('rejects with PortTakenError when another process serves the port', async () => {
    const other = await startRedisServer();
    const late = serve(other.port);
    try {
      await expect(waitForOwnServer(other.port, late)).rejects.toBeInstanceOf(PortTakenError);
    } finally {
      if (late.exitCode === null && late.signalCode === null) late.kill('SIGKILL');
      await other.stop();
    }
  });

  it('resolves for the server that serves it', async () => {
    await onFreshPorts(1, 0, async ([port]) => {
      const child = serve(port!);
      try {
        await waitForOwnServer(port!, child);
      } finally {
        const exited = once(child, 'exit');
        child.kill('SIGTERM');
        await exited;
      }
    });
  });
});
