/**
 * Issue 18, finding 4: one login state is processed at most once. Parallel callbacks carrying one
 * session cookie each load their own copy of the session, so each finds the login state; only the
 * claim in the shared store lets the first through and refuses the others before they reach
 * the provider's check_authentication.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import { pathOf } from '../support/flow.js';
import { loginCallback } from '../support/python-flow.js';
import {
  pythonOpenIdAvailability,
  startPythonProvider,
  type PythonProvider,
} from '../support/python-openid.js';

const python = pythonOpenIdAvailability();
const suite = python.ok ? describe : describe.skip;
const missing = python.ok ? '' : ` [NOT RUN: ${python.reason}]`;

const PARALLEL = 50;

suite(`login callback: one login state, ${PARALLEL} parallel forged callbacks${missing}`, () => {
  let op: PythonProvider;
  let t: TestApp;
  let writes: number;
  beforeAll(async () => {
    op = await startPythonProvider();
  });
  afterAll(() => op?.close());
  beforeEach(async () => {
    await op.configure();
    t = await createTestApp({ providers: [{ name: 'Python OP', identifier: op.identifier }] });
    writes = 0;
    const findOrCreate = t.storage.users.findOrCreate.bind(t.storage.users);
    t.storage.users.findOrCreate = (...args) => (writes++, findOrCreate(...args));
  });
  afterEach(() => t.close());

  it('lets at most one reach check_authentication; every one is refused, no user, no token', async () => {
    const genuine = await loginCallback(t, t.agent, 'Python OP');
    // Forged from the genuine callback: each with its own fresh nonce (so the nonce store does
    // not stop them) and a signature the provider will not confirm.
    const stamp = new Date().toISOString().slice(0, 19);
    const forged = Array.from({ length: PARALLEL }, (_, i) => {
      const url = new URL(genuine);
      url.searchParams.set('openid.response_nonce', `${stamp}Zforged-${i}`);
      url.searchParams.set('openid.sig', Buffer.alloc(20, i).toString('base64'));
      return url;
    });
    const before = (await op.stats()).check_authentication ?? 0;

    const answers = await Promise.all(forged.map((url) => t.agent.get(pathOf(url.href))));

    const checks = ((await op.stats()).check_authentication ?? 0) - before;
    expect(checks).toBeLessThanOrEqual(1);
    for (const res of answers) {
      expect(res.status).toBe(400);
      expect(res.headers.location).toBeUndefined();
      expect(res.text).toContain('Try again');
    }
    expect(writes).toBe(0);
    // Not signed in: a new authorization request shows the provider selection, not consent.
    const again = await t.agent.get('/oauth/authorize').query({
      response_type: 'code',
      client_id: 'code-client',
      redirect_uri: 'https://client.example/cb',
      state: 'x',
    });
    expect(again.status).toBe(200);
    expect(again.text).not.toContain('Do you trust');
  });

  it('still lets the genuine callback through when it is the first', async () => {
    const genuine = await loginCallback(t, t.agent, 'Python OP');
    const before = (await op.stats()).check_authentication ?? 0;
    const copies = [genuine, ...Array.from({ length: 9 }, () => genuine)];
    const answers = await Promise.all(copies.map((url) => t.agent.get(pathOf(url.href))));
    expect(((await op.stats()).check_authentication ?? 0) - before).toBe(1);
    // The login: 303 to the resumed authorization request (post/redirect/get).
    expect(answers.map((r) => r.status).sort()).toEqual([303, ...Array(copies.length - 1).fill(400)]);
    expect(writes).toBe(1);
  });
});
