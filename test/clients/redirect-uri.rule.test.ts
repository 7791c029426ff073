import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  isLoopbackHost,
  redirectUriMatches,
  registeredRedirectUriProblem,
} from '../../src/rules/redirect-uri.js';
import { memoryStorage, registerClient } from '../../src/index.js';

describe('redirect URI rule: documented examples', () => {
  it.each([
    ['https://app.example/cb', 'https://app.example/cb', true],
    ['https://app.example/cb', 'https://app.example/cb/done?x=1', true],
    ['https://app.example/cb', 'https://app.example/cb?x=1', true],
    ['https://app.example/cb', 'https://app.example/cb/', true],
    ['https://app.example/cb/', 'https://app.example/cb/more', true],
    ['https://app.example/', 'https://app.example/anything', true],
    ['https://app.example/cb', 'https://app.example/cbx', false],
    ['https://app.example/cb/', 'https://app.example/cb', false],
    ['https://app.example/', 'https://app.example.evil/', false],
    ['https://app.example/cb', 'https://app.example/cb/../admin', false],
    ['https://app.example/cb', 'https://app.example/cb/%2e%2e/admin', false],
    ['https://app.example/cb', 'https://app.example/cb/%2F%2Fevil', false],
    ['https://app.example/cb', 'https://app.example/cb/..%5cevil', false],
    ['https://app.example/cb', 'https://app.example/cb\\evil', false],
    ['https://app.example/cb', 'https://app.example/cb/@evil.example', false],
    ['https://app.example/cb', 'https://app.example/cb#frag', false],
    ['https://app.example/cb', 'https://app.example/cb/ x', false],
    ['https://app.example/cb', 'https://app.example/cb/\tx', false],
    ['https://app.example/cb', 'HTTPS://app.example/cb', false],
    ['https://app.example/cb', 'https://APP.example/cb', false],
    ['https://app.example/cb', 'https://app.example/CB', false],
    ['https://app.example/cb', 'http://app.example/cb', false],
    ['https://app.example/cb', 'https://app.example:444/cb', false],
    ['https://app.example/cb', 'https://app.example/cb/./x', false],
    ['https://app.example/cb', 'https://app.example/cb/x/../../admin', false],
    ['https://app.example/cb', 'javascript:alert(1)//https://app.example/cb', false],
    ['https://app.example/cb', 'https://app.example/cb/%0d%0aSet-Cookie:x', false],
    ['https://app.example/cb', 'https://app.example/cb/%09x', false],
    ['https://app.example/cb', 'https://app.example/cb/%7F', false],
    ['https://app.example/cb', 'https://app.example/cb/%20x', true],
    ['https://app.example/', 'https://app.example//evil.example', false],
    ['https://app.example/cb', 'https://app.example/cb//x', false],
    ['http://127.0.0.1:8080/cb', 'http://127.0.0.1:8080/cb?code=1&x=2', true],
  ])('%s accepts %s: %s', (registered, requested, expected) => {
    expect(redirectUriMatches(registered, requested)).toBe(expected);
  });
});

describe('redirect URI rule: registration', () => {
  const NOT_HTTP =
    'must use http or https (https, or http on a loopback address; a public native client may use a reverse-domain private-use scheme such as com.example.app:/cb)';
  const PRIVATE_USE =
    'uses a private-use scheme: only a public code client (a native app) may register one (RFC 8252 7.1)';
  it.each([
    ['https://app.example/cb', null],
    ['http://127.0.0.1:8080/cb', null],
    ['https://app.example', 'must be written in canonical form (https://app.example/)'],
    ['https://App.example/cb', 'must be written in canonical form (https://app.example/cb)'],
    ['javascript:alert(1)', NOT_HTTP],
    ['https://user@app.example/cb', 'must not contain userinfo'],
    ['https://app.example/cb?x=1', 'must not contain a query'],
    ['https://app.example/cb#x', 'must not contain a fragment (RFC 6749 3.1.2)'],
    ['/relative', 'is not an absolute URL'],
    [
      'https://app.example/cb%0a',
      'must not contain dot segments, empty segments, encoded dots, slashes or control characters, or @',
    ],
    ['data:text/html,x', NOT_HTTP],
    ['myapp:/cb', NOT_HTTP],
    ['com.example.app:/cb', PRIVATE_USE],
    [
      'https://app.example//cb',
      'must not contain dot segments, empty segments, encoded dots, slashes or control characters, or @',
    ],
  ])('%s: %s', (uri, problem) => {
    expect(registeredRedirectUriProblem(uri)).toBe(problem);
  });

  it.each([
    ['com.example.app:/oauth2redirect', null],
    ['com.example.app://callback/path', null],
    ['com.example.app:/cb?x=1', 'must not contain a query'],
    ['com.example.app:/cb#x', 'must not contain a fragment (RFC 6749 3.1.2)'],
    ['com.example.app:/cb/../x', 'must be written in canonical form (com.example.app:/x)'],
    ['Com.Example.App:/cb', 'must be written in canonical form (com.example.app:/cb)'],
    ['app:/cb', NOT_HTTP],
  ])('for a public code client, %s: %s', (uri, problem) => {
    expect(registeredRedirectUriProblem(uri, { privateUseScheme: true })).toBe(problem);
  });

  const HTTP_ONLY_ON_LOOPBACK =
    'must use https; plain http is allowed only on a loopback address such as http://127.0.0.1:8080/cb (RFC 8252 7.3)';
  const WILDCARD = 'must not contain a wildcard: register the exact URI the client redirects to';
  const uris: [string, string | null][] = [
    ['http://printer.example/cb', HTTP_ONLY_ON_LOOPBACK],
    ['http://10.0.0.1/cb', HTTP_ONLY_ON_LOOPBACK],
    ['http://127.0.0.1.evil.example/cb', HTTP_ONLY_ON_LOOPBACK],
    ['http://localhost.evil.example/cb', HTTP_ONLY_ON_LOOPBACK],
    ['http://[::2]/cb', HTTP_ONLY_ON_LOOPBACK],
    ['http://127.0.0.1/cb', null],
    ['http://127.1.2.3:8080/cb', null],
    ['http://[::1]:8080/cb', null],
    ['http://localhost:3000/cb', null],
    ['https://*.app.example/cb', WILDCARD],
    ['https://app.example/*', WILDCARD],
    ['https://app.example/cb#', 'must not contain a fragment (RFC 6749 3.1.2)'],
    ['https://printer.example/cb', null],
  ];

  it.each(uris)('the exported rule is the one registration applies: %s', async (uri, problem) => {
    expect(registeredRedirectUriProblem(uri)).toBe(problem);
    const registered = registerClient(memoryStorage(), {
      applicationName: 'Printer',
      redirectUri: uri,
      scopes: ['print'],
    });
    if (problem === null) await expect(registered).resolves.toMatchObject({ clientId: expect.any(String) });
    else
      await expect(registered).rejects.toThrow(
        `openid-oauth-bridge: redirectUri ${JSON.stringify(uri)} ${problem}`,
      );
  });

  it('knows the loopback hosts by one list', () => {
    for (const host of ['127.0.0.1', '127.255.0.9', '[::1]', 'localhost'])
      expect(isLoopbackHost(host)).toBe(true);
    for (const host of ['128.0.0.1', '[::2]', 'localhost.example', '127.0.0.1.example', '0.0.0.0'])
      expect(isLoopbackHost(host)).toBe(false);
  });
});

