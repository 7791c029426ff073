/**
 * The OAuth 2.0 side against clients written elsewhere, with their checks as shipped:
 * oauth4webapi (a strict, RFC-checking client) and openid-client 6 (its OAuth 2.0 functions).
 * The one relaxation is http, which these tests need on 127.0.0.1 (`allowInsecureRequests`).
 *
 * Neither library implements the implicit grant (RFC 9700 deprecates it), so the implicit
 * redirect is checked from the raw `Location` header against RFC 6749 section 4.2.2.
 *
 * The browser part (login at the development provider, consent) is the helpers' supertest
 * agent; everything a client application does goes through the library under test.
 */
import * as oauth from 'oauth4webapi';
import * as client from 'openid-client';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CODE_REDIRECT, createTestApp, IMPLICIT_REDIRECT, type TestApp } from '../support/app.js';
import { answerConsent, authorizeWithLogin } from '../support/flow.js';

let t: TestApp;
beforeEach(async () => {
  t = await createTestApp();
});
afterEach(() => t.close());

const insecure = { [oauth.allowInsecureRequests]: true } as const;

/** The endpoints, read from the root resource as a client of this server must. */
async function serverMetadata(): Promise<oauth.AuthorizationServer> {
  const root = (await (await fetch(`${t.baseUrl}/`)).json()) as {
    oauth: { authorization: { href: string }; token: { href: string } };
  };
  return {
    issuer: t.baseUrl,
    authorization_endpoint: root.oauth.authorization.href,
    token_endpoint: root.oauth.token.href,
    code_challenge_methods_supported: ['S256'],
  };
}

/** The person's part: log in and trust the application; resolves the final redirect URL. */
async function browserAuthorizes(authorizationUrl: URL, decision: 'allow' | 'deny' = 'allow'): Promise<URL> {
  const query = Object.fromEntries(authorizationUrl.searchParams);
  let res = await authorizeWithLogin(t, query);
  if (res.status === 200) res = await answerConsent(t, res.text, decision);
  expect([302, 303]).toContain(res.status);
  return new URL(res.headers.location!);
}

