import fc from 'fast-check';
import { COUNTED_KINDS, describePlan, planArbitrary, type CountedKind, type Plan } from './sim/plan.js';
import { runPlan, type RunResult } from './sim/world.js';

/** What one exploration ran and found. */
export interface ExploreReport {
  schedules: number;
  elapsedMs: number;
  virtualMs: number;
  faults: Record<CountedKind, number>;
  /**
   * Schedules that reached the final close; those of them that found none of the plan's instances
   * alive to close (its checks judged no close of theirs); and of those, the ones where a probe
   * had closed one (not the plan's crashes and shutdowns alone): all plans, and 2-instance plans.
   */
  finalCloses: { reached: number; noneAlive: number; noneAliveByProbes: number; twoInstances: number; twoInstancesNoneAlive: number; twoInstancesNoneAliveByProbes: number };
  /** Open defects met (see `sim/known-defects.ts`), by name. */
  known: Record<string, number>;
  /** The shrunk failing schedule, if any. */
  failure?: {
    seed: number;
    path: string;
    plan: Plan;
    result: RunResult;
    /** Schedules run before the first failing one was found. */
    foundAfter: number;
    foundAfterMs: number;
  };
}

export interface ExploreOptions {
  /** Stop after this many schedules. */
  seeds?: number;
  /** Stop after this many seconds (checked between schedules). */
  seconds?: number;
  /** fast-check seed: replays the same sequence of schedules. */
  seed?: number;
  /** fast-check path (with `seed`): replays one (shrunk) schedule. */
  path?: string;
  /** Seconds allowed for shrinking a failure (default 60). */
  shrinkSeconds?: number;
  /** Fail on the open defects of `sim/known-defects.ts` too. */
  strict?: boolean;
  /** Called after each schedule (progress). */
  onSchedule?: (count: number) => void;
}

/**
 * Generates schedules with fast-check, runs each in the simulator, and on a violation shrinks
 * it to the smallest schedule fast-check finds that still fails, with a replay seed and path.
 */
export async function explore(options: ExploreOptions): Promise<ExploreReport> {
  const seed = options.seed ?? (Date.now() ^ (process.pid << 8)) >>> 0;
  const started = Date.now();
  const faults = Object.fromEntries(COUNTED_KINDS.map((kind) => [kind, 0])) as Record<CountedKind, number>;
  const known: Record<string, number> = {};
  const finalCloses = { reached: 0, noneAlive: 0, noneAliveByProbes: 0, twoInstances: 0, twoInstancesNoneAlive: 0, twoInstancesNoneAliveByProbes: 0 };
  let schedules = 0;
  let virtualMs = 0;
  let firstFailure: { schedules: number; ms: number } | undefined;
  let shrinking = false;
  let shrinkDeadline = Infinity;
  // A run fast-check abandoned at its time limit still finishes before the next one starts.
  let current: Promise<unknown> = Promise.resolve();
  const deadline = options.seconds === undefined ? Infinity : started + options.seconds * 1000;
  const property = fc.asyncProperty(planArbitrary(), async (plan) => {
    // Once the budget is spent, the remaining runs pass untried (fast-check's own interruption
    // would also stop shrinking).
    if (!shrinking && Date.now() > deadline) return true;
    // Past the shrinking budget every candidate "passes" untried: shrinking ends at once, with
    // the smallest failure found so far.
    if (shrinking && Date.now() > shrinkDeadline) return true;
    // A replay runs the one schedule at its path: when that schedule passes, fast-check goes on
    // to the path's siblings, which would report another schedule's violation as the replay's.
    if (options.path !== undefined && schedules === 1) return true;
    if (process.env.EXPLORE_DEBUG) process.stderr.write(`${describePlan(plan)}\n`);
    const running = runPlan(plan, !options.strict);
    current = running;
    const result = await running;
    if (process.env.EXPLORE_DEBUG) process.stderr.write(`  -> ${result.violation?.invariant ?? 'ok'} (${result.steps} steps)\n`);
    if (!shrinking) {
      schedules++;
      for (const [name, count] of Object.entries(result.known)) known[name] = (known[name] ?? 0) + count;
      virtualMs += result.virtualMs;
      for (const kind of COUNTED_KINDS) faults[kind] += result.faults[kind];
      if (result.finalClose !== undefined) {
        const two = result.finalClose.planInstances === 2;
        const none = result.finalClose.alive === 0;
        const byProbes = none && result.finalClose.closedByProbes > 0;
        finalCloses.reached++;
        if (none) finalCloses.noneAlive++;
        if (byProbes) finalCloses.noneAliveByProbes++;
        if (two) finalCloses.twoInstances++;
        if (two && none) finalCloses.twoInstancesNoneAlive++;
        if (two && byProbes) finalCloses.twoInstancesNoneAliveByProbes++;
      }
      options.onSchedule?.(schedules);
    }
    if (result.violation !== undefined) {
      if (!shrinking) {
        firstFailure = { schedules, ms: Date.now() - started };
        shrinkDeadline = Date.now() + (options.shrinkSeconds ?? 60) * 1000;
      }
      shrinking = true;
      return false;
    }
    return true;
  });
  const details = await fc.check(property, {
    seed,
    path: options.path,
    // With a time budget: more runs than fit in it (past it they pass untried, at no cost).
    numRuns: options.path !== undefined ? 1 : (options.seeds ?? (options.seconds !== undefined ? Math.ceil(options.seconds * 50) : 100)),
    // A replay runs the one schedule as it was, without shrinking it further.
    endOnFailure: options.path !== undefined,
    markInterruptAsFailure: false,
    interruptAfterTimeLimit: options.seconds === undefined ? undefined : (options.seconds + (options.shrinkSeconds ?? 60) + 30) * 1000,
  });
  await current.catch(() => undefined);
  const report: ExploreReport = { schedules, elapsedMs: Date.now() - started, virtualMs, faults, finalCloses, known };
  if (details.failed && details.counterexample !== null) {
    const plan = details.counterexample[0];
    const result = await runPlan(plan, !options.strict);
    report.failure = {
      seed: details.seed,
      path: details.counterexamplePath ?? '',
      plan,
      result,
      foundAfter: firstFailure?.schedules ?? schedules,
      foundAfterMs: firstFailure?.ms ?? report.elapsedMs,
    };
  }
  return report;
}

