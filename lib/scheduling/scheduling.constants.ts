/** Metadata a job wrapper carries: its `JobSpec`. */
export const JOB_LOCK_METADATA = 'nestjs-redis-lock:job';

/** Metadata a `@LeaderElection` class carries: its key and options. */
export const LEADER_ELECTION_METADATA = 'nestjs-redis-lock:leader-election';

/**
 * Property under which Nest injects the job orchestrator into classes with job decorators. Its
 * description is the one text of Nest's error (`Please make sure that the "..." property is
 * available`) that the library controls, for a job class in a module that does not see
 * RedisLockModule: it says what to do.
 */
export const JOB_ORCHESTRATOR_PROPERTY: unique symbol = Symbol(
  'nestjs-redis-lock:JobLockOrchestrator, for @OnOneInstance()/@WithoutOverlapping(): import RedisLockModule into this module, or give RedisLockModule.forRoot() isGlobal: true',
);
