#!/usr/bin/env node
// `npm run explore:bugs -- [--seconds S | --seeds N] [--seed X] [--only a,b] [--shrink-seconds S] [--jobs J] [--json]`: applies each seeded bug
// of explore/bugs/*.patch to a copy of lib/ (the working tree is never touched), builds the
// explorer of that copy, and explores until it finds a violation or the budget runs out. Ends with
// `bugs found: F of T`; exits 1 unless every bug was found. `--jobs J` (1 by default) works on J
// bugs at once: most of a bug found early is its build and its processes starting, which
// overlap; a `--seconds` budget is wall time, so with J > 1 each bug explores less in it
// (`--seeds` counts schedules, the same whatever J).
// `--known <file>`: a JSON object naming, for some simulator bugs, the schedule that found each
// (`{ "<bug>": { "seed": S, "path": "P", "invariant": "..." } }`): such a bug's schedule is replayed
// first (one schedule, no search), and counts as found when it breaks that invariant; when it
// does not (the explorer's draws or the engine moved), the bug is searched for as without it, and
// its row says the known schedule is stale. CI's bites test uses it: most of a search's time was
// finding again, each run, the schedule it found the last time.
// `--transpile-patched`: the tree is built once, and each bug's build is that build with the files
// its patch changes compiled again alone (TypeScript's transpileModule, as the build does, without
// type checking); a patch of anything but lib/ or explore/ TypeScript gets a build of its own. A
// build per bug was most of a bug's time found by a known schedule (6.5 s of a loaded machine's
// 10, against about 1 s for those few files).
// A patch whose header has a line `Explorer: real <options>` is a bug only real Redis shows (a
// Cluster slot migration, say): its build runs the real-Redis explorer (explore/real/cli.mjs,
// workers on that build through EXPLORE_PACKAGE) with those options, which bound its budget
// (`--schedules N`), from the same `--seed`, until the first violation.
// A simulator bug's patch whose header has a line `Budget: seeds N` is explored for N schedules
// from the seed, instead of the `--seconds` budget (a `--seeds` on the command line still wins):
// a bug whose shape comes late in the seed's sequence is then found whatever the machine's load,
// which only a count of schedules, not a time, makes sure of; the other bugs keep the time budget.
import { execFileSync, spawn } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildExplorer } from './build.mjs';

const root = dirname(dirname(fileURLToPath(import.meta.url)));

function parse(argv) {
  const args = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (!arg.startsWith('--')) throw new TypeError(`explore:bugs: unexpected argument ${JSON.stringify(arg)}; use --seconds S, --seed X, --only a,b, --json.`);
    const next = argv[i + 1];
    if (next !== undefined && !next.startsWith('--')) args[arg.slice(2)] = argv[++i];
    else args[arg.slice(2)] = true;
  }
  for (const name of Object.keys(args)) {
    if (!['seconds', 'seeds', 'seed', 'only', 'json', 'shrink-seconds', 'jobs', 'known', 'transpile-patched'].includes(name)) throw new TypeError(`explore:bugs: unknown option --${name}; use --seconds S, --seeds N, --seed X, --only a,b, --shrink-seconds S, --jobs J, --known FILE, --transpile-patched, --json.`);
  }
  return args;
}

/**
 * The seeded bugs: one patch file each, its first line the bug's description; `real`: the
 * options of the real-Redis explorer, for a bug the simulator cannot show; `seeds`: a budget of
 * schedules of its own (see above).
 */
export function catalogue() {
  const dir = join(root, 'explore', 'bugs');
  return readdirSync(dir)
    .filter((file) => file.endsWith('.patch'))
    .sort()
    .map((file) => {
      const text = readFileSync(join(dir, file), 'utf8');
      // The header ends where the diff begins: `diff --git` (git's), or the first `--- ` (diff -u's).
      const header = text.slice(0, Math.max(0, text.search(/^(?:diff --git|--- )/m))).split('\n');
      const real = header.map((line) => /^Explorer: real(?:\s+(.*))?$/.exec(line)).find(Boolean);
      const seeds = header.map((line) => /^Budget: seeds (\d+)$/.exec(line)).find(Boolean);
      return {
        name: basename(file, '.patch').replace(/^\d+-/, ''),
        file: join(dir, file),
        title: header[0].replace(/^Seeded bug:\s*/, ''),
        real: real ? (real[1] ?? '').split(/\s+/).filter(Boolean) : undefined,
        seeds: seeds ? Number(seeds[1]) : undefined,
      };
    });
}

