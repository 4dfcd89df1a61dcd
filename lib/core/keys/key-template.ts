import { LockKeyError } from '../../errors/lock-key.error.js';
import { checkLockKey, LONE_SURROGATE, MAX_KEY_LENGTH } from './lock-key.js';
import { quoteKey, quoteText } from './quote-key.js';

type Part = string | Placeholder;

interface Placeholder {
  /** As written, e.g. `<0.id>`, for error messages. */
  text: string;
  index: number;
  path: string[];
}

/** Builds a lock key from a method's arguments. */
export type KeyBuilder = (args: readonly unknown[]) => string;

const PLACEHOLDER_BODY = /^(\d+)((?:\.[A-Za-z_$][\w$]*|\.\d+)*)$/;

/**
 * Parses a key template such as `order:<0>` or `user:<0.id>:cart:<1>` once, when the class is
 * defined. `<n>` is the n-th argument the method receives, `<n.a.b>` a property path into it.
 * A `<` always opens a placeholder and a `>` always closes one.
 *
 * @param where names the method in errors, e.g. `OrdersService.pay`.
 * @param arity how many parameters the method declares, when known: a placeholder past them
 *   can never be filled, so it is refused right away.
 */
export function parseKeyTemplate(template: string, where: string, arity?: number): KeyBuilder {
  if (typeof template !== 'string' || template.length === 0) {
    throw new LockKeyError(`@Locked on ${where}: the key template must be a non-empty string or a function.`);
  }
  const parts: Part[] = [];
  let literal = '';
  for (let i = 0; i < template.length; i++) {
    const char = template[i]!;
    if (char === '>') throw malformed(template, where, `unmatched ">" at position ${i}`);
    if (char !== '<') {
      literal += char;
      continue;
    }
    const close = template.indexOf('>', i + 1);
    const nextOpen = template.indexOf('<', i + 1);
    if (close === -1 || (nextOpen !== -1 && nextOpen < close)) {
      throw malformed(template, where, `"<" at position ${i} is not closed by ">"`);
    }
    const body = template.slice(i + 1, close);
    const match = PLACEHOLDER_BODY.exec(body);
    if (!match) {
      throw malformed(template, where, `${quoteText(`<${body}>`, 60)} is not a placeholder: write <n> or <n.property>, n being an argument index`);
    }
    const index = Number(match[1]);
    if (arity !== undefined && index >= arity) {
      throw malformed(template, where, `"<${body}>" refers to argument ${index}, but the method declares ${arity} parameter${arity === 1 ? '' : 's'}`);
    }
    if (literal) parts.push(literal);
    literal = '';
    parts.push({ text: `<${body}>`, index, path: match[2] ? match[2].slice(1).split('.') : [] });
    i = close;
  }
  if (literal) parts.push(literal);

  if (parts.every((part) => typeof part === 'string')) {
    const fixed = checkTemplateKey(template, where);
    return () => fixed;
  }
  checkLiteralText(parts, where);
  return (args) => {
    let key = '';
    for (const part of parts) key += typeof part === 'string' ? part : fill(part, args, where);
    return key;
  };
}

/** Checks what a key function returned. */
export function checkBuiltKey(key: unknown, where: string): string {
  try {
    return checkLockKey(key, 'key');
  } catch (error) {
    throw new LockKeyError(`@Locked on ${where}: the key function returned a bad key. ${(error as Error).message}`);
  }
}

/**
 * What a template's fixed text alone decides: too long with one character per placeholder, or a
 * surrogate no neighbouring value can pair (a high one not right before a placeholder, a low one
 * not right after one). Every call would fail, blaming the request's values.
 */
function checkLiteralText(parts: readonly Part[], where: string): void {
  const shortest = parts.reduce((length, part) => length + (typeof part === 'string' ? part.length : 1), 0);
  if (shortest > MAX_KEY_LENGTH) {
    throw new LockKeyError(`@Locked on ${where}: the key template's fixed text makes every key at least ${shortest} characters long; at most ${MAX_KEY_LENGTH} are allowed.`);
  }
  parts.forEach((part, i) => {
    if (typeof part !== 'string') return;
    const before = i > 0 && typeof parts[i - 1] !== 'string';
    const after = i < parts.length - 1 && typeof parts[i + 1] !== 'string';
    const inner = part.slice(before && /^[\uDC00-\uDFFF]/.test(part) ? 1 : 0, after && /[\uD800-\uDBFF]$/.test(part) ? -1 : undefined);
    if (LONE_SURROGATE.test(inner)) {
      throw new LockKeyError(`@Locked on ${where}: the key template's fixed text holds a lone surrogate (half of a character such as an emoji), which no key may hold.`);
    }
  });
}

function checkTemplateKey(key: string, where: string): string {
  try {
    return checkLockKey(key, 'key');
  } catch (error) {
    throw new LockKeyError(`@Locked on ${where}: ${(error as Error).message}`);
  }
}

function fill(placeholder: Placeholder, args: readonly unknown[], where: string): string {
  if (placeholder.index >= args.length) {
    throw new LockKeyError(
      `@Locked on ${where}: placeholder ${placeholder.text} needs argument ${placeholder.index}, but the method got ${args.length} argument${args.length === 1 ? '' : 's'}.`,
    );
  }
  let value: unknown = args[placeholder.index];
  let reached = `argument ${placeholder.index}`;
  for (const property of placeholder.path) {
    if (value === null || value === undefined) break;
    if (typeof value !== 'object' && typeof value !== 'function') {
      // A primitive where the path goes on (the id passed where the entity was expected).
      throw new LockKeyError(
        `@Locked on ${where}: placeholder ${placeholder.text} reads property ${JSON.stringify(property)} of ${reached}, but ${reached} is a ${typeof value}, which has none.`,
      );
    }
    value = (value as Record<string, unknown>)[property];
    reached += `.${property}`;
  }
  switch (typeof value) {
    case 'string':
      if (value.length > 0) return value;
      break;
    case 'number':
      if (Number.isFinite(value)) return String(value);
      break;
    case 'bigint':
    case 'boolean':
      return String(value);
  }
  throw new LockKeyError(
    `@Locked on ${where}: placeholder ${placeholder.text} must be a non-empty string, a finite number, a bigint or a boolean, but ${reached} is ${describe(value)}.`,
  );
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (value === undefined) return 'undefined';
  if (typeof value === 'string') return 'an empty string';
  if (typeof value === 'number') return String(value);
  if (typeof value === 'function') return 'a function';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  return `a ${typeof value}`;
}

/** A template may be built at runtime (from configuration, a tenant's prefix): shown as keys are. */
function malformed(template: string, where: string, why: string): LockKeyError {
  return new LockKeyError(`@Locked on ${where}: the key template ${quoteKey(template)} is malformed: ${why}.`);
}
