/**
 * Issue 20: logins linked to the host's own accounts (`accounts`), and the host's own login
 * reused (`authenticatedAccount`). Tokens, consents, events and `requireBearer` carry the host's
 * account id.
 */
import express from 'express';
import session from 'express-session';
import { afterEach, describe, expect, it } from 'vitest';
import type { ServerEvent, VerifiedLogin } from '../../../src/index.js';
import { startDevelopmentProvider } from '../../../src/testing/index.js';
import { createTestApp, recordingLogger, redirectParams, type TestApp } from '../../support/app.js';
import { answerConsent, exchangeCode, parseForms, pathOf, signInAtProvider } from '../../support/flow.js';

let t: TestApp;
let second: Awaited<ReturnType<typeof startDevelopmentProvider>> | undefined;
afterEach(async () => {
  await t.close();
  await second?.close();
  second = undefined;
});

const codeQuery = {
  response_type: 'code',
  client_id: 'code-client',
  redirect_uri: 'https://client.example/cb',
  state: 'xyz',
};

/** Logs in at the provider of that name (its selection-page link) for a new request. */
async function logInAt(providerName: string, user: string) {
  const selection = await t.agent.get('/oauth/authorize').query(codeQuery);
  expect(selection.status).toBe(200);
  const link = new RegExp(`<a href="([^"]+)">${providerName}</a>`).exec(selection.text)?.[1];
  expect(link).toBeDefined();
  const toProvider = await t.agent.get(pathOf(link!.replaceAll('&amp;', '&')));
  expect(toProvider.status).toBe(302);
  const callback = await signInAtProvider(toProvider.headers.location!, user);
  return t.agent.get(pathOf(callback));
}

/** Follows the login's 303 to the consent page (or the redirect to the client). */
async function resumed(callback: { status: number; headers: Record<string, string> }) {
  expect(callback.status).toBe(303);
  return t.agent.get(pathOf(new URL(callback.headers.location!, t.baseUrl).href));
}

async function tokenFrom(answer: { status: number; text: string; headers: Record<string, string> }) {
  const done = answer.status === 200 ? await answerConsent(t, answer.text, 'allow') : answer;
  const { code } = redirectParams(done.headers.location!);
  const tokens = await exchangeCode(t, code!);
  expect(tokens.status).toBe(200);
  return tokens.body as { access_token: string };
}

const realmsOf = async (token: string) => t.agent.get('/v1/realms').set('Authorization', `Bearer ${token}`);

async function signOut() {
  const page = await t.agent.get('/oauth/applications');
  const form = parseForms(page.text).find((f) => f.action.endsWith('/oauth/logout'))!;
  const out = await t.agent
    .post('/oauth/logout')
    .set('Sec-Fetch-Site', 'same-origin')
    .type('form')
    .send(form.fields);
  expect(out.status).toBe(303);
}

describe('accounts: every verified login mapped to the host account', () => {
  it('links two providers to one account: one consent, one list, one revocation for both', async () => {
    second = await startDevelopmentProvider();
    const seen: VerifiedLogin[] = [];
    const events: ServerEvent[] = [];
    t = await createTestApp((_baseUrl, first) => ({
      providers: [
        { name: 'First ID', identifier: first },
        { name: 'Second ID', identifier: second!.identifier },
      ],
      accounts: (login) => {
        seen.push(login);
        return { accountId: 'acct-42', displayName: 'Alice Liddell' };
      },
    }));
    t.server.events.on('*', (event) => void events.push(event));

    const consent = await resumed(await logInAt('First ID', 'alice'));
    expect(consent.status).toBe(200);
    expect(consent.text).toContain('Signed in as Alice Liddell at First ID');
    const first = await tokenFrom(consent);
    expect((await realmsOf(first.access_token)).body).toEqual({ realms: ['realm-of-acct-42'] });

    // The same person at the other provider: the same account, which already trusts the client.
    await signOut();
    const again = await resumed(await logInAt('Second ID', 'alice'));
    expect(again.status).toBe(302);
    const secondTokens = await tokenFrom(again);
    expect((await realmsOf(secondTokens.access_token)).body).toEqual({ realms: ['realm-of-acct-42'] });

    expect(seen.map((login) => login.provider)).toEqual(['First ID', 'Second ID']);
    expect(seen[0]).toMatchObject({
      identifier: expect.stringContaining('alice'),
      accountKey: seen[0]!.identifier,
      attributes: {},
      userId: expect.any(String),
    });
    expect(seen[0]!.userId).not.toBe(seen[1]!.userId);
    const logins = events.filter((e) => e.type === 'login.succeeded');
    expect(logins.map((e) => e.userId)).toEqual(['acct-42', 'acct-42']);

    // One list for the account, and one revocation ends the tokens of both logins.
    const page = await t.agent.get('/oauth/applications');
    expect(page.text.match(/<h2>Photo Printer<\/h2>/g)).toHaveLength(1);
    expect(page.text).toContain('Signed in as Alice Liddell');
    const revoke = parseForms(page.text).find((f) => f.action.endsWith('/revoke'))!;
    const revoked = await t.agent
      .post('/oauth/applications/revoke')
      .set('Sec-Fetch-Site', 'same-origin')
      .type('form')
      .send(revoke.fields);
    expect(revoked.status).toBe(303);
    expect((await realmsOf(first.access_token)).status).toBe(401);
    expect((await realmsOf(secondTokens.access_token)).status).toBe(401);
  });

  it('refuses a login with the host message: no session user, no grant', async () => {
    t = await createTestApp({ accounts: () => ({ refuse: 'This account is suspended <for now>.' }) });
    const callback = await logInAt('Development provider', 'mallory');
    expect(callback.status).toBe(400);
    expect(callback.text).toContain('This account is suspended &lt;for now&gt;.');
    expect(callback.text).toContain('/oauth/authorize/resume');
    const page = await t.agent.get('/oauth/applications');
    expect(page.text).not.toContain('Signed in as');
    expect(await t.storage.grants.list({ clientId: 'code-client' })).toEqual([]);
  });
});

