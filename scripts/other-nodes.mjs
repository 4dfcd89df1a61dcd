// npm test, last step: the suites where a Node version can make a difference (every store's
// behaviour suite, the consumer applications) run again on each supported Node major other than
// the machine's own. The binaries
// come from the npm registry's `node` package (scripts/node-versions.mjs).
//   NODE_VERSIONS=22,24 (default) picks the majors; NODE_VERSIONS= (empty) skips this step.
import { spawn } from 'node:child_process';
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

// The versions run side by side (each suite waits on its servers more than it computes: about
// 30 s each on its own, and the two together take little longer than one), their output held and
// printed whole, one version after the other, so that a failure reads as it would alone.
const runs = [];
for (const major of majors) {
  let binary, version;
  try {
    ({ binary, version } = nodeBinary(major));
  } catch (error) {
    console.error(`${error.message} Set NODE_VERSIONS= to skip the other Node versions.`);
    process.exit(1);
  }
  runs.push(runOn(binary, version));
}
const results = await Promise.all(runs);
let failed = false;
for (const { version, output, status } of results) {
  console.log(`\nNode ${version}: ${FILES.join(', ')}`);
  process.stdout.write(output);
  if (status !== 0) {
    console.error(`The suites above failed on Node ${version}.`);
    failed = true;
  }
}
process.exit(failed ? 1 : 0);

function runOn(binary, version) {
  return new Promise((resolve) => {
    const chunks = [];
    const child = spawn(binary, ['node_modules/vitest/vitest.mjs', 'run', ...FILES], {
      stdio: ['ignore', 'pipe', 'pipe'],
      // Whatever the tests start with `node` (workers, consumer apps) runs on this version too.
      env: { ...process.env, PATH: `${dirname(binary)}${delimiter}${process.env.PATH}` },
    });
    child.stdout.on('data', (chunk) => chunks.push(chunk));
    child.stderr.on('data', (chunk) => chunks.push(chunk));
    child.on('error', (error) => chunks.push(Buffer.from(`${error.stack ?? error}\n`)));
    child.on('close', (code) => resolve({ version, output: Buffer.concat(chunks).toString(), status: code }));
  });
}
