export * from './redis-lock.error.js';
export * from './lock-not-acquired.error.js';
export * from './lock-lost.error.js';
export * from './lock-key.error.js';
export * from './invalid-lock-options.error.js';
export * from './duplicate-lock-key.error.js';
export * from './semaphore-limit.error.js';
export * from './unsupported-lock-kind.error.js';
