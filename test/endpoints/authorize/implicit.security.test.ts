import { inspect } from 'node:util';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { revokeApplication } from '../../../src/grants/index.js';
import type { TokenRecord } from '../../../src/storage/index.js';
import {
  createTestApp,
  IMPLICIT_REDIRECT,
  recordingLogger,
  redirectParams,
  type TestApp,
} from '../../support/app.js';
import { answerConsent, authorizeWithLogin } from '../../support/flow.js';
import { storedToken, tokenWorks } from '../../support/grants.js';

// Also proven elsewhere: a code client asking for response_type=token gets unauthorized_client and
// an implicit client asking for a code too (authorize.errors.test.ts); the fragment carries exactly
// access_token, token_type, expires_in, scope and state, never a refresh token; an implicit client
// cannot use the token endpoint (flow.implicit.test.ts); state is required unless the operator
// turns that off (authorize.errors.test.ts, pages.replaceable.test.ts); PKCE is refused on an
// implicit request (authorize.errors.test.ts).

let t: TestApp;
let logger: ReturnType<typeof recordingLogger>;
beforeEach(async () => {
  logger = recordingLogger();
  t = await createTestApp({ logger });
});
afterEach(() => {
  vi.restoreAllMocks();
  return t.close();
});

const implicitQuery = {
  response_type: 'token',
  client_id: 'implicit-client',
  redirect_uri: IMPLICIT_REDIRECT,
  state: 'st',
};

async function implicitToken() {
  const consent = await authorizeWithLogin(t, implicitQuery);
  const res = await answerConsent(t, consent.text, 'allow');
  expect(res.status).toBe(303);
  return { res, token: redirectParams(res.headers.location!).access_token! };
}

/** Every token the server saves from now on. */
function savedTokens(): TokenRecord[] {
  const saved: TokenRecord[] = [];
  const save = t.storage.tokens.save.bind(t.storage.tokens);
  t.storage.tokens.save = (token) => (saved.push(token), save(token));
  return saved;
}

const bearer = (token: string) => t.agent.get('/v1/realms').set('Authorization', `Bearer ${token}`);

describe('implicit grant, hardened', () => {
  it('tags its tokens implicit; revoking what the user granted the client revokes them', async () => {
    const { token } = await implicitToken();
    const { token: record, grant } = (await storedToken(t.server, token))!;
    expect(record).toMatchObject({ origin: 'implicit', clientId: 'implicit-client', type: 'access_token' });
    expect(record.grantId).toBe(grant!.grantId);
    expect((await bearer(token)).status).toBe(200);
    // What the authorized-applications page does: revoke the user's grant for the client.
    expect(await revokeApplication(t.server, record.userId, 'implicit-client', 'user')).toBe(true);
    expect((await bearer(token)).status).toBe(401);
    expect(await tokenWorks(t.server, token)).toBe(false);
    // The next authorization (the user is still logged in) asks for trust again.
    const again = await t.agent.get('/oauth/authorize').query(implicitQuery);
    expect(again.status).toBe(200);
    expect(again.text).toContain('Do you trust Single Page App?');
  });

  it('issues no refresh token: nothing is stored for the grant but the access token', async () => {
    const saved = savedTokens();
    const { res, token } = await implicitToken();
    expect(redirectParams(res.headers.location!)).not.toHaveProperty('refresh_token');
    expect(saved.map((record) => record.type)).toEqual(['access_token']);
    expect(saved[0]!.tokenHash).toBe((await storedToken(t.server, token))!.token.tokenHash);
  });

  it('puts the token only in the fragment, of a response that sends no Referer', async () => {
    const { res, token } = await implicitToken();
    const location = new URL(res.headers.location!);
    expect(location.search).toBe('');
    expect(location.hash).toContain(`access_token=${token}`);
    expect(res.headers['referrer-policy']).toBe('no-referrer');
    expect(res.headers['cache-control']).toBe('no-store');
    const again = await t.agent.get('/oauth/authorize').query(implicitQuery);
    expect(again.status).toBe(302);
    expect(new URL(again.headers.location!).search).toBe('');
    expect(again.headers['referrer-policy']).toBe('no-referrer');
  });

  it('requires a non-empty state, refused in the fragment without issuing anything', async () => {
    const saved = savedTokens();
    for (const state of [undefined, '']) {
      const res = await t.agent.get('/oauth/authorize').query({ ...implicitQuery, state });
      expect(res.status).toBe(302);
      expect(new URL(res.headers.location!).search).toBe('');
      expect(redirectParams(res.headers.location!)).toMatchObject({ error: 'invalid_request' });
    }
    expect(saved).toEqual([]);
  });

  it('never writes the token in a log line, the library logger or the console', async () => {
    const consoleLines: string[] = [];
    for (const level of ['log', 'info', 'warn', 'error', 'debug'] as const) {
      vi.spyOn(console, level).mockImplementation(
        (...args: unknown[]) => void consoleLines.push(inspect(args, { depth: 10 })),
      );
    }
    const { token } = await implicitToken();
    // Errors around it: a bearer check that fails inside the library (logged), a wrong token.
    const find = t.storage.tokens.find.bind(t.storage.tokens);
    t.storage.tokens.find = () => Promise.reject(new Error('storage down'));
    expect((await bearer(token)).status).toBe(500);
    t.storage.tokens.find = find;
    expect((await bearer(`${token}x`)).status).toBe(401);
    expect(logger.lines.map((l) => l.message)).toContain('internal error');
    const logged = inspect(logger.lines, { depth: 10 }) + consoleLines.join('\n');
    expect(logged).not.toContain(token);
  });
});
