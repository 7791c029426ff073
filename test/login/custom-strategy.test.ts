import type { Request } from 'express';
import { Strategy } from 'passport-strategy';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestApp, redirectParams, type TestApp } from '../support/app.js';
import { answerConsent, deliverCallback, pathOf } from '../support/flow.js';

/**
 * A stand-in for a host's own passport strategy (passport-openid, say): it redirects to an
 * "external" login first, then succeeds on the callback with the identity the library expects.
 */
class RedirectingStrategy extends Strategy {
  name = 'host-openid';
  override authenticate(
    this: Strategy & { success(u: unknown): void; redirect(url: string): void; fail(c: unknown): void },
    req: Request,
  ) {
    if (req.query.who === 'mallory') return this.fail({ message: 'Mallory may not sign in.' });
    if (typeof req.query.who === 'string') {
      return this.success({ identifier: `https://ids.example/${req.query.who}`, provider: 'Host IdP' });
    }
    this.redirect('https://login.host.example/start');
  }
}

let t: TestApp;
afterEach(() => t.close());

describe('a host-supplied passport strategy as the login', () => {
  it('runs the flow with the identity the strategy returns', async () => {
    t = await createTestApp({ login: { strategy: new RedirectingStrategy() } });
    const start = await t.agent.get('/oauth/authorize').query({
      response_type: 'code',
      client_id: 'code-client',
      redirect_uri: 'https://client.example/cb',
      opIdentifier: t.provider.identifier,
    });
    const login = await t.agent.get(pathOf(start.headers.location!));
    expect(login.status).toBe(302);
    expect(login.headers.location).toBe('https://login.host.example/start');

    const consent = await deliverCallback(t.agent, '/oauth/login/callback?who=bob');
    expect(consent.status).toBe(200);
    const done = await answerConsent(t, consent.text, 'allow');
    expect(redirectParams(done.headers.location!).code).toBeTruthy();
    const user = await t.storage.users.findOrCreate(
      { identifier: 'https://ids.example/bob', provider: 'Host IdP' },
      'new',
      0,
    );
    expect(user.id).not.toBe('new');
  });

  it('shows the strategy failure message on a page with a way to try again', async () => {
    t = await createTestApp({ login: { strategy: new RedirectingStrategy() } });
    await t.agent
      .get('/oauth/authorize')
      .query({ response_type: 'code', client_id: 'code-client', redirect_uri: 'https://client.example/cb' });
    await t.agent.get('/oauth/login').query({ openid_identifier: t.provider.identifier });
    const res = await t.agent.get('/oauth/login/callback?who=mallory');
    expect(res.status).toBe(400);
    expect(res.text).toContain('Mallory may not sign in.');
    expect(res.text).toContain('/oauth/authorize/resume');
  });

  it('never runs the strategy for a provider the operator did not configure', async () => {
    t = await createTestApp({ login: { strategy: new RedirectingStrategy() } });
    await t.agent
      .get('/oauth/authorize')
      .query({ response_type: 'code', client_id: 'code-client', redirect_uri: 'https://client.example/cb' });
    for (const query of [
      'openid_identifier=https%3A%2F%2Fevil.example%2F',
      `openid_identifier=${encodeURIComponent(t.provider.identifier)}&openid_identifier=x`,
      '',
    ]) {
      const res = await t.agent.get(`/oauth/login?${query}`);
      expect(res.status).toBe(400);
      expect(res.headers.location).toBeUndefined();
      expect(res.text).toContain('not accepted here');
    }
  });
});
