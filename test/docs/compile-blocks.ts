// Turns the TypeScript blocks of the docs into files that the TypeScript 7 compiler checks against
// the built package, as an application would import it (`nestjs-redis-lock`, its subpaths, and
// the Nest, Redis and database packages the examples use).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { root, type CodeBlock } from './markdown.js';

/**
 * The names the examples use without importing them, and where an application imports each
 * from. A block that imports a name itself keeps its own import.
 */
const AUTO_IMPORTS: Record<string, readonly string[]> = {
  'nestjs-redis-lock': [
    'FencedRedis',
    'FencedWriteRefusedError',
    'LeaderElection',
    'LeadershipService',
    'Lock',
    'LockConflictInterceptor',
    'LockNotAcquiredError',
    'LockLostEvent',
    'LockService',
    'LockSkippedEvent',
    'Locked',
    'OnLeadershipAcquired',
    'OnLeadershipLost',
    'OnOneInstance',
    'RedisLockModule',
    'WithoutOverlapping',
  ],
  'nestjs-redis-lock/testing': ['InMemoryLocks', 'RedisLockTestingModule'],
  'nestjs-redis-lock/terminus': ['RedisLockHealthIndicator'],
  'nestjs-redis-lock/otel': ['RedisLockMetricsModule', 'enableLockMetrics'],
  'nestjs-redis-lock/board': ['RedisLockBoardModule'],
  '@nestjs/common': ['Controller', 'Get', 'Injectable', 'Module', 'UseInterceptors'],
  '@nestjs/schedule': ['Cron'],
  '@nestjs/terminus': ['HealthCheck', 'HealthCheckService'],
  '@nestjs/testing': ['Test'],
  rxjs: ['filter'],
  vitest: ['expect'],
};

/**
 * What the examples take as given: the variables and application classes a reader has in their
 * own code (a `LockService` named `locks`, a logger, a pool). Declared as globals, so that a
 * block declaring its own shadows them.
 */
const CONTEXT = `import type { LockService as LockServiceType } from 'nestjs-redis-lock';
import type { CanActivate } from '@nestjs/common';
import type { Pool } from 'pg';

declare global {
  const locks: LockServiceType;
  const id: string;
  const amount: number;
  const invoice: { id: string };
  const storage: { write(data: unknown, options: { fencingToken: number; signal: AbortSignal }): Promise<void> };
  const logger: { warn(message: string): void };
  const apm: { captureMessage(message: string): void };
  const pool: Pool;
  class OrdersModule {}
  /** The TypeORM entity of docs/fencing.md, used by the service of the next block. */
  class Account {
    id: string;
    balance: string;
    fence: string;
  }
  class AdminGuard implements CanActivate {
    canActivate(): boolean;
  }
}
export {};
`;

export interface CompiledBlock {
  readonly block: CodeBlock;
  readonly path: string;
}

/** Where the blocks are written: inside the repository, so that `nestjs-redis-lock` resolves to this package. */
export const workDir = join(root, '.docs-check');

function declaredNames(code: string): Set<string> {
  const names = new Set<string>();
  for (const m of code.matchAll(/import\s+(?:type\s+)?\{([^}]*)\}\s+from/g)) {
    for (const part of m[1]!.split(',')) {
      const name = part.replace(/^\s*type\s+/, '').split(/\s+as\s+/).pop()!.trim();
      if (name) names.add(name);
    }
  }
  for (const m of code.matchAll(/\b(?:class|const|let|function|interface|type)\s+([A-Za-z_$][\w$]*)/g)) names.add(m[1]!);
  return names;
}

/**
 * The names of `AUTO_IMPORTS` that `code` uses without importing or declaring them, by package.
 * A block with no import at all continues the one before it (or shows a method); a block that
 * imports must import all it uses, or a reader who copies it meets "Cannot find name".
 */
export function addedImports(code: string): Record<string, string[]> {
  const declared = declaredNames(code);
  const added: Record<string, string[]> = {};
  for (const [from, names] of Object.entries(AUTO_IMPORTS)) {
    const needed = names.filter((name) => !declared.has(name) && new RegExp(`(?<![\\w$.'"])${name}\\b`).test(code));
    if (needed.length > 0) added[from] = needed;
  }
  return added;
}

/**
 * One module per block: the imports it lacks, its code, and for each class it declares an
 * interface of the same name that allows any other member. The examples call collaborators of
 * the reader's own (`this.repo`, `this.warehouse`) that they do not declare; the package's API
 * (`this.locks`, the decorators, the lock) is still checked in full.
 */
export function moduleText(code: string): string {
  const imports = Object.entries(addedImports(code)).map(([from, names]) => `import { ${names.join(', ')} } from '${from}';`);
  const members = [...code.matchAll(/^(export\s+)?(?:abstract\s+)?class\s+([A-Za-z_$][\w$]*)/gm)].map(
    (m) => `${m[1] ?? ''}interface ${m[2]} { [member: string]: any }`,
  );
  return [...imports, code, ...members, 'export {};', ''].join('\n');
}

/**
 * Writes the blocks, then runs the compiler once over all of them; returns its diagnostics.
 * `dir` (under the repository, so that the package resolves) keeps two specs that compile at
 * once apart; `context` is declared beside `CONTEXT`.
 */
export function compileBlocks(
  blocks: readonly CodeBlock[],
  { dir = workDir, context = '' }: { dir?: string; context?: string } = {},
): { files: CompiledBlock[]; output: string; status: number | null } {
  if (!existsSync(join(root, 'dist/index.d.ts'))) throw new Error('dist/ is missing: run `npm run build` first (npm test does)');
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'context.d.ts'), CONTEXT);
  if (context) writeFileSync(join(dir, 'extra-context.d.ts'), context);
  const files = blocks.map((block) => {
    const name = `${block.file.replace(/[^\w]+/g, '-')}-${block.line}.ts`;
    writeFileSync(join(dir, name), moduleText(block.code));
    return { block, path: name };
  });
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify(
      {
        extends: '../tsconfig.json',
        compilerOptions: { noEmit: true, noUnusedLocals: false, noUnusedParameters: false, skipLibCheck: true, lib: ['ES2023', 'ESNext.Disposable'] },
        include: ['*.ts'],
        exclude: [],
      },
      null,
      2,
    ),
  );
  const tsc = join(root, 'node_modules/typescript7/bin/tsc');
  const run = spawnSync(process.execPath, [tsc, '-p', join(dir, 'tsconfig.json'), '--pretty', 'false'], { cwd: root, encoding: 'utf8' });
  return { files, output: run.stdout + run.stderr, status: run.status };
}
