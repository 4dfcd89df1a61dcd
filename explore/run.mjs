#!/usr/bin/env node
// `npm run explore -- ...`: builds the explorer of this tree and runs it (arguments in explore/cli.ts).
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildExplorer } from './build.mjs';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
// One build per tree: two checkouts exploring at once (a worktree, a CI clone) must not run each other's code.
const tree = createHash('sha256').update(root).digest('hex').slice(0, 12);
const cli = buildExplorer(root, join(tmpdir(), `nestjs-redis-lock-explore-${process.getuid?.() ?? 'user'}-${tree}`));
const run = spawnSync(process.execPath, [cli, ...process.argv.slice(2)], { stdio: 'inherit' });
process.exit(run.status ?? 2);
