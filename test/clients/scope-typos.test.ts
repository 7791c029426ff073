import { describe, expect, it } from 'vitest';
import {
  createAuthorizationServer,
  memoryStorage,
  registerClient,
  requireBearer,
  updateClient,
} from '../../src/index.js';

/**
 * Scope typos are found when the server is set up, not by a third-party developer as
 * `invalid_scope` or a 403 (issue 29): registration given the server and `requireBearer` refuse a
 * scope the server does not offer.
 */
function server(scopes: Record<string, string>) {
  return createAuthorizationServer({
    baseUrl: 'https://auth.example',
    storage: memoryStorage(),
    providers: [{ name: 'Example ID', identifier: 'https://id.example/' }],
    session: { secret: 'a test session secret that is long enough' },
    scopes,
  });
}

describe('scopes the server does not offer', () => {
  it('registerClient(server, ...) refuses one, naming what the server offers', async () => {
    const s = server({ 'realms:read': 'See your realms' });
    const registration = { applicationName: 'App', redirectUri: 'https://app.example/cb' };
    await expect(registerClient(s, { ...registration, scopes: ['realm:read'] })).rejects.toThrow(
      'openid-oauth-bridge: scopes: "realm:read" is not a scope the server offers (realms:read); add it to the server\'s scopes option first',
    );
    const issued = await registerClient(s, { ...registration, scopes: ['realms:read'] });
    expect((await s.storage.clients.find(issued.clientId))?.scopes).toEqual(['realms:read']);
    // Without scopes, a client of a server that names its scopes may request all of them.
    const all = await registerClient(s, registration);
    expect((await s.storage.clients.find(all.clientId))?.scopes).toEqual(['realms:read']);
    await expect(updateClient(s, issued.clientId, { scopes: ['realms:write'] })).rejects.toThrow(
      /"realms:write" is not a scope the server offers/,
    );
  });

  it('registerClient(storage, ...) still takes any well-formed scope (it cannot know the server)', async () => {
    const storage = memoryStorage();
    const issued = await registerClient(storage, {
      applicationName: 'App',
      redirectUri: 'https://app.example/cb',
      scopes: ['anything'],
    });
    expect(issued.clientId).toBeTruthy();
  });

  it('requireBearer refuses one when it is built', () => {
    const s = server({ 'realms:read': 'See your realms' });
    expect(() => requireBearer(s, { scopes: ['realm:read'] })).toThrow(
      'openid-oauth-bridge: requireBearer scopes: "realm:read" is not a scope the server offers (realms:read)',
    );
    expect(() => requireBearer(s, { scopes: ['realms:read'] })).not.toThrow();
    // A server that names no scopes accepts any.
    expect(() => requireBearer(server({}), { scopes: ['whatever'] })).not.toThrow();
  });
});
