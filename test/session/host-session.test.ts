import express from 'express';
import session from 'express-session';
import { afterEach, describe, expect, it } from 'vitest';
import { LIBRARY_STATE_KEY } from '../../src/session/state.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { answerConsent, authorizeWithLogin, parseForms } from '../support/flow.js';

/**
 * A host that already runs express-session hands its middleware in (`session.middleware`): the
 * library keeps its state under its own key in the host's session, with no cookie of its own,
 * and never touches the host's keys.
 */
let t: TestApp;
afterEach(() => t.close());

const codeQuery = {
  response_type: 'code',
  client_id: 'code-client',
  redirect_uri: 'https://client.example/cb',
  state: 'xyz',
};

async function hostApp(clock?: () => number) {
  const store = new session.MemoryStore();
  const hostSession = session({
    name: 'host.sid',
    secret: 'the host app secret',
    resave: false,
    saveUninitialized: false,
    store,
    cookie: { httpOnly: true, sameSite: 'lax' },
  });
  t = await createTestApp(
    { session: { middleware: hostSession }, ...(clock ? { clock } : {}) },
    (app: express.Express) => {
      app.use(hostSession);
      app.get('/host/remember', (req, res) => {
        (req.session as unknown as { theme: string }).theme = 'dark';
        res.json({ ok: true });
      });
      app.get('/host/theme', (req, res) => {
        res.json({ theme: (req.session as unknown as { theme?: string }).theme ?? null });
      });
    },
  );
  const sessions = () =>
    new Promise<Record<string, Record<string, unknown>>>((resolve, reject) =>
      store.all((err, all) => (err ? reject(err) : resolve((all ?? {}) as never))),
    );
  return { sessions };
}

const cookieNames = () =>
  (t.agent as unknown as { jar: { getCookies(o: object): { name: string }[] } }).jar
    .getCookies({ domain: '127.0.0.1', path: '/', secure: false, script: false })
    .map((c) => c.name)
    .sort();

describe("the host's own express-session", () => {
  it('carries the whole flow: one cookie, the host keys kept through login and logout', async () => {
    const { sessions } = await hostApp();
    await t.agent.get('/host/remember');

    const consent = await authorizeWithLogin(t, codeQuery);
    expect(consent.status).toBe(200);
    const done = await answerConsent(t, consent.text, 'allow');
    expect(done.status).toBe(303);
    expect(new URL(done.headers.location!).searchParams.get('code')).toBeTruthy();

    expect(cookieNames()).toEqual(['host.sid']);
    const stored = Object.values(await sessions());
    expect(stored).toHaveLength(1);
    expect(stored[0]!.theme).toBe('dark');
    expect(stored[0]![LIBRARY_STATE_KEY]).toMatchObject({ user: { identifier: expect.any(String) } });
    expect((await t.agent.get('/host/theme')).body).toEqual({ theme: 'dark' });

    // Sign out from the applications page: the library's state goes, the host's stays.
    const page = await t.agent.get('/oauth/applications');
    const signOut = parseForms(page.text).find((form) => form.action.endsWith('/oauth/logout'))!;
    const out = await t.agent
      .post('/oauth/logout')
      .set('Sec-Fetch-Site', 'same-origin')
      .type('form')
      .send(signOut.fields);
    expect(out.status).toBe(303);
    const after = Object.values(await sessions());
    expect(after).toHaveLength(1);
    expect(after[0]![LIBRARY_STATE_KEY]).toBeUndefined();
    expect((await t.agent.get('/host/theme')).body).toEqual({ theme: 'dark' });
  });

  it("drops the library's state past its idle timeout, and keeps the host's keys", async () => {
    let skew = 0;
    await hostApp(() => Date.now() + skew);
    await t.agent.get('/host/remember');
    const consent = await authorizeWithLogin(t, codeQuery);
    expect(consent.status).toBe(200);
    skew = 31 * 60_000; // past the default idle timeout of 30 minutes
    const later = await t.agent.get('/oauth/authorize').query(codeQuery);
    expect(later.status).toBe(200);
    expect(later.text).toContain('Development provider'); // the selection page: sign in again
    expect((await t.agent.get('/host/theme')).body).toEqual({ theme: 'dark' });
  });

  it('needs no secret of its own', async () => {
    await hostApp();
    expect(t.server.session.own).toBe(false);
  });
});
