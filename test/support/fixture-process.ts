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
  /**
   * The first line it printed (whole: up to its newline) that `pattern` matches, as soon as it
   * printed it, however long its start takes on a loaded machine (the test's timeout bounds the
   * wait); rejects once it exited without printing one.
   */
  line(pattern: RegExp): Promise<RegExpExecArray>;
  /** Sends it `signal` (SIGTERM: its own shutdown) and resolves once it exited and its output was read. */
  kill(signal?: NodeJS.Signals): Promise<void>;
}

/** Starts `script` (a URL, typically `new URL('./fixtures/x.mjs', import.meta.url)`) with `env` added. */
export function spawnFixture(script: URL, env: Record<string, string>): FixtureProcess {
  const child = spawn(process.execPath, [fileURLToPath(script)], { env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'inherit'] });
  onTestFinished(() => void child.kill('SIGKILL'));
  let output = '';
  const exit: { code?: number | null } = {};
  const watchers = new Set<() => void>();
  let ended = false;
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString();
    for (const watch of [...watchers]) watch();
  });
  child.on('exit', (code) => (exit.code = code));
  // After 'exit', once its output was read to the end.
  const closed = new Promise<void>((resolve) =>
    child.on('close', () => {
      ended = true;
      for (const watch of [...watchers]) watch();
      resolve();
    }),
  );
  const line = (pattern: RegExp): Promise<RegExpExecArray> =>
    new Promise((resolve, reject) => {
      const watch = (): void => {
        const whole = output.slice(0, output.lastIndexOf('\n') + 1).split('\n');
        for (const text of whole) {
          const match = pattern.exec(text);
          if (match === null) continue;
          watchers.delete(watch);
          resolve(match);
          return;
        }
        if (!ended) return;
        watchers.delete(watch);
        reject(new Error(`The fixture exited (code ${exit.code}) without printing a line matching ${pattern}; it printed: ${JSON.stringify(output)}`));
      };
      watchers.add(watch);
      watch();
    });
  const kill = (signal: NodeJS.Signals = 'SIGTERM'): Promise<void> => {
    if (!ended) child.kill(signal);
    return closed;
  };
  return { output: () => output, exit, endWith: (text) => child.stdin.end(`${text}\n`), line, kill };
}

/** What a fixture script run to its end (`runFixture`) printed, and how it ended. */
export interface FixtureRun {
  /** Its stdout, line by line. */
  lines: string[];
  /** Its exit code (null when killed). */
  code: number | null;
  /** Milliseconds from its printing the line "closed" (after its app.close()) to its exit: Infinity if it never printed it. */
  exitAfterClose: number;
}

/**
 * Runs `script` (a URL, as for `spawnFixture`) in a Node process of its own with `env` added and
 * `nodeArgs` before the script, until it exits (killed after 30 s).
 */
export function runFixture(script: URL, env: Record<string, string>, nodeArgs: string[] = []): Promise<FixtureRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...nodeArgs, fileURLToPath(script)], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
    const lines: string[] = [];
    let closedAt = 0;
    let buffer = '';
    child.stdout.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      let newline: number;
      while ((newline = buffer.indexOf('\n')) !== -1) {
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + 1);
        if (line === 'closed') closedAt = performance.now();
        lines.push(line);
      }
    });
    const killer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('error', reject);
    child.on('exit', (code) => {
      clearTimeout(killer);
      resolve({ lines, code, exitAfterClose: closedAt === 0 ? Infinity : performance.now() - closedAt });
    });
  });
}
