import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

/** What a fixture whose startup the module refuses printed, and whether its process then ended. */
export interface RefusedStartup {
  /** `<class>: <message>` of the refusal, as the fixture printed it. */
  refused: unknown;
  /** Whether the process exited on its own within 15 s of its refusal (a generous bound: it has nothing left to do). */
  exited: boolean;
  /** `process.getActiveResourcesInfo()` the fixture printed half a second after the refusal. */
  resources: unknown;
  stderr: string;
}

/**
 * Runs `fixture` (it prints JSON lines `{"refused": ...}`, then `{"resources": [...]}`, and is left
 * to exit on its own, as a bootstrap that catches the error is) with `env` added, and reports.
 */
export async function runRefusedStartup(fixture: string, env: Record<string, string>): Promise<RefusedStartup> {
  const child = spawn(process.execPath, [fixture], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: Record<string, unknown>[] = [];
  // The 15 s run from the refusal: a loaded machine took most of them to start Node and Nest.
  let bound = setTimeout(() => child.kill('SIGKILL'), 45_000);
  createInterface({ input: child.stdout! }).on('line', (text) => {
    if (lines.length === 0) {
      clearTimeout(bound);
      bound = setTimeout(() => child.kill('SIGKILL'), 15_000);
    }
    lines.push(JSON.parse(text) as Record<string, unknown>);
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk));
  // Exited on its own, or killed at the bound.
  const ended = await new Promise<boolean>((resolve) => child.on('exit', (_code, signal) => resolve(signal !== 'SIGKILL')));
  clearTimeout(bound);
  return { refused: lines[0]?.refused, exited: ended, resources: lines.find((line) => 'resources' in line)?.resources, stderr };
}
