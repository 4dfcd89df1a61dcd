// npm run explore:real -- [--schedules N] [--seed X] [--target single|cluster|quorum] [--workload W] [--driver ioredis|node-redis] [--placement L,O] [--migrate] [--silence [--silent-close [--handed]]] [--handed --target single] [--latency] [--deletes] [--drop-messages] [--foreign-counters] [--freeze] [--verbose] [--trace]
// Runs N seeded fault schedules (seeds X, X+1, ...; X random unless given) against a real
// redis-server and a 3-master Redis Cluster with real worker processes, checks every history,
// and prints a summary. `--seed X` alone replays that one schedule (`--trace` prints its whole
// history). `--placement L,O` (Cluster): the master (0 to 2) that holds the lock's key and the one
// that holds a job's owner lease, instead of the seed's draw (a run printed before the
// placement was part of the schedule). `--migrate`: Cluster schedules that move the slot of the key in use, a key at a time,
// while the workers hold and renew it. `--driver node-redis` (one server only): each worker hands
// the module a node-redis client of its own instead of a URL (the library then subscribes on a
// duplicate of it), and destroys it after app.close(). `--target quorum` (never drawn): three
// independent masters in quorum mode, a mutex, job, leader or transfer workload, each fault on
// one master (or, for half of the link faults, on every master of the worker's). `--silence`
// (with --target quorum): the same schedules with one or two masters frozen past quorum mode's
// silence threshold on top (resumed, or killed and restarted empty), from a generator of their
// own (see `silenceSchedule` in runner.mjs); the summary says how often a master went silent.
// `--silent-close` (with --silence): one master frozen across the workers' close as well (from
// 1.5 s before it), their shutdownTimeout 3 s: a close must not wait for it (close-waits-silent-master).
// `--handed` (with --silent-close): the workers hand the module clients of their own, open past the
// close until that master answered again: the closed application must send nothing (sent-after-close).
// `--handed --target single`: the same on one server, frozen from 1.5 s before the workers' close
// until every worker closed.
// `--latency` (quorum unless --target says otherwise): the same schedules on masters 10 to 30 ms
// away each way, one of them restarting empty on top (see `latencySchedule` in runner.mjs); with
// --target single or cluster, the server or the Cluster's masters that far. `--deletes` (one server or
// a Cluster): the seed's schedule with one of the run's lock keys deleted from outside on top (an
// operator's DEL, an eviction; see `DELETED_CLASSES` in runner.mjs), and, in a semaphore schedule that
// drains, the permit probe after the chains end (see `permitProbe` there). `--drop-messages` (one server or a
// Cluster): the seed's schedule with the release messages of one worker, or of all, lost for a while
// on top, while their commands flow (see `muteMessages` in fault-proxy.mjs). `--freeze` (one server
// or a Cluster): the seed's schedule with Redis (one master) frozen 1.5 to 3 s on top, past an
// attempt's 1 s grace, while every worker reads the lock (isLocked(), inspect()) every 50 ms
// (see `withFreeze` in runner.mjs; the checker's read-unbounded). `--foreign-counters` (one server,
// a Cluster or, on one master or a majority, a quorum): the seed's schedule with the run's fencing
// counters written past 2^53 or -5 for a while on top (see `FOREIGN_VALUES` in runner.mjs; the
// checker's token-range). Exits 1 on any violation; `--json` ends with one line of
// JSON ({ schedules, violations: [{ seed, invariants, replay, trace }], seconds }) for explore:bugs;
// `--stop-at-first` ends at the first schedule with a violation. A schedule with a violation keeps
// its evidence without `--trace`: its trace (as `--trace` prints it) and its whole history (JSON,
// what `check()` in checker.mjs judges) go to `<seed>.trace` and `<seed>.history.json` in a
// directory of the run's own under the system's temporary directory, named in the summary; its
// replay runs it again on another moment's timing, which may not break (a loaded machine's).
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { trace } from './checker.mjs';
import { FAULT_KINDS, WORKLOADS, formatResult, makeSchedule, runSchedule, startEnvironment } from './runner.mjs';

