/**
 * No broken relative links or anchors in README.md and docs/: every relative link names a file
 * or folder of the repository, and every `#anchor` (in the same document or another Markdown
 * file) names a heading there, as GitHub makes anchors from headings. Every file the README links
 * relatively is also in the package (package.json `files`), so the links work on npm too.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, documents, read } from './markdown.js';

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens. */
export function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/<[^>]+>/g, '')
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** The anchors of a Markdown file: one per heading, repeated ones numbered as GitHub does. */
function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const result = new Set<string>();
  let inFence = false;
  for (const line of text.split('\n')) {
    if (/^\s*```/.test(line)) inFence = !inFence;
    const heading = !inFence && /^#{1,6}\s+(.*)$/.exec(line);
    if (!heading) continue;
    const base = slug(heading[1]!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    result.add(n === 0 ? base : `${base}-${n}`);
  }
  return result;
}

/** Link targets outside code: `[text](target)` and `<img src="target">`. */
function links(text: string): string[] {
  const prose = text.replace(/^\s*```[\s\S]*?^\s*```/gm, '').replace(/`[^`\n]*`/g, '');
  return [...prose.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)|src="([^"]+)"/g)].map((m) => (m[1] ?? m[2])!);
}

const docs = documents();

describe('links in README.md and docs/', () => {
  it.each(docs)('%s: relative links and anchors resolve', (document) => {
    const broken: string[] = [];
    for (const target of links(read(document))) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//')) continue;
      const [path = '', anchor] = target.split('#');
      const file = path === '' ? join(ROOT, document) : normalize(join(ROOT, dirname(document), path));
      if (!file.startsWith(ROOT) || !existsSync(file)) {
        broken.push(`${target}: no such file`);
        continue;
      }
      if (anchor !== undefined && file.endsWith('.md') && statSync(file).isFile()) {
        if (!anchors(readFileSync(file, 'utf8')).has(decodeURIComponent(anchor))) {
          broken.push(`${target}: no heading for #${anchor}`);
        }
      }
    }
    expect(broken).toEqual([]);
  });

  it('every file the README links relatively is in the package', () => {
    const files = (JSON.parse(read('package.json')) as { files: string[] }).files;
    const outside = links(read('README.md'))
      .filter((t) => !/^[a-z][a-z0-9+.-]*:/i.test(t) && !t.startsWith('#') && !t.startsWith('//'))
      .map((t) => normalize(t.split('#')[0]!))
      .filter((path) => !files.some((f) => path === f || path.startsWith(`${f}/`)));
    expect(outside).toEqual([]);
  });

  // The package's "files" hold no test/: a document that cites a test links it in the repository.
  it.each(docs)('%s: cites test files with a link to the repository', (document) => {
    const prose = read(document)
      .replace(/^\s*```[\s\S]*?^\s*```/gm, '')
      .replace(/\[`test\/[^`\s]+`\]\(https:\/\/github\.com\/[^)\s]+\/blob\/main\/test\/[^)\s]+\)/g, '');
    expect([...prose.matchAll(/(?<![\w/.-])test\/[\w./-]+/g)].map(([path]) => path)).toEqual([]);
  });

  it('finds the links it checks (the parser works)', () => {
    const readme = links(read('README.md'));
    expect(readme).toContain('docs/existing-app.md');
    expect(readme).toContain('docs/images/selection.png');
    expect(slug('`introspectionRouter(server, options?)`')).toBe('introspectionrouterserver-options');
    expect(slug("The user's authorized applications")).toBe('the-users-authorized-applications');
  });
});
