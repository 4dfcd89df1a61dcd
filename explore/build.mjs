// Compiles lib/ and the explorer (explore/*.ts, explore/sim) of the tree at `root` into
// `outDir`, ready for node: node has no TypeScript of its own here (Node 20). Emit only, without
// type checking (npm run typecheck does that): a seeded bug may leave a helper unused.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

export function buildExplorer(root, outDir, nodeModules = join(root, 'node_modules')) {
  mkdirSync(outDir, { recursive: true });
  // Types resolve from the tree's own node_modules: a copy of the tree links the original's.
  if (!existsSync(join(root, 'node_modules'))) symlinkSync(resolve(nodeModules), join(root, 'node_modules'), 'dir');
  const tsc = join(nodeModules, 'typescript7', 'bin', 'tsc');
  execFileSync(process.execPath, [tsc, '-p', join(root, 'explore', 'tsconfig.json'), '--outDir', outDir, '--noCheck'], { cwd: root, stdio: ['ignore', 'inherit', 'inherit'] });
  writeFileSync(join(outDir, 'package.json'), '{"type":"module"}\n');
  if (!existsSync(join(outDir, 'node_modules'))) symlinkSync(resolve(nodeModules), join(outDir, 'node_modules'), 'dir');
  return join(outDir, 'explore', 'cli.js');
}
