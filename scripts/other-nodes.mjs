// npm test, last step: the suites where a Node version can make a difference (every store's
// behaviour suite, the consumer applications, the chaos exclusion scenario, the scheduling
// processes) run again on each supported Node major other than the machine's own. The binaries
// come from the npm registry's `node` package (a real Node build per platform), installed once
// into a cache and reused: nothing is downloaded from anywhere else.
//   NODE_VERSIONS=22,24 (default) picks the majors; NODE_VERSIONS= (empty) skips this step.
//   NODE_VERSIONS_CACHE overrides the cache folder (default ~/.cache/nestjs-redis-lock/node).
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';

// Every store's behaviour suite (in memory; one Redis, a Cluster and a quorum through ioredis
// and node-redis); the other clients' suites (iovalkey, GLIDE, ioredis 6) run on the machine's
// Node only, to keep npm test within its time.
const FILES = [
  'test/behaviour/memory.spec.ts',
  'test/behaviour/redis.spec.ts',
  'test/behaviour/cluster.spec.ts',
  'test/behaviour/quorum.spec.ts',
  'test/behaviour/node-redis.spec.ts',
  'test/behaviour/node-redis-cluster.spec.ts',
  'test/behaviour/node-redis-quorum.spec.ts',
  'test/consumers',
  'test/chaos/exclusion.spec.ts',
  'test/schedule-processes.spec.ts',
];

const own = Number(process.versions.node.split('.')[0]);
const majors = (process.env.NODE_VERSIONS ?? '22,24')
  .split(',')
  .map((part) => part.trim())
  .filter((part) => part !== '')
  .map(Number)
  .filter((major) => major !== own);
for (const major of majors) {
  if (!Number.isInteger(major) || major < 20) {
    console.error(`NODE_VERSIONS: expected Node majors such as 22,24, got ${JSON.stringify(process.env.NODE_VERSIONS)}.`);
    process.exit(1);
  }
}
const cache = process.env.NODE_VERSIONS_CACHE ?? join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'nestjs-redis-lock', 'node');

/** The path of a Node `major` binary, installed from the npm registry on first use. */
function nodeBinary(major) {
  const prefix = join(cache, String(major));
  const binary = join(prefix, 'node_modules', 'node', 'bin', 'node');
  if (!existsSync(binary)) {
    console.log(`Installing Node ${major} from the npm registry's "node" package into ${prefix} (once; later runs reuse it).`);
    const install = spawnSync('npm', ['install', '--prefix', prefix, '--no-audit', '--no-fund', '--loglevel=error', `node@${major}`], { stdio: 'inherit' });
    if (install.status !== 0 || !existsSync(binary)) {
      console.error(`Could not install node@${major} from the npm registry (npm exited ${install.status}). Set NODE_VERSIONS= to skip the other Node versions.`);
      process.exit(1);
    }
  }
  const version = spawnSync(binary, ['--version'], { encoding: 'utf8' }).stdout.trim();
  if (!version.startsWith(`v${major}.`)) {
    console.error(`${binary} is ${version || 'not runnable'}, expected Node ${major}. Delete ${prefix} to reinstall it.`);
    process.exit(1);
  }
  return { binary, version };
}

let failed = false;
for (const major of majors) {
  const { binary, version } = nodeBinary(major);
  console.log(`\nNode ${version}: ${FILES.join(', ')}`);
  const run = spawnSync(binary, ['node_modules/vitest/vitest.mjs', 'run', ...FILES], {
    stdio: 'inherit',
    // Whatever the tests start with `node` (workers, consumer apps) runs on this version too.
    env: { ...process.env, PATH: `${dirname(binary)}${delimiter}${process.env.PATH}` },
  });
  if (run.status !== 0) {
    console.error(`The suites above failed on Node ${version}.`);
    failed = true;
  }
}
process.exit(failed ? 1 : 0);