const { values } = parseArgs({
  options: {
    schedules: { type: 'string' },
    seed: { type: 'string' },
    target: { type: 'string' },
    workload: { type: 'string' },
    driver: { type: 'string' },
    placement: { type: 'string' },
    migrate: { type: 'boolean', default: false },
    silence: { type: 'boolean', default: false },
    'silent-close': { type: 'boolean', default: false },
    handed: { type: 'boolean', default: false },
    latency: { type: 'boolean', default: false },
    deletes: { type: 'boolean', default: false },
    'foreign-counters': { type: 'boolean', default: false },
    freeze: { type: 'boolean', default: false },
    'drop-messages': { type: 'boolean', default: false },
    json: { type: 'boolean', default: false },
    'stop-at-first': { type: 'boolean', default: false },
    verbose: { type: 'boolean', default: false },
    trace: { type: 'boolean', default: false },
  },
});
const fail = (message) => {
  process.stderr.write(`explore:real: ${message}\n`);
  process.exit(2);
};
const count = values.schedules === undefined ? (values.seed === undefined ? 30 : 1) : Number(values.schedules);
if (!Number.isInteger(count) || count < 1) fail(`--schedules must be a positive integer, got ${JSON.stringify(values.schedules)}`);
const first = values.seed === undefined ? Math.floor(Math.random() * 1e6) : Number(values.seed);
if (!Number.isInteger(first) || first < 0) fail(`--seed must be a non-negative integer, got ${JSON.stringify(values.seed)}`);
if (values.silence && values.target !== 'quorum') fail('--silence freezes quorum masters past the silence threshold: it needs --target quorum');
if (values['silent-close'] && !values.silence) fail('--silent-close freezes a quorum master across the close of a silence schedule: it needs --silence');
if (values.handed && !values['silent-close'] && values.target !== 'single') fail('--handed keeps the clients open past a close that Redis does not answer: it needs --silent-close (quorum) or --target single');
if (values.handed && values.target === 'single' && (values.freeze || values.deletes || values['drop-messages'] || values.driver !== undefined)) fail('--handed --target single is a schedule of its own: not with --freeze, --deletes, --drop-messages or --driver');
if (values.latency && values.migrate) fail('--latency and --migrate are schedules of their own: give one');
if (values.latency && values.silence) fail('--latency and --silence are schedules of their own: give one');
if ((values.deletes || values['drop-messages']) && (values.target === 'quorum' || values.migrate || values.silence || values.latency || values.handed)) fail('--deletes and --drop-messages run on one server or a Cluster (not --target quorum, --migrate, --silence, --latency or --handed)');
if (values['foreign-counters'] && (values.migrate || values.silence || values.latency || values.handed)) fail('--foreign-counters runs on one server, a Cluster or a quorum (not --migrate, --silence, --latency or --handed)');
if (values.freeze && (values.target === 'quorum' || values.migrate || values.silence || values.latency)) fail('--freeze runs on one server or a Cluster (not --target quorum, --migrate, --silence or --latency)');
if (values.migrate && values.target === 'single') fail('--migrate moves a Cluster slot: it needs --target cluster (or none)');
if (values.target !== undefined && !['single', 'cluster', 'quorum'].includes(values.target)) fail(`--target must be single, cluster or quorum, got ${JSON.stringify(values.target)}`);
if (values.target === 'quorum' && values.workload !== undefined && !['mutex', 'job', 'leader', 'transfer'].includes(values.workload)) fail(`--target quorum runs mutex, job, leader or transfer (quorum mode has no semaphores, read-write locks or barging), got ${JSON.stringify(values.workload)}`);
if (values.driver !== undefined && !['ioredis', 'node-redis'].includes(values.driver)) fail(`--driver must be ioredis or node-redis, got ${JSON.stringify(values.driver)}`);
if (values.driver === 'node-redis' && values.target !== 'single') fail('--driver node-redis runs on one server: it needs --target single');
if (values.workload !== undefined && !WORKLOADS.includes(values.workload)) fail(`--workload must be one of ${WORKLOADS.join(', ')}, got ${JSON.stringify(values.workload)}`);

