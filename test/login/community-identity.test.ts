/**
 * Community identity (issue 32) with the fixtures of `openid-oauth-bridge/testing`: the Steam-like
 * development provider with a Steam-Web-API-like server (persona name, avatar, profile URL read at
 * login, cached, never blocking it, the key never shown), and the Launchpad-like provider with
 * the OpenID teams extension (signed memberships only; `groups`; clients only a team may use).
 */
import * as client from 'openid-client';
import supertest from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import {
  bearerOf,
  launchpad,
  registerClient,
  requireBearer,
  steam,
  updateClient,
  type AuthorizationServerOptions,
  type ServerEvent,
  type ServerEventOf,
  type VerifiedLogin,
} from '../../src/index.js';
import {
  startDevelopmentProvider,
  startSteamWebApi,
  type RunningSteamWebApi,
} from '../../src/testing/index.js';
import {
  CODE_REDIRECT,
  createTestApp,
  recordingLogger,
  redirectParams,
  type TestApp,
} from '../support/app.js';
import { typeUserCode } from '../support/device.js';
import { basicAuth, mountClientEndpoints } from '../support/endpoints.js';
import {
  answerConsent,
  authorizeWithLogin,
  deliverCallback,
  parseForm,
  pathOf,
  signInAtProvider,
} from '../support/flow.js';

const KEY = 'SECRETSTEAMKEY0123456789ABCDEF00';
const GORDON = '76561198000000042';
const ALYX = '76561198000000043';

let t: TestApp | undefined;
let op: Awaited<ReturnType<typeof startDevelopmentProvider>> | undefined;
let api: RunningSteamWebApi | undefined;
afterEach(async () => {
  await t?.close();
  await op?.close();
  await api?.close();
  t = op = api = undefined;
});

/** Everything the server said of itself in a run: its log lines and its events, as text. */
function recorder(app: TestApp, logger: ReturnType<typeof recordingLogger>) {
  const events: ServerEvent[] = [];
  app.server.events.on('*', (event) => void events.push(event));
  return { events, text: () => JSON.stringify({ log: logger.lines, events }) };
}

/** An app whose only provider is the Steam-like one, reading profiles from the Web API fixture. */
async function steamApp(
  webApi: { timeoutMs?: number; cacheSeconds?: number } = {},
  overrides: Partial<AuthorizationServerOptions> = {},
) {
  op = await startDevelopmentProvider({ shape: 'steam' });
  api ??= await startSteamWebApi({
    key: KEY,
    players: {
      [GORDON]: { personaname: 'Gordon' },
      [ALYX]: { personaname: 'Alyx', visibility: 'private' },
    },
  });
  const logger = recordingLogger();
  t = await createTestApp({
    providers: [steam({ baseUrl: op.url, webApi: { key: KEY, baseUrl: api.url, ...webApi } })],
    logger,
    ...overrides,
  });
  return { t, log: recorder(t, logger) };
}

const authorizeQuery = (clientId = 'code-client') => ({
  response_type: 'code',
  client_id: clientId,
  redirect_uri: CODE_REDIRECT,
  state: 's',
});

/**
 * Registers `clientId` for the scopes and signs `user` in through it as an openid-client app does
 * (discovery, code + PKCE), the person trusting it; resolves the configuration, tokens and secret.
 */
async function openIdSignIn(app: TestApp, clientId: string, scope: string, user: string) {
  const { clientSecret } = await registerClient(app.storage, {
    clientId,
    applicationName: `App ${clientId}`,
    redirectUri: CODE_REDIRECT,
    scopes: scope.split(' '),
  });
  const config = await client.discovery(
    new URL(app.baseUrl),
    clientId,
    undefined,
    client.ClientSecretBasic(clientSecret!),
    { execute: [client.allowInsecureRequests] },
  );
  const verifier = client.randomPKCECodeVerifier();
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: CODE_REDIRECT,
    scope,
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
  });
  // Signed in already (the consent page at once), or not yet (the selection page first).
  let res = await app.agent.get(url.pathname + url.search);
  if (res.status === 200 && !res.text.includes('name="decision"')) {
    res = await authorizeWithLogin(app, Object.fromEntries(url.searchParams), user);
  }
  if (res.status === 200) res = await answerConsent(app, res.text, 'allow');
  const tokens = await client.authorizationCodeGrant(config, new URL(res.headers.location!), {
    pkceCodeVerifier: verifier,
  });
  return { config, tokens, secret: clientSecret! };
}

