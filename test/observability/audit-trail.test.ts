/**
 * The audit trail (issue 41): after a full flow through the real OpenID 2.0 development provider
 * (login, consent, code, tokens, a refresh, a replayed refresh token, a replayed code, a
 * revocation, a consent withdrawn on the applications page), the file holds one line per
 * security-relevant event, each with the id of the response it arose in, and none of the codes,
 * tokens, secrets or cookies the test saw.
 */
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { auditTrail, AUDIT_EVENT_TYPES } from '../../src/observability/index.js';
import type { ServerEvent } from '../../src/index.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { mountClientEndpoints, postAs, recordEvents } from '../support/endpoints.js';
import {
  answerConsent,
  authorizeWithLogin,
  exchangeCode,
  parseForm,
  pathOf,
  refreshWith,
} from '../support/flow.js';

let t: TestApp;
let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'oob-audit-'));
});
afterEach(async () => {
  await t?.close();
  rmSync(dir, { recursive: true, force: true });
});

interface Line {
  at: string;
  type: string;
  request_id?: string;
  [field: string]: unknown;
}

/** What a response says of itself: its request id, and the cookies it set. */
const idOf = (res: { headers: Record<string, string | string[] | undefined> }) => {
  const id = res.headers['x-request-id'];
  expect(typeof id).toBe('string');
  return id as string;
};

/** The values of the agent's cookies: the session's, and any other the server set. */
async function cookieValues(): Promise<string[]> {
  const cookies = await t.agent.jar.getCookies({
    domain: '127.0.0.1',
    path: '/',
    secure: false,
    script: false,
  });
  // A signed session cookie (`s:<id>.<signature>`), whole and its id alone.
  return cookies.flatMap((c) => [c.value, decodeURIComponent(c.value).replace(/^s:/, '').split('.')[0]!]);
}

/** A code for the signed-in browser: the consent page answered when it is asked again. */
async function codeAgain(query: Record<string, string>): Promise<string> {
  let res = await t.agent.get('/oauth/authorize').query(query);
  if (res.status === 200) res = await answerConsent(t, res.text, 'allow');
  expect([302, 303]).toContain(res.status);
  return new URL(res.headers.location!).searchParams.get('code')!;
}

describe('the audit trail of a full flow, in a file', () => {
  it('has every grant, revocation and reuse event with its request id, and no secret', async () => {
    t = await createTestApp({ tokens: { rotateRefreshTokens: true } });
    mountClientEndpoints(t);
    const events = recordEvents(t);
    const file = join(dir, 'audit.jsonl');
    const audit = auditTrail(t.server, { file });
    const secrets: string[] = [t.codeClient.clientSecret];
    const query = {
      response_type: 'code',
      client_id: t.codeClient.clientId,
      redirect_uri: 'https://client.example/cb',
      state: 'xyz',
    };

    // Login and consent, then the tokens, a refresh, and the replayed refresh token.
    const consentPage = await authorizeWithLogin(t, query);
    expect(consentPage.status).toBe(200);
    secrets.push(parseForm(consentPage.text).fields.csrf ?? 'no csrf field');
    const decided = await answerConsent(t, consentPage.text, 'allow');
    const code1 = new URL(decided.headers.location!).searchParams.get('code')!;
    const exchanged = await exchangeCode(t, code1);
    expect(exchanged.status).toBe(200);
    const tokens1 = exchanged.body as { access_token: string; refresh_token: string };
    const refreshed = await refreshWith(t, tokens1.refresh_token);
    expect(refreshed.status).toBe(200);
    const replayed = await refreshWith(t, tokens1.refresh_token);
    expect(replayed.status).toBe(400);

    // A replayed code.
    const code2 = await codeAgain(query);
    const exchanged2 = await exchangeCode(t, code2);
    expect(exchanged2.status).toBe(200);
    const codeReplayed = await exchangeCode(t, code2);
    expect(codeReplayed.status).toBe(400);

    // A revocation by the client.
    const code3 = await codeAgain(query);
    const exchanged3 = await exchangeCode(t, code3);
    const revoked = await postAs(t, '/oauth/revoke', { token: exchanged3.body.access_token as string });
    expect(revoked.status).toBe(200);

    // The consent withdrawn by the person on the applications page.
    const code4 = await codeAgain(query);
    const exchanged4 = await exchangeCode(t, code4);
    const page = await t.agent.get('/oauth/applications');
    const item = page.text.split('<li>').find((part) => part.includes('<h2>Photo Printer</h2>'))!;
    const form = parseForm(item);
    secrets.push(form.fields.csrf ?? 'no csrf field');
    const withdrawn = await t.agent
      .post(pathOf(form.action))
      .type('form')
      .set('Sec-Fetch-Site', 'same-origin')
      .send(form.fields);
    expect(withdrawn.status).toBe(303);

    secrets.push(code1, code2, code3, code4, ...(await cookieValues()));
    for (const res of [exchanged, refreshed, exchanged2, exchanged3, exchanged4]) {
      const body = res.body as Record<string, string>;
      for (const name of ['access_token', 'refresh_token', 'id_token'])
        if (body[name]) secrets.push(body[name]);
    }
    await audit.close();

    const text = readFileSync(file, 'utf8');
    const lines = text
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as Line);
    // Every audited event, in order, each with its own request's id.
    const audited = events.filter((event) => AUDIT_EVENT_TYPES.includes(event.type));
    expect(lines.map((l) => [l.type, l.request_id])).toEqual(audited.map((e) => [e.type, e.requestId]));
    for (const line of lines) {
      expect(line.at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      expect(line.request_id).toMatch(/^[\w-]{8,}$/);
    }

    const one = (type: string, requestId: string) => {
      const found = lines.filter((l) => l.type === type && l.request_id === requestId);
      expect(found, `${type} in request ${requestId}`).toHaveLength(1);
      return found[0]!;
    };
    const userId = events.find(
      (e): e is Extract<ServerEvent, { type: 'token.issued' }> => e.type === 'token.issued',
    )!.userId;
    const who = { user_id: userId, client_id: 'code-client' };
    expect(one('consent.given', idOf(decided))).toMatchObject({ ...who, scopes: ['realms', 'profile'] });
    expect(one('code.issued', idOf(decided))).toMatchObject({
      ...who,
      grant_id: expect.any(String),
      pkce: false,
    });
    expect(one('token.issued', idOf(exchanged))).toMatchObject({
      ...who,
      grant_type: 'authorization_code',
      refresh_token: true,
      ip: expect.stringMatching(/127\.0\.0\.1$/),
    });
    expect(one('token.refreshed', idOf(refreshed))).toMatchObject({ ...who, rotated: true });
    expect(one('refresh_token.reused', idOf(replayed))).toMatchObject(who);
    expect(one('token.issued', idOf(exchanged2))).toMatchObject(who);
    expect(one('code.replayed', idOf(codeReplayed))).toMatchObject({ ...who, presented_by: 'code-client' });
    expect(one('token.revoked', idOf(revoked))).toMatchObject({ ...who, token_type: 'access_token' });
    expect(one('consent.revoked', idOf(withdrawn))).toMatchObject({ ...who, by: 'user' });
    expect(lines.filter((l) => l.type === 'login.succeeded')).toEqual([
      expect.objectContaining({
        user_id: userId,
        provider: 'Development provider',
        client_id: 'code-client',
      }),
    ]);

    for (const secret of secrets) {
      expect(secret.length).toBeGreaterThan(8);
      expect(text).not.toContain(secret);
    }
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });
});
