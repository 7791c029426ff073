import { afterEach, describe, expect, it } from 'vitest';
import { html } from '../../src/pages/html.js';
import { createTestApp, IMPLICIT_REDIRECT, redirectParams, type TestApp } from '../support/app.js';
import { answerConsent, authorizeWithLogin } from '../support/flow.js';

let t: TestApp;
afterEach(() => t.close());

describe('pages a host replaces', () => {
  it('renders the host consent and selection pages with typed data, and the flow still completes', async () => {
    t = await createTestApp({
      scopes: { realms: 'Read your realms' },
      pages: {
        selection: (data) =>
          html`<p>Custom selection for ${data.applicationName}</p>
            ${data.providers.map((p) => html`<a href="${p.loginUrl}">${p.name}</a>`)}`.value,
        consent: (data) =>
          html`<h2>
              Custom consent: ${data.applicationName} wants
              ${data.scopes.map((s) => html`[${s.name}: ${s.description}]`)}
            </h2>
            <form method="post" action="${data.action}">
              <input type="hidden" name="transaction" value="${data.fields.transaction}" />
              <input type="hidden" name="csrf" value="${data.fields.csrf}" />
            </form>`.value,
      },
    });
    const selection = await t.agent.get('/oauth/authorize').query({
      response_type: 'token',
      client_id: 'implicit-client',
      redirect_uri: IMPLICIT_REDIRECT,
      state: 's',
    });
    expect(selection.text).toContain('Custom selection for Single Page App');

    const consent = await authorizeWithLogin(t, {
      response_type: 'token',
      client_id: 'implicit-client',
      redirect_uri: IMPLICIT_REDIRECT,
      state: 's',
    });
    expect(consent.text.replace(/\s+/g, ' ')).toContain(
      'Custom consent: Single Page App wants [realms: Read your realms]',
    );
    const done = await answerConsent(t, consent.text, 'allow');
    expect(redirectParams(done.headers.location!).access_token).toBeTruthy();
  });

  it('lets the operator drop the state requirement of the implicit grant', async () => {
    t = await createTestApp({ requireStateForImplicit: false });
    const res = await t.agent
      .get('/oauth/authorize')
      .query({ response_type: 'token', client_id: 'implicit-client', redirect_uri: IMPLICIT_REDIRECT });
    expect(res.status).toBe(200);
    expect(res.text).toContain('Sign in to continue to Single Page App');
  });
});
