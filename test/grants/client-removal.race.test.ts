/**
 * Issue 18, finding 8: removing a client is an absolute revocation. A refresh and a consent in
 * flight while the operator removes the client must not leave anything that works: not the
 * tokens the refresh mints, and not the grant the consent read before the removal and saves
 * after it, which would bring every old token back once the client is registered again under
 * the same id. Driven through the live endpoints, each request paused at the storage call that
 * matters; the conformance kit explores every pause point (src/testing/conformance/race-removal.ts).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { registerClient, type Storage } from '../../src/index.js';
import { instrumentStorage } from '../../src/testing/conformance/instrument.js';
import { CODE_REDIRECT, createTestApp, expectOAuthError, type TestApp } from '../support/app.js';
import { callRealms, obtainTokens, refreshWith, storageEngines } from '../support/endpoints.js';
import { answerConsent } from '../support/flow.js';

const engines = await storageEngines();

/** A storage whose next call of `method` waits, once armed, until released: before it runs, or after. */
function pausableStorage(storage: Storage) {
  const armed = new Map<string, { reached: () => void; gate: Promise<void>; after: boolean }>();
  const view = instrumentStorage(storage, async (call, run) => {
    const pause = armed.get(call.method);
    if (pause === undefined) return run();
    armed.delete(call.method);
    const result = pause.after ? await run() : undefined;
    pause.reached();
    await pause.gate;
    return pause.after ? result : run();
  });
  return {
    storage: view,
    /**
     * Arms a pause at the next call of `method`, before it runs (or, with `after`, once it has
     * run): resolves `reached` then, and waits for `release`.
     */
    arm(method: string, after = false) {
      let release!: () => void;
      let reached!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      const atGate = new Promise<void>((resolve) => (reached = resolve));
      armed.set(method, { reached, gate, after });
      return { reached: atGate, release };
    },
  };
}

describe.each(engines)('client removal racing a refresh and a consent on $name storage', ({ skip, open }) => {
  const test = it.skipIf(skip !== null);
  let t: TestApp;
  let paused: ReturnType<typeof pausableStorage>;
  let dispose: () => Promise<void>;

  beforeEach(async () => {
    if (skip !== null) return;
    const opened = await open();
    dispose = opened.dispose;
    paused = pausableStorage(opened.storage);
    t = await createTestApp({ storage: paused.storage });
  });
  afterEach(async () => {
    if (skip !== null) return;
    await t.close();
    await dispose();
  });

  test('no token of the removed client works, even once it is registered again under the same id', async () => {
    const tokens = await obtainTokens(t, { scope: 'realms' });
    // The user widens the authorization: the consent page, answered while the client is removed.
    const page = await t.agent.get('/oauth/authorize').query({
      response_type: 'code',
      client_id: t.codeClient.clientId,
      redirect_uri: CODE_REDIRECT,
      scope: 'realms profile',
      state: 'wider',
    });
    expect(page.status).toBe(200);
    expect(page.text).toContain('name="decision"');

    const consentSave = paused.arm('grants.save');
    const consent = answerConsent(t, page.text, 'allow').then((res) => res);
    await consentSave.reached;
    // The refresh reads its token, then saves its access token (paused before the save).
    const refreshSave = paused.arm('tokens.save');
    const refresh = refreshWith(t, tokens.refresh_token).then((res) => res);
    await refreshSave.reached;

    expect(await t.storage.clients.remove!(t.codeClient.clientId)).toBe(true);
    consentSave.release();
    refreshSave.release();
    const [consented, refreshed] = await Promise.all([consent, refresh]);

    // The refresh had read its token before the removal, and minted one before or after it: it
    // must not work.
    expect(refreshed.status).toBe(200);
    const minted: string = refreshed.body.access_token;

    const registeredAgain = await registerClient(t.storage, {
      clientId: t.codeClient.clientId,
      applicationName: 'Photo Printer',
      redirectUri: CODE_REDIRECT,
      scopes: ['realms', 'profile'],
    });
    for (const token of [tokens.access_token, minted]) {
      const res = await callRealms(t, token);
      expect(res.status).toBe(401);
      expect(res.headers['www-authenticate']).toContain('error="invalid_token"');
      expect(res.body.realms).toBeUndefined();
    }
    // Nor does the old refresh token, presented by the new registration with its own secret.
    const again = await refreshWith(t, tokens.refresh_token).send({
      client_secret: registeredAgain.clientSecret!,
    });
    expectOAuthError(again, 'invalid_grant');
    expect(again.body.access_token).toBeUndefined();
    // The consent is refused: no code for a removed client, no redirect to it.
    expect(consented.status).toBe(403);
    expect(consented.headers.location).toBeUndefined();
    expect(consented.text).toContain('no longer registered');
  });
});
