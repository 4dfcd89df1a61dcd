// npm test: the checks and the whole suite, in this order:
//   1. the servers and the browser the tests start are installed (scripts/check-test-tools.mjs);
//   2. the package is built (dist/, which the sample app, the package checks and the consumer
//      projects use);
//   3. side by side, their output held and printed whole in this order: the sample app's build,
//      the type checks, the package checks (publint, attw), and the consumer applications'
//      projects installed from the npm registry (test/consumers/projects.mjs), which every Node
//      version's run below reuses instead of installing its own;
//   4. vitest on the machine's Node;
//   5. the suites where a Node version can make a difference, on Node 22 and 24
//      (scripts/other-nodes.mjs).
// It stops at the first step that fails, with that step's exit code. A consumer project that
// could not be installed ahead is not a failure here: its spec installs it and reports there.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const consumers = mkdtempSync(join(tmpdir(), 'nestjs-redis-lock-consumers-'));
const env = { ...process.env, NESTJS_REDIS_LOCK_CONSUMERS: consumers };
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

function cleanUp() {
  rmSync(consumers, { recursive: true, force: true });
}
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    cleanUp();
    process.exit(128 + (signal === 'SIGINT' ? 2 : 15));
  });
}

/** Runs a step; `held`: its output is kept and handed back instead of printed as it comes. */
function run(command, args, { held = false } = {}) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { env, stdio: held ? ['ignore', 'pipe', 'pipe'] : 'inherit' });
    const chunks = [];
    if (held) {
      child.stdout.on('data', (chunk) => chunks.push(chunk));
      child.stderr.on('data', (chunk) => chunks.push(chunk));
    }
    child.on('error', (error) => chunks.push(Buffer.from(`${error.stack ?? error}\n`)));
    child.on('close', (code, signal) => resolve({ status: code ?? (signal ? 1 : 0), output: Buffer.concat(chunks).toString() }));
  });
}

async function main() {
  for (const [command, args] of [
    [process.execPath, ['scripts/check-test-tools.mjs']],
    [npm, ['run', 'build']],
  ]) {
    const { status } = await run(command, args);
    if (status !== 0) return status;
  }
  const checks = await Promise.all([
    run(npm, ['run', 'build:sample'], { held: true }),
    run(npm, ['run', 'typecheck'], { held: true }),
    run(npm, ['run', 'lint:package'], { held: true }),
    run(process.execPath, ['test/consumers/projects.mjs', consumers], { held: true }),
  ]);
  for (const { output } of checks) process.stdout.write(output);
  const failed = checks.slice(0, 3).find(({ status }) => status !== 0);
  if (failed) return failed.status;
  for (const args of [['node_modules/vitest/vitest.mjs', 'run'], ['scripts/other-nodes.mjs']]) {
    const { status } = await run(process.execPath, args);
    if (status !== 0) return status;
  }
  return 0;
}

const status = await main();
cleanUp();
process.exit(status);
