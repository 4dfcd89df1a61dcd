// Prints the benchmark tables of docs/benchmarks.md from a results file (default bench/results/latest.json):
//   node bench/markdown.mjs [file]
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { fmt } from './stats.mjs';

const file = process.argv[2] ?? fileURLToPath(new URL('./results/latest.json', import.meta.url));
const r = JSON.parse(readFileSync(file, 'utf8'));
const n = (value) => (value >= 1000 ? Math.round(value).toLocaleString('en-US') : fmt(value));
const x = (value) => (value === undefined ? '' : value.toFixed(2));

function uncontended(summary, names, floor = 'raw') {
  const lines = [
    `| | Redis µs/pair (commandstats) | x ${floor} | Redis process CPU µs/pair | x ${floor} | Node CPU µs/pair | x ${floor} | pairs/s | x ${floor} |`,
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  ];
  for (const c of [1, 50]) {
    for (const name of names) {
      const e = summary[name]?.[c];
      if (!e) continue;
      lines.push(
        `| ${name}, ${c === 1 ? '1 worker' : `${c} workers`} | ${fmt(e.redisUsecPerPair)} | ${x(e.redisUsecPerPairXRaw)} | ${fmt(e.redisProcessCpuUsPerPair)} | ${x(e.redisProcessCpuUsPerPairXRaw)} | ${fmt(e.nodeCpuUsPerPair)} | ${x(e.nodeCpuUsPerPairXRaw)} | ${n(e.pairsPerSecond)} | ${x(e.pairsPerSecondXRaw)} |`,
      );
    }
  }
  return lines.join('\n');
}

console.log(`Machine: ${r.machine.cpu}, ${r.machine.cores} cores, Node ${r.machine.node}, Redis ${r.machine.redis}, ${r.startedAt}\n`);
// One table per Node version when the run had --node; results of older runs have one.
const byNode = r.uncontendedByNode && Object.keys(r.uncontendedByNode).length > 0 ? r.uncontendedByNode : { [r.machine.node]: r.uncontended };
for (const [version, summary] of Object.entries(byNode)) {
  console.log(`Node ${version}:\n`);
  console.log(uncontended(summary, Object.keys(summary)));
  console.log();
}
for (const section of [r.cluster, r.quorum]) {
  if (!section?.summary) continue;
  console.log(uncontended(section.summary, Object.keys(section.summary), section.floor));
  console.log();
}
const contended = Object.entries(r.contended ?? {}).filter(([, e]) => typeof e === 'object');
if (contended.length > 0) {
  console.log('| | handoff p50 | p99 | acquisitions/s (greedy) | worst worker, x fair | best worker, x fair | failed acquires |');
  console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: |');
  for (const [name, e] of contended) {
    console.log(`| ${name} | ${fmt(e.handoffP50Ms)} ms | ${fmt(e.handoffP99Ms)} ms | ${n(e.acquisitionsPerSecond)} | ${x(e.minShareOfFair)} | ${x(e.maxShareOfFair)} | ${e.failedAcquires} |`);
  }
  console.log();
}
if (r.watchdog.length > 0) {
  console.log('| held locks | renewals | round trips per interval | Node CPU per renewal | locks lost |');
  console.log('| ---: | ---: | ---: | ---: | ---: |');
  for (const e of r.watchdog) console.log(`| ${n(e.locks)} | ${n(e.renewals)} | ${fmt(e.roundTripsPerPeriod)} | ${fmt(e.nodeCpuPerRenewalUs)} µs | ${e.locksLost} |`);
  console.log();
}
for (const t of r.targets) console.log(`- ${t.target}: ${t.measured} (${t.met})`);
