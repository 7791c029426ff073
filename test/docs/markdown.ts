/** The Markdown files of the documentation, and their fenced code blocks. Shared by test/docs. */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

export const ROOT = join(import.meta.dirname, '..', '..');

/** README.md and every Markdown file under docs/, except the generated API reference. */
export function documents(): string[] {
  const found = ['README.md'];
  const walk = (dir: string) => {
    for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory() && path !== 'docs/api') walk(path);
      else if (entry.isFile() && entry.name.endsWith('.md')) found.push(path);
    }
  };
  walk('docs');
  return found.sort();
}

export function read(document: string): string {
  return readFileSync(join(ROOT, document), 'utf8');
}

export interface CodeBlock {
  document: string;
  /** 1-based line of the opening fence. */
  line: number;
  lang: string;
  code: string;
  /** The `<!-- snippet: path -->` comment right before the fence, if any. */
  includes?: string;
}

export function codeBlocks(document: string): CodeBlock[] {
  const lines = read(document).split('\n');
  const blocks: CodeBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(`{3,})(\S*)/.exec(lines[i]!);
    if (!open) continue;
    const [, indent, fence, lang] = open;
    let j = i + 1;
    while (j < lines.length && !lines[j]!.trimStart().startsWith(fence!)) j++;
    const code = lines
      .slice(i + 1, j)
      .map((l) => (l.startsWith(indent!) ? l.slice(indent!.length) : l))
      .join('\n');
    let k = i - 1;
    while (k >= 0 && lines[k]!.trim() === '') k--;
    const include = /^<!-- snippet: (\S+) -->$/.exec(lines[k]?.trim() ?? '');
    blocks.push({ document, line: i + 1, lang: lang!, code, ...(include ? { includes: include[1] } : {}) });
    i = j;
  }
  return blocks;
}

export const relativeToRoot = (path: string) => relative(ROOT, path);
