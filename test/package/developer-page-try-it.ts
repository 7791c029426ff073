/**
 * The "Try it" of docs/developer-page.md, read from the page itself (not a copy): the install line,
 * the program and the name to save it as, the page to open, the form's values, the authorization
 * URL and the two curl commands.
 */
import { codeBlocks, read } from '../docs/markdown.js';

const DOCUMENT = 'docs/developer-page.md';

export interface DeveloperPageTryIt {
  /** The packages the install line names besides the tarball. */
  packages: string[];
  program: string;
  /** What the page says to save the program as, and to run with `node`. */
  file: string;
  /** The developer page, on the page's port (3000). */
  developersUrl: URL;
  /** The redirect URI the member registers. */
  redirectUri: string;
  /** The authorization request, with `CLIENT_ID` in place of the client id. */
  authorize: URL;
  /** `curl -u CLIENT_ID:CLIENT_SECRET … code=CODE …`: the code exchanged for tokens. */
  tokenCommand: string;
  /** `curl -H 'Authorization: Bearer ACCESS_TOKEN' …`: the API called with the token. */
  apiCommand: string;
  /** The answer the page shows for the token request, `…` for what varies. */
  tokenAnswer: string;
}

export function developerPageTryIt(): DeveloperPageTryIt {
  const lines = read(DOCUMENT).split('\n');
  const start = lines.findIndex((l) => l === '## Try it');
  if (start < 0) throw new Error(`${DOCUMENT} has no "## Try it" section`);
  const next = lines.findIndex((l, i) => i > start && /^## /.test(l));
  const end = next < 0 ? lines.length : next;
  const section = lines.slice(start, end).join('\n');
  const blocks = codeBlocks(DOCUMENT).filter((b) => b.line > start && b.line <= end);
  const shell = blocks.filter((b) => b.lang === 'sh').flatMap((b) => b.code.split('\n'));

  const install = shell
    .map((l) => l.replace(/#.*/, '').trim())
    .find((l) => /^npm install \S+/.test(l) && l.endsWith('.tgz'));
  if (!install) throw new Error('the try-it has no `npm install … .tgz` line');
  const packages = install
    .split(/\s+/)
    .slice(2)
    .filter((p) => !p.endsWith('.tgz'));

  const programs = blocks.filter((b) => b.lang === 'js');
  if (programs.length !== 1) throw new Error(`the try-it should hold one program, found ${programs.length}`);
  const file = /Save\s+this\s+as\s+`([^`]+)`/.exec(section)?.[1];
  const run = /Run\s+it\s+with\s+`node\s+([^`]+)`/.exec(section)?.[1];
  if (!file || run !== file) throw new Error(`the try-it does not save and run one file (${file}, ${run})`);

  const url = (pattern: RegExp, what: string) => {
    const found = pattern.exec(section)?.[1];
    if (!found) throw new Error(`the try-it does not say ${what}`);
    return found;
  };
  const curl = (pattern: RegExp, what: string) => {
    const found = shell.find((l) => pattern.test(l));
    if (!found) throw new Error(`the try-it has no curl command for ${what}`);
    return found;
  };
  return {
    packages,
    program: programs[0]!.code,
    file,
    developersUrl: new URL(url(/Open\s+`(http:\/\/localhost:3000\/developers)`/, 'where the page is')),
    redirectUri: url(/redirect\s+URI\s+`([^`]+)`/, 'which redirect URI to register'),
    authorize: new URL(
      url(/Open\s+`(http:\/\/localhost:3000\/oauth\/authorize\?[^`]+)`/, 'where to authorize'),
    ),
    tokenCommand: curl(/^curl -u CLIENT_ID:CLIENT_SECRET .*code=CODE/, 'the code exchange'),
    apiCommand: curl(/^curl -H 'Authorization: Bearer ACCESS_TOKEN'/, 'the API'),
    tokenAnswer: url(/The\s+first\s+answers\s+`([^`]+)`/, 'what the token request answers'),
  };
}
