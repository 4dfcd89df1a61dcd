// Compiles lib/ and the explorer (explore/*.ts, explore/sim) of the tree at `root` into
// `outDir`, ready for node: node has no TypeScript of its own here (Node 20).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

export function buildExplorer(root, outDir, nodeModules = join(root, 'node_modules')) {
  mkdirSync(outDir, { recursive: true });
  const tsc = join(nodeModules, 'typescript7', 'bin', 'tsc');
  execFileSync(process.execPath, [tsc, '-p', join(root, 'explore', 'tsconfig.json'), '--outDir', outDir], { cwd: root, stdio: ['ignore', 'inherit', 'inherit'] });
  writeFileSync(join(outDir, 'package.json'), '{"type":"module"}\n');
  if (!existsSync(join(outDir, 'node_modules'))) symlinkSync(resolve(nodeModules), join(outDir, 'node_modules'), 'dir');
  return join(outDir, 'explore', 'cli.js');
}
