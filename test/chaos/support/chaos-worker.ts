import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const script = fileURLToPath(new URL('../fixtures/chaos-worker.mjs', import.meta.url));

/** A running chaos worker: its JSON lines as they come, and how it ended. */
export class ChaosWorker {
  readonly lines: unknown[] = [];
  /** CLOCK_MONOTONIC ms when the worker printed "closed" (after app.close()). */
  closedAt?: number;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>;
  private readonly waiting: { match: (line: unknown) => boolean; resolve: (line: unknown) => void }[] = [];
  private stderr = '';

  constructor(
    readonly child: ChildProcess,
    readonly label: string,
  ) {
    createInterface({ input: child.stdout! }).on('line', (text) => {
      const line: unknown = JSON.parse(text);
      if (line === 'closed') this.closedAt = monotonicMs();
      this.lines.push(line);
      for (const waiter of [...this.waiting]) {
        if (waiter.match(line)) {
          this.waiting.splice(this.waiting.indexOf(waiter), 1);
          waiter.resolve(line);
        }
      }
    });
    child.stderr!.on('data', (chunk: Buffer) => (this.stderr += chunk));
    // A worker that has already ended (it may finish by itself once its lock is lost) takes no
    // more input: a line sent then fails with EPIPE, which says nothing about the test. Its exit
    // and output are what `exitsOnItsOwn()` and `next()` check.
    child.stdin!.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EPIPE') throw error;
    });
    this.exited = new Promise((resolve) =>
      child.on('exit', (code, signal) => {
        if (code !== 0 && signal === null) process.stderr.write(`chaos worker ${label} exited ${code}: ${this.stderr}\n`);
        resolve({ code, signal, at: monotonicMs() });
      }),
    );
  }

  /** `file`: another worker script (the lock family's workers), default the chaos worker. */
  static start(env: Record<string, string | number>, label = String(env.MODE), nodeArgs: string[] = [], file = script): ChaosWorker {
    const child = spawn(process.execPath, [...nodeArgs, file], {
      env: { ...process.env, ...Object.fromEntries(Object.entries(env).map(([k, v]) => [k, String(v)])) },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    return new ChaosWorker(child, label);
  }

  /** The first line (already printed or still to come) that has `field`. */
  next<T = Record<string, unknown>>(field: string, timeoutMs = 20_000): Promise<T> {
    const match = (line: unknown): boolean => typeof line === 'object' && line !== null && field in line;
    const seen = this.lines.find(match);
    if (seen) return Promise.resolve(seen as T);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no "${field}" line within ${timeoutMs} ms; stderr: ${this.stderr}`)), timeoutMs);
      this.waiting.push({
        match,
        resolve: (line) => {
          clearTimeout(timer);
          resolve(line as T);
        },
      });
    });
  }

  send(line: string): void {
    this.child.stdin!.write(`${line}\n`);
  }

  get stderrText(): string {
    return this.stderr;
  }

  /** Waits for the worker to exit by itself, failing if it does not within `ms` of closing. */
  async exitsOnItsOwn(ms = 2_000): Promise<number> {
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 60_000);
    const { code, at } = await this.exited;
    clearTimeout(timer);
    if (code !== 0) throw new Error(`worker ${this.label} exited with ${code}: ${this.stderr}`);
    if (this.closedAt === undefined) throw new Error(`worker ${this.label} never printed "closed"`);
    const after = at - this.closedAt;
    if (after > ms) throw new Error(`worker ${this.label} took ${Math.round(after)} ms to exit after app.close()`);
    return after;
  }
}

export function monotonicMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}