/** Runs `args` on node to its end, its output held (several bugs' processes run at once with --jobs). */
function runNode(args, env = process.env) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    const out = [];
    const err = [];
    child.stdout.on('data', (chunk) => out.push(chunk));
    child.stderr.on('data', (chunk) => err.push(chunk));
    child.on('error', (error) => err.push(Buffer.from(String(error?.stack ?? error))));
    child.on('close', (status) => resolve({ status, stdout: Buffer.concat(out).toString(), stderr: Buffer.concat(err).toString() }));
  });
}

/** A copy of what the explorer builds from (lib/, explore/ but its real-Redis part and the patches, the configs). */
function copyTree() {
  const dir = mkdtempSync(join(tmpdir(), 'nestjs-redis-lock-bug-'));
  cpSync(join(root, 'lib'), join(dir, 'lib'), { recursive: true });
  cpSync(join(root, 'explore'), join(dir, 'explore'), { recursive: true, filter: (source) => !/[\\/]explore[\\/](real|bugs)([\\/]|$)/.test(source) });
  cpSync(join(root, 'tsconfig.json'), join(dir, 'tsconfig.json'));
  cpSync(join(root, 'package.json'), join(dir, 'package.json'));
  return dir;
}

/** Copies what the explorer builds from, applies `patch`, builds; returns the explorer's entry point. */
function patchedExplorer(patch, base) {
  const dir = copyTree();
  execFileSync('git', ['apply', '--whitespace=nowarn', patch], { cwd: dir, stdio: ['ignore', 'inherit', 'inherit'] });
  const files = patchedFiles(patch);
  if (base !== undefined && files.every((file) => /^(lib|explore)\/.*\.ts$/.test(file) && !file.endsWith('.d.ts'))) {
    // `--transpile-patched`: the unpatched build, with the patched files alone compiled again.
    cpSync(base.out, join(dir, 'out'), { recursive: true, verbatimSymlinks: true });
    for (const file of files) writeFileSync(join(dir, 'out', file.replace(/\.ts$/, '.js')), base.transpile(readFileSync(join(dir, file), 'utf8'), file));
    return { dir, cli: join(dir, 'out', 'explore', 'cli.js'), entry: join(dir, 'out', 'lib', 'index.js') };
  }
  const cli = buildExplorer(dir, join(dir, 'out'), join(root, 'node_modules'));
  // The build of lib/ in it is the package's too (ES modules, as dist/ is): the real explorer's workers load it.
  return { dir, cli, entry: join(dir, 'out', 'lib', 'index.js') };
}

/** The files `patch` changes, as paths from the tree's root. */
function patchedFiles(patch) {
  return [...readFileSync(patch, 'utf8').matchAll(/^\+\+\+ b\/(\S+)/gm)].map((match) => match[1]);
}

/**
 * `--transpile-patched`: the explorer of this tree built once (as `buildExplorer` builds it), and
 * a compiler of one file with its options (TypeScript's own `transpileModule`: no type checking,
 * as that build has none either), so that each bug costs its patched files, not a build.
 */
async function baseBuild() {
  const dir = copyTree();
  buildExplorer(dir, join(dir, 'out'), join(root, 'node_modules'));
  const { default: ts } = await import('typescript');
  const { config } = ts.readConfigFile(join(root, 'tsconfig.json'), ts.sys.readFile);
  const { options } = ts.convertCompilerOptionsFromJson({ ...config.compilerOptions, module: 'ES2022', moduleResolution: 'Bundler', noEmit: false, declaration: false, sourceMap: false }, root);
  return {
    dir,
    out: join(dir, 'out'),
    transpile: (source, fileName) => ts.transpileModule(source, { compilerOptions: options, fileName }).outputText,
  };
}