// Labels end in a letter: a host whose last label is numeric parses as an (invalid) IPv4 address.
const hostLabel = fc
  .stringMatching(/^[a-z]([a-z0-9-]{0,9}[a-z])?$/)
  .filter((label) => !label.startsWith('xn--')); // and no punycode, which must decode
const segment = fc.stringMatching(/^[A-Za-z0-9_~-]{1,8}$/);
const registeredUri = fc
  .record({
    scheme: fc.constantFrom('http', 'https'),
    host: fc.array(hostLabel, { minLength: 1, maxLength: 3 }).map((labels) => labels.join('.')),
    port: fc.option(fc.integer({ min: 1025, max: 65535 }), { nil: undefined }),
    path: fc.array(segment, { maxLength: 3 }),
    slash: fc.boolean(),
  })
  .map(({ scheme, host, port, path, slash }) => {
    const url = `${scheme}://${host}${port ? `:${port}` : ''}/${path.join('/')}${slash && path.length ? '/' : ''}`;
    return new URL(url).href;
  })
  .filter((uri) => registeredRedirectUriProblem(uri) === null);

/** Characters and fragments hostile URIs are built from. */
const hostilePiece = fc.constantFrom(
  '@',
  'evil.example',
  '.evil.example',
  ':8443',
  '\\',
  '%2f',
  '%2F',
  '%2e',
  '%2E',
  '..',
  '.',
  '/..',
  '/./',
  '#',
  '%00',
  ' ',
  '\t',
  '\n',
  '\u00e9',
  '//',
  '?',
  '&',
  '=',
  '%5c',
  'javascript:',
  'data:',
  ';',
  'HTTP',
  'A',
);

describe('redirect URI rule: properties', () => {
  it('accepts the registered URI and safe paths or queries under it', () => {
    fc.assert(
      fc.property(
        registeredUri,
        fc.array(segment, { maxLength: 3 }),
        fc.option(segment),
        (registered, more, query) => {
          const sep = registered.endsWith('/') ? '' : '/';
          const candidate = `${registered}${more.length ? sep + more.join('/') : ''}${query ? `?q=${query}` : ''}`;
          expect(redirectUriMatches(registered, candidate)).toBe(true);
        },
      ),
    );
  });

  it('never accepts a URI that leaves the registered origin or the registered path', () => {
    fc.assert(
      fc.property(
        registeredUri,
        fc.array(hostilePiece, { minLength: 1, maxLength: 6 }),
        (registered, pieces) => {
          for (const candidate of [registered + pieces.join(''), pieces.join('') + registered]) {
            if (!redirectUriMatches(registered, candidate)) continue;
            // Accepted: it must parse to the same origin, stay under the registered path, and be canonical.
            const url = new URL(candidate);
            const base = new URL(registered);
            expect(url.origin).toBe(base.origin);
            expect(url.href).toBe(candidate);
            expect(url.username + url.password + url.hash).toBe('');
            const basePath = base.pathname;
            const underPath =
              url.pathname === basePath ||
              url.pathname.startsWith(basePath.endsWith('/') ? basePath : `${basePath}/`) ||
              (url.pathname === basePath && url.search !== '');
            expect(underPath).toBe(true);
            expect(url.pathname).not.toMatch(/%2e|%2f|%5c|%[01][0-9a-f]|\/\/|\/\.\.?(\/|$)/i);
          }
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('rejects every change of letter case in scheme, host or path', () => {
    fc.assert(
      fc.property(registeredUri, fc.nat(), (registered, index) => {
        const letters = [...registered].map((c, i) => [c, i] as const).filter(([c]) => /[a-z]/.test(c));
        fc.pre(letters.length > 0);
        const [, at] = letters[index % letters.length]!;
        const changed = registered.slice(0, at) + registered[at]!.toUpperCase() + registered.slice(at + 1);
        expect(redirectUriMatches(registered, changed)).toBe(false);
      }),
    );
  });
});
