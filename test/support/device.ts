/**
 * The person's side of the device flow (RFC 8628 3.3) as a browser runs it: the verification page,
 * the code typed, the sign-in at the development provider, the consent page; and the device's
 * side, its requests to the device authorization and token endpoints.
 */
import { expect } from 'vitest';
import { registerClient, type Storage } from '../../src/index.js';
import type { TestApp } from './app.js';
import { deliverCallback, parseForm, parseForms, pathOf, signInAtProvider } from './flow.js';

export const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

/** Registers `realm-cli`, a public device client (a CLI tool), for `scopes`. */
export function registerDeviceClient(storage: Storage, scopes: string[] = ['realms']) {
  return registerClient(storage, {
    clientId: 'realm-cli',
    applicationName: 'Realm CLI',
    grantType: 'device_code',
    public: true,
    scopes,
  });
}

/** The device's request for a device code and a user code. */
export function requestDeviceCode(
  t: TestApp,
  fields: Record<string, string>,
  headers: Record<string, string> = {},
) {
  return t.agent.post('/oauth/device_authorization').type('form').set(headers).send(fields);
}

/** One poll of the token endpoint with a device code. */
export function pollToken(t: TestApp, fields: Record<string, string>) {
  return t.agent
    .post('/oauth/token')
    .type('form')
    .send({ grant_type: DEVICE_GRANT, ...fields });
}

/** Types `userCode` on the verification page, as submitted from the page itself. */
export async function typeUserCode(t: TestApp, userCode: string) {
  const entry = await t.agent.get('/oauth/device');
  expect(entry.status).toBe(200);
  const form = parseForm(entry.text);
  return t.agent
    .post(pathOf(form.action))
    .type('form')
    .set('Origin', new URL(t.baseUrl).origin)
    .send({ ...form.fields, user_code: userCode });
}

/**
 * The person approves (or denies) the device showing `userCode`: types it, signs in at the
 * development provider as `user` when not signed in yet, and answers the consent page. Resolves
 * the last page (approved or denied) and the consent page's HTML.
 */
export async function answerDevice(t: TestApp, userCode: string, decision: 'allow' | 'deny', user = 'alice') {
  let res = await typeUserCode(t, userCode);
  expect(res.status).toBe(200);
  if (!res.text.includes('name="decision"')) {
    // The selection page: the (only) provider's login link.
    const href = /<a href="([^"]+)">/.exec(res.text)?.[1];
    expect(href).toBeDefined();
    const toProvider = await t.agent.get(pathOf(href!.replaceAll('&amp;', '&')));
    expect(toProvider.status).toBe(302);
    const callback = await signInAtProvider(toProvider.headers.location!, user);
    res = await deliverCallback(t.agent, pathOf(callback));
    expect(res.status).toBe(200);
  }
  const consent = res.text;
  const [form] = parseForms(consent);
  const done = await t.agent
    .post(pathOf(form!.action))
    .type('form')
    .set('Origin', new URL(t.baseUrl).origin)
    .send({ ...form!.fields, decision });
  return { done, consent };
}
