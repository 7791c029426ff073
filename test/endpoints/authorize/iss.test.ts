/**
 * RFC 9207: every authorization response (code in the query, token in the fragment, and every
 * error sent to the redirect URI) carries `iss`, equal to the issuer of the metadata.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { redirectUrl } from '../../../src/http/redirect.js';
import {
  CODE_REDIRECT,
  createTestApp,
  IMPLICIT_REDIRECT,
  redirectParams,
  type TestApp,
} from '../../support/app.js';
import { answerConsent, authorizeWithLogin, obtainCode } from '../../support/flow.js';

let t: TestApp;
let issuer: string;
beforeEach(async () => {
  t = await createTestApp();
  issuer = (await t.agent.get('/.well-known/oauth-authorization-server')).body.issuer;
  expect(issuer).toBe(t.baseUrl);
});
afterEach(() => t.close());

const codeQuery = {
  response_type: 'code',
  client_id: 'code-client',
  redirect_uri: CODE_REDIRECT,
  state: 's',
};
const implicitQuery = {
  response_type: 'token',
  client_id: 'implicit-client',
  redirect_uri: IMPLICIT_REDIRECT,
  state: 's',
};

describe('iss in authorization responses (RFC 9207)', () => {
  it('is in the query with the code, after consent and on the immediate redirect', async () => {
    const first = await obtainCode(t);
    expect(first.location.searchParams.get('iss')).toBe(issuer);
    expect(first.location.hash).toBe('');
    const again = await t.agent.get('/oauth/authorize').query(codeQuery);
    expect(again.status).toBe(302);
    expect(redirectParams(again.headers.location!)).toMatchObject({ iss: issuer, state: 's' });
  });

  it('is in the fragment with the access token', async () => {
    const consent = await authorizeWithLogin(t, implicitQuery);
    const location = new URL((await answerConsent(t, consent.text, 'allow')).headers.location!);
    expect(location.search).toBe('');
    expect(redirectParams(location.href)).toMatchObject({ iss: issuer, state: 's' });
  });

  it('is in every error redirect: query for code, fragment for token, and on denial', async () => {
    const codeError = await t.agent.get('/oauth/authorize').query({ ...codeQuery, scope: 'admin' });
    expect(new URL(codeError.headers.location!).searchParams.get('iss')).toBe(issuer);
    expect(redirectParams(codeError.headers.location!).error).toBe('invalid_scope');

    const implicitError = await t.agent.get('/oauth/authorize').query({ ...implicitQuery, scope: 'admin' });
    const implicitLocation = new URL(implicitError.headers.location!);
    expect(implicitLocation.search).toBe('');
    expect(redirectParams(implicitLocation.href)).toMatchObject({ error: 'invalid_scope', iss: issuer });

    const consent = await authorizeWithLogin(t, codeQuery);
    const denied = await answerConsent(t, consent.text, 'deny');
    expect(redirectParams(denied.headers.location!)).toMatchObject({ error: 'access_denied', iss: issuer });
  });
});

describe('redirectUrl', () => {
  it('encodes an issuer with a path, after a query the redirect URI already has', () => {
    const target = {
      redirectUri: 'https://client.example/cb?tenant=a',
      responseType: 'code' as const,
      state: 'x y',
      issuer: 'https://auth.example.com/tenant/one',
    };
    expect(redirectUrl(target, { code: 'c' })).toBe(
      'https://client.example/cb?tenant=a&code=c&state=x+y&iss=https%3A%2F%2Fauth.example.com%2Ftenant%2Fone',
    );
  });
});
