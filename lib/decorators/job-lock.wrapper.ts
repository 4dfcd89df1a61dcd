import { Inject } from '@nestjs/common';
import { Observable, throwError } from 'rxjs';
import { PROPERTY_DEPS_METADATA } from '@nestjs/common/constants.js';
import { RedisLockError } from '../errors/redis-lock.error.js';
import type { JobLockOptions, JobMethodDecorator } from '../interfaces/scheduling.interface.js';
import { LOCKED_METADATA } from '../redis-lock.constants.js';
import { addJobRole, checkJobOptions, jobDecorators, type JobRole, type JobSpec } from '../scheduling/job-spec.js';
import { shownName } from '../core/keys/shown-name.js';
import { JobLockOrchestrator } from '../scheduling/job-lock.orchestrator.js';
import { JOB_LOCK_METADATA, JOB_ORCHESTRATOR_PROPERTY } from '../scheduling/scheduling.constants.js';
import { foreignThis, hideOnInstances } from './hidden-property.js';
import { checkDecoratorCall } from './decorator-call.js';
import { GENERATOR_REFUSAL, isGeneratorFunction } from './generator-method.js';

type AnyMethod = (...args: any[]) => unknown;

/**
 * The method decorator behind `@WithoutOverlapping()` and `@OnOneInstance()`. The first of
 * them on a method wraps it; the second only adds its options to the wrapper's spec, so a
 * call takes the owner lease, then the run lock, then runs. The wrapper carries every piece of
 * metadata the method had (`@Cron()`, `@Interval()`, `@Timeout()` put theirs on the function),
 * and decorators applied later put theirs on the wrapper: the schedule explorer finds it in
 * either order.
 */
export function jobLockDecorator(role: JobRole, options: JobLockOptions | undefined): JobMethodDecorator {
  return (target: object, propertyKey: string | symbol, descriptor: TypedPropertyDescriptor<any>): void => {
    checkDecoratorCall(`@${role}()`, target, propertyKey, descriptor, 'only methods can be decorated');
    const isStatic = typeof target === 'function';
    const className = isStatic ? (target as { name: string }).name : target.constructor.name;
    const where = shownName(className, String(propertyKey));
    const current = descriptor.value as AnyMethod | undefined;
    if (typeof current !== 'function') {
      throw new RedisLockError(`@${role}() on ${where}: only methods can be decorated, not accessors or properties.`);
    }
    if (isStatic) {
      throw new RedisLockError(`@${role}() on ${where}: static methods are not supported; decorate an instance method of a provider.`);
    }
    // Its run would end (and its locks be given back) before the body ran, as its caller iterates.
    if (isGeneratorFunction(current)) {
      throw new RedisLockError(`@${role}() on ${where}: ${GENERATOR_REFUSAL}`);
    }
    // NOTE: @nestjs/schedule finds a class' methods with Nest's MetadataScanner, which lists their
    // string names only: a job named by a Symbol would never run on its @Cron/@Interval/@Timeout.
    if (typeof propertyKey === 'symbol') {
      throw new RedisLockError(
        `@${role}() on ${shownName(className)}[${shownSymbol(propertyKey)}]: a job method must be named by a string, not a Symbol: @nestjs/schedule finds methods by their string names only, so it would never run on its schedule. Give the method a string name.`,
      );
    }
    const checked = checkJobOptions(options, role, where);
    // The other job decorator's spec: on the function it made, or, when a decorator between the
    // two replaced that function without its metadata (a logging wrapper), on the method's name.
    const existing = (Reflect.getOwnMetadata(JOB_LOCK_METADATA, current) ?? Reflect.getOwnMetadata(JOB_LOCK_METADATA, target, propertyKey)) as JobSpec | undefined;
    if (existing !== undefined) {
      addJobRole(existing, role, checked);
      return;
    }
    if (Reflect.getOwnMetadata(LOCKED_METADATA, current) !== undefined) {
      throw new RedisLockError(`@${role}() on ${where}: the method already has @Locked; use one or the other.`);
    }
    const returnType: unknown = Reflect.getMetadata('design:returntype', target, propertyKey);
    const spec: JobSpec = { where, className, method: String(propertyKey) };
    addJobRole(spec, role, checked);
    injectOrchestrator(target);
    // Declared to return an Observable: the locks are taken at subscription, as @Locked does.
    const returnsObservable = typeof returnType === 'function' && (returnType === Observable || returnType.prototype instanceof Observable);

    const original = current;
    const wrapper = function (this: Record<symbol, unknown> | undefined, ...args: unknown[]): Promise<unknown> | Observable<unknown> {
      const jobs = this?.[JOB_ORCHESTRATOR_PROPERTY];
      if (!(jobs instanceof JobLockOrchestrator)) {
        const decorators = jobDecorators(spec);
        const foreign = foreignThis(this, target);
        const error = new RedisLockError(
          this === undefined || this === null
            ? `${decorators} method ${where} was called without its instance; call it as a method or bind it.`
            : foreign !== undefined
              ? `${decorators} method ${where} ${foreign}`
              : `${decorators} method ${where} has no lock service: the instance must be created by Nest, in a module that ` +
              'imports RedisLockModule (or after RedisLockModule.forRoot({ isGlobal: true })), and the method not called from its constructor ' +
              '(Nest gives the instance its lock service once the constructor has returned: call it from onApplicationBootstrap() or later).',
        );
        return returnsObservable ? throwError(() => error) : Promise.reject(error);
      }
      // The provider's own class names the job: a subclass has a key of its own.
      const job = jobs.bind(spec, (this as object).constructor);
      const invoke = (): unknown => original.apply(this, args);
      return returnsObservable ? jobs.runObservable(job, invoke) : jobs.run(job, invoke);
    };
    for (const metadataKey of Reflect.getOwnMetadataKeys(original)) {
      Reflect.defineMetadata(metadataKey, Reflect.getOwnMetadata(metadataKey, original), wrapper);
    }
    Reflect.defineMetadata(JOB_LOCK_METADATA, spec, wrapper);
    Reflect.defineMetadata(JOB_LOCK_METADATA, spec, target, propertyKey);
    Object.defineProperty(wrapper, 'name', { value: original.name });
    Object.defineProperty(wrapper, 'length', { value: original.length });
    descriptor.value = wrapper as never;
  };
}

function injectOrchestrator(prototype: object): void {
  const properties: { key: string | symbol }[] = Reflect.getMetadata(PROPERTY_DEPS_METADATA, prototype.constructor) ?? [];
  if (properties.some((property) => property.key === JOB_ORCHESTRATOR_PROPERTY)) return;
  Inject(JobLockOrchestrator)(prototype, JOB_ORCHESTRATOR_PROPERTY);
  hideOnInstances(prototype, JOB_ORCHESTRATOR_PROPERTY);
}

/** `Symbol(<description>)`, its description shown as `shownName` shows a name: it may be made at runtime. */
function shownSymbol(symbol: symbol): string {
  return symbol.description === undefined ? 'Symbol()' : `Symbol(${shownName(symbol.description)})`;
}