describe('authenticatedAccount: the host login reused', () => {
  it('asks for consent once, with no second login, and issues tokens to the host account', async () => {
    let hostUser: { id: string; name: string } | undefined;
    t = await createTestApp(
      {
        authenticatedAccount: (req) => {
          const user = (req as express.Request & { hostUser?: { id: string; name: string } }).hostUser;
          return user ? { accountId: user.id, displayName: user.name } : undefined;
        },
      },
      (app) =>
        app.use((req, _res, next) => {
          (req as express.Request & { hostUser?: unknown }).hostUser = hostUser;
          next();
        }),
    );
    hostUser = { id: 'host-7', name: 'Bob Host' };

    const consent = await t.agent.get('/oauth/authorize').query(codeQuery);
    expect(consent.status).toBe(200);
    expect(consent.text).toContain('Signed in as Bob Host');
    expect(consent.text).not.toContain('Sign in as someone else');
    const tokens = await tokenFrom(consent);
    expect((await realmsOf(tokens.access_token)).body).toEqual({ realms: ['realm-of-host-7'] });

    // Consent is remembered for the account: the next request goes straight back to the client.
    const next = await t.agent.get('/oauth/authorize').query(codeQuery);
    expect(next.status).toBe(302);
    expect(redirectParams(next.headers.location!).code).toBeDefined();

    // Another host user in the same browser is asked again, and never gets the first one's code.
    hostUser = { id: 'host-8', name: 'Carol Host' };
    const other = await t.agent.get('/oauth/authorize').query(codeQuery);
    expect(other.status).toBe(200);
    expect(other.text).toContain('Signed in as Carol Host');
  });

  it('refuses a consent form answered after the host account changed', async () => {
    let hostUser: string | undefined = 'host-7';
    t = await createTestApp({
      authenticatedAccount: () => (hostUser ? { accountId: hostUser } : undefined),
    });
    const consent = await t.agent.get('/oauth/authorize').query(codeQuery);
    expect(consent.status).toBe(200);
    hostUser = 'host-8';
    const answer = await answerConsent(t, consent.text, 'allow');
    expect(answer.status).toBe(400);
    expect(await t.storage.grants.list({ clientId: 'code-client' })).toEqual([]);
  });
});

describe("authenticatedAccount and the host app's own express-session (issue 29)", () => {
  const hostSession = () =>
    session({
      name: 'host.sid',
      secret: 'the host app session secret, long enough',
      resave: false,
      saveUninitialized: false,
    });

  it("reads the host's req.session, mounted before the routers, while the library keeps its own", async () => {
    t = await createTestApp(
      {
        authenticatedAccount: (req) => {
          const id = (req.session as { hostUserId?: string } | undefined)?.hostUserId;
          return id ? { accountId: id, displayName: `Host user ${id}` } : undefined;
        },
      },
      (app) => {
        app.use(hostSession());
        app.post('/host/login', (req, res) => {
          (req.session as { hostUserId?: string }).hostUserId = 'host-42';
          res.sendStatus(204);
        });
      },
    );
    expect((await t.agent.post('/host/login')).status).toBe(204);
    const consent = await t.agent.get('/oauth/authorize').query(codeQuery);
    expect(consent.status).toBe(200);
    expect(consent.text).toContain('Signed in as Host user host-42');
  });

  it('says once, in the log, when the hook finds no account and no session of the app ran', async () => {
    const logger = recordingLogger();
    t = await createTestApp({
      logger,
      authenticatedAccount: (req) => {
        const id = (req.session as { hostUserId?: string } | undefined)?.hostUserId;
        return id ? { accountId: id } : undefined;
      },
    });
    for (let i = 0; i < 2; i++)
      expect((await t.agent.get('/oauth/authorize').query(codeQuery)).status).toBe(200);
    const said = logger.lines.filter((line) => line.message.includes('mount your express-session before'));
    expect(said).toHaveLength(1);
  });
});
