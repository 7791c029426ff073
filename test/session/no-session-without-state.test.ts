/**
 * The login session is used as express-session means it to be used: a request that does not log
 * in, start an authorization or post a consent stores no session and sets no cookie, and `HEAD`
 * on a route whose `GET` has side effects has none.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { memoryStorage } from '../../src/index.js';
import { CODE_REDIRECT, createTestApp, type TestApp } from '../support/app.js';
import { obtainCode } from '../support/flow.js';

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

/** A test app whose storage records every session and code written to the ephemeral store. */
async function recordingApp() {
  const storage = memoryStorage();
  const written: string[] = [];
  const set = storage.ephemeral.set;
  storage.ephemeral.set = (key, ...rest) => {
    written.push(key);
    return set(key, ...rest);
  };
  t = await createTestApp({ storage });
  const sessionsWritten = () => written.filter((key) => key.startsWith('session:'));
  const codesWritten = () => written.filter((key) => key.startsWith('code:'));
  return { t, sessionsWritten, codesWritten };
}

const fetchManual = (url: string, init: RequestInit = {}) => fetch(url, { redirect: 'manual', ...init });

describe('a visitor without a session who does not sign in gets none', () => {
  it.each([
    ['an invalid authorization request', 'GET', '/oauth/authorize?response_type=code&client_id=nobody'],
    ['a login callback with no login in progress', 'GET', '/oauth/login/callback?openid.mode=id_res'],
    ['a resume with nothing pending', 'GET', '/oauth/authorize/resume'],
    ['a login with no authorization pending', 'GET', '/oauth/login?openid_identifier=x'],
    ['the applications page, not signed in', 'GET', '/oauth/applications'],
  ])('%s: no session stored, no cookie', async (_name, method, path) => {
    const { t, sessionsWritten } = await recordingApp();
    const res = await fetchManual(`${t.baseUrl}${path}`, { method });
    await res.text();
    expect(res.status).not.toBe(500);
    expect(res.headers.get('set-cookie')).toBeNull();
    expect(sessionsWritten()).toEqual([]);
  });

  it('a consent post without a session: refused, no session stored, no cookie', async () => {
    const { t, sessionsWritten } = await recordingApp();
    const res = await fetchManual(`${t.baseUrl}/oauth/authorize/decision`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: t.baseUrl },
      body: 'transaction=x&csrf=y&decision=allow',
    });
    await res.text();
    expect(res.status).toBe(400);
    expect(res.headers.get('set-cookie')).toBeNull();
    expect(sessionsWritten()).toEqual([]);
  });

  it('a valid authorization request does start a session (the pending request is kept)', async () => {
    const { t, sessionsWritten } = await recordingApp();
    const res = await fetchManual(
      `${t.baseUrl}/oauth/authorize?${new URLSearchParams({
        response_type: 'code',
        client_id: t.codeClient.clientId,
        redirect_uri: CODE_REDIRECT,
        state: 's',
      })}`,
    );
    await res.text();
    expect(res.status).toBe(200);
    expect(res.headers.get('set-cookie')).toContain('openid_oauth_bridge.sid=');
    expect(sessionsWritten()).toHaveLength(1);
  });
});

describe('HEAD on a route whose GET has side effects has none', () => {
  it('HEAD /oauth/authorize of a signed-in user who trusts the client: 405, no code issued', async () => {
    const { t, codesWritten } = await recordingApp();
    await obtainCode(t); // signs in and trusts the client, in t.agent's cookie jar
    const before = codesWritten().length;
    const query = { response_type: 'code', client_id: t.codeClient.clientId, redirect_uri: CODE_REDIRECT };
    const head = await t.agent.head('/oauth/authorize').query(query);
    expect(head.status).toBe(405);
    expect(head.headers.allow).toBe('GET');
    expect(codesWritten()).toHaveLength(before);
    // GET still answers at once with a code.
    const get = await t.agent.get('/oauth/authorize').query(query);
    expect(get.status).toBe(302);
    expect(codesWritten()).toHaveLength(before + 1);
  });

  it.each([
    '/oauth/authorize',
    '/oauth/authorize/resume',
    '/oauth/login',
    '/oauth/login/callback',
    '/oauth/applications',
  ])('HEAD %s: 405, no session stored, no cookie', async (path) => {
    const { t, sessionsWritten } = await recordingApp();
    const res = await fetchManual(`${t.baseUrl}${path}`, { method: 'HEAD' });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET');
    expect(res.headers.get('set-cookie')).toBeNull();
    expect(sessionsWritten()).toEqual([]);
  });
});
