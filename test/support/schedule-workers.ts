import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';

const script = fileURLToPath(new URL('../fixtures/schedule-worker.mjs', import.meta.url));

/** A line the worker printed. */
export interface WorkerLine {
  pid: number;
  event: 'ready' | 'start' | 'end' | 'released' | 'skipped' | 'acquired' | 'busy' | 'lost' | 'closed' | 'blocking' | 'warn' | 'error';
  tick?: number;
  /** The lock of a `released` line other than the run lock's (which has `tick`), or of a `busy` one. */
  key?: string;
  /** Of a `lost` line: the `LockLostError` reason (`expired`, `refused`, `shutdown`). */
  reason?: string;
  fencingToken?: number;
  aborted?: boolean;
  held?: boolean;
  message?: string;
  /** When the test received it (performance.now()). */
  receivedAt: number;
}

/** One application instance in its own process (test/fixtures/schedule-worker.mjs). */
export class Worker {
  readonly lines: WorkerLine[] = [];
  readonly exited: Promise<number | null>;
  private readonly child: ChildProcess;
  private readonly listeners = new Set<() => void>();
  private stderr = '';

  private constructor(env: Record<string, string>) {
    this.child = spawn(process.execPath, [script], { env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
    let buffer = '';
    this.child.stdout!.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      let newline: number;
      while ((newline = buffer.indexOf('\n')) !== -1) {
        const text = buffer.slice(0, newline);
        buffer = buffer.slice(newline + 1);
        this.lines.push({ ...(JSON.parse(text) as WorkerLine), receivedAt: performance.now() });
        for (const listener of [...this.listeners]) listener();
      }
    });
    this.child.stderr!.on('data', (chunk: Buffer) => (this.stderr += chunk.toString()));
    this.exited = new Promise((resolve) => this.child.on('exit', (code) => {
      for (const listener of [...this.listeners]) listener();
      resolve(code);
    }));
  }

  static async start(env: Record<string, string>): Promise<Worker> {
    const worker = new Worker(env);
    await worker.waitFor((line) => line.event === 'ready', 30_000);
    return worker;
  }

  get pid(): number {
    return this.child.pid!;
  }

  get alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  send(command: string): void {
    this.child.stdin!.write(command + '\n');
  }

  signal(name: NodeJS.Signals): void {
    this.child.kill(name);
  }

  /** The first line (from `from` on) that matches, waiting up to `ms` for it. */
  waitFor(match: (line: WorkerLine) => boolean, ms = 10_000, from = 0): Promise<WorkerLine> {
    return new Promise((resolve, reject) => {
      const check = (): boolean => {
        const found = this.lines.slice(from).find(match);
        if (found !== undefined) {
          done();
          resolve(found);
          return true;
        }
        if (!this.alive && this.child.stdout!.readableEnded) {
          done();
          reject(new Error(`worker ${this.pid} exited first; lines: ${JSON.stringify(this.lines)}; stderr: ${this.stderr}`));
          return true;
        }
        return false;
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`worker ${this.pid}: no matching line within ${ms} ms; lines: ${JSON.stringify(this.lines)}; stderr: ${this.stderr}`));
      }, ms);
      const done = (): void => {
        clearTimeout(timer);
        this.listeners.delete(listener);
      };
      const listener = (): void => void check();
      this.listeners.add(listener);
      check();
    });
  }

  /** Errors or warnings the worker logged, and anything on stderr: none expected. */
  problems(): string[] {
    return [...this.lines.filter((line) => line.event === 'error').map((line) => line.message!), ...(this.stderr ? [this.stderr] : [])];
  }

  async stop(): Promise<void> {
    if (this.alive) {
      this.child.kill('SIGKILL');
      await this.exited;
    }
  }
}

export async function startWorkers(count: number, env: Record<string, string>): Promise<Worker[]> {
  return Promise.all(Array.from({ length: count }, () => Worker.start(env)));
}

/** What each worker did with one tick: ran it, or skipped it. */
export interface TickOutcome {
  ran: Worker[];
  skipped: Worker[];
}

/**
 * Fires tick `n` (a run lasting `runMs`) on every worker at once and waits until each has
 * either started the job or logged that it skipped it.
 */
export async function tick(workers: Worker[], n: number, runMs = 0): Promise<TickOutcome> {
  const marks = workers.map((worker) => worker.lines.length);
  for (const worker of workers) worker.send(`tick ${n} ${runMs}`);
  const outcomes = await Promise.all(
    workers.map((worker, i) => worker.waitFor((line) => line.tick === n && (line.event === 'start' || line.event === 'skipped'), 10_000, marks[i])),
  );
  return {
    ran: workers.filter((_, i) => outcomes[i]!.event === 'start'),
    skipped: workers.filter((_, i) => outcomes[i]!.event === 'skipped'),
  };
}

/** Fires ticks every `everyMs` until one runs somewhere; each tick runs at most once. */
export async function tickUntilRun(workers: Worker[], first: number, everyMs: number, withinMs: number): Promise<{ tick: number; worker: Worker; at: number }> {
  const until = performance.now() + withinMs;
  for (let n = first; performance.now() < until; n++) {
    const { ran } = await tick(workers, n);
    expect(ran.length).toBeLessThanOrEqual(1);
    if (ran.length === 1) return { tick: n, worker: ran[0]!, at: performance.now() };
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
  throw new Error(`no instance ran the job within ${withinMs} ms`);
}

/** The workers' leadership: acquisitions minus losses, from their lines so far. */
export function leaders(workers: Worker[]): Worker[] {
  return workers.filter((worker) => {
    const acquired = worker.lines.filter((line) => line.event === 'acquired').length;
    const lost = worker.lines.filter((line) => line.event === 'lost').length;
    return worker.alive && acquired > lost;
  });
}

/** Waits until some worker (other than `except`) prints `acquired` after line marks `marks`. */
export function nextLeader(workers: Worker[], ms: number, except?: Worker): Promise<{ worker: Worker; line: WorkerLine }> {
  const candidates = workers.filter((worker) => worker !== except);
  const marks = candidates.map((worker) => worker.lines.length);
  return Promise.any(
    candidates.map((worker, i) => worker.waitFor((line) => line.event === 'acquired', ms, marks[i]).then((line) => ({ worker, line }))),
  );
}