describe('oauth4webapi', () => {
  const oauthClient = (): oauth.Client => ({ client_id: t.codeClient.clientId });
  const auth = () => oauth.ClientSecretPost(t.codeClient.clientSecret);

  /** A complete code flow with PKCE; resolves the processed token response. */
  async function codeFlow(as: oauth.AuthorizationServer) {
    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const url = new URL(as.authorization_endpoint!);
    url.search = new URLSearchParams({
      response_type: 'code',
      client_id: t.codeClient.clientId,
      redirect_uri: CODE_REDIRECT,
      scope: 'realms',
      state,
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    }).toString();
    const callback = await browserAuthorizes(url);
    const params = oauth.validateAuthResponse(as, oauthClient(), callback, state);
    const response = await oauth.authorizationCodeGrantRequest(
      as,
      oauthClient(),
      auth(),
      params,
      CODE_REDIRECT,
      verifier,
      insecure,
    );
    return { params, tokens: await oauth.processAuthorizationCodeResponse(as, oauthClient(), response) };
  }

  it('runs the code flow with PKCE, calls the API and refreshes', async () => {
    const as = await serverMetadata();
    const { tokens } = await codeFlow(as);
    expect(tokens).toMatchObject({ token_type: 'bearer', expires_in: 3600, scope: 'realms' });
    expect(typeof tokens.refresh_token).toBe('string');

    const api = await oauth.protectedResourceRequest(
      tokens.access_token,
      'GET',
      new URL(`${t.baseUrl}/v1/realms`),
      undefined,
      undefined,
      insecure,
    );
    expect(api.status).toBe(200);

    // The spec has clients send redirect_uri with a refresh as well: an extra parameter, not a
    // relaxed check.
    const refreshed = await oauth.processRefreshTokenResponse(
      as,
      oauthClient(),
      await oauth.refreshTokenGrantRequest(as, oauthClient(), auth(), tokens.refresh_token!, {
        ...insecure,
        additionalParameters: { redirect_uri: CODE_REDIRECT },
      }),
    );
    expect(refreshed).toMatchObject({ token_type: 'bearer', expires_in: 3600 });
    expect(refreshed.access_token).not.toBe(tokens.access_token);
  });

  it('reads a replayed code as invalid_grant', async () => {
    const as = await serverMetadata();
    const verifier = oauth.generateRandomCodeVerifier();
    const url = new URL(as.authorization_endpoint!);
    url.search = new URLSearchParams({
      response_type: 'code',
      client_id: t.codeClient.clientId,
      redirect_uri: CODE_REDIRECT,
      state: 's',
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    }).toString();
    const params = oauth.validateAuthResponse(as, oauthClient(), await browserAuthorizes(url), 's');
    const exchange = () =>
      oauth.authorizationCodeGrantRequest(
        as,
        oauthClient(),
        auth(),
        params,
        CODE_REDIRECT,
        verifier,
        insecure,
      );
    await oauth.processAuthorizationCodeResponse(as, oauthClient(), await exchange());
    const error = await oauth.processAuthorizationCodeResponse(as, oauthClient(), await exchange()).then(
      () => expect.fail('a replayed code must be refused'),
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(oauth.ResponseBodyError);
    expect(error).toMatchObject({ error: 'invalid_grant', status: 400 });
  });

  it('reads a wrong client secret as a Basic challenge with invalid_client', async () => {
    const as = await serverMetadata();
    const response = await oauth.refreshTokenGrantRequest(
      as,
      oauthClient(),
      oauth.ClientSecretPost('wrong'),
      'any-refresh-token',
      { ...insecure, additionalParameters: { redirect_uri: CODE_REDIRECT } },
    );
    const error = await oauth.processAuthorizationCodeResponse(as, oauthClient(), response).then(
      () => expect.fail('a wrong secret must be refused'),
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(oauth.WWWAuthenticateChallengeError);
    const challenge = error as oauth.WWWAuthenticateChallengeError;
    expect(challenge.status).toBe(401);
    expect(challenge.cause).toEqual([{ scheme: 'basic', parameters: { realm: new URL(t.baseUrl).host } }]);
    expect(await challenge.response.json()).toMatchObject({ error: 'invalid_client' });
  });

  it('reads refresh errors: unknown token (invalid_grant), wider scope (invalid_scope)', async () => {
    const as = await serverMetadata();
    const { tokens } = await codeFlow(as);
    const refresh = async (token: string, extra: Record<string, string> = {}) =>
      oauth
        .processRefreshTokenResponse(
          as,
          oauthClient(),
          await oauth.refreshTokenGrantRequest(as, oauthClient(), auth(), token, {
            ...insecure,
            additionalParameters: { redirect_uri: CODE_REDIRECT, ...extra },
          }),
        )
        .then(
          () => expect.fail('the refresh must be refused'),
          (e: unknown) => e,
        );
    expect(await refresh('not-a-token')).toMatchObject({ error: 'invalid_grant', status: 400 });
    expect(await refresh(tokens.refresh_token!, { scope: 'realms profile' })).toMatchObject({
      error: 'invalid_scope',
      status: 400,
    });
  });

  it('reads a denied consent from the redirect as access_denied, with the state checked', async () => {
    const as = await serverMetadata();
    const url = new URL(as.authorization_endpoint!);
    url.search = new URLSearchParams({
      response_type: 'code',
      client_id: t.codeClient.clientId,
      redirect_uri: CODE_REDIRECT,
      state: 'deny-state',
    }).toString();
    const callback = await browserAuthorizes(url, 'deny');
    const error = (() => {
      try {
        oauth.validateAuthResponse(as, oauthClient(), callback, 'deny-state');
      } catch (e) {
        return e;
      }
      return expect.fail('a denial must be an error');
    })();
    expect(error).toBeInstanceOf(oauth.AuthorizationResponseError);
    expect(error).toMatchObject({ error: 'access_denied' });
  });

  it('reads an unusable access token as a Bearer challenge with invalid_token', async () => {
    const error = await oauth
      .protectedResourceRequest(
        'x'.repeat(43),
        'GET',
        new URL(`${t.baseUrl}/v1/realms`),
        undefined,
        undefined,
        insecure,
      )
      .then(
        () => expect.fail('an unknown token must be refused'),
        (e: unknown) => e,
      );
    expect(error).toBeInstanceOf(oauth.WWWAuthenticateChallengeError);
    const [challenge] = (error as oauth.WWWAuthenticateChallengeError).cause;
    expect(challenge).toMatchObject({
      scheme: 'bearer',
      parameters: { realm: new URL(t.baseUrl).host, error: 'invalid_token' },
    });
  });
});

describe('openid-client (OAuth 2.0 functions)', () => {
  async function configuration(secret = t.codeClient.clientSecret) {
    const config = new client.Configuration(
      await serverMetadata(),
      t.codeClient.clientId,
      undefined,
      client.ClientSecretPost(secret),
    );
    client.allowInsecureRequests(config);
    return config;
  }

  it('runs the code flow with PKCE, calls the API and refreshes', async () => {
    const config = await configuration();
    const verifier = client.randomPKCECodeVerifier();
    const state = client.randomState();
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: CODE_REDIRECT,
      scope: 'realms profile',
      state,
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    });
    const tokens = await client.authorizationCodeGrant(config, await browserAuthorizes(url), {
      pkceCodeVerifier: verifier,
      expectedState: state,
    });
    expect(tokens).toMatchObject({ token_type: 'bearer', expires_in: 3600, scope: 'realms profile' });
    expect(tokens.expiresIn()).toBeGreaterThan(3500);

    const api = await client.fetchProtectedResource(
      config,
      tokens.access_token,
      new URL(`${t.baseUrl}/v1/realms`),
      'GET',
    );
    expect(api.status).toBe(200);

    const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!, {
      redirect_uri: CODE_REDIRECT,
    });
    expect(refreshed.access_token).not.toBe(tokens.access_token);
    // A narrower scope on refresh is granted as asked (RFC 6749 section 6).
    const narrower = await client.refreshTokenGrant(
      config,
      refreshed.refresh_token ?? tokens.refresh_token!,
      {
        redirect_uri: CODE_REDIRECT,
        scope: 'realms',
      },
    );
    expect(narrower.scope).toBe('realms');
  });

  it('reads a wrong redirect_uri at the token endpoint as invalid_grant', async () => {
    const config = await configuration();
    const verifier = client.randomPKCECodeVerifier();
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: `${CODE_REDIRECT}/deeper`,
      state: 'st',
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    });
    const callback = await browserAuthorizes(url);
    // openid-client sends the callback URL without its query as redirect_uri: here the deeper
    // one, which the authorization request used. Claiming the registered one instead must fail.
    callback.pathname = new URL(CODE_REDIRECT).pathname;
    const error = await client
      .authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: 'st' })
      .then(
        () => expect.fail('a different redirect_uri must be refused'),
        (e: unknown) => e,
      );
    expect(error).toBeInstanceOf(client.ResponseBodyError);
    expect(error).toMatchObject({ error: 'invalid_grant', status: 400 });
  });

  it('reads a wrong client secret as a Basic challenge', async () => {
    const config = await configuration('wrong');
    const error = await client.refreshTokenGrant(config, 'any', { redirect_uri: CODE_REDIRECT }).then(
      () => expect.fail('a wrong secret must be refused'),
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(client.WWWAuthenticateChallengeError);
    expect(error).toMatchObject({ status: 401 });
  });
});

