// One worker process of the cross-process contended benchmark. It waits for "go <epoch ms>",
// then takes the lock in a loop until the deadline and reports every critical section.
// Usage: handoff-worker.mjs <contender> <redis url> <key> <duration ms> <worker id> <greedy|greedy-work|polite>
// greedy-work: greedy, with about 1 ms of work (a 1 ms timer) inside the lock.
import { createInterface } from 'node:readline';
import { createContender } from './contenders.mjs';
import { remoteTurns } from './turns.mjs';

const [, , name, url, key, durationMs, workerId, mode] = process.argv;
const worker = Number(workerId);
const contender = await createContender(name, url, { contended: true });
const turns = mode === 'polite' ? await remoteTurns(url, worker) : undefined;
// The system's monotonic clock (CLOCK_MONOTONIC on Linux), the same for every process of the
// machine: `performance.timeOrigin + performance.now()` is not (each process fixes its own
// origin, and one worker's origin a millisecond off made its handoffs look like overlaps).
const clock = () => Number(process.hrtime.bigint()) / 1e6;
process.stdout.write('ready\n');

const lines = createInterface({ input: process.stdin });
for await (const line of lines) {
  if (!line.startsWith('go ')) continue;
  const startAt = Number(line.slice(3));
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, startAt - Date.now())));
  const sections = [];
  let failures = 0;
  const end = clock() + Number(durationMs);
  while (clock() < end) {
    const section = { requestedAt: clock() };
    const ok = await contender.withLock(key, async () => {
      section.acquiredAt = clock();
      if (turns) {
        turns.taken();
        // Hold briefly, so that the others have asked for the lock before it is released.
        await new Promise((resolve) => setTimeout(resolve, 2));
      } else if (mode === 'greedy-work') {
        await new Promise((resolve) => setTimeout(resolve, 1));
      }
      section.releasedAt = clock();
    });
    if (ok) sections.push(section);
    else failures++;
    if (turns) await Promise.race([turns.othersAfter(), new Promise((resolve) => setTimeout(resolve, Math.max(0, end - clock())))]);
  }
  process.stdout.write(JSON.stringify({ sections, failures }) + '\n');
  break;
}
lines.close();
await turns?.close();
await contender.close();
