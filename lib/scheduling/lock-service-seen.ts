import type { Module } from '@nestjs/core/injector/module.js';
import { LockService } from '../lock.service.js';

/** What this reads of Nest's `Module` (`@nestjs/core/injector/module`), all optional. */
type ModuleShape = Pick<Partial<Module>, 'id' | 'providers' | 'imports' | 'exports' | 'metatype'>;

/**
 * The `LockService` a provider of `host` is injected with, found the way Nest's injector finds a
 * dependency: the module's own providers, then its imports in order (a module that exports and
 * provides it; deeper, only through the modules each one re-exports), global modules included
 * (Nest binds them to every module's imports). Undefined when none is found, or Nest's module
 * shape is not the one expected: the caller then keeps its own.
 */
export function lockServiceSeenBy(host: ModuleShape | undefined): LockService | undefined {
  if (host === undefined) return undefined;
  return serviceOf(host) ?? fromImports(host, new Set(), false);
}

function serviceOf(module: ModuleShape): LockService | undefined {
  const instance: unknown = module.providers?.get(LockService)?.instance;
  return instance instanceof LockService ? instance : undefined;
}

function fromImports(module: ModuleShape, visited: Set<unknown>, traversing: boolean): LockService | undefined {
  for (const child of (module.imports ?? new Set()) as Set<ModuleShape | undefined>) {
    if (child === undefined || child === null) continue;
    // Past the first level, only the modules this one re-exports pass their exports on.
    if (traversing && !(module.exports?.has(child.metatype as never) ?? false)) continue;
    if (visited.has(child.id ?? child)) continue;
    visited.add(child.id ?? child);
    if (child.exports?.has(LockService) === true && child.providers?.has(LockService) === true) return serviceOf(child);
    const found = fromImports(child, visited, true);
    if (found !== undefined) return found;
  }
  return undefined;
}
