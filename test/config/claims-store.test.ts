/**
 * The account's claims (`users.saveClaims`/`users.findClaims`) are where ID tokens, UserInfo and
 * every team gate read a login's facts (issue 37). A storage without the pair is refused where it
 * would otherwise fail silently later: when the server is built with OpenID Connect or a provider
 * asked about teams, and when a team-gated client is registered or made one.
 */
import { describe, expect, it } from 'vitest';
import {
  createAuthorizationServer,
  launchpad,
  memoryStorage,
  registerClient,
  updateClient,
  type Storage,
} from '../../src/index.js';

/** The memory adapter without the claims pair, as a custom adapter may be. */
function withoutClaims(): Storage {
  const storage = memoryStorage();
  const { users } = storage;
  return {
    ...storage,
    users: { findOrCreate: users.findOrCreate.bind(users), find: users.find!.bind(users) },
  };
}

const base = {
  baseUrl: 'https://auth.example',
  session: { secret: 'a test session secret that is long enough' },
  providers: [{ name: 'Example ID', identifier: 'https://id.example.com/' }],
};

describe('a storage without users.saveClaims and users.findClaims', () => {
  it('is refused with OpenID Connect on, naming the option and the pair', () => {
    expect(() =>
      createAuthorizationServer({ ...base, storage: withoutClaims(), oidc: { keySecret: 'k'.repeat(40) } }),
    ).toThrow(/oidc: the storage has no users\.saveClaims and users\.findClaims.*docs\/storage\.md/);
  });

  it('is refused with a provider asked about teams', () => {
    expect(() =>
      createAuthorizationServer({
        ...base,
        storage: withoutClaims(),
        providers: [launchpad({ teams: ['team-a'] })],
      }),
    ).toThrow(/providers\.0\.teams: the storage has no users\.saveClaims/);
  });

  it('serves plain OAuth 2.0 as before', () => {
    expect(() => createAuthorizationServer({ ...base, storage: withoutClaims() })).not.toThrow();
  });

  it('takes no team-gated client, registered or updated', async () => {
    const storage = withoutClaims();
    const client = { applicationName: 'Team bot', redirectUri: 'https://bot.example/cb', scopes: ['realms'] };
    await expect(registerClient(storage, { ...client, allowedTeams: ['team-a'] })).rejects.toThrow(
      /allowedTeams: the storage has no users\.saveClaims/,
    );
    const { clientId } = await registerClient(storage, client);
    await expect(updateClient(storage, clientId, { allowedTeams: ['team-a'] })).rejects.toThrow(
      /allowedTeams/,
    );
    expect((await storage.clients.find(clientId))!.allowedTeams ?? []).toEqual([]);
  });
});
