import type { Express, Request } from 'express';
import session from 'express-session';
import passport from 'passport';
import { Strategy } from 'passport-strategy';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CODE_REDIRECT, createTestApp, type TestApp } from '../support/app.js';
import { authorizeWithLogin, obtainCode, parseForms, pathOf } from '../support/flow.js';

/** The host's own login: any request to /host/login logs in as "host-user". */
class HostStrategy extends Strategy {
  name = 'host';
  override authenticate(this: Strategy & { success(user: unknown): void }, _req: Request): void {
    this.success({ id: 'host-user' });
  }
}

const hostStore = new session.MemoryStore();
/** Every session the host's store was asked to save, as JSON. */
const hostWrites: string[] = [];
const hostSet = hostStore.set.bind(hostStore);
hostStore.set = (sid, data, callback) => {
  hostWrites.push(JSON.stringify(data));
  hostSet(sid, data, callback);
};

/** An existing app: its own session, the global passport with its own strategy and routes. */
function hostSetup(app: Express): void {
  passport.use(new HostStrategy());
  passport.serializeUser((user, done) => done(null, (user as { id: string }).id));
  passport.deserializeUser((id: string, done) => done(null, { id }));
  app.use(session({ secret: 'host secret', resave: false, saveUninitialized: false, store: hostStore }));
  app.use(passport.initialize());
  app.use(passport.session());
  app.get('/host/login', passport.authenticate('host'), (req, res) => {
    (req.session as unknown as { views: number }).views = 1;
    res.json({ user: req.user });
  });
  app.get('/host/me', (req, res) => {
    const data = req.session as unknown as { views?: number };
    data.views = (data.views ?? 0) + 1;
    res.json({ user: req.user ?? null, views: data.views, authenticated: req.isAuthenticated() });
  });
}

let t: TestApp;
beforeEach(async () => {
  hostWrites.length = 0;
  t = await createTestApp({}, hostSetup);
});
afterEach(() => t.close());

describe('mounted in an app with its own session and passport', () => {
  it('runs the whole flow without disturbing the host session, cookie or login', async () => {
    const login = await t.agent.get('/host/login');
    expect(login.body).toEqual({ user: { id: 'host-user' } });

    const { code } = await obtainCode(t);
    const tokens = await t.agent.post('/oauth/token').type('form').send({
      grant_type: 'authorization_code',
      code,
      client_id: t.codeClient.clientId,
      client_secret: t.codeClient.clientSecret,
      redirect_uri: 'https://client.example/cb',
    });
    expect(tokens.status).toBe(200);

    const me = await t.agent.get('/host/me');
    expect(me.body).toEqual({ user: { id: 'host-user' }, views: 2, authenticated: true });

    // The library kept its state in its own cookie and store, not in the host's session.
    const hostSessions = await new Promise<Record<string, unknown>>((resolve, reject) =>
      hostStore.all((err, all) => (err ? reject(err) : resolve((all ?? {}) as Record<string, unknown>))),
    );
    expect(Object.keys(hostSessions)).toHaveLength(1);
    expect(JSON.stringify(hostSessions)).not.toContain('openidOAuthBridge');
    const cookies = (t.agent as unknown as { jar: { getCookies(o: object): { name: string }[] } }).jar
      .getCookies({ domain: '127.0.0.1', path: '/', secure: false, script: false })
      .map((c) => c.name)
      .sort();
    expect(cookies).toEqual(['connect.sid', 'openid_oauth_bridge.sid']);
    // Not even for a moment: the login strategy's state went to the library's session too.
    expect(hostWrites.length).toBeGreaterThan(0);
    for (const write of hostWrites) expect(write).not.toContain('openidOAuthBridge');
  });

  it("signs out of the library's session and leaves the host's signed in", async () => {
    await t.agent.get('/host/login');
    const consent = await authorizeWithLogin(t, {
      response_type: 'code',
      client_id: t.codeClient.clientId,
      redirect_uri: CODE_REDIRECT,
      state: 's',
    });
    const switchAccount = parseForms(consent.text).find((form) => form.action.endsWith('/oauth/logout'))!;
    const out = await t.agent
      .post(pathOf(switchAccount.action))
      .type('form')
      .set('Origin', t.baseUrl)
      .send(switchAccount.fields);
    expect(out.status).toBe(303);
    const resumed = await t.agent.get('/oauth/authorize/resume');
    expect(resumed.text).not.toContain('Signed in as');
    const me = await t.agent.get('/host/me');
    expect(me.body).toEqual({ user: { id: 'host-user' }, views: 2, authenticated: true });
    for (const write of hostWrites) expect(write).not.toContain('openidOAuthBridge');
  });
});
