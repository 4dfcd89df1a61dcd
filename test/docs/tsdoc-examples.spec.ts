// The `@example` blocks of the TSDoc, which an editor shows on hover and a reader copies, escaped
// the compile of the Markdown blocks (docs.spec.ts): an example could call a method or pass an
// option the package no longer has. They are compiled the same way, against the built package.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { compileBlocks } from './compile-blocks.js';
import { root, type CodeBlock } from './markdown.js';

/**
 * An example calls the reader's own functions and values (`buildReport`, `from`, `ConfigService`)
 * without declaring them: a name it does not declare is not its fault. What it does with the
 * package's names (a method, an option, an argument's type) still is.
 */
const UNDECLARED_NAME = /error TS(2304|2552|18004):/;

/** An example that shows methods of a class without the class around them. */
const METHODS_ONLY = /^(?:@[\w.]+\(.*\)\s*\n)*\s*(?:async\s+)?\w+\([^)]*\)\s*(?::[^{]+)?\{/;

/** What the examples of the testing store call it beside `locks` (a `LockService` there). */
const CONTEXT = `import type { InMemoryLocks } from 'nestjs-redis-lock/testing';
declare global {
  const store: InMemoryLocks;
}
export {};
`;

function sourceFiles(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sourceFiles(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : [],
  );
}

/**
 * The code after each `@example` in the doc comments of `file`: a fenced block, or (TSDoc
 * allows it) the lines up to the comment's end or its next tag.
 */
function examples(file: string): CodeBlock[] {
  const lines = readFileSync(join(root, file), 'utf8').split('\n');
  const text = (line: string): string => line.replace(/^\s*\* ?/, '');
  const found: CodeBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (!/^\s*\*\s*@example\b/.test(lines[i]!)) continue;
    const fenced = /^```/.test(text(lines[i + 1] ?? ''));
    const end = fenced
      ? lines.findIndex((line, j) => j > i + 1 && /^```/.test(text(line)))
      : lines.findIndex((line, j) => j > i && (/^\s*\*\//.test(line) || /^@\w/.test(text(line))));
    expect(end, `${file}:${i + 1}: an @example that never ends`).toBeGreaterThan(i);
    let code = lines
      .slice(fenced ? i + 2 : i + 1, end)
      .map(text)
      .join('\n')
      .replace(/\{ \.\.\. \}/g, '{}');
    const declaresClass = /^\s*(?:export\s+)?(?:abstract\s+)?class\s/m.test(code);
    if (!declaresClass && METHODS_ONLY.test(code)) code = `class Example {\n${code}\n}`;
    // The body of a function of the reader's: its `return` is the function's.
    else if (!declaresClass && /\breturn\b/.test(code) && !/^import\s/m.test(code)) code = `export async function example() {\n${code}\n}`;
    found.push({ file, line: i + 1, lang: 'ts', code, fragment: false });
    i = end;
  }
  return found;
}

describe('the TSDoc examples of lib/', () => {
  it('compile against the built package, as the docs blocks do', () => {
    const blocks = sourceFiles('lib').flatMap((file) => examples(relative(root, join(root, file))));
    expect(blocks.length).toBeGreaterThan(50);
    const { files, output } = compileBlocks(blocks, { dir: join(root, '.docs-check-tsdoc'), context: CONTEXT });
    const located = output
      .split('\n')
      .filter((line) => line.trim() !== '' && !UNDECLARED_NAME.test(line))
      .map((line) => {
        const file = files.find((f) => line.includes(f.path));
        return file ? `${file.block.file}:${file.block.line}: ${line.slice(line.indexOf(':') + 1).trim()}` : line;
      });
    expect(located).toEqual([]);
  }, 120_000);
});
