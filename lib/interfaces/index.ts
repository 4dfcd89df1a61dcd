export * from './redis-lock-options.interface.js';
export * from './lock.interface.js';
export * from './lock-event.interface.js';
export * from './locked-options.interface.js';
export * from './lock-inspection.interface.js';
export * from './scheduling.interface.js';
