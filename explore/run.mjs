#!/usr/bin/env node
// `npm run explore -- ...`: builds the explorer of this tree and runs it (arguments in explore/cli.ts).
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildExplorer } from './build.mjs';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const cli = buildExplorer(root, join(tmpdir(), `nestjs-redis-lock-explore-${process.getuid?.() ?? 'user'}`));
const run = spawnSync(process.execPath, [cli, ...process.argv.slice(2)], { stdio: 'inherit' });
process.exit(run.status ?? 2);
