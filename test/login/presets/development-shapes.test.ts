/**
 * The development provider in Steam's and Launchpad's shapes (issue 29): a host tries `steam()` or
 * `launchpad()` locally, and its `accounts` hook receives the account keys it will get in
 * production (a 17-digit SteamID64, a 7-character Launchpad account id), not a URL.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { launchpad, steam, type VerifiedLogin } from '../../../src/index.js';
import { startDevelopmentProvider, type ProviderShape } from '../../../src/testing/index.js';
import { CODE_REDIRECT, createTestApp, type TestApp } from '../../support/app.js';
import { answerConsent, deliverCallback, pathOf, signInAtProvider } from '../../support/flow.js';

let t: TestApp | undefined;
let op: Awaited<ReturnType<typeof startDevelopmentProvider>> | undefined;
afterEach(async () => {
  await t?.close();
  await op?.close();
  t = op = undefined;
});

async function signIn(shape: ProviderShape, preset: typeof steam, user: string) {
  op = await startDevelopmentProvider({ shape });
  const logins: VerifiedLogin[] = [];
  t = await createTestApp({
    providers: [preset({ baseUrl: op.url })],
    accounts: (login) => {
      logins.push(login);
      return {
        accountId: `host-${login.accountKey}`,
        ...(login.displayName ? { displayName: login.displayName } : {}),
      };
    },
  });
  const start = await t.agent.get('/oauth/authorize').query({
    response_type: 'code',
    client_id: t.codeClient.clientId,
    redirect_uri: CODE_REDIRECT,
    state: 's',
  });
  const href = /<a href="([^"]+)">/.exec(start.text)![1]!.replaceAll('&amp;', '&');
  const toProvider = await t.agent.get(pathOf(href));
  expect(new URL(toProvider.headers.location!).pathname).toBe(new URL(op.endpoint).pathname);
  const consent = await deliverCallback(
    t.agent,
    pathOf(await signInAtProvider(toProvider.headers.location!, user)),
  );
  expect(consent.status).toBe(200);
  const back = await answerConsent(t, consent.text, 'allow');
  expect(new URL(back.headers.location!).searchParams.get('code')).toBeTruthy();
  return { logins, consent: consent.text };
}

describe('the development provider shaped as a real one, with its preset', () => {
  it("steam: a 17-digit user name signs in as that SteamID64; the account key is Steam's", async () => {
    const { logins } = await signIn('steam', steam, '76561198000000042');
    expect(logins).toHaveLength(1);
    expect(logins[0]!.accountKey).toBe('76561198000000042');
    expect(logins[0]!.identifier).toBe(`${op!.url}/openid/id/76561198000000042`);
  });

  it('steam: any other name always maps to the same SteamID64', async () => {
    const first = (await signIn('steam', steam, 'alice')).logins[0]!.accountKey;
    await t!.close();
    await op!.close();
    t = op = undefined;
    expect(first).toMatch(/^7656119[0-9]{10}$/);
    expect((await signIn('steam', steam, 'alice')).logins[0]!.accountKey).toBe(first);
  });

  it('launchpad: a 7-character account id, and the signed sreg names shown on the consent page', async () => {
    const { logins, consent } = await signIn('launchpad', launchpad, 'alice');
    expect(logins[0]!.accountKey).toMatch(/^[A-Za-z0-9]{7}$/);
    expect(logins[0]!.attributes).toEqual({ nickname: 'alice', fullname: 'Alice' });
    expect(logins[0]!.displayName).toBe('Alice');
    expect(consent).toContain('Signed in as Alice');
  });
});
