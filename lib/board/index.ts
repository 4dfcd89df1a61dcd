export { RedisLockBoardModule } from './redis-lock-board.module.js';
export type { LockBoardAsyncOptions, LockBoardOptions, LockBoardRouteOptions, LockBoardSettings } from './lock-board-options.interface.js';
