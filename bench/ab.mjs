// A focused, finely interleaved A/B of the uncontended path, for measuring one change on a
// shared machine (bench/NOTES.md). Every contender process (per Node version, and per build with
// --base) starts once and stays up; each round runs a short batch in each of them in rotated
// order, so a burst of load elsewhere lands on all of them alike. Figures: medians over the
// rounds of the per-round ratios to raw ioredis (same round, Node version and concurrency).
//   npm run build && node bench/ab.mjs [--node 20,24] [--contenders LockService,@Locked]
//     [--rounds 15] [--pairs 3000] [--concurrency 1,50] [--base DIR] [--reuse-keys]
// (--contenders splits at a comma not followed by a space: "LockService quorum, no fencing" is one)
// --quorum runs the quorum contenders on three independent masters, their ratios taken to redlock
// v5 on the same masters instead of raw ioredis, for instance
//   node bench/ab.mjs --quorum --contenders "LockService quorum, no fencing" --base /tmp/base
// --base DIR runs each contender (not the raw floor) a second time from another build, listed
// as "base <name>": DIR holds that build's package.json, dist/ and bench/, for instance
//   mkdir /tmp/base && git archive HEAD~1 | tar -x -C /tmp/base && ln -s "$PWD/node_modules" /tmp/base/ && (cd /tmp/base && npm run build)
import { spawn, spawnSync } from 'node:child_process';
import os from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { nodeBinary, OWN_MAJOR, parseMajors } from '../scripts/node-versions.mjs';
import { startRedisServer } from '../scripts/redis-server.mjs';
import { QUORUM_FLOOR, SEMAPHORE_CONTENDERS } from './contenders.mjs';
import { fmt, median } from './stats.mjs';

const args = process.argv.slice(2);
const option = (name, fallback) => {
  const at = args.indexOf(name);
  return at === -1 ? fallback : args[at + 1];
};
const NODES = parseMajors(option('--node', String(OWN_MAJOR)), '--node').map(nodeBinary);
const QUORUM = args.includes('--quorum');
const FLOOR = QUORUM ? QUORUM_FLOOR : 'raw ioredis';
const NAMES = [FLOOR, ...option('--contenders', QUORUM ? 'LockService quorum,LockService quorum, no fencing' : 'LockService,@Locked').split(/,(?! )/).filter((name) => name !== FLOOR)];
const ROUNDS = Number(option('--rounds', '15'));
const PAIRS = Number(option('--pairs', '3000'));
const CONCURRENCIES = option('--concurrency', '1,50').split(',').map(Number);
const BASE = option('--base');
// --reuse-keys: every round locks the same keys, so from the second round on each key's fencing
// counter exists, as for most applications' keys; without it each round's keys are new, and every
// pair starts a counter.
const REUSE_KEYS = args.includes('--reuse-keys');
const WORKER = fileURLToPath(new URL('./uncontended-worker.mjs', import.meta.url));
// Node on core 1, Redis on core 0, as in run.mjs.
const TASKSET = spawnSync('taskset', ['-V']).status === 0 && os.cpus().length >= 2;

const servers = await Promise.all((QUORUM ? [0, 1, 2] : [0]).map(() => startRedisServer()));
const admins = servers.map((node) => new Redis(node.url));
const target = QUORUM ? servers.map((node) => node.url) : servers[0].url;
if (TASKSET) {
  for (const admin of admins) {
    const pid = /process_id:(\d+)/.exec(await admin.info('server'))?.[1];
    if (pid) spawnSync('taskset', ['-a', '-p', '-c', '0', pid]);
  }
}

const slots = [];
for (const node of NODES) {
  for (const name of NAMES) {
    slots.push({ node, name, label: name, worker: WORKER });
    if (BASE && name !== FLOOR) slots.push({ node, name, label: `base ${name}`, worker: join(BASE, 'bench', 'uncontended-worker.mjs') });
  }
}
console.log(`Node ${NODES.map((n) => n.version).join(', ')}; ${ROUNDS} rounds of ${PAIRS} pairs at ${CONCURRENCIES.join(' and ')} loops; load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`);
for (const slot of slots) slot.process = await start(slot);

const runs = {};
try {
  for (let round = 0; round < ROUNDS; round++) {
    for (const concurrency of round % 2 === 0 ? CONCURRENCIES : [...CONCURRENCIES].reverse()) {
      for (let i = 0; i < slots.length; i++) {
        const slot = slots[(i + round) % slots.length];
        const reply = await slot.process.run({ pairs: PAIRS, concurrency, tag: `${REUSE_KEYS ? 'same' : `r${round}`}c${concurrency}s${slots.indexOf(slot)}` });
        ((runs[`${slot.node.version}|${concurrency}`] ??= {})[slot.label] ??= []).push({
          pairsPerSecond: reply.pairs / reply.seconds,
          nodeCpuUsPerPair: reply.nodeCpuUs / reply.pairs,
        });
      }
    }
  }
} finally {
  await Promise.all(slots.map((slot) => slot.process.close()));
  await Promise.all(admins.map((admin) => admin.quit()));
  await Promise.all(servers.map((node) => node.stop()));
}

const table = {};
for (const [key, byLabel] of Object.entries(runs)) {
  const [version, concurrency] = key.split('|');
  const raw = byLabel[FLOOR];
  for (const [label, reps] of Object.entries(byLabel)) {
    const ratio = (figure, floor) => median(reps.map((r, i) => r[figure] / floor[i][figure]));
    // The peer of the same kind: redis-semaphore's Semaphore beside our semaphore, its Mutex beside the rest.
    const semaphore = byLabel[SEMAPHORE_CONTENDERS.includes(label) ? SEMAPHORE_CONTENDERS[1] : 'redis-semaphore'];
    table[`${version} ${concurrency}w ${label}`] = {
      'Node CPU us/pair': fmt(median(reps.map((r) => r.nodeCpuUsPerPair))),
      'x raw': fmt(ratio('nodeCpuUsPerPair', raw)),
      'pairs/s': fmt(median(reps.map((r) => r.pairsPerSecond))),
      'x raw ': fmt(ratio('pairsPerSecond', raw)),
      'x redis-semaphore': semaphore ? fmt(ratio('pairsPerSecond', semaphore)) : '',
      'CPU x redis-semaphore': semaphore ? fmt(ratio('nodeCpuUsPerPair', semaphore)) : '',
    };
  }
}
console.table(table);
console.log(`load average at the end ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`);

async function start(slot) {
  const command = TASKSET ? ['taskset', ['-c', '1', slot.node.binary, slot.worker, slot.name, JSON.stringify(target)]] : [slot.node.binary, [slot.worker, slot.name, JSON.stringify(target)]];
  const child = spawn(command[0], command[1], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const first = (await lines.next()).value;
  if (first !== 'ready') throw new Error(`the ${slot.label} process on ${slot.node.version} said ${first}`);
  return {
    async run(request) {
      child.stdin.write(JSON.stringify(request) + '\n');
      return JSON.parse((await lines.next()).value);
    },
    async close() {
      const exited = new Promise((resolve) => (child.exitCode !== null ? resolve() : child.once('exit', resolve)));
      child.stdin.write('{"exit":true}\n');
      await exited;
    },
  };
}
