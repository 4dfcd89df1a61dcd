// Reads the parts of the README and the guides that the docs tests check: fenced code blocks,
// headings (as GitHub turns them into anchors) and relative links. Line-based, as the docs are
// written: fences start at the beginning of a line.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = fileURLToPath(new URL('../../', import.meta.url));

/**
 * A fenced block preceded by an HTML comment that starts with this (`<!-- fragment -->`, or
 * `<!-- fragment: why -->`) is a fragment, not compiled.
 */
export const FRAGMENT_MARK = '<!-- fragment';

export interface CodeBlock {
  /** Path from the repository root, e.g. `docs/locks.md`. */
  readonly file: string;
  /** 1-based line of the opening fence. */
  readonly line: number;
  readonly lang: string;
  readonly code: string;
  readonly fragment: boolean;
}

export interface MarkdownLink {
  readonly file: string;
  readonly line: number;
  readonly target: string;
}

/** README.md and every Markdown file under docs/, as paths from the repository root. */
export function docFiles(): string[] {
  const found = ['README.md'];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.md')) found.push(relative(root, join(root, path)));
    }
  };
  walk('docs');
  return found;
}

export function read(file: string): string {
  return readFileSync(join(root, file), 'utf8');
}

/** The file's lines, each marked as inside a fenced block (fences included) or not. */
function scan(file: string): { text: string; fenced: boolean }[] {
  let fenced = false;
  return read(file)
    .split('\n')
    .map((text) => {
      if (text.startsWith('```')) {
        fenced = !fenced;
        return { text, fenced: true };
      }
      return { text, fenced };
    });
}

export function codeBlocks(file: string): CodeBlock[] {
  const lines = read(file).split('\n');
  const blocks: CodeBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\S*)\s*$/.exec(lines[i]!);
    if (!open) continue;
    const end = lines.findIndex((line, j) => j > i && line.startsWith('```'));
    if (end === -1) throw new Error(`${file}:${i + 1}: a fenced block that never closes`);
    let before = i - 1;
    while (before >= 0 && lines[before]!.trim() === '') before--;
    blocks.push({
      file,
      line: i + 1,
      lang: open[1]!,
      code: lines.slice(i + 1, end).join('\n'),
      fragment: before >= 0 && lines[before]!.trim().startsWith(FRAGMENT_MARK),
    });
    i = end;
  }
  return blocks;
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
export function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** The anchors of a file's headings, a repeated one numbered as GitHub does (`x`, `x-1`, ...). */
export function anchors(file: string): Set<string> {
  const seen = new Map<string, number>();
  const result = new Set<string>();
  for (const { text, fenced } of scan(file)) {
    const heading = /^#{1,6} (.*)$/.exec(text);
    if (fenced || !heading) continue;
    const base = slug(heading[1]!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    result.add(n === 0 ? base : `${base}-${n}`);
  }
  return result;
}

/** Links and images outside code (fenced blocks and inline code spans) that are not absolute URLs. */
export function relativeLinks(file: string): MarkdownLink[] {
  const links: MarkdownLink[] = [];
  scan(file).forEach(({ text, fenced }, i) => {
    if (fenced) return;
    const prose = text.replace(/`[^`]*`/g, '');
    for (const match of prose.matchAll(/\]\(([^)\s]+)\)/g)) {
      const target = match[1]!;
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:
      links.push({ file, line: i + 1, target });
    }
  });
  return links;
}

/**
 * The rows (header and separator left out) of the first table of `file` whose header's first
 * cell is `firstHeader`, each as its cells, trimmed (an escaped `\|` stays inside its cell).
 */
export function tableRows(file: string, firstHeader: string): string[][] {
  const cells = (line: string): string[] =>
    line
      .trim()
      .replace(/^\||\|$/g, '')
      .split(/(?<!\\)\|/)
      .map((cell) => cell.trim());
  const lines = scan(file);
  const start = lines.findIndex(({ text, fenced }) => !fenced && text.startsWith('|') && cells(text)[0] === firstHeader);
  if (start === -1) throw new Error(`${file}: no table whose first column is "${firstHeader}"`);
  const rows: string[][] = [];
  for (const { text } of lines.slice(start + 2)) {
    if (!text.startsWith('|')) break;
    rows.push(cells(text));
  }
  return rows;
}

/** The text of every `code span` in `text`, line by line (a span of double backticks included). */
export function codeSpans(text: string): string[] {
  return text.split('\n').flatMap((line) => [...line.matchAll(/``\s?(.+?)\s?``|`([^`]+)`/g)].map((m) => (m[1] ?? m[2])!));
}

/** The lines of `file` outside fenced blocks, with their 1-based numbers. */
export function proseLines(file: string): { line: number; text: string }[] {
  return scan(file).flatMap(({ text, fenced }, i) => (fenced ? [] : [{ line: i + 1, text }]));
}
