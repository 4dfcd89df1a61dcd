// The README and the guides under docs/ as a newcomer meets them: the two commands first, every
// TypeScript example compiles against the built package, every relative link and anchor leads
// somewhere, and what the README links to ships in the npm package.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { describe, expect, it } from 'vitest';
import { addedImports, compileBlocks } from './compile-blocks.js';
import { anchors, codeBlocks, docFiles, read, relativeLinks, root, slug } from './markdown.js';

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

  it('compute anchors as GitHub does', () => {
    expect(slug('`@Locked(key, options?)`')).toBe('lockedkey-options');
    expect(slug('Coming from `@nestjs/locks`')).toBe('coming-from-nestjslocks');
    expect(slug('Semaphores: `limit`')).toBe('semaphores-limit');
    expect(slug('Least-privilege Redis user')).toBe('least-privilege-redis-user');
  });
});
