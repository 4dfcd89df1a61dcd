import type { History, Violation } from './checker.mjs';

export type Workload = 'mutex' | 'semaphore' | 'rwlock' | 'job' | 'leader' | 'transfer' | 'greedy';
export type Finish = 'drain' | 'abrupt';
export type FaultKind = 'pause' | 'kill' | 'cut' | 'delay' | 'drop-replies' | 'drop-requests' | 'reset' | 'redis-pause' | 'restart-empty' | 'migrate' | 'long-pause' | 'silent-restart' | 'delete-key' | 'drop-messages' | 'foreign-counter';

export const WORKLOADS: Workload[];
export const FAULT_KINDS: FaultKind[];
export const FINISHES: Finish[];

export interface Fault {
  kind: FaultKind;
  /** ms after the workers started their workload. */
  at: number;
  /** How long it lasts (pause, cut, drops, delay, redis-pause). */
  ms?: number;
  /** The added latency of a delay, each way. */
  delay?: number;
  /** The worker a pause, a kill or a network fault hits (a network fault without one: every worker). */
  worker?: number;
  /** Hit whichever worker holds a lock at that moment, if any (else `worker`). */
  holder?: boolean;
  /** The Cluster master a network or Redis fault hits. */
  node?: number;
  /** migrate: the receiving master, 1 or 2 places after the slot's owner among the Cluster's nodes. */
  to?: number;
  /** migrate: the seed of the order in which the slot's keys move. */
  order?: number;
  /** migrate: the pause after each key moved, drawn from [lo, hi] ms. */
  gap?: [number, number];
  /** delete-key: the class of key deleted (`owner`, `guard`, `queue`, `fence`), and which of those Redis holds then. */
  of?: 'owner' | 'guard' | 'queue' | 'fence';
  pick?: number;
  /** redis-pause: the freeze `--freeze` adds, past an attempt's 1 s grace. */
  frozen?: boolean;
  /** foreign-counter: what the run's fencing counters hold for `ms` (past 2^53, or negative), then deleted. */
  value?: string;
  /** foreign-counter, quorum mode: the masters whose counters are written (one, or a majority). */
  masters?: number[];
}

export interface Schedule {
  seed: number;
  /** `quorum`: three independent masters in quorum mode (never drawn; mutex, job, leader or transfer). */
  target: 'single' | 'cluster' | 'quorum';
  workload: Workload;
  workers: number;
  chains: number;
  ttl: number;
  limit: number;
  runMs: number;
  faults: Fault[];
  /** A slot migration schedule (see `makeSchedule`'s `migrate`). */
  migrate?: boolean;
  /** On a Cluster: the master (index of its nodes) holding the lock's key, and a job's owner lease. */
  placement?: { lock: number; owner: number };
  /** How the workers stop: their chains finish first (`drain`), or app.close() comes while they run (`abrupt`). */
  finish: Finish;
  /** `abrupt` only: the worker whose links to Redis are cut as it closes (for 1.6 s). */
  closeCut?: number;
  /** Steps of every section (worker.mjs's WRITES), instead of the seed's draw. */
  writes?: number;
  /** `node-redis`: each worker hands the module a node-redis client of its own (one server only; never drawn). */
  driver?: 'node-redis';
  /** A quorum silence schedule (see `makeSchedule`'s `silence`). */
  silence?: boolean;
  /** `--silent-close`: the master frozen from 1.5 s before the workers close until they all closed. */
  closeSilence?: number;
  /** `--handed`: the workers hand the module quorum clients of their own, open past their close. */
  handed?: boolean;
  /** `--handed --target single`: the frozen server is restarted empty once the workers closed, not resumed (half of them). */
  closeRestart?: boolean;
  /** The workers' shutdownTimeout, when not the 1 s default (`--silent-close`: 3 s). */
  shutdownMs?: number;
  /** A latency schedule's link length to every master, ms each way (see `makeSchedule`'s `latency`). */
  latency?: number;
  /** How long the run goes on after its last fault (silence schedules). */
  settleMs?: number;
  /** A lock key deleted from outside on top of the seed's faults (`--deletes`). */
  deletes?: boolean;
  /** The run's fencing counters holding a value no token can be for a while, on top of the seed's faults (`--foreign-counters`). */
  foreign?: boolean;
  /** Release messages lost for a while on top of the seed's faults (`--drop-messages`). */
  mute?: boolean;
  /** Redis frozen past an attempt's 1 s grace on top of the seed's faults (`--freeze`). */
  freeze?: boolean;
  /** Each worker reads the lock (isLocked(), inspect()) every 50 ms (`--freeze`). */
  reads?: boolean;
}

