/**
 * An `invalid_scope` error names the refused scopes in its `error_description` (issue 38), on
 * every path that refuses a scope: the authorization request (a scope the client may not request,
 * or one the server does not offer), the device authorization request, and a refresh asking for
 * more than was granted. A malformed scope is refused without echoing it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createTestApp, expectOAuthError, redirectParams, type TestApp } from '../support/app.js';
import { registerDeviceClient, requestDeviceCode } from '../support/device.js';
import { obtainTokens, refreshWith } from '../support/flow.js';

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

const authorize = (app: TestApp, scope: string) =>
  app.agent.get('/oauth/authorize').query({
    response_type: 'code',
    client_id: app.codeClient.clientId,
    redirect_uri: 'https://client.example/cb',
    scope,
    state: 'xyz',
  });

describe('invalid_scope names the refused scopes', () => {
  it('at the authorization endpoint: scopes the client may not request, and those the server does not offer', async () => {
    // The code client is registered for `realms profile`; the server offers `realms` only.
    t = await createTestApp({ scopes: { realms: 'List your realms' } });
    const notAllowed = redirectParams((await authorize(t, 'realms admin write')).headers.location!);
    expect(notAllowed).toMatchObject({ error: 'invalid_scope', state: 'xyz' });
    expect(notAllowed.error_description).toBe(
      'The client may not request some of these scopes. Refused scopes: admin write',
    );
    const notOffered = redirectParams((await authorize(t, 'realms profile')).headers.location!);
    expect(notOffered.error_description).toBe(
      'The requested scope is not offered by this server. Refused scope: profile',
    );
    // A malformed scope is refused as such, and not echoed.
    const malformed = redirectParams((await authorize(t, 'realms caf\u00e9')).headers.location!);
    expect(malformed.error_description).toBe('The scope parameter is malformed.');
  });

  it('at the device authorization endpoint', async () => {
    t = await createTestApp({ scopes: { realms: 'List your realms' } });
    await registerDeviceClient(t.storage, ['realms', 'profile']);
    const notAllowed = await requestDeviceCode(t, { client_id: 'realm-cli', scope: 'realms admin' });
    expectOAuthError(notAllowed, 'invalid_scope');
    expect(notAllowed.body.error_description).toBe(
      'The client may not request some of these scopes. Refused scope: admin',
    );
    const notOffered = await requestDeviceCode(t, { client_id: 'realm-cli', scope: 'profile' });
    expectOAuthError(notOffered, 'invalid_scope');
    expect(notOffered.body.error_description).toBe(
      'The requested scope is not offered by this server. Refused scope: profile',
    );
  });

  it('at a refresh asking for more than was granted', async () => {
    t = await createTestApp({ scopes: { realms: 'List your realms', profile: 'See your profile' } });
    const { refresh_token } = await obtainTokens(t, { scope: 'realms' });
    const wider = await refreshWith(t, refresh_token, { scope: 'realms profile' });
    expectOAuthError(wider, 'invalid_scope');
    expect(wider.body.error_description).toMatch(/ Refused scope: profile$/);
  });
});
