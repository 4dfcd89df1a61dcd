import { LONE_SURROGATE } from '../keys/lock-key.js';
import { hostname } from 'node:os';
import { InvalidLockOptionsError } from '../../errors/invalid-lock-options.error.js';
import type { LockHolder } from '../../interfaces/lock-inspection.interface.js';

/** Longest `name` option: it becomes a metric attribute, so it must stay small. */
export const MAX_LOCK_NAME_LENGTH = 128;
/** Host, instance name and label are cut to this many characters in the owner token. */
export const MAX_HOLDER_FIELD_LENGTH = 64;
/** Encoded holders kept per manager; a busy app has a handful of distinct labels. */
const CACHE_SIZE = 256;

/**
 * Records who holds a lock inside its owner token, the value of the lock key, so that
 * `inspect()` can tell without any extra write: the acquire script stores the token anyway.
 * The token becomes `<random>.<base64url(JSON holder)>.<since, base 36>`. Neither part contains
 * `:` (the waiting queue stores `<token>:<ttl>`) nor `.`, and every field is bounded to 64
 * characters, so the token is about 100 bytes for usual names and at most about 1.1 KB.
 */
export class HolderRecorder {
  private readonly host = bound(hostname());
  private readonly encoded = new Map<string | undefined, string>();

  constructor(private readonly instance: string | undefined) {}

  /** The suffix to append to a fresh random token; `since`: when the call began (ms since the epoch), now by default. */
  suffix(label: string | undefined, since = Date.now()): string {
    let encoded = this.encoded.get(label);
    if (encoded === undefined) {
      if (this.encoded.size >= CACHE_SIZE) this.encoded.clear();
      const fields = [this.host, process.pid, this.instance === undefined ? null : bound(this.instance), label === undefined ? null : bound(label)];
      encoded = Buffer.from(JSON.stringify(fields)).toString('base64url');
      this.encoded.set(label, encoded);
    }
    const now = Math.round(since);
    // Many locks are taken within one millisecond: encode it once.
    if (now !== this.sinceAt) {
      this.sinceAt = now;
      this.since = now.toString(36);
    }
    return `.${encoded}.${this.since}`;
  }

  private sinceAt = -1;
  private since = '';
}

/** The holder recorded in an owner token, or `undefined` for a token without one. */
/** When the call that made owner token `token` started (`Date.now()`), read without parsing the rest; `undefined` if it does not say. */
export function tokenSince(token: string): number | undefined {
  const since = parseInt(token.slice(token.lastIndexOf('.') + 1), 36);
  return Number.isFinite(since) ? since : undefined;
}

export function parseHolder(token: string): LockHolder | undefined {
  const parts = token.split('.');
  if (parts.length !== 3) return undefined;
  const since = parseInt(parts[2]!, 36);
  let fields: unknown;
  try {
    fields = JSON.parse(Buffer.from(parts[1]!, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  if (!Array.isArray(fields) || fields.length !== 4 || !Number.isFinite(since)) return undefined;
  const [host, pid, instance, label] = fields as unknown[];
  if (typeof host !== 'string' || typeof pid !== 'number' || !optionalString(instance) || !optionalString(label)) return undefined;
  // A token is written by any process that can reach Redis: bound it again when reading.
  return {
    host: bound(host),
    pid,
    ...(instance === null ? {} : { instance: bound(instance as string) }),
    ...(label === null ? {} : { label: bound(label as string) }),
    since,
  };
}

/** Checks the `name` and `label` options of one call (`where` names the method). */
export function checkLockNaming(options: { name?: unknown; label?: unknown } | undefined): void {
  if (options === undefined || options === null || typeof options !== 'object') return;
  const { name, label } = options;
  // Well-formed too: it becomes a metric attribute, which an exporter must encode as UTF-8.
  if (name !== undefined && (typeof name !== 'string' || name.length === 0 || name.length > MAX_LOCK_NAME_LENGTH || LONE_SURROGATE.test(name))) {
    throw new InvalidLockOptionsError('name', name, `a well-formed string of 1 to ${MAX_LOCK_NAME_LENGTH} characters (a low-cardinality name such as "order:<id>", not the key)`);
  }
  if (label !== undefined && typeof label !== 'string') {
    throw new InvalidLockOptionsError('label', label, 'a string');
  }
}

/** Checks the `instanceName` module option. */
export function checkInstanceName(instanceName: unknown): string | undefined {
  if (instanceName === undefined) return undefined;
  if (typeof instanceName !== 'string' || instanceName.length === 0 || instanceName.length > MAX_HOLDER_FIELD_LENGTH) {
    throw new InvalidLockOptionsError('instanceName', instanceName, `a string of 1 to ${MAX_HOLDER_FIELD_LENGTH} characters`);
  }
  return instanceName;
}

function optionalString(value: unknown): boolean {
  return value === null || typeof value === 'string';
}

/** At most 64 characters (code points), control characters replaced by spaces. */
function bound(text: string): string {
  // eslint-disable-next-line no-control-regex
  const clean = text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, ' ');
  const chars = Array.from(clean);
  return chars.length > MAX_HOLDER_FIELD_LENGTH ? `${chars.slice(0, MAX_HOLDER_FIELD_LENGTH - 1).join('')}…` : clean;
}