/** Runs the real-Redis explorer on the patched build `entry`; returns the simulator's report shape. */
async function exploreReal(entry, options, seed) {
  const run = await runNode([join(root, 'explore', 'real', 'cli.mjs'), ...options, '--seed', String(seed), '--stop-at-first', '--json'], { ...process.env, EXPLORE_PACKAGE: entry });
  const line = run.stdout.trim().split('\n').pop() ?? '';
  let report;
  try {
    report = JSON.parse(line);
  } catch {
    throw new Error(`explore:bugs: the real-Redis explorer printed no report (exit ${run.status}):\n${run.stdout.slice(-2_000)}\n${run.stderr.slice(-2_000)}`);
  }
  const [first] = report.violations;
  return {
    schedules: report.schedules,
    elapsedMs: report.seconds * 1000,
    failure: first && { foundAfter: report.schedules, foundAfterMs: report.seconds * 1000, violation: { invariant: first.invariants.join(', ') }, replay: first.replay },
  };
}

/** Replays one schedule of the patched explorer `cli` by its seed and path: the invariant it breaks, if any. */
async function replayInvariant(cli, seed, path) {
  const run = await runNode([cli, '--seed', String(seed), '--path', path, '--json']);
  const line = run.stdout.trim().split('\n').pop() ?? '';
  try {
    const report = JSON.parse(line);
    return report.schedules === 1 ? report.failure?.violation?.invariant : undefined;
  } catch {
    throw new Error(`explore:bugs: the replay of seed ${seed} path ${path} printed no report (exit ${run.status}):\n${run.stderr}`);
  }
}

async function main() {
  const args = parse(process.argv.slice(2));
  const seconds = args.seconds === undefined ? 60 : Number(args.seconds);
  const seed = args.seed === undefined ? 1 : Number(args.seed);
  if (!(seconds > 0) || !Number.isInteger(seed)) throw new TypeError('explore:bugs: --seconds must be a positive number and --seed an integer.');
  const shrinkSeconds = args['shrink-seconds'] === undefined ? 10 : Number(args['shrink-seconds']);
  const only = typeof args.only === 'string' ? new Set(args.only.split(',')) : undefined;
  const bugs = catalogue().filter((bug) => only === undefined || only.has(bug.name));
  if (only !== undefined && bugs.length !== only.size) throw new TypeError(`explore:bugs: --only names no bug of ${catalogue().map((b) => b.name).join(', ')}.`);
  const jobs = args.jobs === undefined ? 1 : Number(args.jobs);
  if (!Number.isInteger(jobs) || jobs < 1) throw new TypeError(`explore:bugs: --jobs must be a positive integer, got ${JSON.stringify(args.jobs)}.`);
  const known = typeof args.known === 'string' ? JSON.parse(readFileSync(args.known, 'utf8')) : {};
  for (const [name, schedule] of Object.entries(known)) {
    const bug = bugs.find((b) => b.name === name) ?? catalogue().find((b) => b.name === name);
    if (bug === undefined) throw new TypeError(`explore:bugs: --known names no bug: ${JSON.stringify(name)}.`);
    if (bug.real !== undefined) throw new TypeError(`explore:bugs: --known gives a schedule for ${name}, a real-Redis bug; only the simulator's replay by seed and path.`);
    if (!Number.isInteger(schedule?.seed) || typeof schedule.path !== 'string' || typeof schedule.invariant !== 'string') throw new TypeError(`explore:bugs: --known's entry for ${name} needs { seed, path, invariant }, got ${JSON.stringify(schedule)}.`);
  }
  const base = args['transpile-patched'] === true ? await baseBuild() : undefined;
  const results = new Array(bugs.length);
  let next = 0;
  const work = async () => {
    while (next < bugs.length) {
      const at = next++;
      results[at] = await huntBug(bugs[at], { args, seconds, seed, shrinkSeconds, known: known[bugs[at].name], base });
    }
  };
  await Promise.all(Array.from({ length: Math.min(jobs, bugs.length) }, work));
  if (base !== undefined) rmSync(base.dir, { recursive: true, force: true });
  const found = results.filter((result) => result.found).length;
  if (args.json) console.log(JSON.stringify(results));
  console.log(`bugs found: ${found} of ${results.length}`);
  process.exit(found === results.length ? 0 : 1);
}

