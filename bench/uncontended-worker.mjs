// One contender of the uncontended benchmark, in a process of its own (so that no other
// contender's clients, timers or garbage share its event loop). The parent drives it over
// stdin/stdout, one JSON line each way:
//   -> ready                                   after warm-up
//   <- {"pairs":N,"concurrency":C,"tag":"x"}   run N acquire+release pairs on distinct keys
//   -> {"seconds":s,"nodeCpuUs":u,"failures":f} wall time, this process's CPU, pairs that failed
//   <- {"exit":true}
// Usage: uncontended-worker.mjs <contender> <target JSON>
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { createContender } from './contenders.mjs';

const [, , name, targetJson] = process.argv;
const contender = await createContender(name, JSON.parse(targetJson));

let failures = 0;

/**
 * `pairs` acquire+release cycles spread over `concurrency` loops, each pair on a key of its own.
 * A pair that fails (a quorum node that did not answer in time on a loaded machine) is counted,
 * not fatal: the run's figures say how many.
 */
async function run(pairs, concurrency, tag) {
  const perLoop = Math.ceil(pairs / concurrency);
  await Promise.all(
    Array.from({ length: concurrency }, async (_, w) => {
      const prefix = `u:${tag}:${w}:`;
      for (let i = 0; i < perLoop; i++) await contender.lockCycle(prefix + i).catch(() => failures++);
    }),
  );
  return perLoop * concurrency;
}

// Warm-up (JIT, script cache, connections) in both shapes, untimed.
await run(2_000, 1, 'warm1');
await run(2_000, 50, 'warm50');
process.stdout.write('ready\n');

for await (const line of createInterface({ input: process.stdin })) {
  const request = JSON.parse(line);
  if (request.exit) break;
  failures = 0;
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  const done = await run(request.pairs, request.concurrency, request.tag);
  const seconds = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  process.stdout.write(JSON.stringify({ pairs: done, seconds, nodeCpuUs: cpu.user + cpu.system, failures }) + '\n');
}
await contender.close();
process.exit(0);
