export { RedisLockBoardModule } from './redis-lock-board.module.js';
export type { LockBoardOptions } from './lock-board-options.interface.js';
