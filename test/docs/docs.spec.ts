// The README and the guides under docs/ as a newcomer meets them: the two commands first, every
// TypeScript example compiles against the built package, every relative link and anchor leads
// somewhere, and what the README links to ships in the npm package; the files the docs name are
// there, and the tables that list what the code has (module options, error classes, event fields,
// metric attributes) list exactly that.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { describe, expect, it } from 'vitest';
import * as api from '../../lib/index.js';
import * as board from '../../lib/board/index.js';
import * as otel from '../../lib/otel/index.js';
import * as terminus from '../../lib/terminus/index.js';
import * as testing from '../../lib/testing/index.js';
import {
  DEFAULT_KEY_PREFIX,
  DEFAULT_SHUTDOWN_TIMEOUT_MS,
  DEFAULT_TTL_MS,
  DEFAULT_WAIT_TIMEOUT_MS,
  MODULE_OPTION_NAMES,
} from '../../lib/core/options/lock-options.js';
import { addedImports, compileBlocks } from './compile-blocks.js';
import { anchors, codeBlocks, codeSpans, docFiles, proseLines, read, relativeLinks, root, slug, tableRows } from './markdown.js';

const TS = new Set(['ts', 'typescript']);

describe('the README and docs/', () => {
  it('open with the two commands, exactly, as the first fenced block of the README', () => {
    const [first] = codeBlocks('README.md');
    expect(first!.lang).toBe('bash');
    expect(first!.code.split('\n').map((line) => line.replace(/\s+#.*$/, ''))).toEqual(['npm ci && npm run demo', 'npm test']);
    expect(read('README.md').split('\n').slice(0, 3)).toEqual(['# nestjs-redis-lock', '', '```bash']);
  });

  it('compile every TypeScript block against the built package (blocks marked as fragments excepted)', () => {
    const blocks = docFiles().flatMap(codeBlocks).filter((block) => TS.has(block.lang));
    const checked = blocks.filter((block) => !block.fragment);
    // The marker is for the few blocks that show part of a class; most must compile.
    expect(blocks.length - checked.length).toBeLessThanOrEqual(6);
    expect(checked.length).toBeGreaterThan(20);
    const { files, output, status } = compileBlocks(checked);
    // Name each error by the Markdown file and line it comes from.
    const located = output
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => {
        const file = files.find((f) => line.includes(f.path));
        if (!file) return line;
        const at = /^[^(]+\((\d+),(\d+)\)/.exec(line);
        return `${file.block.file} (block at line ${file.block.line}; generated line ${at?.[1] ?? '?'}): ${line.slice(line.indexOf(':') + 1).trim()}`;
      });
    expect(located).toEqual([]);
    expect(status).toBe(0);
  }, 120_000);

  // Found by review: docs/testing.md's example imported the testing module's names only, and
  // used `Test` and `LockService` unimported (the compile above adds them), so the block a reader
  // copies, imports and all, failed with "Cannot find name 'LockService'".
  it('import, in a block that has imports, every name it uses (a test framework\'s globals aside)', () => {
    const incomplete: string[] = [];
    for (const block of docFiles().flatMap(codeBlocks)) {
      if (!TS.has(block.lang) || block.fragment || !/^import\s/m.test(block.code)) continue;
      const code = block.code.replace(/\/\/.*$/gm, ''); // a name in a comment is no use of it
      const { vitest: _globals, ...missing } = addedImports(code);
      for (const [from, names] of Object.entries(missing)) incomplete.push(`${block.file} (block at line ${block.line}): ${names.join(', ')} from '${from}'`);
    }
    expect(incomplete).toEqual([]);
  });

  it('link only to files and headings that exist', () => {
    const broken: string[] = [];
    for (const file of docFiles()) {
      for (const link of relativeLinks(file)) {
        const [path, anchor] = link.target.split('#') as [string, string | undefined];
        const target = path === '' ? file : normalize(join(dirname(file), decodeURI(path)));
        if (!existsSync(join(root, target))) {
          broken.push(`${file}:${link.line}: ${link.target} (no file ${target})`);
        } else if (anchor !== undefined && !anchors(target).has(anchor)) {
          broken.push(`${file}:${link.line}: ${link.target} (no heading with anchor #${anchor} in ${target})`);
        }
      }
    }
    expect(broken).toEqual([]);
  });

  it('ship what the README links to in the npm package, so that its links work where it is installed', () => {
    const files = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { files: string[] }).files;
    const shipped = (path: string): boolean => path === 'README.md' || files.some((entry) => path === entry || path.startsWith(`${entry}/`));
    const linked = ['README.md', ...docFiles().filter((f) => f.startsWith('docs/'))].flatMap((file) =>
      relativeLinks(file)
        .map((link) => link.target.split('#')[0]!)
        .filter((path) => path !== '') // an anchor in the same file
        .map((path) => normalize(join(dirname(file), path))),
    );
    expect(linked.filter((path) => !shipped(path))).toEqual([]);
  });

  // Found by review (thirty-eighth session): nothing checked the paths the docs name in code spans
  // (`test/quorum/...spec.ts` as the proof of a claim, `lib/core/...` as where a thing lives); a
  // file renamed or moved leaves the reader a path to nowhere.
  it('name only files that exist, where they name a path of the repository', () => {
    const missing: string[] = [];
    for (const file of docFiles()) {
      for (const { line, text } of proseLines(file)) {
        for (const span of codeSpans(text)) {
          if (!/^(lib|test|sample-app|scripts|explore|bench|docs)\/[\w./*-]+$/.test(span)) continue;
          if (GENERATED.some((dir) => span.startsWith(dir))) continue;
          if (!pathExists(span)) missing.push(`${file}:${line}: ${span}`);
        }
      }
    }
    expect(missing).toEqual([]);
  });

  // Found by review (thirty-eighth session): docs/locks.md's table of errors, "All extend
  // RedisLockError", left out NoFencingTokenError, and the jobs guide named a loss reason (`lost`)
  // that no LockLostError has. The tables that list what the code has are held to it here.
  it('list every module option, with the defaults the code has (docs/configuration.md)', () => {
    const rows = tableRows('docs/configuration.md', 'option');
    const names = rows.map(([option]) => codeSpans(option!)[0]);
    expect(names.slice().sort()).toEqual([...MODULE_OPTION_NAMES, 'isGlobal', 'globalInterceptor'].sort());
    const defaults = Object.fromEntries(rows.map(([option, value]) => [codeSpans(option!)[0], codeSpans(value!)[0]]));
    expect(defaults).toMatchObject({
      ttl: String(DEFAULT_TTL_MS),
      waitTimeout: String(DEFAULT_WAIT_TIMEOUT_MS),
      shutdownTimeout: String(DEFAULT_SHUTDOWN_TIMEOUT_MS),
      keyPrefix: DEFAULT_KEY_PREFIX,
    });
  });

  // Found by review (thirty-eighth session): locks.md's `@Locked` options named five of its ten
  // (`limit`, `permits`, `mode`, `fairness`, `fencing` left out), configuration.md's per-call ones
  // six of twelve.
  it('name every option of @Locked (docs/locks.md) and of a lock call (docs/configuration.md)', () => {
    const spans = (file: string, heading: string): Set<string> => new Set(codeSpans(section(file, heading)).map((span) => span.replace(/:.*$/, '')));
    const locked = spans('docs/locks.md', '## `@Locked(key, options?)`');
    expect(constantList('LOCKED_OPTION_NAMES', 'lib/core/options/locked-options.ts').filter((name) => !locked.has(name))).toEqual([]);
    const call = spans('docs/configuration.md', '## Options');
    expect(constantList('CALL_OPTION_NAMES', 'lib/core/options/lock-options.ts').filter((name) => !call.has(name))).toEqual([]);
  });

  // Found by review (thirty-eighth session): `UNNAMED_LOCK` (nestjs-redis-lock/otel) was exported
  // and named by no guide.
  it('name every value the package and its subpaths export', () => {
    const text = docFiles().map(read).join('\n');
    const exports = Object.entries({ '.': api, './board': board, './otel': otel, './terminus': terminus, './testing': testing });
    expect(exports.flatMap(([path, names]) => Object.keys(names).filter((name) => !text.includes(name)).map((name) => `${path}: ${name}`))).toEqual([]);
  });

  it('list every error class the package exports (docs/locks.md "Errors")', () => {
    const listed = tableRows('docs/locks.md', 'class').map(([name]) => codeSpans(name!)[0]);
    const exported = Object.entries(api)
      .filter(([, value]) => typeof value === 'function' && value.prototype instanceof api.RedisLockError)
      .map(([name]) => name);
    expect(listed.slice().sort()).toEqual(exported.sort());
  });

  it('give each diagnostics channel the fields its event has (docs/observability.md)', () => {
    const events = eventFields();
    const rows = tableRows('docs/observability.md', 'channel');
    expect(rows.map(([channel]) => codeSpans(channel!)[0]).sort()).toEqual(Object.values(api.LOCK_DIAGNOSTICS_CHANNELS).sort());
    for (const [channel, message] of rows) {
      const type = codeSpans(channel!)[0]!.replace('nestjs-redis-lock:', '');
      const named = codeSpans(message!).filter((span) => /^[a-z][A-Za-z]*$/.test(span) && span !== 'true' && span !== 'false');
      expect({ type, fields: named.sort() }).toEqual({ type, fields: [...events.get(type)!].sort() });
    }
  });

  it('give the metrics the attribute values the events carry (docs/observability.md)', () => {
    const rows = new Map(tableRows('docs/observability.md', 'instrument').map(([name, , , attributes]) => [codeSpans(name!)[0], attributes!]));
    const valuesAfter = (cell: string, attribute: string): string[] => codeSpans(cell.slice(cell.indexOf(`\`${attribute}\``) + attribute.length + 2)).sort();
    expect(valuesAfter(rows.get('lock.acquire.duration')!, 'lock.result')).toEqual(['acquired', ...unionMembers('LockNotAcquiredOutcome')].sort());
    // A leader's step-down ends its term by aborting the signal (`stepped-down`); no `lost` event,
    // so no count, carries that reason.
    expect(valuesAfter(rows.get('lock.lost')!, 'lock.lost.reason')).toEqual(unionMembers('LockLostReason', 'lib/errors/lock-lost.error.ts').filter((r) => r !== 'stepped-down').sort());
    expect(valuesAfter(rows.get('lock.skipped')!, 'lock.skip.reason')).toEqual(unionMembers('LockSkipReason').sort());
  });

  it('name only the loss reasons a LockLostError has', () => {
    const reasons = new Set(unionMembers('LockLostReason', 'lib/errors/lock-lost.error.ts'));
    const wrong: string[] = [];
    for (const file of docFiles()) {
      for (const { line, text } of proseLines(file)) {
        for (const m of text.matchAll(/(?:reason|aborted with) `([a-z-]+)`(?: or `([a-z-]+)`)?/g)) {
          for (const reason of [m[1], m[2]]) if (reason !== undefined && !reasons.has(reason) && /signal|LockLostError|lost/.test(text)) wrong.push(`${file}:${line}: ${reason}`);
        }
      }
    }
    expect(wrong).toEqual([]);
  });

  it('compute anchors as GitHub does', () => {
    expect(slug('`@Locked(key, options?)`')).toBe('lockedkey-options');
    expect(slug('Coming from `@nestjs/locks`')).toBe('coming-from-nestjslocks');
    expect(slug('Semaphores: `limit`')).toBe('semaphores-limit');
    expect(slug('Least-privilege Redis user')).toBe('least-privilege-redis-user');
  });
});

/** Directories of generated files the docs name (`npm run bench` writes them). */
const GENERATED = ['bench/results/'];

/** Whether `path` (from the repository root; `*` matches within one name) names a file or folder. */
function pathExists(path: string): boolean {
  if (!path.includes('*')) return existsSync(join(root, path));
  const parts = path.split('/');
  const walk = (dir: string, i: number): boolean => {
    if (i === parts.length) return true;
    const pattern = new RegExp(`^${parts[i]!.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*')}$`);
    if (!existsSync(join(root, dir))) return false;
    return readdirSync(join(root, dir)).some((name) => pattern.test(name) && walk(join(dir, name), i + 1));
  };
  return walk('', 0);
}

/** The members of a union of string literals, `export type <name> = 'a' | 'b'`, in `file`. */
function unionMembers(name: string, file = 'lib/interfaces/lock-event.interface.ts'): string[] {
  const m = new RegExp(`export type ${name} = ([^;]+);`).exec(read(file));
  if (!m) throw new Error(`no type ${name} in ${file}`);
  return [...m[1]!.matchAll(/'([^']+)'/g)].map((each) => each[1]!);
}

/** Each lock event's `type` and the fields it has beyond those every event has (key, name, keys, at). */
function eventFields(): Map<string, string[]> {
  const events = new Map<string, string[]>();
  for (const m of read('lib/interfaces/lock-event.interface.ts').matchAll(/export interface \w+ extends LockEventBase \{([\s\S]*?)\n\}/g)) {
    const body = m[1]!.replace(/\/\*\*[\s\S]*?\*\//g, '');
    const type = /type: '([^']+)'/.exec(body)![1]!;
    events.set(type, [...body.matchAll(/^\s+(\w+)\??:/gm)].map((f) => f[1]!).filter((f) => f !== 'type'));
  }
  return events;
}

/** The names of a constant array of string literals, `const <name> = ['a', 'b'] as const`, in `file`. */
function constantList(name: string, file: string): string[] {
  const m = new RegExp(`const ${name} = \\[([^\\]]+)\\]`).exec(read(file));
  if (!m) throw new Error(`no constant ${name} in ${file}`);
  return [...m[1]!.matchAll(/'([^']+)'/g)].map((each) => each[1]!);
}

/** The prose of `file` from the heading `heading` (a whole line) to the next heading of its level or higher. */
function section(file: string, heading: string): string {
  const level = /^#+/.exec(heading)![0].length;
  const lines = proseLines(file).map(({ text }) => text);
  const start = lines.indexOf(heading);
  if (start === -1) throw new Error(`${file}: no heading ${heading}`);
  const end = lines.findIndex((text, i) => i > start && new RegExp(`^#{1,${level}} `).test(text));
  return lines.slice(start + 1, end === -1 ? undefined : end).join('\n');
}
