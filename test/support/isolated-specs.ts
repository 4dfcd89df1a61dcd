/**
 * The spec files that run each in a fresh process (vitest's `isolate`), because they change
 * something the whole process shares and a later file in the same worker would see it: fake
 * timers, spies on shared objects, process listeners, diagnostics channel subscribers, the
 * environment, OpenTelemetry's global meter provider (and the library's warn-once about its
 * absence), globals, the explorer's simulated time. Every other file shares its worker's
 * process and module cache with the files run before it there (`isolate: false`), which spares
 * it importing Nest, the drivers and the library afresh: that import was most of each file's
 * time (about 1.5 s a file, 752 files). `isolatedSpecs()` finds them by what they contain, or
 * what a test/support module they import contains, so a new spec that does any of this is
 * isolated without being listed; `ALWAYS` names the few found otherwise.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

const SHARED_STATE = new RegExp(
  [
    'useFakeTimers',
    'vi\\.spyOn',
    'vi\\.stub',
    'vi\\.mock',
    'process\\.(on|once|prependListener|addListener|removeAllListeners|setMaxListeners)\\(',
    'process\\.env\\.[A-Za-z_]+ *=',
    'process\\.env\\[[^\\]]+\\] *=',
    'delete process\\.env',
    'process\\.exitCode',
    'globalThis\\.',
    'diagnostics_channel',
    'opentelemetry',
    'prototype(\\.[A-Za-z_]+|\\[[^\\]]+\\]) *=',
    'setLoggerConfig',
    'Logger\\.(overrideLogger|flush)',
    '(console|process\\.(stdout|stderr))\\.[a-z]+ *=',
    'Error\\.stackTraceLimit',
    // The explorer's simulation replaces setImmediate and Math.random process-wide while a
    // schedule runs, and counts on nothing else running then (explore/sim/virtual-time.ts).
    'explore/sim/',
  ].join('|'),
);

/**
 * What a spec reads of its process as a whole: a count of the process's timers sees every other
 * file's in a shared worker. Matched in spec sources only, since test/support/mechanism.ts, which
 * most specs import, defines the count.
 */
const READS_PROCESS = /settledTimeouts\(|getActiveResourcesInfo\(/;

/** Files whose shared state the patterns above do not show (each with its reason). */
const ALWAYS: readonly string[] = [
  // 1,500 lock calls at once, each given an attempt's 1 s grace for its answer: in a process
  // that earlier files had loaded (their heap, their timers), none was answered in time, in both
  // attempts of a CI run; it needs a process as fresh as a user's at a burst.
  'test/glide-inflight-limit-burst.spec.ts',
];

function specsUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.spec.ts'))
    .map((file) => join(dir, file));
}

/** The test/support modules a source imports, by file name (`./x.js` or `../support/x.js`). */
function supportImports(source: string): string[] {
  return [...source.matchAll(/from '(?:\.\/|(?:\.\.\/)+(?:test\/)?support\/)([\w-]+)\.js'/g)].map((match) => `${match[1]}.ts`);
}

/** The test/support modules that change shared state themselves or through another support module. */
function taintedSupport(root: string): Set<string> {
  const dir = join(root, 'test', 'support');
  const sources = new Map(readdirSync(dir).filter((file) => file.endsWith('.ts') && !file.endsWith('.spec.ts') && file !== 'isolated-specs.ts').map((file) => [file, readFileSync(join(dir, file), 'utf8')]));
  const tainted = new Set([...sources].filter(([, source]) => SHARED_STATE.test(source)).map(([file]) => file));
  for (let grew = true; grew; ) {
    grew = false;
    for (const [file, source] of sources) {
      if (!tainted.has(file) && supportImports(source).some((name) => tainted.has(name))) tainted.add(file), (grew = true);
    }
  }
  return tainted;
}

/** The spec files (paths from the repository's root) that must run in a process of their own. */
export function isolatedSpecs(root: string): string[] {
  const tainted = taintedSupport(root);
  return ['lib', 'test']
    .flatMap((dir) => specsUnder(join(root, dir)).map((file) => file.slice(root.length + 1)))
    .filter((file) => {
      if (ALWAYS.includes(file)) return true;
      const source = readFileSync(join(root, file), 'utf8');
      return SHARED_STATE.test(source) || READS_PROCESS.test(source) || supportImports(source).some((name) => tainted.has(name));
    })
    .sort();
}