let placement;
if (values.placement !== undefined) {
  const nodes = values.placement.split(',').map(Number);
  if (nodes.length !== 2 || !nodes.every((n) => Number.isInteger(n) && n >= 0 && n <= 2)) fail(`--placement must be two masters 0 to 2, lock then owner lease (e.g. 0,1), got ${JSON.stringify(values.placement)}`);
  if (values.migrate || values.target === 'single') fail('--placement places keys on Cluster masters: not with --migrate or --target single');
  placement = { lock: nodes[0], owner: nodes[1] };
}
const schedules = Array.from({ length: count }, (_, i) => makeSchedule(first + i, { target: values.target, workload: values.workload, migrate: values.migrate, driver: values.driver, silence: values.silence, silentClose: values['silent-close'], handed: values.handed, latency: values.latency, deletes: values.deletes, mute: values['drop-messages'], freeze: values.freeze, foreign: values['foreign-counters'] }))
  .map((schedule) => (placement && schedule.target === 'cluster' ? { ...schedule, placement } : schedule));
const environment = await startEnvironment({ cluster: schedules.some((s) => s.target === 'cluster'), quorum: schedules.some((s) => s.target === 'quorum') });
const started = performance.now();
const faults = Object.fromEntries(FAULT_KINDS.map((kind) => [kind, 0]));
const byTarget = { single: 0, cluster: 0, quorum: 0 };
const byWorkload = Object.fromEntries(WORKLOADS.map((w) => [w, 0]));
const broken = [];
let calls = 0;
/** Job schedules whose own run probe ran (runner.mjs, own-run-probe.mjs). */
let ownRuns = 0;
/** Mutex schedules whose unrenewed handover probe ran (runner.mjs, unrenewed-probe.mjs). */
let unrenewed = 0;
let ran = 0;
const silence = { schedules: 0, silenced: 0, comebacks: 0, resent: 0 };
const outside = { deleted: {}, mutedChunks: 0, mutedSchedules: 0, probes: 0 };
// A schedule drawn with --target or --workload given is another schedule of the same seed: its replay names them.
/** Where the evidence of the schedules with a violation goes (created at the first), and each one's trace file by seed. */
let evidenceDir;
const evidence = new Map();
/** Writes the trace and the history of a schedule with a violation (see the header); returns the trace file's path. */
const keepEvidence = (result) => {
  evidenceDir ??= mkdtempSync(join(tmpdir(), 'explore-real-'));
  const file = join(evidenceDir, `${result.schedule.seed}.trace`);
  writeFileSync(file, `${formatResult(result)}\n${trace(result.history).map((line) => `    ${line}`).join('\n')}\n`);
  writeFileSync(join(evidenceDir, `${result.schedule.seed}.history.json`), JSON.stringify(result.history, (_, v) => (typeof v === 'bigint' ? v.toString() : v)));
  evidence.set(result.schedule.seed, file);
  return file;
};
const replay = (schedule) =>
  `npm run explore:real -- --seed ${schedule.seed}${schedule.migrate ? ' --migrate' : ''}${schedule.silence ? ' --silence' : ''}${schedule.closeSilence !== undefined && schedule.silence ? ' --silent-close' : ''}${schedule.handed ? ' --handed' : ''}${schedule.latency !== undefined ? ' --latency' : ''}${schedule.deletes ? ' --deletes' : ''}${schedule.foreign ? ' --foreign-counters' : ''}${schedule.mute ? ' --drop-messages' : ''}${schedule.freeze ? ' --freeze' : ''}${values.target !== undefined && !schedule.migrate ? ` --target ${values.target}` : ''}${values.workload !== undefined || schedule.workload === 'greedy' ? ` --workload ${schedule.workload}` : ''}${schedule.driver === 'node-redis' ? ' --driver node-redis' : ''}${placement && schedule.placement ? ` --placement ${placement.lock},${placement.owner}` : ''}`;
