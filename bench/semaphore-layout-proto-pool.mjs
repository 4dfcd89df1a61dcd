// Pools the rounds of several runs of bench/semaphore-layout-proto.mjs (each run's JSON, copied
// aside from bench/results/semaphore-layout-proto.json): per variant, the median over every round
// of its ratio to redis-semaphore's acquisition in the same round, and of its own figures.
//   node bench/semaphore-layout-proto-pool.mjs bench/results/semaphore-layout-proto-run*.json
import { readFileSync } from 'node:fs';

const PEER_FAILED_POLLS = { limit3: 0.81, limit100: 0.07 };
const SHARE_QUEUED = { limit3: 1, limit100: 0.18 };
const PEER = 'peer acquisition (release + 1 successful attempt)';
const POLL = 'peer failed poll';
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); const m = s.length >> 1; return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2; };
const runs = process.argv.slice(2).map((file) => JSON.parse(readFileSync(file, 'utf8')));
for (const limit of ['limit3', 'limit100']) {
  const F = PEER_FAILED_POLLS[limit];
  const q = SHARE_QUEUED[limit];
  const ratios = {};
  const own = {};
  for (const run of runs) {
    const raw = run.raw[limit];
    const peer = (field, i) => raw[PEER][i][field] + F * raw[POLL][i][field];
    const add = (name, field, value) => ((ratios[name] ??= {})[field] ??= []).push(value);
    for (const name of Object.keys(raw)) {
      if (name === PEER || name === POLL) continue;
      raw[name].forEach((r, i) => {
        for (const field of ['procUs', 'mainUs', 'commandUs']) {
          add(name, field, r[field] / peer(field, i));
          ((own[name] ??= {})[field] ??= []).push(r[field]);
        }
      });
    }
    // family.mjs' mix at limit 100 (18% of acquisitions queued), per round.
    for (const kind of ['today', 'proto', 'lazy']) {
      if (!raw[`${kind} nobody waiting`]) continue;
      raw[kind].forEach((r, i) => {
        for (const field of ['procUs', 'mainUs', 'commandUs']) add(`${kind}, family mix (${q} queued)`, field, (q * r[field] + (1 - q) * raw[`${kind} nobody waiting`][i][field]) / peer(field, i));
      });
    }
    raw[PEER].forEach((r, i) => { for (const field of ['procUs', 'mainUs', 'commandUs']) ((own[`redis-semaphore per acquisition (${F} failed polls)`] ??= {})[field] ??= []).push(peer(field, i)); });
  }
  console.log(`\n${limit}: ${runs.length} runs; x redis-semaphore per acquisition (${F} failed polls), medians over all rounds (n = rounds)`);
  const table = {};
  for (const [name, fields] of Object.entries(ratios)) {
    table[name] = { n: fields.mainUs.length, 'process CPU x': +median(fields.procUs).toFixed(2), 'main thread x': +median(fields.mainUs).toFixed(2), 'commandstats x': +median(fields.commandUs).toFixed(2) };
    if (own[name]) Object.assign(table[name], { 'main thread us': +median(own[name].mainUs).toFixed(1), 'commandstats us': +median(own[name].commandUs).toFixed(1) });
  }
  // Per run (median of its rounds), for the main rows; and the prototype against today round by round.
  for (const name of ['today', 'proto', 'lazy', 'lazy, commands only', 'lazy, hot paths first', 'today, PUBLISH to 1 subscriber', 'lazy, PUBLISH to 1 subscriber', 'floor, PUBLISH to 4 subscribers']) {
    const perRun = runs.map((run) => {
      const raw = run.raw[limit];
      if (!raw[name]) return '-';
      return median(raw[name].map((r, i) => r.mainUs / (raw[PEER][i].mainUs + F * raw[POLL][i].mainUs))).toFixed(2);
    });
    if (table[name]) table[name]['main thread x, per run'] = perRun.join(' ');
  }
  for (const kind of ['proto', 'lazy', 'lazy, commands only', 'lazy, hot paths first']) {
    const xs = runs.flatMap((run) => (run.raw[limit][kind] ?? []).map((r, i) => r.mainUs / run.raw[limit].today[i].mainUs));
    const cs = runs.flatMap((run) => (run.raw[limit][kind] ?? []).map((r, i) => r.commandUs / run.raw[limit].today[i].commandUs));
    console.log(`  ${kind} / today, same round: main thread ${median(xs).toFixed(2)}x, commandstats ${median(cs).toFixed(2)}x (n = ${xs.length})`);
  }
  const peerOwn = own[`redis-semaphore per acquisition (${F} failed polls)`];
  table[`redis-semaphore per acquisition (${F} failed polls)`] = { n: peerOwn.mainUs.length, 'main thread us': +median(peerOwn.mainUs).toFixed(1), 'commandstats us': +median(peerOwn.commandUs).toFixed(1) };
  console.table(table);
}
