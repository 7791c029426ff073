/**
 * The developer page for members the host signed in itself (`authenticatedAccount`): their
 * teams are the host's word, and a secret needs the host's sign-in to be recent (`authTime`),
 * since the library cannot send them to sign in again.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../support/app.js';
import { answerConsent } from '../../support/flow.js';
import {
  WEB_APP,
  createApp,
  credentialsOf,
  mountDeveloperPage,
  newBrowser,
} from '../../support/developers.js';

let t: TestApp;
afterEach(() => t?.close());

/** Who the host says is signed in: `x-user`, their teams `x-teams`, signed in `x-signed-in-ago` ms ago. */
async function hostApp() {
  t = await createTestApp({
    scopes: { realms: 'See your realms' },
    authenticatedAccount: (req) => {
      const user = req.get('x-user');
      if (!user) return undefined;
      const ago = Number(req.get('x-signed-in-ago') ?? '0');
      return {
        accountId: user,
        displayName: user,
        authTime: Date.now() - ago,
        teams: (req.get('x-teams') ?? '').split(',').filter(Boolean),
      };
    },
  });
  mountDeveloperPage(t);
}

describe('members the host signed in', () => {
  it('create a team-gated application for their own team; a non-member of it is refused', async () => {
    await hostApp();
    t.agent.set('x-user', 'maker').set('x-teams', 'builders,artists');
    const form = await t.agent.get('/developers/new');
    expect(form.text).toContain('~builders');
    expect(form.text).toContain('~artists');
    const { res } = await createApp(t, { ...WEB_APP, teams: ['builders'] });
    expect(res.status).toBe(200);
    const { clientId } = credentialsOf(res.text);
    expect(await t.storage.clients.find(clientId)).toMatchObject({
      allowedTeams: ['builders'],
      ownerId: 'maker',
    });

    const query = {
      response_type: 'code',
      client_id: clientId,
      redirect_uri: WEB_APP.redirect_uri,
      scope: 'realms',
      state: 's',
    };
    const member = newBrowser(t).set('x-user', 'bea').set('x-teams', 'builders');
    const consent = await member.get('/oauth/authorize').query(query);
    expect(consent.status).toBe(200);
    expect(consent.text).toContain('Made by <strong><bdi>maker</bdi></strong>');
    expect((await answerConsent({ ...t, agent: member }, consent.text, 'allow')).status).toBe(303);
    const outsider = newBrowser(t).set('x-user', 'otto').set('x-teams', 'artists');
    const refused = await outsider.get('/oauth/authorize').query(query);
    expect(refused.status).toBe(403);
    expect(refused.text).toContain('only for members of ~builders');
  });

  it('need a recent sign-in at the host to make a secret, and are told to sign in again there', async () => {
    await hostApp();
    t.agent.set('x-user', 'maker').set('x-signed-in-ago', String(10 * 60_000));
    const { res } = await createApp(t);
    expect(res.status).toBe(403);
    expect(res.text).toContain('Sign in again on this site');
    expect((await t.storage.clients.list!()).filter((c) => c.ownerId === 'maker')).toEqual([]);
    // A public application has no secret: no recent sign-in needed.
    const { res: publicApp } = await createApp(t, { ...WEB_APP, client_type: 'public' });
    expect(publicApp.status).toBe(200);
    t.agent.set('x-signed-in-ago', '1000');
    expect((await createApp(t)).res.status).toBe(200);
  });
});
