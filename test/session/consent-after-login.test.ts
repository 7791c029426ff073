/**
 * Post/redirect/get after the login: the provider's answer is consumed by the callback, which
 * sends the browser on to the resumed request; the consent page lives there, so reloading it or
 * coming back to it works.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { CODE_REDIRECT, createTestApp, type TestApp } from '../support/app.js';
import { answerConsent, parseForm, pathOf, signInAtProvider } from '../support/flow.js';

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

describe('the consent page after a login', () => {
  it('is reached by a 303 from the callback, and survives a reload', async () => {
    t = await createTestApp();
    const start = await t.agent.get('/oauth/authorize').query({
      response_type: 'code',
      client_id: t.codeClient.clientId,
      redirect_uri: CODE_REDIRECT,
      state: 's',
      opIdentifier: t.provider.identifier,
    });
    const toProvider = await t.agent.get(pathOf(start.headers.location!));
    const callback = await signInAtProvider(toProvider.headers.location!, 'alice');
    const loggedIn = await t.agent.get(pathOf(callback));
    expect(loggedIn.status).toBe(303);
    expect(loggedIn.headers.location).toBe(`${t.baseUrl}/oauth/authorize/resume`);

    const consent = await t.agent.get('/oauth/authorize/resume');
    expect(consent.status).toBe(200);
    expect(consent.text).toContain('Do you trust Photo Printer?');
    // A reload shows the same request again, instead of replaying the provider's answer.
    const reloaded = await t.agent.get('/oauth/authorize/resume');
    expect(reloaded.status).toBe(200);
    expect(parseForm(reloaded.text).fields.transaction).toBe(parseForm(consent.text).fields.transaction);
    const allowed = await answerConsent(t, reloaded.text, 'allow');
    expect(allowed.status).toBe(303);
    expect(new URL(allowed.headers.location!).searchParams.get('code')).toBeTruthy();
    // The callback itself, delivered again, is refused: the answer was used once.
    expect((await t.agent.get(pathOf(callback))).status).toBe(400);
  });
});
