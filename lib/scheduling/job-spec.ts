import { quoteKey } from '../core/keys/quote-key.js';
import { parseDuration } from '../core/time/duration.js';
import { checkLockKey } from '../core/keys/lock-key.js';
import { MAX_TTL_MS, MIN_TTL_MS } from '../core/options/lock-options.js';
import { InvalidLockOptionsError } from '../errors/invalid-lock-options.error.js';
import { RedisLockError } from '../errors/redis-lock.error.js';
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
  /** `ClassName.methodName`, for messages and as the default key. */
  readonly where: string;
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
    const checked: JobRoleOptions = {};
    if (options.key !== undefined) checked.key = checkLockKey(options.key, 'key');
    if (options.ttl !== undefined) checked.ttl = parseDuration(options.ttl, 'ttl', MIN_TTL_MS, MAX_TTL_MS);
    return checked;
  } catch (error) {
    if (error instanceof InvalidLockOptionsError) throw error.within(`@${role}() on ${where}`);
    if (error instanceof RedisLockError) throw new RedisLockError(`@${role}() on ${where}: ${error.message}`);
    throw error;
  }
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

/** The key both decorators use: the one given to either, or `ClassName.methodName`. */
export function jobKey(spec: JobSpec): string {
  return spec.WithoutOverlapping?.key ?? spec.OnOneInstance?.key ?? spec.where;
}

/** The ttl of a role's lock: its own, the other decorator's, or the module's (undefined). */
export function jobTtl(spec: JobSpec, role: JobRole): number | undefined {
  return spec[role]?.ttl ?? spec.WithoutOverlapping?.ttl ?? spec.OnOneInstance?.ttl;
}

/** The Redis locks a job uses, each with who uses it, for the duplicate check at startup. */
export function jobClaims(spec: JobSpec): { key: string; by: string }[] {
  const key = jobKey(spec);
  const claims: { key: string; by: string }[] = [];
  if (spec.WithoutOverlapping) claims.push({ key, by: `${spec.where} (@WithoutOverlapping)` });
  if (spec.OnOneInstance) claims.push({ key: key + OWNER_SUFFIX, by: `${spec.where} (@OnOneInstance)` });
  return claims;
}

/** The job decorators on the method, for messages: `@OnOneInstance() @WithoutOverlapping()`. */
export function jobDecorators(spec: JobSpec): string {
  return [spec.OnOneInstance && '@OnOneInstance()', spec.WithoutOverlapping && '@WithoutOverlapping()'].filter(Boolean).join(' ');
}