/** The command that replays a failure. */
export function replayCommand(seed: number, path: string): string {
  return `npm run explore -- --seed ${seed} --path ${path}`;
}

/** A report as text: throughput, faults by kind, and the failure's shrunk schedule, trace and replay. */
export function formatReport(report: ExploreReport, traceLines = 120): string {
  const out: string[] = [];
  const perSecond = report.schedules / Math.max(report.elapsedMs / 1000, 0.001);
  out.push(`schedules: ${report.schedules} in ${(report.elapsedMs / 1000).toFixed(1)} s (${perSecond.toFixed(1)} schedules/s, ${(report.virtualMs / 1000).toFixed(0)} s of virtual time)`);
  out.push(`faults injected: ${COUNTED_KINDS.map((kind) => `${kind} ${report.faults[kind]}`).join(', ')}`);
  const closes = report.finalCloses;
  out.push(`final close reached: ${closes.reached} schedule(s), ${closes.noneAlive} with none of the plan's instances alive to close (${closes.noneAliveByProbes} with one a probe closed); of 2-instance plans ${closes.twoInstances}, ${closes.twoInstancesNoneAlive} with none alive (${closes.twoInstancesNoneAliveByProbes} with one a probe closed)`);
  const known = Object.entries(report.known);
  if (known.length > 0) out.push(`known open defects met (not counted as violations): ${known.map(([name, count]) => `${name} x${count}`).join('; ')}`);
  const failure = report.failure;
  if (failure === undefined) {
    out.push('violations: none');
    return out.join('\n');
  }
  const violation = failure.result.violation;
  out.push(`VIOLATION found after ${failure.foundAfter} schedule(s), ${(failure.foundAfterMs / 1000).toFixed(1)} s`);
  out.push(`  invariant: ${violation?.invariant ?? '(the shrunk schedule no longer fails: replay to see)'}`);
  if (violation) out.push(`  at ${violation.at} ms on ${violation.instance ?? 'the world'}: ${violation.detail}`);
  out.push(`  shrunk schedule: ${describePlan(failure.plan)}`);
  out.push(`  replay: ${replayCommand(failure.seed, failure.path)}`);
  out.push(`  trace (last ${traceLines} lines; virtual time, instance, event):`);
  for (const line of failure.result.trace.slice(-traceLines)) out.push(`    ${line}`);
  return out.join('\n');
}
