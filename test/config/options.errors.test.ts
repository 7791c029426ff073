/**
 * Configuration mistakes fail when the server is built, with one message that names the option,
 * the value given and what to do; an unknown option is an error with a "did you mean".
 */
import { describe, expect, it } from 'vitest';
import {
  createAuthorizationServer,
  memoryStorage,
  type AuthorizationServerOptions,
} from '../../src/index.js';

const valid = (): AuthorizationServerOptions => ({
  baseUrl: 'https://auth.example.com',
  storage: memoryStorage(),
  providers: [{ name: 'Example ID', identifier: 'https://id.example.com/' }],
  session: { secret: 'a session secret of at least 32 characters' },
});

/** The message `createAuthorizationServer` throws for `options`. */
function messageFor(options: unknown): string {
  try {
    createAuthorizationServer(options as AuthorizationServerOptions);
  } catch (err) {
    expect(err).toBeInstanceOf(TypeError);
    return (err as Error).message;
  }
  return expect.fail('the options must be refused');
}

describe('createAuthorizationServer refuses, naming the option, the value and what to do', () => {
  it('a baseUrl that is not an absolute URL (was: "Invalid URL")', () => {
    expect(messageFor({ ...valid(), baseUrl: 'auth.example.com' })).toBe(
      'openid-oauth-bridge: invalid options\n' +
        '  baseUrl: must be an absolute http(s) URL (got "auth.example.com"); set it to the absolute URL where the routers are mounted, without query or fragment, e.g. https://auth.example.com',
    );
  });

  it('a resource asking for JWT access tokens without OpenID Connect keys to sign them', () => {
    const resources = [{ resource: 'https://api.example.com/', accessTokenFormat: 'jwt' as const }];
    expect(messageFor({ ...valid(), resources })).toBe(
      'openid-oauth-bridge: invalid options\n' +
        "  resources.0: accessTokenFormat 'jwt' needs the OpenID Connect signing keys: configure oidc (oidc.keySecret or oidc.keys), or leave accessTokenFormat out for opaque tokens",
    );
    expect(messageFor({ ...valid(), resources: [{ ...resources[0], accessTokenTtl: 0 }] })).toContain(
      'resources.0.accessTokenTtl',
    );
  });

  it('a baseUrl with a query', () => {
    expect(messageFor({ ...valid(), baseUrl: 'https://auth.example.com/?x=1' })).toContain(
      'baseUrl: must not contain a query, fragment or userinfo (got "https://auth.example.com/?x=1")',
    );
  });

  it('a missing baseUrl', () => {
    expect(messageFor({ ...valid(), baseUrl: undefined })).toContain(
      'baseUrl: is required (got nothing); set it',
    );
  });

  it('a missing session secret (was: "session.secret: Invalid input"), without showing a secret', () => {
    expect(messageFor({ ...valid(), session: {} })).toBe(
      'openid-oauth-bridge: invalid options\n' +
        '  session.secret: is required (got nothing); set it to at least 32 random characters kept out of the code, e.g. process.env.SESSION_SECRET; make one with: node -e "console.log(crypto.randomBytes(32).toString(\'base64url\'))" (or pass your own express-session as session.middleware)',
    );
    const short = messageFor({ ...valid(), session: { secret: 'hunter2' } });
    expect(short).toContain('session.secret: must be at least 32 characters (got a string of 7 characters)');
    expect(short).not.toContain('hunter2');
    // process.env.SESSION_SECRET unset: the usual way to get here.
    expect(messageFor({ ...valid(), session: { secret: process.env.SURELY_UNSET_SECRET } })).toContain(
      'session.secret: is required (got nothing)',
    );
  });

  it('no session at all', () => {
    expect(messageFor({ ...valid(), session: undefined })).toContain(
      'session: is required (got nothing); pass { secret: process.env.SESSION_SECRET }',
    );
  });

  it('a misspelled option, with a suggestion (was: silently ignored)', () => {
    expect(messageFor({ ...valid(), tokens: { acessTokenTtl: 60 } })).toBe(
      'openid-oauth-bridge: invalid options\n' +
        '  tokens.acessTokenTtl: unknown option (got 60); did you mean tokens.accessTokenTtl?',
    );
    expect(messageFor({ ...valid(), scope: { realms: 'Realms' } })).toContain(
      'scope: unknown option (got an object); did you mean scopes?',
    );
    expect(messageFor({ ...valid(), providers: [{ name: 'X', identifer: 'https://x.example/' }] })).toContain(
      'providers.0.identifer: unknown option (got "https://x.example/"); did you mean providers.0.identifier?',
    );
    expect(messageFor({ ...valid(), rateLimit: { maxFailures: 3 } })).toContain(
      'rateLimit.maxFailures: unknown option',
    );
  });

  it('an unknown option that resembles none lists the known ones', () => {
    expect(messageFor({ ...valid(), database: 'x' })).toContain(
      'database: unknown option (got "x"); the options are baseUrl, storage, providers, login, tokens, device, oidc, clientMetadataDocuments, session, scopes, resources, rateLimit, dynamicRegistration, developerApps, usage, accounts, authenticatedAccount, requireStateForImplicit, profile, pages, clock, logger, onError',
    );
  });

  it('no providers, and storage that is not a storage adapter', () => {
    expect(messageFor({ ...valid(), providers: [] })).toContain(
      'providers: configure at least one OpenID provider (got an array of 0); list the OpenID 2.0 providers',
    );
    expect(messageFor({ ...valid(), storage: {} })).toContain(
      'storage: must implement the storage contract; missing: ephemeral.get',
    );
  });

  it('developer page limits: a scope the server does not offer, a limit out of range, a misspelt one', () => {
    expect(
      messageFor({ ...valid(), scopes: { realms: 'Realms' }, developerApps: { scopes: ['admin'] } }),
    ).toContain('developerApps.scopes: "admin" is not a scope the server offers (realms)');
    expect(messageFor({ ...valid(), developerApps: { maxAppsPerMember: 0 } })).toContain(
      'developerApps.maxAppsPerMember',
    );
    expect(messageFor({ ...valid(), developerApps: { recentLoginMinutes: 61 } })).toContain(
      'developerApps.recentLoginMinutes',
    );
    expect(messageFor({ ...valid(), developerApps: { requireAproval: true } })).toContain(
      'developerApps.requireAproval: unknown option (got true); did you mean developerApps.requireApproval?',
    );
  });

  it('dynamic registration: a misspelt option, a short initial access token, an unused time out of range', () => {
    expect(messageFor({ ...valid(), dynamicRegistration: { rateLimt: false } })).toContain(
      'dynamicRegistration.rateLimt: unknown option (got false); did you mean dynamicRegistration.rateLimit?',
    );
    // An initial access token is a secret: its value is never shown.
    const short = messageFor({ ...valid(), dynamicRegistration: { initialAccessTokens: ['short-secret'] } });
    expect(short).toContain('dynamicRegistration.initialAccessTokens.0: must be at least 16 characters');
    expect(short).not.toContain('short-secret');
    expect(messageFor({ ...valid(), dynamicRegistration: 'yes' })).toContain(
      'pass true, false (the default), or { initialAccessTokens, scopes, unusedTtl, rateLimit }',
    );
    expect(messageFor({ ...valid(), dynamicRegistration: { unusedTtl: 10 } })).toContain(
      'dynamicRegistration.unusedTtl',
    );
    expect(createAuthorizationServer(valid()).options.dynamicRegistration).toBe(false);
  });

  it('no options object at all', () => {
    expect(messageFor(undefined)).toContain('createAuthorizationServer needs an options object');
  });

  it('accepts the valid options, with requireRedirectUriOnRefresh off by default', () => {
    expect(createAuthorizationServer(valid()).options.tokens.requireRedirectUriOnRefresh).toBe(false);
  });
});
