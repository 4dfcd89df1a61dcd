// npm test, last step: the suites where a Node version can make a difference (every store's
// behaviour suite, the consumer applications) run again on each supported Node major other than
// the machine's own. The binaries
// come from the npm registry's `node` package (scripts/node-versions.mjs).
//   NODE_VERSIONS=22,24 (default) picks the majors; NODE_VERSIONS= (empty) skips this step.
import { spawnSync } from 'node:child_process';
import { delimiter, dirname } from 'node:path';
import { nodeBinary, OWN_MAJOR, parseMajors } from './node-versions.mjs';

// The engine's behaviour suite in memory and on one Redis through ioredis, and the consumer
// applications. The Cluster and quorum suites (the same engine, over ioredis' Cluster and the
// quorum store's rounds), the node-redis suites (the same driver code on every Node version),
// the other clients' suites (iovalkey, GLIDE, ioredis 6), the chaos exclusion scenario and the
// scheduling processes (worker processes that run the same engine) run on the machine's Node
// only, to keep npm test within CI's 20 minutes: the Cluster and quorum suites were 23 s of the
// 50 s each other Node version took in the twenty-second session's run of 1,165 s.
const FILES = ['test/behaviour/memory.spec.ts', 'test/behaviour/redis.spec.ts', 'test/consumers'];

let majors;
try {
  majors = parseMajors(process.env.NODE_VERSIONS ?? '22,24', 'NODE_VERSIONS').filter((major) => major !== OWN_MAJOR);
} catch (error) {
  console.error(error.message);
  process.exit(1);
}

let failed = false;
for (const major of majors) {
  let binary, version;
  try {
    ({ binary, version } = nodeBinary(major));
  } catch (error) {
    console.error(`${error.message} Set NODE_VERSIONS= to skip the other Node versions.`);
    process.exit(1);
  }
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
