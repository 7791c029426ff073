/**
 * Tracing without a dependency (issue 41): a `diagnostics_channel.tracingChannel` subscriber sees
 * start, end and asyncEnd for every token request, error for each refused one, with bounded fields
 * only; with no subscriber, nothing is traced.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import { exchangeCode, obtainCode, refreshWith } from '../support/flow.js';
import { subscribe } from '../support/channels.js';
import { requireBearer } from '../../src/index.js';

let t: TestApp;
afterEach(() => t?.close());

describe('the token endpoint on its tracing channel', () => {
  it('publishes start, end and asyncEnd for each request, error for a refused one, with bounded fields', async () => {
    t = await createTestApp();
    const { code } = await obtainCode(t);
    const { seen, stop } = subscribe('token');
    try {
      const tokens = (await exchangeCode(t, code)).body as { access_token: string; refresh_token: string };
      expect((await refreshWith(t, tokens.refresh_token)).status).toBe(200);
      expect((await exchangeCode(t, code)).status).toBe(400); // replayed
      const events = seen.map((s) => s.event);
      expect(events.filter((e) => e === 'start')).toHaveLength(3);
      expect(events.filter((e) => e === 'asyncEnd')).toHaveLength(3);
      expect(events.filter((e) => e === 'error')).toHaveLength(1);
      const ends = seen.filter((s) => s.event === 'asyncEnd').map((s) => s.context);
      expect(ends[0]).toMatchObject({
        endpoint: 'token',
        grantType: 'authorization_code',
        outcome: 'success',
        status: 200,
        clientKind: 'confidential',
      });
      expect(ends[1]).toMatchObject({ grantType: 'refresh_token', outcome: 'success' });
      expect(ends[2]).toMatchObject({ outcome: 'error', errorCode: 'invalid_grant', status: 400 });
      const published = JSON.stringify(seen);
      for (const secret of [code, tokens.access_token, tokens.refresh_token, t.codeClient.clientSecret]) {
        expect(published).not.toContain(secret);
      }
      expect(published).not.toContain(t.codeClient.clientId);
    } finally {
      stop();
    }
    // Unsubscribed: nothing more.
    const before = seen.length;
    await refreshWith(t, 'nothing');
    expect(seen).toHaveLength(before);
  });
});

describe('an authorization on its tracing channel', () => {
  it('says the grant it served (grantType) on the request that issued the code, and on no other', async () => {
    t = await createTestApp();
    const authorize = subscribe('authorize');
    try {
      const { code } = await obtainCode(t);
      const ends = authorize.seen.filter((s) => s.event === 'asyncEnd').map((s) => s.context);
      expect(ends.length).toBeGreaterThan(1);
      expect(ends.filter((c) => 'grantType' in c)).toEqual([
        expect.objectContaining({
          endpoint: 'consent',
          grantType: 'authorization_code',
          outcome: 'success',
          status: 303,
        }),
      ]);
      expect(ends.at(-1)).toHaveProperty('grantType', 'authorization_code');
      expect(JSON.stringify(authorize.seen)).not.toContain(code);
    } finally {
      authorize.stop();
    }
  });
});

describe('a page refused before its steps', () => {
  it('HEAD on the authorization page ends its trace as an error (405), like any refusal', async () => {
    t = await createTestApp();
    const authorize = subscribe('authorize');
    try {
      expect((await t.agent.head('/oauth/authorize')).status).toBe(405);
      await new Promise((resolve) => setImmediate(resolve));
      expect(authorize.seen.map((s) => s.event)).toEqual(['start', 'end', 'error', 'asyncStart', 'asyncEnd']);
      expect(authorize.seen.at(-1)!.context).toMatchObject({
        method: 'HEAD',
        status: 405,
        outcome: 'error',
        errorCode: 'invalid_request',
      });
    } finally {
      authorize.stop();
    }
  });
});

describe('a request answered within its synchronous part', () => {
  it('publishes in the order a traced promise would: start, end, then asyncStart and asyncEnd', async () => {
    t = await createTestApp();
    const bearer = subscribe('bearer');
    try {
      // No Authorization header: requireBearer answers 401 before anything waits.
      expect((await t.agent.get('/v1/realms')).status).toBe(401);
      expect(bearer.seen.map((s) => s.event)).toEqual(['start', 'end', 'asyncStart', 'asyncEnd']);
      // A bare challenge has no error code (RFC 6750 3.1), but it refuses the request all the same.
      expect(bearer.seen.at(-1)!.context).toMatchObject({
        endpoint: 'bearer',
        status: 401,
        outcome: 'error',
      });
      expect(bearer.seen.at(-1)!.context).not.toHaveProperty('errorCode');
    } finally {
      bearer.stop();
    }
  });
});

describe('requireBearer on its tracing channel', () => {
  it("ends the trace before the host's route runs: the duration is the guard's, not the route's", async () => {
    t = await createTestApp();
    const { code } = await obtainCode(t);
    const { access_token: token } = (await exchangeCode(t, code)).body as { access_token: string };
    const bearer = subscribe('bearer');
    try {
      let seenByRoute: string[] = [];
      t.app.get('/traced-route', requireBearer(t.server), (_req, res) => {
        seenByRoute = bearer.seen.map((s) => s.event);
        res.json({ ok: true });
      });
      expect((await t.agent.get('/traced-route').set('Authorization', `Bearer ${token}`)).status).toBe(200);
      expect(seenByRoute).toEqual(['start', 'end', 'asyncStart', 'asyncEnd']);
      expect(bearer.seen.at(-1)!.context).toMatchObject({ endpoint: 'bearer', outcome: 'success' });
    } finally {
      bearer.stop();
    }
  });
});
