import { quoteKey } from '../core/keys/quote-key.js';
import { shownName } from '../core/keys/shown-name.js';
import { cutWhole, wellFormed } from '../core/keys/cut-text.js';
import { parseDuration } from '../core/time/duration.js';
import { checkLockKey } from '../core/keys/lock-key.js';
import { MAX_TTL_MS, MIN_TTL_MS } from '../core/options/lock-options.js';
import { InvalidLockOptionsError } from '../errors/invalid-lock-options.error.js';
import { RedisLockError } from '../errors/redis-lock.error.js';
import { LockKeyError } from '../errors/lock-key.error.js';
import type { JobLockOptions } from '../interfaces/scheduling.interface.js';

/** Which job decorator an option came from. */
export type JobRole = 'WithoutOverlapping' | 'OnOneInstance';

/** A job decorator's options, checked. */
export interface JobRoleOptions {
  key?: string;
  ttl?: number;
}

/**
 * What the job decorators on one method asked for. Both decorators on one method share one
 * spec (and one wrapper), whatever their order and whatever other decorators sit between them.
 */
export interface JobSpec {
  /** `ClassName.methodName` of the class that declared the method, for messages at decoration time (see `shownName`). */
  readonly where: string;
  /** The name of the class that declared the method. */
  readonly className: string;
  /** The method's name. */
  readonly method: string;
  WithoutOverlapping?: JobRoleOptions;
  OnOneInstance?: JobRoleOptions;
}

/** Suffix of the lease `@OnOneInstance()` keeps between calls. */
export const OWNER_SUFFIX = ':owner';

/** Checks a job decorator's options when the class is defined. */
export function checkJobOptions(options: JobLockOptions | undefined, role: JobRole, where: string): JobRoleOptions {
  if (options === undefined) return {};
  try {
    if (options === null || typeof options !== 'object') {
      throw new InvalidLockOptionsError('options', options, 'an object or undefined');
    }
    // A misspelt name (`tll`) would run the job on the module's ttl, or another key, without a word.
    for (const name of Object.keys(options)) {
      if (name !== 'key' && name !== 'ttl') throw new InvalidLockOptionsError(name, (options as Record<string, unknown>)[name], `left out: it is no option of @${role}() (its options are key, ttl)`);
    }
    const checked: JobRoleOptions = {};
    if (options.key !== undefined) checked.key = checkNotTemplate(checkLockKey(options.key, 'key'));
    // The lease is kept under `<key>:owner`, a key of its own that must pass the same rules.
    if (checked.key !== undefined && role === 'OnOneInstance') checkLockKey(checked.key + OWNER_SUFFIX, 'key with its ":owner" suffix');
    if (options.ttl !== undefined) checked.ttl = parseDuration(options.ttl, 'ttl', MIN_TTL_MS, MAX_TTL_MS);
    return checked;
  } catch (error) {
    if (error instanceof InvalidLockOptionsError) throw error.within(`@${role}() on ${where}`);
    if (error instanceof LockKeyError) throw new LockKeyError(`@${role}() on ${where}: ${error.message}`);
    if (error instanceof RedisLockError) throw new RedisLockError(`@${role}() on ${where}: ${error.message}`);
    throw error;
  }
}

/** A placeholder of `@Locked`'s key templates (`<0>`, `<0.id>`, see parseKeyTemplate). */
const PLACEHOLDER = /<\d+(?:\.[A-Za-z_$][\w$]*|\.\d+)*>/;

/**
 * A job's key is used as written, for every call: one that reads as a `@Locked` template
 * (`tenant-sync:<0>`) would lock one key for all arguments, and skip a call for one argument
 * while another's runs, where its author meant a lock per argument.
 */
function checkNotTemplate(key: string): string {
  const placeholder = PLACEHOLDER.exec(key)?.[0];
  if (placeholder === undefined) return key;
  throw new LockKeyError(
    `The key ${quoteKey(key)} holds the placeholder ${placeholder}, but a job's key is not a template: every call of the method takes this one key, whatever its arguments, ` +
      `and a call is skipped while another call's run holds it. For a lock per argument that skips a busy call, use @Locked('<key template>', { onBusy: 'skip' }); for one lock per job, give a key without a placeholder.`,
  );
}

