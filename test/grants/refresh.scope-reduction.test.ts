/**
 * Issue 18, finding 2: a refresh grants no more than the intersection of the refresh token's
 * scopes, the grant (the user's consent) and the scopes the client has now; a `scope` parameter
 * may only ask for part of that (RFC 6749 section 6). When nothing remains, the refresh is
 * refused with `invalid_scope` rather than answered with a token that grants nothing.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import express from 'express';
import supertest from 'supertest';
import { bearerOf, requireBearer, type ServerEvent } from '../../src/index.js';
import { createTestApp, expectOAuthError, type TestApp } from '../support/app.js';
import {
  callRealms,
  mountClientEndpoints,
  obtainTokens,
  postAs,
  recordEvents,
  refreshWith,
  storageEngines,
} from '../support/endpoints.js';
import { storedToken } from '../support/grants.js';

const engines = await storageEngines();

const cases = engines.flatMap((engine) => [false, true].map((rotate) => ({ ...engine, rotate })));

describe.each(cases)(
  'refresh after a scope reduction on $name storage, rotation $rotate',
  ({ skip, open, rotate }) => {
    const test = it.skipIf(skip !== null);
    let t: TestApp;
    let dispose: () => Promise<void>;
    let events: ServerEvent[];

    beforeEach(async () => {
      if (skip !== null) return;
      const opened = await open();
      dispose = opened.dispose;
      t = await createTestApp({ storage: opened.storage, tokens: { rotateRefreshTokens: rotate } });
      events = recordEvents(t);
    });
    afterEach(async () => {
      if (skip !== null) return;
      await t.close();
      await dispose();
    });

    /** A refresh with a `scope` parameter. */
    const refreshFor = (refreshToken: string, scope: string) => refreshWith(t, refreshToken).send({ scope });

    const refreshes = () => events.filter((event) => event.type === 'token.refreshed');

    test('a scope removed from the client is not in the refreshed access token', async () => {
      const tokens = await obtainTokens(t);
      expect(tokens.scope).toBe('realms profile');
      await t.storage.clients.update!(t.codeClient.clientId, { scopes: ['realms'] });

      const res = await refreshWith(t, tokens.refresh_token);
      expect(res.status).toBe(200);
      expect(res.body.scope).toBe('realms');
      const stored = await storedToken(t.server, res.body.access_token);
      expect(stored!.token.scopes).toEqual(['realms']);
      expect((await callRealms(t, res.body.access_token)).status).toBe(200);
    });

    test('asking a refresh for a scope the client no longer has is invalid_scope, and mints nothing', async () => {
      const tokens = await obtainTokens(t);
      await t.storage.clients.update!(t.codeClient.clientId, { scopes: ['realms'] });

      for (const scope of ['profile', 'realms profile']) {
        const res = await refreshFor(tokens.refresh_token, scope);
        expectOAuthError(res, 'invalid_scope');
        expect(res.body.access_token).toBeUndefined();
      }
      expect(refreshes()).toHaveLength(0);
      // The refresh token itself is untouched: a request within what remains works.
      const res = await refreshFor(tokens.refresh_token, 'realms');
      expect(res.status).toBe(200);
      expect(res.body.scope).toBe('realms');
    });

    test('a refresh is invalid_scope when none of its scopes remains with the client, and works again when one is back', async () => {
      const tokens = await obtainTokens(t);
      await t.storage.clients.update!(t.codeClient.clientId, { scopes: ['other'] });

      const refused = await refreshWith(t, tokens.refresh_token);
      expectOAuthError(refused, 'invalid_scope');
      expect(refused.body.access_token).toBeUndefined();
      expect(refreshes()).toHaveLength(0);

      await t.storage.clients.update!(t.codeClient.clientId, { scopes: ['other', 'profile'] });
      const res = await refreshWith(t, tokens.refresh_token);
      expect(res.status).toBe(200);
      expect(res.body.scope).toBe('profile');
    });

    test('a scope taken out of the grant (the consent) is not in the refreshed access token', async () => {
      const tokens = await obtainTokens(t);
      const stored = await storedToken(t.server, tokens.refresh_token);
      await t.storage.grants.save({ ...stored!.grant!, scopes: ['profile'] });

      const res = await refreshWith(t, tokens.refresh_token);
      expect(res.status).toBe(200);
      expect(res.body.scope).toBe('profile');
      expect((await storedToken(t.server, res.body.access_token))!.token.scopes).toEqual(['profile']);
    });

    test('an access token issued before the reduction loses the scope at once: requireBearer and introspection', async () => {
      mountClientEndpoints(t);
      const tokens = await obtainTokens(t);
      const api = express();
      api.get('/profile', requireBearer(t.server, { scopes: ['profile'] }), (_req, res) => {
        res.json(bearerOf(res));
      });
      expect(
        (await supertest(api).get('/profile').set('Authorization', `Bearer ${tokens.access_token}`)).status,
      ).toBe(200);

      await t.storage.clients.update!(t.codeClient.clientId, { scopes: ['realms'] });

      const refused = await supertest(api)
        .get('/profile')
        .set('Authorization', `Bearer ${tokens.access_token}`);
      expect(refused.status).toBe(403);
      expect(refused.headers['www-authenticate']).toContain('insufficient_scope');
      const realms = await callRealms(t, tokens.access_token);
      expect(realms.status).toBe(200);
      const introspected = await postAs(t, '/oauth/introspect', { token: tokens.access_token });
      expect(introspected.body).toMatchObject({ active: true, scope: 'realms' });
    });
  },
);
