export { RedisLockModule } from './redis-lock.module.js';
export { LockService } from './lock.service.js';
export * from './errors/index.js';
export * from './interfaces/index.js';
export { Locked } from './decorators/locked.decorator.js';
export { LOCK_DIAGNOSTICS_CHANNELS } from './core/engine/lock-diagnostics.js';
export { WithoutOverlapping } from './decorators/without-overlapping.decorator.js';
export { OnOneInstance } from './decorators/on-one-instance.decorator.js';
export { LeaderElection } from './decorators/leader-election.decorator.js';
