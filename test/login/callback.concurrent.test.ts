/**
 * Issue 18, finding 4: one login state is processed at most once. Parallel callbacks carrying one
 * session cookie each load their own copy of the session, so each finds the login state; only the
 * claim in the shared store lets the first through and refuses the others before they reach
 * the provider's check_authentication.
 *
 * The provider is the Steam-like one (python3-openid) answering check_authentication after
 * 300 ms, as a provider across the Internet does: with one on the loopback answering in a
 * millisecond, the first callback's session is saved before most others are read, and the race
 * this guards against would rarely show. On the code before the fix, 50 of 50 reached it.
 */
import { connect, type Socket } from 'node:net';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import { pathOf } from '../support/flow.js';
import { atProvider, codeQuery, selectionLinks } from '../support/python-flow.js';
import { rawRequest } from '../support/raw-http.js';
import { pythonOpenIdAvailability } from '../support/python-openid.js';
import { startSteamLikeProvider, type SteamLikeProvider } from '../support/steam-like-provider.js';

const python = pythonOpenIdAvailability();
const suite = python.ok ? describe : describe.skip;
const missing = python.ok ? '' : ` [NOT RUN: ${python.reason}]`;

const PARALLEL = 50;

/** A browser with one cookie jar that begins a login and resolves its (undelivered) callback. */
async function beginLogin(t: TestApp, provider: string) {
  const cookies = new Map<string, string>();
  const get = async (url: string) => {
    const cookie = [...cookies].map(([name, value]) => `${name}=${value}`).join('; ');
    const res = await rawRequest(url, { headers: cookie ? { cookie } : {} });
    for (const line of [res.headers['set-cookie'] ?? []].flat()) {
      const [pair = ''] = line.split(';');
      cookies.set(pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1));
    }
    return res;
  };
  const selection = await get(`${t.baseUrl}/oauth/authorize?${new URLSearchParams(codeQuery)}`);
  expect(selection.status).toBe(200);
  const login = await get(new URL(selectionLinks(selection.body).get(provider)!, t.baseUrl).href);
  expect(login.status).toBe(302);
  const callback = await atProvider(login.location!);
  const cookie = [...cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  return { callback, cookie };
}

/**
 * Sends one GET per path, each on its own connection with the same cookie, all connections
 * opened first and every request written in one go, so that they arrive together. Resolves
 * the status and body of each answer.
 */
async function sendTogether(baseUrl: string, paths: string[], cookie: string) {
  const { hostname, port } = new URL(baseUrl);
  const sockets = await Promise.all(
    paths.map(
      () =>
        new Promise<Socket>((resolve, reject) => {
          const socket = connect(Number(port), hostname, () => resolve(socket));
          socket.once('error', reject);
        }),
    ),
  );
  const answers = sockets.map(
    (socket) =>
      new Promise<{ status: number; text: string }>((resolve, reject) => {
        let raw = '';
        socket.setEncoding('utf8');
        socket.on('data', (chunk: string) => (raw += chunk));
        socket.once('error', reject);
        socket.once('end', () => resolve({ status: Number(raw.split(' ')[1]), text: raw }));
      }),
  );
  sockets.forEach((socket, i) =>
    socket.write(
      `GET ${paths[i]} HTTP/1.1\r\nHost: ${hostname}:${port}\r\nCookie: ${cookie}\r\nConnection: close\r\n\r\n`,
    ),
  );
  return Promise.all(answers);
}

suite(`login callback: one login state, ${PARALLEL} parallel forged callbacks${missing}`, () => {
  let op: SteamLikeProvider;
  let t: TestApp;
  let writes: number;
  beforeAll(async () => {
    op = await startSteamLikeProvider();
  });
  afterAll(() => op?.close());
  beforeEach(async () => {
    // A provider across the Internet takes a while to answer; the race is the time it takes.
    await op.configure({ checkAuthenticationDelayMs: 300 });
    t = await createTestApp({ providers: [{ name: 'Steam', identifier: op.identifier }] });
    writes = 0;
    const findOrCreate = t.storage.users.findOrCreate.bind(t.storage.users);
    t.storage.users.findOrCreate = (...args) => (writes++, findOrCreate(...args));
  });
  afterEach(() => t.close());

  it('lets at most one reach check_authentication; every one is refused, no user, no token', async () => {
    const { callback: genuine, cookie } = await beginLogin(t, 'Steam');
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

    const answers = await sendTogether(
      t.baseUrl,
      forged.map((url) => pathOf(url.href)),
      cookie,
    );

    const checks = ((await op.stats()).check_authentication ?? 0) - before;
    expect(checks).toBeLessThanOrEqual(1);
    for (const res of answers) {
      expect(res.status).toBe(400);
      expect(res.text).not.toMatch(/^location:/im);
      expect(res.text).toContain('Try again');
    }
    expect(writes).toBe(0);
    // Not signed in: a new authorization request shows the provider selection, not consent.
    const again = await rawRequest(`${t.baseUrl}/oauth/authorize?${new URLSearchParams(codeQuery)}`, {
      headers: { cookie },
    });
    expect(again.status).toBe(200);
    expect(again.body).not.toContain('Do you trust');
  });

  it('still lets the genuine callback through when it is the first', async () => {
    const { callback: genuine, cookie } = await beginLogin(t, 'Steam');
    const before = (await op.stats()).check_authentication ?? 0;
    const copies = Array.from({ length: 10 }, () => pathOf(genuine.href));
    const answers = await sendTogether(t.baseUrl, copies, cookie);
    expect(((await op.stats()).check_authentication ?? 0) - before).toBe(1);
    // The login: 303 to the resumed authorization request (post/redirect/get).
    expect(answers.map((r) => r.status).sort()).toEqual([303, ...Array(copies.length - 1).fill(400)]);
    expect(writes).toBe(1);
  });
});
