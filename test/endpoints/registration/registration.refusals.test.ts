/**
 * What the registration endpoint refuses (RFC 7591 3.2.2): every hostile or malformed field is a
 * 400 JSON error, `invalid_redirect_uri` for the redirect URIs and `invalid_client_metadata` for
 * the rest, never a 500 nor a stack trace, and nothing is registered.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, expectOAuthError, type TestApp } from '../../support/app.js';
import { register } from '../../support/registration.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({
    scopes: { realms: 'See your realms' },
    dynamicRegistration: { initialAccessTokens: ['an-initial-access-token-for-tests'], rateLimit: false },
  });
});
afterAll(() => t.close());

const GOOD = 'https://mcp-client.example/callback';
const ok = { redirect_uris: [GOOD], token_endpoint_auth_method: 'none' };

/** Every answer is the RFC 7591 error JSON, and nothing was registered. */
async function expectRefused(
  res: { status: number; body: unknown; text: string; headers: Record<string, string> },
  code: 'invalid_redirect_uri' | 'invalid_client_metadata',
) {
  expectOAuthError(res, code);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  expect(res.text).not.toMatch(/at \w+ \(|node_modules|\.ts:\d+/);
  // The two clients of the test app, and none more.
  expect(await t.storage.clients.list!()).toHaveLength(2);
}

const badRedirects: [string, unknown][] = [
  ['missing', undefined],
  ['a string, not a list', GOOD],
  ['an empty list', []],
  ['a number in the list', [42]],
  ['a nested list', [[GOOD]]],
  ['an object', { 0: GOOD }],
  ['a fragment', ['https://mcp-client.example/callback#frag']],
  ['javascript:', ['javascript:alert(1)']],
  ['data:', ['data:text/html,<script>alert(1)</script>']],
  ['plain http on a public host', ['http://mcp-client.example/callback']],
  ['a wildcard', ['https://*.mcp-client.example/callback']],
  ['userinfo', ['https://user:pass@mcp-client.example/callback']],
  ['a query', ['https://mcp-client.example/callback?next=/admin']],
  ['a dot segment', ['https://mcp-client.example/a/../callback']],
  ['an encoded slash', ['https://mcp-client.example/a%2f..%2fcallback']],
  ['not canonical', ['HTTPS://MCP-CLIENT.EXAMPLE/callback']],
  ['relative', ['/callback']],
  ['whitespace', ['https://mcp-client.example/call back']],
  ['too long', [`https://mcp-client.example/${'a'.repeat(3000)}`]],
  ['two of them', [GOOD, 'https://other.example/callback']],
  ['a scheme without a dot (not reverse-domain)', ['myapp:/callback']],
];

describe('redirect_uris', () => {
  it.each(badRedirects)('refuses %s with invalid_redirect_uri', async (_why, redirectUris) => {
    const body = redirectUris === undefined ? { client_name: 'x' } : { ...ok, redirect_uris: redirectUris };
    await expectRefused(await register(t, body), 'invalid_redirect_uri');
  });

  it('says why: one redirect URI per client, and the rule that refused the URI', async () => {
    const two = await register(t, { ...ok, redirect_uris: [GOOD, 'https://other.example/cb'] });
    expect(two.body.error_description).toMatch(/one redirect URI per client/);
    const fragment = await register(t, { ...ok, redirect_uris: [`${GOOD}#x`] });
    expect(fragment.body.error_description).toMatch(/fragment/);
  });

  it('takes the same URI twice as one', async () => {
    const res = await register(t, { ...ok, redirect_uris: [GOOD, GOOD] });
    expect(res.status).toBe(201);
    expect(res.body.redirect_uris).toEqual([GOOD]);
    await t.storage.clients.remove!(res.body.client_id);
  });

  it('refuses loopback and private-use redirects for a web application', async () => {
    for (const uri of ['http://127.0.0.1/callback', 'com.example.app:/callback']) {
      const res = await register(t, { ...ok, redirect_uris: [uri], application_type: 'web' });
      await expectRefused(res, 'invalid_redirect_uri');
    }
  });

  it('refuses a private-use scheme for a confidential client (RFC 8252 7.1: native apps are public)', async () => {
    const res = await register(
      t,
      { redirect_uris: ['com.example.app:/callback'], token_endpoint_auth_method: 'client_secret_basic' },
      { Authorization: 'Bearer an-initial-access-token-for-tests' },
    );
    await expectRefused(res, 'invalid_redirect_uri');
  });
});

const badMetadata: [string, Record<string, unknown>][] = [
  ['client_name as a list', { client_name: ['App'] }],
  ['client_name empty', { client_name: '   ' }],
  ['client_name of 201 characters', { client_name: 'x'.repeat(201) }],
  ['client_name of 10 000 characters', { client_name: 'x'.repeat(10_000) }],
  ['client_name with a right-to-left override', { client_name: 'Goo\u202egle' }],
  ['client_name with a control character', { client_name: 'App\u0000' }],
  ['grant_types as a string', { grant_types: 'authorization_code' }],
  ['grant_types without authorization_code', { grant_types: ['client_credentials'] }],
  ['grant_types with a number', { grant_types: ['authorization_code', 1] }],
  ['response_types without code', { response_types: ['token'] }],
  ['response_types as an object', { response_types: { code: true } }],
  ['token_endpoint_auth_method private_key_jwt', { token_endpoint_auth_method: 'private_key_jwt' }],
  ['token_endpoint_auth_method as a list', { token_endpoint_auth_method: ['none'] }],
  ['a confidential client without a token', { token_endpoint_auth_method: 'client_secret_post' }],
  ['scope as a list', { scope: ['realms'] }],
  ['scope with a quote', { scope: 'realms "admin"' }],
  ['application_type desktop', { application_type: 'desktop' }],
  ['contacts as a string', { contacts: 'dev@example.com' }],
  ['contacts with a space', { contacts: ['dev @example.com'] }],
  ['eleven contacts', { contacts: Array.from({ length: 11 }, (_, i) => `dev${i}@example.com`) }],
];

describe('other metadata', () => {
  it.each(badMetadata)('refuses %s with invalid_client_metadata', async (_why, fields) => {
    await expectRefused(await register(t, { ...ok, ...fields }), 'invalid_client_metadata');
  });

  it('ignores what it does not use, however odd (RFC 7591 2: unknown metadata is ignored)', async () => {
    const res = await register(t, {
      ...ok,
      logo_uri: 'javascript:alert(1)',
      jwks: { keys: 'not a key set' },
      software_statement: 'not.a.jwt',
      client_id: 'chosen-by-the-client',
      client_secret: 'chosen-by-the-client',
    });
    expect(res.status).toBe(201);
    expect(res.body.client_id).not.toBe('chosen-by-the-client');
    expect(res.body).not.toHaveProperty('client_secret');
    expect(res.body).not.toHaveProperty('logo_uri');
    await t.storage.clients.remove!(res.body.client_id);
  });

  it('reads no field through __proto__ or constructor in the JSON', async () => {
    const res = await t.agent
      .post('/oauth/register')
      .set('Content-Type', 'application/json')
      .send(
        `{"redirect_uris":["${GOOD}"],"__proto__":{"token_endpoint_auth_method":"client_secret_basic","scope":"x"},` +
          '"constructor":{"prototype":{"client_name":"Polluted"}}}',
      );
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ token_endpoint_auth_method: 'none', scope: 'realms' });
    expect(res.body.client_name).toBe('mcp-client.example');
    expect(({} as Record<string, unknown>).client_name).toBeUndefined();
    await t.storage.clients.remove!(res.body.client_id);
  });
});

