/**
 * docs/reference.md names every option and every route (issue 38, item 10), so the reference
 * cannot lag behind the code again. The options are read from the options types with the
 * TypeScript compiler (`AuthorizationServerOptions`, down to each documented nested option such
 * as `oidc.keySecret`, and `OAuthRouterOptions`); the routes are those the routers hand to the
 * route table (`oauthRouter`, `metadataRouter`, `developerRouter`), captured at run time with
 * OpenID Connect on.
 *
 * A name counts as named when a code span of the reference is it, or, in the reference's
 * shorthand, a code span `.name` follows a code span `prefix.other` on the same line
 * (`device.codeTtl`, `.interval` names `device.interval`). A route counts when its path is a word
 * of a code span (`GET /oauth/authorize`).
 */
import { join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it, vi } from 'vitest';
import { ROOT, read } from './markdown.js';
import type { Route } from '../../src/http/routes.js';

const captured = vi.hoisted(() => [] as { method: string; path: string }[]);
vi.mock('../../src/http/routes.js', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../../src/http/routes.js')>();
  return {
    ...actual,
    routeTable: (routes: readonly Route[]) => {
      captured.push(...routes.map(({ method, path }) => ({ method, path })));
      return actual.routeTable(routes);
    },
  };
});

const { createAuthorizationServer, developerRouter, memoryStorage, oauthRouter, metadataRouter } =
  await import('../../src/index.js');

/** The server's options are declared in this file; the walk starts there. */
const OPTIONS_FILE = join(ROOT, 'src', 'config', 'types.ts');
/** Nested options are the `…Options` interfaces of src/config (not `Logger`): the walk goes into those. */
const OPTIONS_FOLDER = join(ROOT, 'src', 'config');

/** Every option, as a dotted path: `baseUrl`, `oidc.keySecret`, `providers[].icon`, `discovery`. */
function optionNames(): string[] {
  const program = ts.createProgram([OPTIONS_FILE, join(ROOT, 'src', 'endpoints', 'routers.ts')], {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    types: ['node'],
  });
  const checker = program.getTypeChecker();
  const declared = (file: string, name: string) => {
    const module = checker.getSymbolAtLocation(program.getSourceFile(file)!)!;
    const symbol = checker.getExportsOfModule(module).find((s) => s.name === name)!;
    return checker.getDeclaredTypeOfSymbol(symbol);
  };
  /** An options interface of src/config inside the type (through `| false`, arrays). */
  const nested = (type: ts.Type): { type: ts.Type; array: boolean } | undefined => {
    for (const member of type.isUnion() ? type.types : [type]) {
      const array = checker.isArrayType(member);
      const element = array ? checker.getTypeArguments(member as ts.TypeReference)[0]! : member;
      const symbol = element.getSymbol();
      const inOptions = symbol?.declarations?.some((d) =>
        d.getSourceFile().fileName.startsWith(OPTIONS_FOLDER),
      );
      const options = symbol?.name.endsWith('Options') && symbol.flags & ts.SymbolFlags.Interface;
      if (options && inOptions) return { type: element, array };
    }
    return undefined;
  };
  const walk = (type: ts.Type, prefix: string): string[] =>
    checker.getPropertiesOfType(type).flatMap((property) => {
      const inner = nested(checker.getNonNullableType(checker.getTypeOfSymbol(property)));
      if (!inner) return [`${prefix}${property.name}`];
      return walk(inner.type, `${prefix}${property.name}${inner.array ? '[]' : ''}.`);
    });
  return [
    ...walk(declared(OPTIONS_FILE, 'AuthorizationServerOptions'), ''),
    ...walk(declared(join(ROOT, 'src', 'endpoints', 'routers.ts'), 'OAuthRouterOptions'), ''),
  ];
}

/** The code spans of the reference, the shorthand `.name` expanded. */
function codeSpans(text: string): Set<string> {
  const spans = new Set<string>();
  const prose = text.replace(/^\s*```[\s\S]*?^\s*```/gm, '');
  for (const line of prose.split('\n')) {
    let prefix: string | undefined;
    for (const [, span] of line.matchAll(/`([^`\n]+)`/g)) {
      const shorthand = /^\.[\w[\]]+$/.test(span!) && prefix !== undefined;
      spans.add(shorthand ? `${prefix}${span!.slice(1)}` : span!);
      const dotted = /^([\w[\]]+(?:\.[\w[\]]+)*\.)[\w[\]]+$/.exec(span!);
      if (dotted && !shorthand) prefix = dotted[1];
    }
  }
  return spans;
}

/**
 * Every route the routers mount, with OpenID Connect and dynamic registration on (their endpoints
 * are mounted only then), and the developer page's, which `oauthRouter` leaves out.
 */
function routes(): { method: string; path: string }[] {
  const server = createAuthorizationServer({
    baseUrl: 'https://auth.example.com',
    storage: memoryStorage(),
    providers: [{ name: 'Example ID', identifier: 'https://id.example.com/' }],
    session: { secret: 'a-session-secret-of-at-least-32-characters' },
    oidc: { keySecret: 'an-oidc-key-secret-of-at-least-32-characters' },
    dynamicRegistration: true,
  });
  captured.length = 0;
  oauthRouter(server);
  metadataRouter(server);
  developerRouter(server);
  return [...new Map(captured.map((route) => [route.path, route])).values()];
}

const options = optionNames();
const reference = read('docs/reference.md');
const spans = codeSpans(reference);
const words = new Set([...spans].flatMap((span) => span.split(/\s+/)));

describe('docs/reference.md follows the code', () => {
  it('finds the options and routes it checks (the readers work)', () => {
    expect(options).toEqual(
      expect.arrayContaining([
        'baseUrl',
        'oidc.keySecret',
        'tokens.accessTokenTtl',
        'providers[].icon',
        'discovery',
      ]),
    );
    expect(options).not.toContain('oidc');
    expect(routes().map((r) => r.path)).toEqual(
      expect.arrayContaining([
        '/oauth/token',
        '/oauth/userinfo',
        '/oauth/register',
        '/developers/app/rotate',
      ]),
    );
    const sample = codeSpans('| `device.codeTtl`, `.interval` | `providers[].icon`, `.sreg` |');
    expect([...sample]).toEqual([
      'device.codeTtl',
      'device.interval',
      'providers[].icon',
      'providers[].sreg',
    ]);
  });

  it('names every option of AuthorizationServerOptions and OAuthRouterOptions', () => {
    expect(options.filter((name) => !spans.has(name))).toEqual([]);
  });

  it('names every entry of the package (package.json exports) among its other exports', () => {
    const { exports } = JSON.parse(read('package.json')) as { exports: Record<string, unknown> };
    const entries = Object.keys(exports)
      .filter((entry) => entry !== './package.json')
      .map((entry) => (entry === '.' ? 'openid-oauth-bridge' : `openid-oauth-bridge/${entry.slice(2)}`));
    expect(entries).toContain('openid-oauth-bridge/redis');
    expect(entries.filter((entry) => !spans.has(entry))).toEqual([]);
  });

  it('names every route of the route table', () => {
    const missing = routes()
      .filter(({ path }) => !words.has(path))
      .map(({ method, path }) => `${method} ${path}`);
    expect(missing).toEqual([]);
  });
});
