/** Metadata a job wrapper carries: its `JobSpec`. */
export const JOB_LOCK_METADATA = 'nestjs-redis-lock:job';

/** Metadata a `@LeaderElection` class carries: its key and options. */
export const LEADER_ELECTION_METADATA = 'nestjs-redis-lock:leader-election';

/** Property under which Nest injects the job orchestrator into classes with job decorators. */
export const JOB_ORCHESTRATOR_PROPERTY: unique symbol = Symbol('nestjs-redis-lock:JobLockOrchestrator');