/** Adds one decorator's options to the method's spec; both must agree on the key. */
export function addJobRole(spec: JobSpec, role: JobRole, options: JobRoleOptions): void {
  if (spec[role] !== undefined) {
    throw new RedisLockError(`@${role}() on ${spec.where}: the method already has @${role}().`);
  }
  const other = spec[role === 'OnOneInstance' ? 'WithoutOverlapping' : 'OnOneInstance'];
  if (options.key !== undefined && other?.key !== undefined && options.key !== other.key) {
    throw new RedisLockError(
      `@WithoutOverlapping() and @OnOneInstance() on ${spec.where} share one key; they were given two (${quoteKey(options.key)} and ${quoteKey(other.key)}). Give the key to one of them.`,
    );
  }
  spec[role] = options;
}

/**
 * One job method of one provider class: the spec with the names it has in that class. A
 * subclass that inherits a job method has a binding (and a default key) of its own.
 */
export interface JobBinding {
  readonly spec: JobSpec;
  /** `ClassName.methodName` with the provider's class, as messages, events and labels show it (see `shownName`). */
  readonly where: string;
  /** The run lock's key: the one given to either decorator, or `[<jobNamespace>:]ClassName.methodName`. */
  readonly key: string;
  /** Whether the key is the default one (derived from the class name). */
  readonly defaultKey: boolean;
  /** The `@OnOneInstance()` lease: `<key>:owner`. */
  readonly ownerKey: string;
  /** `name` of the run lock in events and metrics (at most 128 characters). */
  readonly runName: string;
  /** `name` of the owner lease. */
  readonly ownerName: string;
}

/** The most characters of a lock name (see `LockOptions.name`). */
const MAX_NAME = 128;

/** The names of `spec` in the provider class named `className`, default keys joined to `namespace`. */
export function bindJob(spec: JobSpec, className: string, namespace: string | undefined): JobBinding {
  const named = `${className}.${spec.method}`;
  const given = spec.WithoutOverlapping?.key ?? spec.OnOneInstance?.key;
  const key = given ?? (namespace === undefined ? named : `${namespace}:${named}`);
  return {
    spec,
    where: shownName(className, spec.method),
    key,
    defaultKey: given === undefined,
    ownerKey: key + OWNER_SUFFIX,
    runName: boundName(named),
    // Cut before the suffix, so that a long name's lease never reads as its run lock.
    ownerName: boundName(named, OWNER_SUFFIX),
  };
}

/**
 * A lock name bounded to what `LockOptions.name` accepts; `suffix` is kept whole after the cut. A
 * lone surrogate (a method named by a computed key cut through an emoji) reads as U+FFFD: a
 * name labels the lock, and the option refuses text that is not well-formed.
 */
export function boundName(given: string, suffix = ''): string {
  const name = wellFormed(given);
  if (name.length + suffix.length <= MAX_NAME) return name + suffix;
  return cutWhole(name, MAX_NAME - 1 - suffix.length) + '…' + suffix;
}

/** The ttl of a role's lock: its own, the other decorator's, or the module's (undefined). */
export function jobTtl(spec: JobSpec, role: JobRole): number | undefined {
  return spec[role]?.ttl ?? spec.WithoutOverlapping?.ttl ?? spec.OnOneInstance?.ttl;
}

/** The Redis locks a job uses, each with who uses it, for the duplicate check at startup. */
export function jobClaims(job: JobBinding): { key: string; role: JobRole }[] {
  const claims: { key: string; role: JobRole }[] = [];
  if (job.spec.WithoutOverlapping) claims.push({ key: job.key, role: 'WithoutOverlapping' });
  if (job.spec.OnOneInstance) claims.push({ key: job.ownerKey, role: 'OnOneInstance' });
  return claims;
}

/** The job decorators on the method, for messages: `@OnOneInstance() @WithoutOverlapping()`. */
export function jobDecorators(spec: JobSpec): string {
  return [spec.OnOneInstance && '@OnOneInstance()', spec.WithoutOverlapping && '@WithoutOverlapping()'].filter(Boolean).join(' ');
}