describe('the implicit grant, from the raw redirect', () => {
  const query = {
    response_type: 'token',
    client_id: 'implicit-client',
    redirect_uri: IMPLICIT_REDIRECT,
    state: 'a state/with+odd=chars&',
  };

  it('puts exactly the RFC 6749 4.2.2 fields in the fragment, form-encoded, and nothing in the query', async () => {
    const consent = await authorizeWithLogin(t, query);
    const res = await answerConsent(t, consent.text, 'allow');
    const raw = res.headers.location!;
    const [beforeFragment, fragment] = raw.split('#') as [string, string];
    expect(beforeFragment).toBe(IMPLICIT_REDIRECT);
    const params = new URLSearchParams(fragment);
    const keys = [...params.keys()];
    expect(new Set(keys).size).toBe(keys.length);
    // RFC 6749 4.2.2, plus iss (RFC 9207).
    expect(keys.sort()).toEqual(['access_token', 'expires_in', 'iss', 'scope', 'state', 'token_type']);
    expect(params.get('iss')).toBe(t.baseUrl);
    // access_token REQUIRED; token_type REQUIRED (RFC 6750: Bearer); expires_in RECOMMENDED, in
    // seconds; scope as granted; state exactly as sent.
    expect(params.get('access_token')).toMatch(/^[A-Za-z0-9\-._~+/]+=*$/);
    expect(params.get('token_type')).toMatch(/^bearer$/i);
    expect(params.get('expires_in')).toMatch(/^[1-9]\d*$/);
    expect(params.get('scope')).toBe('realms');
    expect(params.get('state')).toBe(query.state);
    // "The authorization server MUST NOT issue a refresh token."
    expect(raw).not.toContain('refresh_token');

    const api = await fetch(`${t.baseUrl}/v1/realms`, {
      headers: { authorization: `Bearer ${params.get('access_token')}` },
    });
    expect(api.status).toBe(200);
  });

  it('puts exactly error, error_description and state in the fragment of a denial (4.2.2.1)', async () => {
    const consent = await authorizeWithLogin(t, query);
    const res = await answerConsent(t, consent.text, 'deny');
    const [beforeFragment, fragment] = res.headers.location!.split('#') as [string, string];
    expect(beforeFragment).toBe(IMPLICIT_REDIRECT);
    const params = new URLSearchParams(fragment);
    expect([...params.keys()].sort()).toEqual(['error', 'error_description', 'iss', 'state']);
    expect(params.get('error')).toBe('access_denied');
    expect(params.get('state')).toBe(query.state);
    // error_description: printable ASCII except " and \ (RFC 6749 section 4.2.2.1).
    expect(params.get('error_description')).toMatch(/^[\x20\x21\x23-\x5B\x5D-\x7E]+$/);
  });
});
