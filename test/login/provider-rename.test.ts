/**
 * A user's identity is the verified identity at the provider, not the name an operator gives the
 * provider (issue 29): renaming a provider, or moving from a hand-written `{ name, identifier }` to
 * its preset, keeps every user and every consent. Real servers on 127.0.0.1, one shared storage.
 */
import express from 'express';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import supertest from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createAuthorizationServer,
  memoryStorage,
  oauthRouter,
  steam,
  type AuthorizationServerOptions,
  type Storage,
} from '../../src/index.js';
import { startDevelopmentProvider } from '../../src/testing/index.js';
import { CODE_REDIRECT, createTestApp, type TestApp } from '../support/app.js';
import { answerConsent, authorizeWithLogin } from '../support/flow.js';

const closing: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closing.splice(0).reverse()) await close();
});

/** The authorization server on `storage` with these providers, mounted as the README mounts it. */
async function serverOn(storage: Storage, providers: AuthorizationServerOptions['providers']) {
  const http = createServer();
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  closing.push(() => new Promise((resolve) => (http.closeAllConnections(), http.close(resolve))));
  const baseUrl = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  const server = createAuthorizationServer({
    baseUrl,
    storage,
    providers,
    session: { secret: 'a test session secret that is long enough' },
    logger: { warn: () => {}, error: () => {} },
  });
  http.on('request', express().use(oauthRouter(server)));
  return { agent: supertest.agent(baseUrl), baseUrl, server } as unknown as TestApp;
}

const query = { response_type: 'code', client_id: 'code-client', redirect_uri: CODE_REDIRECT, state: 's' };

/** Signs alice in at `t` and answers the consent page if one is shown; resolves the user id. */
async function signInTrusting(t: TestApp, expectConsent: boolean) {
  const answer = await authorizeWithLogin(t, query, 'alice');
  if (expectConsent) {
    expect(answer.status).toBe(200);
    expect(answer.text).toContain('name="decision"');
    const back = await answerConsent(t, answer.text, 'allow');
    expect(back.headers.location).toMatch(/^https:\/\/client\.example\/cb\?code=/);
  } else {
    // Already trusted: straight back to the client, no second consent.
    expect(answer.status).toBe(302);
    expect(answer.headers.location).toMatch(/^https:\/\/client\.example\/cb\?code=/);
  }
  const [grant] = await t.server.storage.grants.list({ clientId: 'code-client' });
  return grant!.userId;
}

describe('renaming a provider changes no user', () => {
  it('a provider renamed: the same user, and no new consent', async () => {
    const storage = memoryStorage();
    const first: TestApp = await createTestApp({ storage });
    closing.push(() => first.close());
    const before = await signInTrusting(first, true);
    const renamed = await serverOn(storage, [{ name: 'Renamed ID', identifier: first.provider.identifier }]);
    expect(await signInTrusting(renamed, false)).toBe(before);
    expect(await storage.grants.list({ clientId: 'code-client' })).toHaveLength(1);
  });

  it('Steam configured by hand, then through steam(): the same user, and no new consent', async () => {
    const op = await startDevelopmentProvider({ shape: 'steam' });
    closing.push(() => op.close());
    const storage = memoryStorage();
    const byHand: TestApp = await createTestApp({
      storage,
      providers: [{ name: 'Example ID', identifier: op.identifier }],
    });
    closing.push(() => byHand.close());
    const before = await signInTrusting(byHand, true);
    const preset = await serverOn(storage, [steam({ baseUrl: op.url })]);
    expect(await signInTrusting(preset, false)).toBe(before);
  });
});
