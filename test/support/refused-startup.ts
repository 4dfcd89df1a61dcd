import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

/** What a fixture whose startup the module refuses printed, and whether its process then ended. */
export interface RefusedStartup {
  /** `<class>: <message>` of the refusal, as the fixture printed it. */
  refused: unknown;
  /** Whether the process exited on its own within 15 s (a generous bound: it has nothing left to do). */
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
  createInterface({ input: child.stdout! }).on('line', (text) => lines.push(JSON.parse(text) as Record<string, unknown>));
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk));
  const exited = new Promise<boolean>((resolve) => child.on('exit', () => resolve(true)));
  const ended = await Promise.race([exited, new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 15_000))]);
  if (!ended) child.kill('SIGKILL');
  return { refused: lines[0]?.refused, exited: ended, resources: lines.find((line) => 'resources' in line)?.resources, stderr };
}
