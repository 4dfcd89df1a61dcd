import { explore, formatReport } from './explorer.js';

/**
 * `npm run explore -- [--seeds N | --seconds S] [--seed X [--path P]] [--strict] [--json]`:
 * explores schedules in the deterministic simulator and prints throughput, faults by kind and
 * any violation with its shrunk replay. Exits 1 on a violation.
 */
function parse(argv: string[]): Record<string, string | true> {
  const args: Record<string, string | true> = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (!arg.startsWith('--')) throw new TypeError(`explore: unexpected argument ${JSON.stringify(arg)}; use --seeds N, --seconds S, --seed X, --path P, --strict, --json.`);
    const name = arg.slice(2);
    const next = argv[i + 1];
    if (next !== undefined && !next.startsWith('--')) {
      args[name] = next;
      i++;
    } else args[name] = true;
  }
  return args;
}

function number(args: Record<string, string | true>, name: string): number | undefined {
  const value = args[name];
  if (value === undefined) return undefined;
  const parsed = Number(value);
  if (value === true || !Number.isFinite(parsed) || parsed < 0) throw new TypeError(`explore: --${name} must be a non-negative number, got ${JSON.stringify(value)}.`);
  return parsed;
}

async function main(): Promise<void> {
  const args = parse(process.argv.slice(2));
  const known = new Set(['seeds', 'seconds', 'seed', 'path', 'strict', 'json', 'shrink-seconds']);
  for (const name of Object.keys(args)) if (!known.has(name)) throw new TypeError(`explore: unknown option --${name}; use --seeds N, --seconds S, --seed X, --path P, --strict, --json.`);
  const path = typeof args.path === 'string' ? args.path : undefined;
  const seed = number(args, 'seed');
  if (path !== undefined && seed === undefined) throw new TypeError('explore: --path replays one schedule of a run: give its --seed too.');
  const seconds = number(args, 'seconds');
  const seeds = number(args, 'seeds') ?? (seconds === undefined && path === undefined ? 200 : undefined);
  const report = await explore({ seeds, seconds, seed, path, strict: args.strict === true, shrinkSeconds: number(args, 'shrink-seconds') });
  if (args.json === true) {
    const { failure, ...rest } = report;
    process.stdout.write(`${JSON.stringify({ ...rest, failure: failure && { seed: failure.seed, path: failure.path, plan: failure.plan, violation: failure.result.violation, foundAfter: failure.foundAfter, foundAfterMs: failure.foundAfterMs } })}\n`);
  } else {
    process.stdout.write(`${formatReport(report)}\n`);
  }
  process.exit(report.failure === undefined ? 0 : 1);
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error)?.stack ?? String(error)}\n`);
  process.exit(2);
});