export interface RunResult {
  schedule: Schedule;
  history: History & { schedule: Schedule };
  violations: Violation[];
  figures: {
    faults: Partial<Record<FaultKind, number>>;
    sections: number;
    entered: number;
    failed: number;
    writes: number;
    refused: number;
    lost: number;
    /** The workers' event-loop stalls, and the runner's (every link's proxy waits through them). */
    stalls: number;
    runnerStalls: number;
    /** Quorum silence as the workers' stores saw it: masters silenced, their returns, releases resent. */
    silenced: number;
    comebacks: number;
    resent: number;
    /** The class of each key deleted from outside (`none`: there was nothing to delete); the permit probe's aside. */
    deleted: string[];
    /** Whether the permit probe (`--deletes` semaphore schedules that drain) deleted its holder's permit key; absent where it did not run. */
    probe?: boolean;
    /** Whether the own run probe (one server, job schedules that drain) held a run across its restart of Redis; absent where it did not run. */
    ownRun?: boolean;
    /** Whether the unrenewed handover probe (one server, mutex schedules that drain) ran; absent where it did not. */
    unrenewed?: boolean;
    /** The chunks of release messages the subscribers did not hear (`--drop-messages`). */
    mutedChunks: number;
  };
}

export interface Environment {
  stop(): Promise<void>;
}

export function generator(seed: number): { next(): number; int(lo: number, hi: number): number; pick<T>(list: T[]): T };
export function makeSchedule(seed: number, options?: { target?: 'single' | 'cluster' | 'quorum'; workload?: Workload; migrate?: boolean; driver?: 'ioredis' | 'node-redis'; silence?: boolean; silentClose?: boolean; handed?: boolean; latency?: boolean; deletes?: boolean; mute?: boolean; freeze?: boolean; foreign?: boolean }): Schedule;
export function describeFault(fault: Fault): string;
/** The class of a run's Redis key: its lock's own key, a guard, a queue key or the fencing counter. */
export function keyClass(name: string): 'owner' | 'guard' | 'queue' | 'fence';
/** The lock (as the workers name it) a Redis key belongs to: what its hash tag holds. */
export function lockOfKey(name: string): string | undefined;
export function describePlacement(schedule: Schedule): string;
export function startEnvironment(options?: { cluster?: boolean; quorum?: boolean }): Promise<Environment>;
export function runSchedule(environment: Environment, schedule: Schedule): Promise<RunResult>;
export function formatResult(result: RunResult): string;

/** A long-lived worker process (worker.mjs) that runs one workload at a time. */
export class Worker {
  constructor(id: string, registerUrl: string);
  readonly id: string;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Starts a workload: worker.mjs's config (KEY, WORKLOAD, TTL, HISTORY, REDIS_URL, ...). */
  start(config: Record<string, string | number>): Promise<void>;
  /** Sends a message over IPC (`{ tick }` to a job workload). */
  send(message: object): void;
  /** Ends the workload; false if its calls and its application did not settle within `ms`. */
  finish(ms?: number): Promise<boolean>;
  exit(): Promise<void>;
  kill(): Promise<unknown>;
}

/** What the run of lock `key` left on `nodes` (every master of a Cluster), fencing counters aside: one `store` event per key. */
export function storeSnapshot(nodes: { host?: string; port: number }[], key: string): Promise<import('./checker.mjs').HistoryEvent[]>;

/** The events recorded in the workers' history `files`, with the register's log for `key`. */
export function readHistory(files: string[], register: import('ioredis').Redis, key: string): Promise<import('./checker.mjs').HistoryEvent[]>;

