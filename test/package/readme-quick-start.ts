/**
 * The README's quick start for a library user, read from README.md itself (not a copy): the
 * `npm install` line and the ESM and CommonJS programs under "## Quick start".
 */
import { codeBlocks, read } from '../docs/markdown.js';

export interface ReadmeQuickStart {
  /** The packages the install line names, besides the library and Express (the storage driver). */
  drivers: string[];
  esm: string;
  commonjs: string;
  /** The file names the README says to save the programs as. */
  esmFile: string;
  commonjsFile: string;
  /** The environment variables its run line sets (their values are the reader's). */
  env: string[];
  /**
   * The development provider the README starts: the `node -e` program and its identifier.
   * (The prose around the code spans may wrap anywhere: the patterns match any whitespace.)
   */
  provider: { script: string; identifier: string };
  /** The authorization request the README opens. */
  authorize: URL;
}

export function readmeQuickStart(): ReadmeQuickStart {
  const lines = read('README.md').split('\n');
  const start = lines.findIndex((l) => l === '## Quick start');
  if (start < 0) throw new Error('README.md has no "## Quick start" section');
  const next = lines.findIndex((l, i) => i > start && /^## /.test(l));
  const end = next < 0 ? lines.length : next;
  const inSection = codeBlocks('README.md').filter((b) => b.line > start && b.line <= end);

  const install = inSection
    .filter((b) => b.lang === 'sh')
    .flatMap((b) => b.code.split('\n'))
    .find((l) => /^npm install /.test(l));
  if (!install) throw new Error('the quick start has no `npm install` line');
  const packages = install.replace(/#.*/, '').trim().split(/\s+/).slice(2);
  if (!packages.includes('openid-oauth-bridge') || !packages.includes('express')) {
    throw new Error(`the install line does not name the library and Express: ${install}`);
  }
  const drivers = packages.filter((p) => p !== 'openid-oauth-bridge' && p !== 'express');

  const programs = inSection.filter((b) => b.lang === 'js' || b.lang === 'javascript');
  const esm = programs.filter((b) => /^import .* from /m.test(b.code) && !/\brequire\(/.test(b.code));
  const commonjs = programs.filter((b) => /\brequire\(/.test(b.code) && !/^import /m.test(b.code));
  if (esm.length !== 1 || commonjs.length !== 1) {
    throw new Error(
      `the quick start should hold one ESM and one CommonJS program, found ${esm.length} and ${commonjs.length}`,
    );
  }
  const section = lines.slice(start, end).join('\n');
  const saved =
    /Saved\s+as\s+`([^`]+\.mjs)`\s+\(the\s+CommonJS\s+one\s+as\s+`([^`]+\.cjs)`\),\s+it\s+runs\s+with\s+`([^`]+)`/.exec(
      section,
    );
  if (!saved)
    throw new Error('the quick start does not say what to save the programs as and how to run them');
  const [, esmFile, commonjsFile, command] = saved as unknown as [string, string, string, string];
  const run = /^((?:[A-Z_]+=(?:\$\([^)]*\)|\S+) )*)node (\S+)$/.exec(command);
  if (!run || run[2] !== esmFile)
    throw new Error(`the run line is not \`VAR=… node ${esmFile}\`: ${command}`);
  const env = [...run[1]!.matchAll(/([A-Z_]+)=/g)].map((m) => m[1]!);

  const providerLine = inSection
    .filter((b) => b.lang === 'sh')
    .flatMap((b) => b.code.split('\n'))
    .find((l) => l.includes('startDevelopmentProvider'));
  const script = /^node --input-type=module -e "([^"]+)"$/.exec(providerLine ?? '')?.[1];
  const identifier = /give\s+`OPENID_PROVIDER=(\S+)`/.exec(section)?.[1];
  if (!script || !identifier) throw new Error('the quick start does not start a development provider');
  const authorize = /Open\s+`(http:\/\/localhost:3000\/oauth\/authorize\?[^`]+)`/.exec(section)?.[1];
  if (!authorize) throw new Error('the quick start does not say where to ask for a code');
  return {
    drivers,
    esm: esm[0]!.code,
    commonjs: commonjs[0]!.code,
    esmFile,
    commonjsFile,
    env,
    provider: { script, identifier },
    authorize: new URL(authorize),
  };
}
