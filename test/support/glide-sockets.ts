import { readdirSync, statSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';

const SOCKET_DIR = '/tmp';
const SOCKET = /^glide-socket-(\d+)-[0-9a-f-]+\.sock$/;

/** Whether process `pid` still runs (EPERM: it runs under another user). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Removes the socket files Valkey GLIDE's core left in /tmp for processes of this run that have
 * ended: GLIDE makes one per process (always in /tmp, whatever TMPDIR says) and never removes it
 * (valkey-io/valkey-glide#4747), so every run of the suite left a few hundred behind. Only files
 * made since `since` (ms) by a process that no longer runs are touched: another run's, or a live
 * process', are left alone.
 */
export function removeGlideSocketsSince(since: number): number {
  let removed = 0;
  let names: string[];
  try {
    names = readdirSync(SOCKET_DIR);
  } catch {
    return 0;
  }
  for (const name of names) {
    const match = SOCKET.exec(name);
    if (match === null || alive(Number(match[1]))) continue;
    const path = join(SOCKET_DIR, name);
    try {
      if (statSync(path).mtimeMs < since) continue;
      unlinkSync(path);
      removed++;
    } catch {
      // Gone already, or not ours to remove.
    }
  }
  return removed;
}