/** Explores one seeded bug's build; its result, printed unless --json. */
async function huntBug(bug, { args, seconds, seed, shrinkSeconds, known, base }) {
  const { dir, cli, entry } = patchedExplorer(bug.file, base);
  try {
    let report;
    let stale;
    if (known !== undefined) {
      // The schedule that found it before, alone: deterministic, so one run is its replay too.
      const started = performance.now();
      const invariant = await replayInvariant(cli, known.seed, known.path);
      const seconds = (performance.now() - started) / 1000;
      const replay = `seed ${known.seed} path ${known.path}`;
      if (invariant === known.invariant) {
        const result = { name: bug.name, title: bug.title, found: true, real: false, schedules: 1, seconds, invariant, replay, replayed: invariant, known: true };
        if (!args.json) console.log(`FOUND   ${bug.name}: its known schedule (${replay}) breaks it again, ${seconds.toFixed(1)} s: ${invariant}`);
        return result;
      }
      stale = `its known schedule (${replay}) showed ${invariant ?? 'no violation'}, not ${JSON.stringify(known.invariant)}: searched instead`;
      console.error(`STALE   ${bug.name}: ${stale}`);
    }
    if (bug.real) report = await exploreReal(entry, bug.real, seed);
    else {
      const schedules = args.seeds ?? bug.seeds;
      const budget = schedules === undefined ? ['--seconds', String(seconds)] : ['--seeds', String(schedules)];
      const run = await runNode([cli, ...budget, '--seed', String(seed), '--shrink-seconds', String(shrinkSeconds), '--json']);
      const line = run.stdout.trim().split('\n').pop() ?? '';
      try {
        report = JSON.parse(line);
      } catch {
        throw new Error(`explore:bugs: the explorer of ${bug.name} printed no report (exit ${run.status}):\n${run.stderr}`);
      }
    }
    let found = report.failure != null;
    const replay = found ? (report.failure.replay ?? `seed ${report.failure.seed} path ${report.failure.path}`) : undefined;
    // The shrunk schedule is what a developer gets to debug with: replayed by its seed and
    // path, it must break the same invariant, or the bug does not count as found.
    let replayed;
    if (found && !bug.real) {
      replayed = await replayInvariant(cli, report.failure.seed, report.failure.path);
      found = replayed === report.failure.violation?.invariant;
    }
    const result = { name: bug.name, title: bug.title, found, real: bug.real !== undefined, schedules: report.failure ? report.failure.foundAfter : report.schedules, seconds: report.failure ? report.failure.foundAfterMs / 1000 : report.elapsedMs / 1000, invariant: report.failure?.violation?.invariant, replay, replayed, ...(stale === undefined ? {} : { stale }) };
    if (!args.json) {
      console.log(found
        ? `FOUND   ${bug.name}: after ${result.schedules} ${result.real ? 'real-Redis ' : ''}schedule(s), ${result.seconds.toFixed(1)} s: ${result.invariant}${result.real ? ` (${result.replay} with EXPLORE_PACKAGE set)` : ', the shrunk replay breaks it again'}`
        : report.failure
          ? `MISSED  ${bug.name}: found (${result.invariant}), but its shrunk replay (${result.replay}) showed ${replayed ?? 'no violation'}`
          : `MISSED  ${bug.name}: no violation in ${result.schedules} ${result.real ? 'real-Redis ' : ''}schedule(s), ${result.seconds.toFixed(1)} s`);
    }
    return result;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main().catch((error) => {
    console.error(error?.stack ?? String(error));
    process.exit(2);
  });
}
