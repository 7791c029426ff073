import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redirectUriMatches } from '../../src/rules/redirect-uri.js';
import { registerClient } from '../../src/index.js';
import { CODE_REDIRECT, createTestApp, redirectParams, type TestApp } from '../support/app.js';

// The rule itself, with documented examples and property-based tests of hostile URIs, is in
// redirect-uri.rule.test.ts; this file drives the live authorization endpoint.

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const REGISTERED = CODE_REDIRECT; // https://client.example/cb

/** An authorization request whose every other problem would be redirected, if the URI were accepted. */
const authorize = (redirectUri: string) =>
  t.agent.get(
    `/oauth/authorize?response_type=bogus&client_id=code-client&state=s&redirect_uri=${encodeURIComponent(redirectUri)}`,
  );

/**
 * Refused: a page with the reason, never a redirect, nothing stored (no session cookie). A NUL
 * character is refused as such before the redirect URI is compared.
 */
function expectRefused(res: Awaited<ReturnType<typeof authorize>>) {
  expect(res.status).toBe(400);
  expect(res.headers.location).toBeUndefined();
  expect(res.headers['set-cookie']).toBeUndefined();
  expect(res.type).toBe('text/html');
  expect(res.text).toMatch(
    /The redirect_uri is not registered for this client application\.|The parameter redirect_uri holds a NUL character\./,
  );
  expect(res.headers['content-security-policy']).toContain("frame-ancestors 'none'");
}

describe('redirect URIs at the authorization endpoint', () => {
  it.each([
    // other schemes, in any letter case
    'javascript:alert(1)',
    'JavaScript:alert(document.cookie)',
    'JAVASCRIPT://client.example/cb%0aalert(1)',
    'javascript://https://client.example/cb',
    'data:text/html,<script>alert(1)</script>',
    'DATA:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==',
    'vbscript:msgbox(1)',
    'http://client.example/cb',
    'HTTPS://client.example/cb',
    'ftp://client.example/cb',
    'https:client.example/cb',
    '//client.example/cb',
    // hosts that start with the registered host, userinfo anywhere
    'https://client.example.evil.example/cb',
    'https://client.example/cb@evil.example',
    'https://client.example/cb/@evil.example',
    'https://client.example@evil.example/cb',
    'https://evil.example#@client.example/cb',
    'https://client.example/cb/%40evil.example/..',
    // backslashes, encoded slashes and dots, dot segments in any spelling
    'https://client.example/cb\\@evil.example',
    'https://client.example/cb/..\\..\\admin',
    'https://client.example/cb//evil.example',
    'https://client.example/cb/%2f%2fevil.example',
    'https://client.example/cb/%2F..%2Fadmin',
    'https://client.example/cb/%5c%5cevil.example',
    'https://client.example/cb/../admin',
    'https://client.example/cb/./x',
    'https://client.example/cb/%2e%2e/admin',
    'https://client.example/cb/.%2E/admin',
    'https://client.example/cb/%2E./admin',
    'https://client.example/cb/x/../../admin',
    // fragments
    'https://client.example/cb#',
    'https://client.example/cb#x',
    'https://client.example/cb?x=1#y',
    // control characters and whitespace, raw and encoded
    ' https://client.example/cb',
    'https://client.example/cb ',
    'https://client.example/cb/ x',
    'https://client.example/cb\t',
    'https://client.example/cb\n',
    'https://client.example/cb\r\nLocation: https://evil.example',
    'https://client.example/cb\u0000',
    'https://client.example/cb/\u00e9',
    'https://client.example/cb/%0d%0aSet-Cookie:%20x=1',
    'https://client.example/cb/%00',
    'https://client.example/cb/%09',
    // other ports, letter case, trailing slashes, boundaries
    'https://client.example:8443/cb',
    'https://client.example:443/cb',
    'https://CLIENT.example/cb',
    'https://client.example/CB',
    'https://client.example/Cb',
    'https://client.example/cbx',
    'https://client.example/cb.evil',
    'https://client.example/cb;x',
    'https://client.example/c',
    'https://client.example/',
    'https://client.example',
    // length
    `${REGISTERED}/${'a'.repeat(2100)}`,
  ])('refuses %j', async (redirectUri) => {
    expectRefused(await authorize(redirectUri));
  });

  it.each([
    [REGISTERED, REGISTERED],
    [`${REGISTERED}/`, `${REGISTERED}/`],
    [`${REGISTERED}/done?tab=2`, `${REGISTERED}/done?tab=2`],
    [`${REGISTERED}?x=1`, `${REGISTERED}?x=1`],
  ])('accepts %s and redirects only there', async (redirectUri, base) => {
    const res = await authorize(redirectUri);
    expect(res.status).toBe(302);
    expect(res.headers.location!.startsWith(base)).toBe(true);
    expect(redirectParams(res.headers.location!)).toMatchObject({
      error: 'unsupported_response_type',
      state: 's',
    });
  });

  it('never redirects to a URI the rule refuses (property, through the endpoint)', async () => {
    const piece = fc.constantFrom(
      '/',
      '//',
      '.',
      '..',
      '/..',
      '/./',
      '\\',
      '@',
      '#',
      '?',
      '&',
      '=',
      ':',
      ';',
      '%2e',
      '%2F',
      '%5C',
      '%00',
      '%0a',
      ' ',
      '\t',
      '\n',
      '\u00e9',
      'evil.example',
      '.evil',
      ':8080',
      'A',
      'javascript:',
      'data:',
      'x',
    );
    await fc.assert(
      fc.asyncProperty(
        fc.array(piece, { minLength: 1, maxLength: 5 }),
        fc.boolean(),
        async (pieces, before) => {
          const candidate = before ? pieces.join('') + REGISTERED : REGISTERED + pieces.join('');
          const res = await authorize(candidate);
          if (res.status === 302) {
            expect(redirectUriMatches(REGISTERED, candidate)).toBe(true);
            const location = new URL(res.headers.location!);
            expect(location.origin).toBe('https://client.example');
            expect(location.pathname === '/cb' || location.pathname.startsWith('/cb/')).toBe(true);
            expect(location.pathname).not.toMatch(/\/\/|%2e|%2f|%5c|%[01][0-9a-f]/i);
            expect(res.headers.location!.startsWith(candidate)).toBe(true);
          } else {
            expect(redirectUriMatches(REGISTERED, candidate)).toBe(false);
            expectRefused(res);
          }
        },
      ),
      { numRuns: 150 },
    );
  });

  it('holds for a client registered with a bare origin: only that origin', async () => {
    await registerClient(t.storage, {
      clientId: 'root-client',
      applicationName: 'Root',
      redirectUri: 'https://root.example/',
    });
    const ask = (uri: string) =>
      t.agent.get(
        `/oauth/authorize?response_type=bogus&client_id=root-client&redirect_uri=${encodeURIComponent(uri)}`,
      );
    for (const uri of [
      'https://root.example.evil/',
      'https://root.example@evil.example/',
      'https://root.example//evil.example',
      'https://root.example/%2f%2fevil.example',
      'https://root.example/\\evil.example',
      'https://root.example:444/',
      'javascript:https://root.example/',
    ]) {
      const res = await ask(uri);
      expect(res.status, uri).toBe(400);
      expect(res.headers.location).toBeUndefined();
    }
    expect((await ask('https://root.example/any/path?x=1')).status).toBe(302);
  });
});
