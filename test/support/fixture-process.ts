import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { onTestFinished } from 'vitest';

/** A fixture script running in a Node process of its own (killed when the test ends). */
export interface FixtureProcess {
  /** Everything it printed so far. */
  output(): string;
  /** Its exit code once it exited on its own. */
  readonly exit: { code?: number | null };
  /** Writes a line to its stdin and ends it. */
  endWith(line: string): void;
}

/** Starts `script` (a URL, typically `new URL('./fixtures/x.mjs', import.meta.url)`) with `env` added. */
export function spawnFixture(script: URL, env: Record<string, string>): FixtureProcess {
  const child = spawn(process.execPath, [fileURLToPath(script)], { env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'inherit'] });
  onTestFinished(() => void child.kill('SIGKILL'));
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exit: { code?: number | null } = {};
  child.on('exit', (code) => (exit.code = code));
  return { output: () => output, exit, endWith: (line) => child.stdin.end(`${line}\n`) };
}