try {
  for (const schedule of schedules) {
    const result = await runSchedule(environment, schedule);
    byTarget[schedule.target]++;
    byWorkload[schedule.workload]++;
    calls += result.figures.sections;
    if (result.figures.silenced > 0) silence.schedules++;
    for (const figure of ['silenced', 'comebacks', 'resent']) silence[figure] += result.figures[figure];
    for (const [kind, n] of Object.entries(result.figures.faults)) faults[kind] += n;
    for (const of of result.figures.deleted) outside.deleted[of] = (outside.deleted[of] ?? 0) + 1;
    outside.mutedChunks += result.figures.mutedChunks;
    if (result.figures.probe) outside.probes++;
    if (result.figures.ownRun) ownRuns++;
    if (result.figures.unrenewed) unrenewed++;
    if (result.figures.mutedChunks > 0) outside.mutedSchedules++;
    ran++;
    if (result.violations.length > 0) {
      broken.push(result);
      // Kept even with --trace: a long run's output scrolls away, the file stays.
      keepEvidence(result);
    }
    if (values.verbose || result.violations.length > 0) process.stdout.write(`${formatResult(result)}\n`);
    if (values.trace) process.stdout.write(`${trace(result.history).map((line) => `    ${line}`).join('\n')}\n`);
    if (values['stop-at-first'] && broken.length > 0) break;
  }
} finally {
  await environment.stop();
}
const seconds = (performance.now() - started) / 1000;
process.stdout.write(
  [
    `schedules: ${ran} (seeds ${first}..${first + ran - 1}; ${byTarget.single} single node, ${byTarget.cluster} Cluster${byTarget.quorum > 0 ? `, ${byTarget.quorum} quorum` : ''}) in ${seconds.toFixed(1)} s`,
    `workloads: ${Object.entries(byWorkload).map(([w, n]) => `${w} ${n}`).join(', ')}; ${calls} lock calls`,
    `faults: ${Object.entries(faults).filter(([, n]) => n > 0).map(([kind, n]) => `${kind} ${n}`).join(', ')}`,
    ...(unrenewed > 0 ? [`unrenewed handover probes: ${unrenewed} (a lock with autoRenew: false handed over, Redis' lease read after its first renewal)`] : []),
    ...(ownRuns > 0 ? [`own run probes: ${ownRuns} (a worker's job run going on while Redis restarted empty, then its next ticks)`] : []),
    ...(values.deletes ? [`keys deleted from outside: ${Object.entries(outside.deleted).map(([of, n]) => `${of} ${n}`).join(', ')}; permit probes: ${outside.probes}`] : []),
    ...(values['drop-messages'] ? [`release messages lost: ${outside.mutedChunks} chunk(s) thrown away in ${outside.mutedSchedules} schedule(s)`] : []),
    ...(evidence.size > 0 ? [`evidence of the schedules with a violation (trace and history.json per seed): ${evidenceDir}`] : []),
    ...(values.silence || silence.silenced > 0 ? [`quorum silence: masters silenced in ${silence.schedules} schedule(s), ${silence.silenced} times (as each worker saw it), ${silence.comebacks} answered again after it, ${silence.resent} missed release(s) resent`] : []),
    `violations: ${broken.reduce((n, r) => n + r.violations.length, 0)} in ${broken.length} schedule(s)${broken.length ? `; replay: ${broken.map((r) => replay(r.schedule)).join(' | ')}` : ''}`,
  ].join('\n') + '\n',
);
if (values.json) {
  const violations = broken.map((r) => ({ seed: r.schedule.seed, invariants: [...new Set(r.violations.map((v) => v.invariant))], replay: replay(r.schedule), trace: evidence.get(r.schedule.seed) }));
  process.stdout.write(`${JSON.stringify({ schedules: ran, violations, seconds })}\n`);
}
process.exit(broken.length > 0 ? 1 : 0);
