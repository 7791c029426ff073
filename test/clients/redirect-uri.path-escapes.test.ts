/**
 * Issue 18, finding 6: spellings of a path that a common server resolves outside the registered
 * path, though the URL parser keeps them as they are. Tomcat and Jetty strip path parameters
 * (`;...`) from each segment before resolving dot segments, so `/cb/..;/x` is `/x` there; IIS reads
 * `%u002e` as a dot; servlet containers and proxies that decode twice see `%252e` as a dot; old
 * decoders read overlong UTF-8 (`%c0%ae`) as a dot; and servers that normalise Unicode (NFKC) read
 * fullwidth dots and slashes as ASCII. The registration check and the request match refuse the
 * same spellings.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redirectUriMatches, registeredRedirectUriProblem } from '../../src/rules/redirect-uri.js';
import { CODE_REDIRECT, createTestApp, redirectParams, type TestApp } from '../support/app.js';

const REFUSAL =
  'must not contain dot segments, empty segments, encoded dots, slashes or control characters, or @';

/** Paths under `/cb` that some server resolves outside it, and what resolves them. */
const ESCAPES: ReadonlyArray<readonly [path: string, why: string]> = [
  ['/cb/..;/admin', 'Tomcat and Jetty: path parameters stripped, then `..` resolved'],
  ['/cb/..;/', 'Tomcat and Jetty'],
  ['/cb/..;', 'Tomcat and Jetty: a last segment `..`'],
  ['/cb/..;jsessionid=1/admin', 'Tomcat: a session id as path parameter'],
  ['/cb/..;a=b;c=d/admin', 'Tomcat and Jetty: several path parameters'],
  ['/cb/.;/x', 'Tomcat and Jetty: `.`'],
  ['/cb/x/..;/..;/admin', 'Tomcat and Jetty: climbing two levels'],
  ['/cb/;/x', 'Tomcat and Jetty: an empty segment once the parameters go'],
  ['/cb/..%3b/admin', 'a proxy that decodes `%3b` before Tomcat'],
  ['/cb/.%3B/admin', 'a proxy that decodes `%3B` before Tomcat'],
  ['/cb/%252e%252e/admin', 'double decoding'],
  ['/cb/..%252fadmin', 'double decoding of a slash'],
  ['/cb/%25252e%25252e/admin', 'triple decoding'],
  ['/cb/%c0%ae%c0%ae/admin', 'overlong UTF-8 dots (Tomcat before 6.0.18)'],
  ['/cb/..%c0%afadmin', 'an overlong UTF-8 slash'],
  ['/cb/%e0%80%ae%e0%80%ae/admin', 'three-byte overlong dots'],
  ['/cb/%u002e%u002e/admin', 'IIS %u encoding'],
  ['/cb/%u002E./admin', 'IIS %u encoding, upper case'],
  ['/cb/%ef%bc%8e%ef%bc%8e/admin', 'fullwidth dots, NFKC'],
  ['/cb/%e2%80%a5/admin', 'two dot leader, NFKC `..`'],
  ['/cb/..%ef%bc%8fadmin', 'a fullwidth slash, NFKC'],
  ['/cb/..%ef%bc%bcadmin', 'a fullwidth backslash, NFKC'],
];

/** Paths under `/cb` that stay there everywhere: path parameters on ordinary segments included. */
const SAFE = [
  '/cb/x;v=1',
  '/cb/a;b/c',
  '/cb/x..;/y',
  '/cb/...;/y',
  '/cb/100%25',
  '/cb/%C3%A9t%C3%A9',
  '/cb/x;',
];

describe('redirect URI rule: path escapes of servlet containers and other servers', () => {
  it.each(ESCAPES)('refuses %s under /cb (%s)', (path) => {
    expect(redirectUriMatches('https://app.example/cb', `https://app.example${path}`)).toBe(false);
    expect(redirectUriMatches('https://app.example/cb/', `https://app.example${path}`)).toBe(false);
    expect(redirectUriMatches('https://app.example/', `https://app.example${path}?code=1`)).toBe(false);
  });

  it.each(ESCAPES)('refuses to register %s (%s)', (path) => {
    expect(registeredRedirectUriProblem(`https://app.example${path}`)).toBe(REFUSAL);
  });

  it.each(SAFE)('still accepts and registers %s', (path) => {
    expect(redirectUriMatches('https://app.example/cb', `https://app.example${path}`)).toBe(true);
    expect(registeredRedirectUriProblem(`https://app.example${path}`)).toBeNull();
  });

  it('registration and the request match agree on every path (property)', () => {
    const piece = fc.constantFrom(
      '/',
      'x',
      '.',
      '..',
      ';',
      ';a=b',
      '%2e',
      '%3b',
      '%25',
      '%252e',
      '%2f',
      '%c0',
      '%ae',
      '%e2%80%a5',
      '%ef%bc%8e',
      '%u002e',
      '%',
      '%C3%A9',
      '~',
      '-',
      '@',
      ':',
    );
    fc.assert(
      fc.property(fc.array(piece, { minLength: 1, maxLength: 8 }), (pieces) => {
        const uri = `https://app.example/cb/${pieces.join('')}`;
        const registrable = registeredRedirectUriProblem(uri) === null;
        expect(redirectUriMatches('https://app.example/cb', uri), uri).toBe(registrable);
        expect(redirectUriMatches('https://app.example/', uri), uri).toBe(registrable);
      }),
      { numRuns: 3000 },
    );
  });
});

describe('path escapes at the authorization endpoint', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  /** An authorization request whose every other problem would be redirected, if the URI were accepted. */
  const authorize = (redirectUri: string) =>
    t.agent.get(
      `/oauth/authorize?response_type=bogus&client_id=code-client&state=s&redirect_uri=${encodeURIComponent(redirectUri)}`,
    );

  it.each(ESCAPES)('refuses %s (%s): 400 page, no redirect, no session', async (path) => {
    const res = await authorize(new URL(CODE_REDIRECT).origin + path);
    expect(res.status).toBe(400);
    expect(res.headers.location).toBeUndefined();
    expect(res.headers['set-cookie']).toBeUndefined();
    expect(res.type).toBe('text/html');
    expect(res.text).toContain('The redirect_uri is not registered for this client application.');
  });

  it('still redirects to a path parameter on an ordinary segment under the registered path', async () => {
    const res = await authorize(`${CODE_REDIRECT}/x;v=1`);
    expect(res.status).toBe(302);
    expect(res.headers.location!.startsWith(`${CODE_REDIRECT}/x;v=1`)).toBe(true);
    expect(redirectParams(res.headers.location!)).toMatchObject({ error: 'unsupported_response_type' });
  });
});
