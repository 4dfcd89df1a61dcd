// One contender of the uncontended benchmark, in a process of its own (so that no other
// contender's clients, timers or garbage share its event loop). The parent drives it over
// stdin/stdout, one JSON line each way:
//   -> ready                                   after warm-up
//   <- {"pairs":N,"concurrency":C,"tag":"x"}   run N acquire+release pairs on distinct keys
//   -> {"seconds":s,"nodeCpuUs":u}             wall time and this process's CPU for the run
//   <- {"exit":true}
// Usage: uncontended-worker.mjs <contender> <target JSON>
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { createContender } from './contenders.mjs';

const [, , name, targetJson] = process.argv;
const contender = await createContender(name, JSON.parse(targetJson));

/** `pairs` acquire+release cycles spread over `concurrency` loops, each pair on a key of its own. */
async function run(pairs, concurrency, tag) {
  const perLoop = Math.ceil(pairs / concurrency);
  await Promise.all(
    Array.from({ length: concurrency }, async (_, w) => {
      const prefix = `u:${tag}:${w}:`;
      for (let i = 0; i < perLoop; i++) await contender.lockCycle(prefix + i);
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
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  const done = await run(request.pairs, request.concurrency, request.tag);
  const seconds = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  process.stdout.write(JSON.stringify({ pairs: done, seconds, nodeCpuUs: cpu.user + cpu.system }) + '\n');
}
await contender.close();
process.exit(0);
