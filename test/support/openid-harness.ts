import { Parser } from 'htmlparser2';
import { RelyingParty } from '../../src/login/openid/relying-party.js';
import type { RelyingPartyOptions } from '../../src/login/openid/options.js';
import type { NonceStore } from '../../src/login/openid/options.js';
import type { RunningDevelopmentProvider } from '../../src/testing/provider/index.js';
import { OpenIdLoginError, type OpenIdLoginErrorKind } from '../../src/login/openid/errors.js';
import { expect } from 'vitest';

/** The RP's callback; nothing listens there; tests hand the URL to `verify` directly. */
export const RP_BASE = 'http://127.0.0.1:3999';
export const RETURN_TO = `${RP_BASE}/oauth/login/callback`;

/** A NonceStore kept in a Map, with the contract's single-use guarantee. */
export function memoryNonces(): NonceStore & { size(): number } {
  const seen = new Map<string, number>();
  return {
    async use(scope, nonce, expiresAt) {
      const key = `${scope} ${nonce}`;
      if (seen.has(key)) return false;
      seen.set(key, expiresAt);
      return true;
    },
    size: () => seen.size,
  };
}

export function createRelyingParty(
  op: RunningDevelopmentProvider,
  overrides: Partial<RelyingPartyOptions> = {},
): RelyingParty {
  return new RelyingParty({
    providers: [{ name: 'Development', identifier: op.identifier }],
    returnTo: RETURN_TO,
    realm: `${RP_BASE}/`,
    nonces: memoryNonces(),
    clock: Date.now,
    timeoutMs: 2000,
    ...overrides,
  });
}

/**
 * Plays the user's browser at the provider: GETs the OP's login form, submits it with `user` and
 * the chosen button, and returns the URL the provider redirects back to.
 */
export async function loginAtProvider(redirectUrl: string, user: string, action = 'signin'): Promise<URL> {
  const page = await fetch(redirectUrl, { redirect: 'manual' });
  expect(page.status).toBe(200);
  const form = readForm(await page.text());
  form.fields.set('dev_user', user);
  form.fields.set('dev_action', action);
  const submitted = await fetch(new URL(form.action, redirectUrl), {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams([...form.fields]).toString(),
  });
  expect(submitted.status).toBe(302);
  return new URL(submitted.headers.get('location')!);
}

/** Begins a login with a fresh RP and returns a genuine, not yet verified, callback URL. */
export async function genuineCallback(rp: RelyingParty, user = 'alice') {
  const { redirectUrl, state } = await rp.begin(rp.findProvider('Development')!);
  const callback = await loginAtProvider(redirectUrl, user);
  return { callback, state };
}

/** A copy of `url` with `key` set to `value`, or removed when `value` is null. */
export function withParam(url: URL, key: string, value: string | null): URL {
  const copy = new URL(url);
  if (value === null) copy.searchParams.delete(key);
  else copy.searchParams.set(key, value);
  return copy;
}

/** Asserts the promise rejects with an OpenIdLoginError of `kind`, and returns the error. */
export async function expectLoginError(
  promise: Promise<unknown>,
  kind: OpenIdLoginErrorKind,
): Promise<OpenIdLoginError> {
  const err = await promise.then(
    () => expect.fail(`expected an OpenIdLoginError of kind ${kind}`),
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(OpenIdLoginError);
  expect((err as OpenIdLoginError).kind, (err as Error).message).toBe(kind);
  return err as OpenIdLoginError;
}

function readForm(html: string): { action: string; fields: Map<string, string> } {
  let action = '';
  const fields = new Map<string, string>();
  const parser = new Parser({
    onopentag(name, attribs) {
      if (name === 'form') action = attribs.action ?? '';
      if (name === 'input' && attribs.type === 'hidden' && attribs.name)
        fields.set(attribs.name, attribs.value ?? '');
    },
  });
  parser.write(html);
  parser.end();
  return { action, fields };
}
