/**
 * The login session is stored before the response that depends on it leaves. express-session on
 * its own sends the headers first and saves afterwards, so a browser following the redirect at
 * once (to another instance, or to this one with a slow store) found no login in progress: the
 * soak across two instances caught it. Here the store is made slow, and the test reads it the
 * moment the redirect's headers arrive.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { memoryStorage, StorageUnavailableError } from '../../src/index.js';
import { type EphemeralStore } from '../../src/storage/index.js';
import { ephemeralKeys } from '../../src/storage/keys.js';
import { CODE_REDIRECT, createTestApp, type TestApp } from '../support/app.js';

const STORE_DELAY_MS = 300;
let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

/** The ephemeral store with its session writes slowed down, and failing while `fail()` says so. */
function slowSessions<S extends EphemeralStore>(store: S, fail = () => false): S {
  return {
    ...store,
    async set(key, value, expiresAt, now) {
      if (key.startsWith(ephemeralKeys.session(''))) {
        await new Promise((resolve) => setTimeout(resolve, STORE_DELAY_MS));
        if (fail()) throw new StorageUnavailableError('session store down');
      }
      return store.set(key, value, expiresAt, now);
    },
  };
}

const sidOf = (res: Response) =>
  decodeURIComponent(/openid_oauth_bridge\.sid=s%3A([^.;]+)/.exec(res.headers.get('set-cookie') ?? '')![1]!);

describe('the login session is saved before the response', () => {
  it('a redirect to the provider arrives only once the session holding the login is stored', async () => {
    const storage = memoryStorage();
    const real = storage.ephemeral;
    storage.ephemeral = slowSessions(real);
    t = await createTestApp({ storage });
    const started = performance.now();
    const res = await fetch(
      `${t.baseUrl}/oauth/authorize?${new URLSearchParams({
        response_type: 'code',
        client_id: t.codeClient.clientId,
        redirect_uri: CODE_REDIRECT,
        state: 's',
        opIdentifier: t.provider.identifier,
      })}`,
      { redirect: 'manual' },
    );
    // Read the store the moment the headers are here, before the body.
    const stored = await real.get(ephemeralKeys.session(sidOf(res)), Date.now());
    expect(res.status).toBe(302);
    expect(performance.now() - started).toBeGreaterThanOrEqual(STORE_DELAY_MS - 20);
    expect(stored, 'the session must be stored when the redirect arrives').not.toBeNull();
    expect(JSON.parse(stored!)).toMatchObject({ openidOAuthBridge: { pending: { state: 's' } } });
  });

  it('a session that cannot be stored gives the 503 page instead of a redirect that would lead nowhere', async () => {
    const storage = memoryStorage();
    let down = false;
    storage.ephemeral = slowSessions(storage.ephemeral, () => down);
    t = await createTestApp({ storage });
    const errors: unknown[] = [];
    t.server.events.on('server.error', (event) => void errors.push(event));
    down = true;
    const res = await fetch(
      `${t.baseUrl}/oauth/authorize?${new URLSearchParams({
        response_type: 'code',
        client_id: t.codeClient.clientId,
        redirect_uri: CODE_REDIRECT,
        state: 's',
        opIdentifier: t.provider.identifier,
      })}`,
      { redirect: 'manual' },
    );
    expect(res.status).toBe(503);
    expect(res.headers.get('location')).toBeNull();
    expect(res.headers.get('retry-after')).toBe('5');
    // Reported once, like any other 5xx.
    expect(errors).toEqual([
      expect.objectContaining({ type: 'server.error', endpoint: 'authorization', error: expect.any(Error) }),
    ]);
    expect(await res.text()).toContain('Temporarily unavailable');
  });
});
