/**
 * registerClient and updateClient refuse what the library cannot serve, each with a message that
 * names the field, the value and the rule; registering an id that exists says so. Run on memory
 * and on SQLite storage (whose duplicate used to surface as "UNIQUE constraint failed").
 */
import { afterAll, describe, expect, it } from 'vitest';
import {
  ClientIdTakenError,
  connectStorage,
  memoryStorage,
  registerClient,
  updateClient,
  type ClientRegistration,
  type Storage,
} from '../../src/index.js';

const sqlite = await connectStorage('sqlite::memory:', { migrate: true });
afterAll(() => sqlite.close());

const base: ClientRegistration = {
  applicationName: 'Photo printer',
  redirectUri: 'https://printer.example/cb',
  scopes: ['realms'],
};

/** The storage, with a log of the calls made to its client store. */
function counted(storage: Storage): { storage: Storage; calls: string[] } {
  const calls: string[] = [];
  const clients = new Proxy(storage.clients, {
    get(target, name, receiver) {
      const value: unknown = Reflect.get(target, name, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        calls.push(String(name));
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return {
    storage: new Proxy(storage, {
      get: (target, name, receiver) => (name === 'clients' ? clients : Reflect.get(target, name, receiver)),
    }),
    calls,
  };
}

async function refusal(promise: Promise<unknown>): Promise<string> {
  return promise.then(
    () => expect.fail('the registration must be refused'),
    (err: Error) => err.message,
  );
}

describe.each([
  ['memory', () => memoryStorage() as Storage],
  ['SQLite', () => sqlite as Storage],
])('registerClient on %s storage', (_name, storage) => {
  it('refuses grant types the library does not implement', async () => {
    for (const grantType of ['password', 'refresh_token', 'urn:ietf:params:oauth:grant-type:jwt-bearer']) {
      expect(await refusal(registerClient(storage(), { ...base, grantType: grantType as never }))).toBe(
        `openid-oauth-bridge: grantType "${grantType}" is not supported: use 'authorization_code' (the default), 'device_code', 'client_credentials' or 'implicit'`,
      );
    }
  });

  it('keeps the resources a client may use, and refuses a relative one, one with a fragment, or not a list', async () => {
    const resources = ['https://api.example.com/mcp', 'https://api.example.com'];
    const store = storage();
    const issued = await registerClient(store, { ...base, resources });
    expect((await store.clients.find(issued.clientId))?.resources).toEqual(resources);
    const narrowed = await updateClient(store, issued.clientId, { resources: [resources[0]!] });
    expect(narrowed.resources).toEqual([resources[0]]);
    for (const bad of [['/mcp'], ['https://api.example.com/#x'], 'https://api.example.com']) {
      expect(await refusal(registerClient(storage(), { ...base, resources: bad as never }))).toContain(
        'resources must list at most 20 resource URIs, each absolute and without a fragment',
      );
    }
  });

  it('refuses an empty scope list, an empty scope and a scope with a space', async () => {
    expect(await refusal(registerClient(storage(), { ...base, scopes: [] }))).toBe(
      "openid-oauth-bridge: scopes must list at least one scope (got []), e.g. ['realms']",
    );
    expect(await refusal(registerClient(storage(), { ...base, scopes: [''] }))).toMatch(
      /^openid-oauth-bridge: scopes: "" is not a scope \(RFC 6749 3\.3/,
    );
    expect(await refusal(registerClient(storage(), { ...base, scopes: ['realms profile'] }))).toContain(
      'scopes: "realms profile" is not a scope (RFC 6749 3.3: printable ASCII without spaces, quotes or backslashes; list each scope on its own)',
    );
  });

  it("refuses a scope the server does not offer, and defaults to the server's scopes", async () => {
    const offered = { offeredScopes: ['realms', 'profile'] };
    expect(await refusal(registerClient(storage(), { ...base, scopes: ['admin'] }, offered))).toBe(
      `openid-oauth-bridge: scopes: "admin" is not a scope the server offers (realms, profile); add it to the server's scopes option first`,
    );
    const s = storage();
    const { applicationName, redirectUri } = base;
    const { clientId } = await registerClient(s, { applicationName, redirectUri }, offered);
    expect((await s.clients.find(clientId))!.scopes).toEqual(['realms', 'profile']);
  });

  it('refuses plain http except on loopback (RFC 8252), fragments and wildcards', async () => {
    expect(
      await refusal(registerClient(storage(), { ...base, redirectUri: 'http://printer.example/cb' })),
    ).toBe(
      'openid-oauth-bridge: redirectUri "http://printer.example/cb" must use https; plain http is allowed only on a loopback address such as http://127.0.0.1:8080/cb (RFC 8252 7.3)',
    );
    expect(
      await refusal(registerClient(storage(), { ...base, redirectUri: 'https://printer.example/cb#x' })),
    ).toBe(
      'openid-oauth-bridge: redirectUri "https://printer.example/cb#x" must not contain a fragment (RFC 6749 3.1.2)',
    );
    expect(
      await refusal(registerClient(storage(), { ...base, redirectUri: 'https://*.printer.example/cb' })),
    ).toBe(
      'openid-oauth-bridge: redirectUri "https://*.printer.example/cb" must not contain a wildcard: register the exact URI the client redirects to',
    );
    expect(await refusal(registerClient(storage(), { ...base, redirectUri: 'printer.example/cb' }))).toBe(
      'openid-oauth-bridge: redirectUri "printer.example/cb" is not an absolute URL',
    );
    for (const loopback of ['http://127.0.0.1:8080/cb', 'http://[::1]:8080/cb', 'http://localhost:8080/cb']) {
      await expect(registerClient(storage(), { ...base, redirectUri: loopback })).resolves.toBeTruthy();
    }
  });

  it('says so when the client_id is taken (was "UNIQUE constraint failed" on SQL)', async () => {
    const s = storage();
    const clientId = `fixed-${Math.random().toString(36).slice(2)}`;
    await registerClient(s, { ...base, clientId });
    const error = await registerClient(s, { ...base, clientId }).then(
      () => expect.fail('a taken id must be refused'),
      (err: unknown) => err,
    );
    expect(error).toBeInstanceOf(ClientIdTakenError);
    expect(error).toMatchObject({ code: 'CLIENT_ID_TAKEN', clientId });
    expect((error as Error).message).toBe(
      `openid-oauth-bridge: a client with client_id "${clientId}" is already registered; choose another clientId, leave it out for a random one, or change the existing client with updateClient (CLI: clients update)`,
    );
  });

  it('tells a taken id by the insert alone: no read before it, one after its refusal', async () => {
    const { storage: s, calls } = counted(storage());
    const clientId = `fixed-${Math.random().toString(36).slice(2)}`;
    await registerClient(s, { ...base, clientId });
    expect(calls).toEqual(['create']); // a free id: the insert, nothing read
    calls.length = 0;
    await expect(registerClient(s, { ...base, clientId })).rejects.toBeInstanceOf(ClientIdTakenError);
    expect(calls).toEqual(['create', 'find']); // refused, and the client found says why
  });

  it('refuses PKCE on an implicit client with one message, registering or updating', async () => {
    const s = storage();
    const registering = await refusal(
      registerClient(s, { ...base, grantType: 'implicit', requirePkce: true, scopes: ['realms'] }),
    );
    const { clientId } = await registerClient(s, { ...base, grantType: 'implicit' });
    const updating = await refusal(updateClient(s, clientId, { requirePkce: true }));
    expect(registering).toBe(
      'openid-oauth-bridge: requirePkce applies to authorization_code clients only (PKCE protects the code)',
    );
    expect(updating).toBe(registering);
  });

  it('updateClient changes name, redirect URI, scopes and PKCE in place, with the same checks', async () => {
    const s = storage();
    const { clientId, clientSecret } = await registerClient(s, { ...base, scopes: ['realms', 'profile'] });
    const updated = await updateClient(s, clientId, {
      applicationName: 'Printer 2',
      redirectUri: 'https://printer2.example/cb',
      scopes: ['realms'],
      requirePkce: true,
    });
    expect(updated).toMatchObject({
      clientId,
      applicationName: 'Printer 2',
      redirectUri: 'https://printer2.example/cb',
      scopes: ['realms'],
      requirePkce: true,
    });
    expect(clientSecret).toBeTruthy();
    expect(await refusal(updateClient(s, clientId, { redirectUri: 'http://printer.example/cb' }))).toContain(
      'must use https',
    );
    expect(await refusal(updateClient(s, clientId, { scopes: [] }))).toContain(
      'scopes must list at least one scope',
    );
    expect(await refusal(updateClient(s, 'nobody', { scopes: ['realms'] }))).toBe(
      'openid-oauth-bridge: no client has client_id "nobody"',
    );
  });

  it('updateClient changes the default scopes alone, within the scopes the client keeps', async () => {
    const s = storage();
    const { clientId } = await registerClient(s, { ...base, scopes: ['realms', 'profile'] });
    expect(await updateClient(s, clientId, { defaultScopes: ['realms'] })).toMatchObject({
      scopes: ['realms', 'profile'],
      defaultScopes: ['realms'],
    });
    expect(await refusal(updateClient(s, clientId, { defaultScopes: ['stats'] }))).toContain(
      "defaultScopes: stats is not one of the client's scopes",
    );
    // Narrower scopes that keep none of the defaults: all of the new scopes are the default.
    const narrowed = await updateClient(s, clientId, { scopes: ['profile'] });
    expect(narrowed.scopes).toEqual(['profile']);
    expect(narrowed.defaultScopes ?? null).toBeNull();
  });
});
