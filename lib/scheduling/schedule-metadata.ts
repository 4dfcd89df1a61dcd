import { Observable } from 'rxjs';
import { RedisLockError } from '../errors/redis-lock.error.js';

/**
 * `@nestjs/schedule`'s metadata key for what schedules a method, and its values (its
 * `SchedulerType`): read by name, so that the library needs no import of `@nestjs/schedule`.
 */
const SCHEDULER_TYPE = 'SCHEDULER_TYPE';
const SCHEDULES: Record<number, string> = { 1: '@Cron()', 2: '@Timeout()', 3: '@Interval()' };

/** The provider of `@nestjs/schedule` that finds scheduled methods: in an application, they run. */
const SCHEDULE_EXPLORER = 'ScheduleExplorer';

/** Methods of `@nestjs/schedule`'s `SchedulerRegistry`, which a build that renames classes keeps. */
const REGISTRY_METHODS = ['addCronJob', 'getCronJob', 'addInterval', 'getInterval', 'addTimeout', 'getTimeout'];

/**
 * Whether `@nestjs/schedule` runs the application's scheduled methods: its explorer is provided,
 * found by its class name, or by the shape of its `SchedulerRegistry`, read without importing the
 * package: a minified build renames the class (Nest resolves it by reference all the same).
 */
export function schedulingIn(wrappers: readonly { name?: unknown; instance?: unknown }[]): boolean {
  return wrappers.some((wrapper) => wrapper.name === SCHEDULE_EXPLORER || isSchedulerRegistry(wrapper.instance));
}

function isSchedulerRegistry(instance: unknown): boolean {
  if (instance === null || typeof instance !== 'object') return false;
  return REGISTRY_METHODS.every((method) => typeof (instance as Record<string, unknown>)[method] === 'function');
}

/** The decorator of `@nestjs/schedule` that schedules `method` (`@Interval()`), or `undefined`. */
export function scheduleOf(method: Function): string | undefined {
  return SCHEDULES[Reflect.getMetadata(SCHEDULER_TYPE, method) as number];
}

/**
 * Refuses a job or `@Locked` method that `@nestjs/schedule` runs and that is declared to return
 * an Observable: the schedule awaits what the method returns and never subscribes to it, and such
 * a method takes its locks and runs only when subscribed (its wrapper reads the same declared
 * type), so it would never run on its schedule. `where` names it: `@Locked on Class.method`.
 */
export function checkScheduledReturn(where: string, prototype: object, name: string | symbol, method: Function): void {
  const schedule = scheduleOf(method);
  if (schedule === undefined) return;
  const returnType: unknown = Reflect.getMetadata('design:returntype', prototype, name);
  if (!(typeof returnType === 'function' && (returnType === Observable || returnType.prototype instanceof Observable))) return;
  throw new RedisLockError(
    `${where}: ${schedule} awaits what the method returns and never subscribes to it, and a method declared to return an Observable takes its locks and runs only when subscribed: it would never run on its schedule. ` +
      'Declare the method to return a Promise (return lastValueFrom(...) of the Observable), or call it from a scheduled method that subscribes.',
  );
}
