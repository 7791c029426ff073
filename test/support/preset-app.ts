import { expect, vi } from 'vitest';
import { memoryStorage } from '../../src/index.js';
import { RelyingParty, type VerifiedIdentity } from '../../src/login/openid/relying-party.js';
import type { ProviderPreset } from '../../src/login/openid/provider-policy.js';
import type { OpenIdProvider } from '../../src/login/openid/options.js';
import { createTestApp, redirectParams, type TestApp } from './app.js';
import { answerConsent, deliverCallback, exchangeCode, pathOf } from './flow.js';
import { codeQuery, expectRefusalPage, startLogin } from './python-flow.js';
import { rawRequest } from './raw-http.js';

export interface PresetApp extends TestApp {
  /** Every identity the relying party verified, in order. */
  verified: VerifiedIdentity[];
  /** Calls of `storage.users.findOrCreate` so far. */
  userWrites(): number;
}

/**
 * The test app (test/support/app.ts) with `providers` (presets or plain ones) as the server's own:
 * its built-in relying party checks every login against them. `verified` records what that
 * relying party verified.
 */
export async function createPresetApp(
  providers: readonly (OpenIdProvider | ProviderPreset)[],
): Promise<PresetApp> {
  const storage = memoryStorage();
  const verified: VerifiedIdentity[] = [];
  const verify = RelyingParty.prototype.verify;
  const spy = vi.spyOn(RelyingParty.prototype, 'verify').mockImplementation(async function (
    this: RelyingParty,
    ...args
  ) {
    const identity = await verify.apply(this, args);
    verified.push(identity);
    return identity;
  });
  const t = await createTestApp({ storage, providers: [...providers] });
  let writes = 0;
  const findOrCreate = storage.users.findOrCreate.bind(storage.users);
  storage.users.findOrCreate = (...args) => (writes++, findOrCreate(...args));
  return {
    ...t,
    verified,
    userWrites: () => writes,
    async close() {
      spy.mockRestore();
      await t.close();
    },
  };
}

/** The browser begins a login at `providerName`: resolves the URL it is sent to at the provider. */
export async function beginAt(t: TestApp, providerName: string): Promise<URL> {
  return new URL(await startLogin(t, t.agent, providerName));
}

/** The auto-approving provider answers `request`; resolves the (undelivered) callback URL. */
export async function answeredBy(request: URL): Promise<URL> {
  const res = await rawRequest(request.href);
  expect(res.status, res.body).toBe(302);
  return new URL(res.location!);
}

/**
 * Delivers `callback`, allows on the consent page, exchanges the code: the token response's body,
 * and the consent page's text.
 */
export async function finishToToken(
  t: TestApp,
  callback: URL,
): Promise<{ consentPage: string; tokens: Record<string, unknown> }> {
  const consent = await deliverCallback(t.agent, pathOf(callback.href));
  expect(consent.status, consent.text).toBe(200);
  const done = await answerConsent(t, consent.text, 'allow');
  const tokens = await exchangeCode(t, redirectParams(done.headers.location!).code!);
  expect(tokens.status, tokens.text).toBe(200);
  expect(tokens.body).toMatchObject({ token_type: 'Bearer', access_token: expect.any(String) });
  return { consentPage: consent.text, tokens: tokens.body as Record<string, unknown> };
}

/**
 * Delivers `callback` and asserts the refusal page with `message`: no user written, nothing
 * verified, and the browser is not signed in (the authorization asks for a provider again).
 */
export async function expectLoginRefused(t: PresetApp, callback: URL, message: string): Promise<void> {
  const res = await t.agent.get(pathOf(callback.href));
  expectRefusalPage(res, message);
  expect(t.userWrites()).toBe(0);
  expect(t.verified).toEqual([]);
  const again = await t.agent.get('/oauth/authorize').query(codeQuery);
  expect(again.status).toBe(200);
  expect(again.text).not.toContain('Do you trust');
}