describe('the body', () => {
  const send = (type: string | undefined, body: string) => {
    const req = t.agent.post('/oauth/register');
    if (type !== undefined) req.set('Content-Type', type);
    return req.send(body);
  };

  it.each([
    ['a JSON list', 'application/json', JSON.stringify([ok])],
    ['JSON null', 'application/json', 'null'],
    ['a JSON string', 'application/json', JSON.stringify('redirect_uris')],
    ['malformed JSON', 'application/json', '{"redirect_uris": ['],
    ['form-encoded', 'application/x-www-form-urlencoded', `redirect_uris=${encodeURIComponent(GOOD)}`],
    ['text', 'text/plain', JSON.stringify(ok)],
    ['no content type', undefined, JSON.stringify(ok)],
    ['an empty body', 'application/json', ''],
    ['a charset other than UTF-8', 'application/json; charset=latin1', JSON.stringify(ok)],
    ['17 KiB', 'application/json', JSON.stringify({ ...ok, padding: 'x'.repeat(17 * 1024) })],
  ])('refuses %s with invalid_client_metadata, 400', async (_why, type, body) => {
    await expectRefused(await send(type, body), 'invalid_client_metadata');
  });

  it('says a body is too large when it is', async () => {
    const res = await send('application/json', JSON.stringify({ ...ok, padding: 'x'.repeat(17 * 1024) }));
    expect(res.body.error_description).toMatch(/too large/);
  });

  it('answers another method with invalid_request, as every JSON endpoint', async () => {
    expectOAuthError(await t.agent.get('/oauth/register'), 'invalid_request');
  });
});