describe('Steam profiles through the Web API', () => {
  it('shows the persona name and avatar on the consent and applications pages, and gives the OIDC claims', async () => {
    const { t, log } = await steamApp({}, { oidc: { keySecret: 'an-oidc-key-secret-of-at-least-32-chars' } });
    const consent = await authorizeWithLogin(t, authorizeQuery(), GORDON);
    expect(consent.status).toBe(200);
    expect(consent.text).toContain('Signed in as Gordon at Steam');
    expect(consent.text).toMatch(
      /<img class="avatar" src="https:\/\/avatars\.steamstatic\.com\/[0-9a-f]+_full\.jpg"/,
    );
    await answerConsent(t, consent.text, 'allow');
    const apps = await t.agent.get('/oauth/applications');
    expect(apps.text).toContain('Signed in as Gordon');
    expect(apps.text).toContain('class="avatar"');

    const { tokens } = await openIdSignIn(t, 'oidc-client', 'openid profile', GORDON);
    expect(tokens.claims()).toMatchObject({
      steam_id: GORDON,
      name: 'Gordon',
      picture: expect.stringMatching(/^https:\/\/avatars\.steamstatic\.com\//),
      profile: `https://steamcommunity.com/profiles/${GORDON}/`,
    });
    expect(log.text()).not.toContain(KEY);
  });

  it('a private profile: the login goes on without it, and an event says so', async () => {
    const { t, log } = await steamApp();
    const consent = await authorizeWithLogin(t, authorizeQuery(), ALYX);
    expect(consent.status).toBe(200);
    expect(consent.text).not.toContain('Alyx');
    expect(consent.text).not.toContain('class="avatar"');
    expect(log.events.find((e) => e.type === 'profile.unavailable')).toMatchObject({
      provider: 'Steam',
      source: 'Steam Web API',
      reason: 'private',
    });
  });

  it('an API that does not answer: the login finishes within about 3 s, no 5xx, no profile', async () => {
    const { t, log } = await steamApp();
    api!.delayMs = 10_000;
    const started = Date.now();
    const consent = await authorizeWithLogin(t, authorizeQuery(), GORDON);
    const took = Date.now() - started;
    expect(consent.status).toBe(200);
    expect(took).toBeLessThan(3500);
    expect(consent.text).not.toContain('Gordon');
    expect(log.events.find((e) => e.type === 'profile.unavailable')).toMatchObject({ reason: 'timeout' });
    expect(log.text()).not.toContain(KEY);
  });

  it('an API that refuses or errs: no profile, no 5xx, and the key in no log line, event or page', async () => {
    const { t, log } = await steamApp();
    for (const status of [403, 500, 429]) {
      api!.status = status;
      t.agent = supertest.agent(t.baseUrl);
      await t.server.storage.ephemeral.delete(`profile:5:Steam${GORDON}`);
      const consent = await authorizeWithLogin(t, authorizeQuery(), GORDON);
      expect(consent.status).toBe(200);
      expect(consent.text).not.toContain(KEY);
    }
    expect(log.events.filter((e) => e.type === 'profile.unavailable')).toHaveLength(3);
    expect(log.text()).not.toContain(KEY);
  });

  it('caches profiles, so a burst of logins spends one request per account; a later login refreshes it', async () => {
    let ahead = 0;
    const { t } = await steamApp({ cacheSeconds: 60 }, { clock: () => Date.now() + ahead });
    for (let i = 0; i < 5; i++) {
      t.agent = supertest.agent(t.baseUrl);
      expect((await authorizeWithLogin(t, authorizeQuery(), GORDON)).text).toContain('Gordon');
    }
    expect(api!.requests).toBe(1);
    api!.players[GORDON] = { personaname: 'Dr. Freeman' };
    ahead = 61_000;
    t.agent = supertest.agent(t.baseUrl);
    expect((await authorizeWithLogin(t, authorizeQuery(), GORDON)).text).toContain('Dr. Freeman');
    expect(api!.requests).toBe(2);
  });

  it('drops a persona name with invisible or direction characters, and does not take a missing player for a private one', async () => {
    const { t, log } = await steamApp();
    api!.players[GORDON] = { personaname: 'Admin\u202emaets' };
    const consent = await authorizeWithLogin(t, authorizeQuery(), GORDON);
    expect(consent.text).not.toContain('Admin');
    expect(consent.text).toContain('class="avatar"');

    // An answer without the player is the API failing (it answers for every SteamID64): asked
    // again after a minute, not taken for a private profile and kept an hour.
    const SOMEONE = '76561198000000044';
    api!.players[SOMEONE] = null;
    t.agent = supertest.agent(t.baseUrl);
    await authorizeWithLogin(t, authorizeQuery(), SOMEONE);
    expect(log.events.filter((e) => e.type === 'profile.unavailable').at(-1)).toMatchObject({
      reason: 'malformed',
    });
    const cached = await t.server.storage.ephemeral.get(`profile:5:Steam${SOMEONE}`, Date.now() + 61_000);
    expect(cached).toBeNull();
  });

  it('hands the profile to the accounts hook', async () => {
    const logins: VerifiedLogin[] = [];
    await steamApp(
      {},
      {
        accounts: (login) => {
          logins.push(login);
          return { accountId: `steam-${login.accountKey}` };
        },
      },
    );
    await authorizeWithLogin(t!, authorizeQuery(), GORDON);
    expect(logins[0]).toMatchObject({
      accountKey: GORDON,
      displayName: 'Gordon',
      profile: { name: 'Gordon', picture: expect.stringMatching(/^https:/) },
    });
  });
});

/** The teams of the Launchpad-like provider's users; a test may change them while it runs. */
let teams: Record<string, string[]> = {};

/** An app whose only provider is the Launchpad-like one, asking about two teams. */
async function launchpadApp(overrides: Partial<AuthorizationServerOptions> = {}) {
  teams = { alice: ['team-a', 'other-team'], bob: [] };
  op = await startDevelopmentProvider({ shape: 'launchpad', teams });
  t = await createTestApp({
    providers: [launchpad({ baseUrl: op.url, teams: ['team-a', 'team-b'] })],
    scopes: { realms: 'See your realms', profile: 'Your name' },
    ...overrides,
  });
  return t;
}

/** The `team.refused` events of `app` from now on. */
function teamRefusals(app: TestApp) {
  const events: ServerEventOf<'team.refused'>[] = [];
  app.server.events.on('team.refused', (event) => void events.push(event));
  return events;
}

describe('Launchpad teams', () => {
  it('a member of ~team-a gets groups ["team-a"], in the ID token, UserInfo, requireBearer and introspection', async () => {
    const t = await launchpadApp({ oidc: { keySecret: 'an-oidc-key-secret-of-at-least-32-chars' } });
    mountClientEndpoints(t);
    t.app.get('/v1/teams', requireBearer(t.server, { teams: true }), (_req, res) => {
      res.json({ teams: bearerOf(res).teams });
    });
    const { config, tokens, secret } = await openIdSignIn(t, 'team-site', 'openid profile realms', 'alice');
    const claims = tokens.claims()!;
    expect(claims.groups).toEqual(['team-a']);
    expect(await client.fetchUserInfo(config, tokens.access_token, claims.sub)).toMatchObject({
      groups: ['team-a'],
      preferred_username: 'alice',
    });
    const teams = await t.agent.get('/v1/teams').set('Authorization', `Bearer ${tokens.access_token}`);
    expect(teams.body).toEqual({ teams: ['team-a'] });
    const introspected = await t.agent
      .post('/oauth/introspect')
      .type('form')
      .set('Authorization', basicAuth('team-site', secret))
      .send({ token: tokens.access_token });
    expect(introspected.body).toMatchObject({ active: true, groups: ['team-a'] });
  });

  it('is_member outside openid.signed, added to a genuine assertion by an attacker, gives no teams', async () => {
    const t = await launchpadApp();
    t.app.get('/v1/teams', requireBearer(t.server, { teams: true }), (_req, res) => {
      res.json({ teams: bearerOf(res).teams });
    });
    // carol is unknown to the provider's teams: it answers no teams at all.
    const start = await t.agent.get('/oauth/authorize').query(authorizeQuery());
    const href = /<a href="([^"]+)">/.exec(start.text)![1]!.replaceAll('&amp;', '&');
    const toProvider = await t.agent.get(pathOf(href));
    const callback = new URL(await signInAtProvider(toProvider.headers.location!, 'carol'));
    expect(callback.searchParams.get('openid.signed')).not.toContain('lp.');
    callback.searchParams.set('openid.ns.lp', 'http://ns.launchpad.net/2007/openid-teams');
    callback.searchParams.set('openid.lp.is_member', 'team-a,team-b');
    let res = await deliverCallback(t.agent, pathOf(callback.href));
    expect(res.status).toBe(200);
    res = await answerConsent(t, res.text, 'allow');
    const code = redirectParams(res.headers.location!).code!;
    const token = await t.agent.post('/oauth/token').type('form').send({
      grant_type: 'authorization_code',
      code,
      redirect_uri: CODE_REDIRECT,
      client_id: t.codeClient.clientId,
      client_secret: t.codeClient.clientSecret,
    });
    const teams = await t.agent.get('/v1/teams').set('Authorization', `Bearer ${token.body.access_token}`);
    expect(teams.body).toEqual({ teams: [] });
  });

  it('a client only ~team-a may use refuses a non-member with access_denied, saying why first', async () => {
    const t = await launchpadApp();
    await registerClient(t.storage, {
      clientId: 'team-only',
      applicationName: 'Team dashboard',
      redirectUri: CODE_REDIRECT,
      scopes: ['realms'],
      allowedTeams: ['team-a'],
    });
    const refusals = teamRefusals(t);
    const refused = await authorizeWithLogin(t, authorizeQuery('team-only'), 'bob');
    expect(refused.status).toBe(403);
    expect(refused.text).toContain('Team dashboard is only for members of ~team-a');
    expect(refusals).toEqual([
      {
        type: 'team.refused',
        userId: expect.any(String),
        clientId: 'team-only',
        allowedTeams: ['team-a'],
        flow: 'authorization',
        ip: expect.stringContaining('127.0.0.1'),
        requestId: refused.headers['x-request-id'],
        at: expect.any(Number),
      },
    ]);
    const back = /<a href="([^"]+)">Return to the application<\/a>/
      .exec(refused.text)?.[1]
      ?.replaceAll('&amp;', '&');
    expect(back).toBeDefined();
    expect(redirectParams(back!)).toMatchObject({ error: 'access_denied', state: 's' });

    t.agent = supertest.agent(t.baseUrl);
    const member = await authorizeWithLogin(t, authorizeQuery('team-only'), 'alice');
    expect(member.status).toBe(200);
    expect(member.text).toContain('Do you trust Team dashboard?');
  });

  it('the gate holds for the device flow, for prompt=none (no page), and counts the teams the host gives', async () => {
    const t = await launchpadApp({
      oidc: { keySecret: 'an-oidc-key-secret-of-at-least-32-chars' },
      device: { interval: 1 },
    });
    await registerClient(t.storage, {
      clientId: 'team-cli',
      applicationName: 'Team CLI',
      grantType: 'device_code',
      public: true,
      scopes: ['realms'],
      allowedTeams: ['team-a'],
    });
    const device = await t.agent
      .post('/oauth/device_authorization')
      .type('form')
      .send({ client_id: 'team-cli' });
    // bob signs in (for another application), then types the device's code.
    await authorizeWithLogin(t, authorizeQuery(), 'bob');
    const refusals = teamRefusals(t);
    const refused = await typeUserCode(t, device.body.user_code);
    expect(refused.status).toBe(403);
    expect(refused.text).toContain('Team CLI is only for members of ~team-a');
    expect(refusals).toMatchObject([{ type: 'team.refused', clientId: 'team-cli', flow: 'device' }]);
    expect(refused.headers.location).toBeUndefined();

    await registerClient(t.storage, {
      clientId: 'team-oidc',
      applicationName: 'Team OIDC',
      redirectUri: CODE_REDIRECT,
      scopes: ['openid', 'realms'],
      allowedTeams: ['team-a'],
    });
    const none = await t.agent.get('/oauth/authorize').query({
      ...authorizeQuery('team-oidc'),
      scope: 'openid',
      prompt: 'none',
    });
    expect(none.status).toBe(302);
    expect(redirectParams(none.headers.location!)).toMatchObject({ error: 'access_denied', state: 's' });
  });

  it('checks the gate at every refresh: a gate added since, or a membership lost at a later login, ends the refresh token', async () => {
    const t = await launchpadApp();
    const { clientSecret } = await registerClient(t.storage, {
      clientId: 'dash',
      applicationName: 'Dashboard',
      redirectUri: CODE_REDIRECT,
      scopes: ['realms'],
    });
    const signIn = async (user: string) => {
      t.agent = supertest.agent(t.baseUrl);
      let res = await authorizeWithLogin(t, { ...authorizeQuery('dash'), scope: 'realms' }, user);
      if (res.status === 200) res = await answerConsent(t, res.text, 'allow');
      return redirectParams(res.headers.location!).code!;
    };
    const token = (fields: Record<string, string>) =>
      t.agent
        .post('/oauth/token')
        .type('form')
        .send({ client_id: 'dash', client_secret: clientSecret!, redirect_uri: CODE_REDIRECT, ...fields });
    const refreshTokenOf = async (user: string) =>
      (await token({ grant_type: 'authorization_code', code: await signIn(user) })).body
        .refresh_token as string;
    const refresh = (refreshToken: string) =>
      token({ grant_type: 'refresh_token', refresh_token: refreshToken });

    const bobs = await refreshTokenOf('bob');
    const alices = await refreshTokenOf('alice');
    expect((await refresh(bobs)).status).toBe(200);
    await updateClient(t.storage, 'dash', { allowedTeams: ['team-a'] });
    const refusals = teamRefusals(t);
    const refused = await refresh(bobs);
    expect(refused.status).toBe(400);
    expect(refused.body.error).toBe('invalid_grant');
    expect(refusals).toMatchObject([
      { type: 'team.refused', clientId: 'dash', allowedTeams: ['team-a'], flow: 'refresh' },
    ]);
    expect((await refresh(alices)).status).toBe(200);

    // alice leaves ~team-a: her next sign-in, to any client, says so, and her refresh token ends.
    teams.alice = [];
    t.agent = supertest.agent(t.baseUrl);
    await authorizeWithLogin(t, authorizeQuery(), 'alice');
    expect((await refresh(alices)).body.error).toBe('invalid_grant');
  });

  it('introspection gives groups only for a token granted profile, as ID tokens and UserInfo do', async () => {
    const t = await launchpadApp();
    mountClientEndpoints(t);
    let res = await authorizeWithLogin(t, { ...authorizeQuery(), scope: 'realms' }, 'alice');
    if (res.status === 200) res = await answerConsent(t, res.text, 'allow');
    const tokens = await t.agent
      .post('/oauth/token')
      .type('form')
      .send({
        grant_type: 'authorization_code',
        code: redirectParams(res.headers.location!).code!,
        redirect_uri: CODE_REDIRECT,
        client_id: t.codeClient.clientId,
        client_secret: t.codeClient.clientSecret,
      });
    const introspected = await t.agent
      .post('/oauth/introspect')
      .type('form')
      .set('Authorization', basicAuth(t.codeClient.clientId, t.codeClient.clientSecret))
      .send({ token: tokens.body.access_token });
    expect(introspected.body.active).toBe(true);
    expect(introspected.body.groups).toBeUndefined();
  });

  it("counts the teams the host's authenticatedAccount hook gives, and saves them for the refreshes", async () => {
    let hostTeams: string[] | undefined = ['team-a'];
    const t = await launchpadApp({
      authenticatedAccount: (req) =>
        req.get('x-host-user') === 'member'
          ? { accountId: 'host-member', ...(hostTeams === undefined ? {} : { teams: hostTeams }) }
          : req.get('x-host-user') === 'outsider'
            ? { accountId: 'host-outsider' }
            : undefined,
    });
    const { clientSecret } = await registerClient(t.storage, {
      clientId: 'team-only',
      applicationName: 'Team dashboard',
      redirectUri: CODE_REDIRECT,
      scopes: ['realms'],
      allowedTeams: ['team-a'],
    });
    const authorize = (who: string) =>
      t.agent.get('/oauth/authorize').query(authorizeQuery('team-only')).set('x-host-user', who);
    expect((await authorize('outsider')).status).toBe(403);
    const consent = await authorize('member');
    expect(consent.text).toContain('Do you trust Team dashboard?');
    const form = parseForm(consent.text);
    const allowed = await t.agent
      .post(pathOf(form.action))
      .type('form')
      .set('Origin', new URL(t.baseUrl).origin)
      .set('x-host-user', 'member')
      .send({ ...form.fields, decision: 'allow' });
    const token = (fields: Record<string, string>) =>
      t.agent
        .post('/oauth/token')
        .type('form')
        .send({
          client_id: 'team-only',
          client_secret: clientSecret!,
          redirect_uri: CODE_REDIRECT,
          ...fields,
        });
    const tokens = await token({
      grant_type: 'authorization_code',
      code: redirectParams(allowed.headers.location!).code!,
    });
    const refresh = () => token({ grant_type: 'refresh_token', refresh_token: tokens.body.refresh_token });
    expect((await refresh()).status).toBe(200);
    // The host says nothing of the user's teams (or says it wrong): none count, the earlier answer
    // saved for the refreshes does not stand in for it.
    hostTeams = undefined;
    expect((await authorize('member')).status).toBe(403);
    // The host no longer counts the user a member: the next authorization says so, and the refresh ends.
    hostTeams = [];
    expect((await authorize('member')).status).toBe(403);
    expect((await refresh()).body.error).toBe('invalid_grant');
  });

  it('hands the teams to the accounts hook', async () => {
    const logins: VerifiedLogin[] = [];
    await launchpadApp({
      accounts: (login) => {
        logins.push(login);
        return { accountId: `lp-${login.accountKey}` };
      },
    });
    await authorizeWithLogin(t!, authorizeQuery(), 'alice');
    expect(logins[0]!.teams).toEqual(['team-a']);
  });
});
