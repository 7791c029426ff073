/**
 * What the fault tests send and expect: the three kinds of answer a client sees while storage is
 * unavailable, and credentials seeded through the library's own issuing functions.
 */
import { expect } from 'vitest';
import { seedCode as seedCodeFor, seedTokens as seedTokensFor } from './grants.js';
import { CODE_REDIRECT, type TestApp } from './app.js';

export interface Timed {
  res: Response;
  ms: number;
  text: string;
}

/** A request straight to the app (no cookie jar), with how long it took. */
export async function timedFetch(url: string, init: RequestInit = {}): Promise<Timed> {
  const started = performance.now();
  const res = await fetch(url, { redirect: 'manual', ...init });
  const text = await res.text();
  return { res, ms: performance.now() - started, text };
}

/** A token the API accepts, with its refresh token, issued for the test app's code client. */
export async function seedTokens(t: TestApp): Promise<{ accessToken: string; refreshToken: string }> {
  const { accessToken, refreshToken } = await seedTokensFor(t.server, t.codeClient.clientId, 'fault-user');
  return { accessToken, refreshToken };
}

/** A fresh authorization code for the test app's code client, under `userId`'s grant. */
export function seedCode(t: TestApp, userId = 'fault-user'): Promise<string> {
  return seedCodeFor(t.server, { clientId: t.codeClient.clientId, redirectUri: CODE_REDIRECT, userId });
}

export const api = (t: TestApp, accessToken: string) =>
  timedFetch(`${t.baseUrl}/v1/realms`, { headers: { authorization: `Bearer ${accessToken}` } });

export const refresh = (t: TestApp, refreshToken: string) =>
  timedFetch(`${t.baseUrl}/oauth/token`, {
    method: 'POST',
    body: new URLSearchParams({
      grant_type: 'refresh_token',
      refresh_token: refreshToken,
      redirect_uri: CODE_REDIRECT,
      client_id: t.codeClient.clientId,
      client_secret: t.codeClient.clientSecret,
    }),
  });

export const exchange = (t: TestApp, code: string) =>
  timedFetch(`${t.baseUrl}/oauth/token`, {
    method: 'POST',
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      redirect_uri: CODE_REDIRECT,
      client_id: t.codeClient.clientId,
      client_secret: t.codeClient.clientSecret,
    }),
  });

export const authorizePage = (t: TestApp) =>
  timedFetch(
    `${t.baseUrl}/oauth/authorize?${new URLSearchParams({
      response_type: 'code',
      client_id: t.codeClient.clientId,
      redirect_uri: CODE_REDIRECT,
      state: 'fault',
    })}`,
  );

/** The token endpoint during an outage: 503 JSON, Retry-After, no-store, nothing issued. */
export function expectTokenUnavailable({ res, text, ms }: Timed, boundMs: number): void {
  expect(res.status, text).toBe(503);
  expect(JSON.parse(text)).toEqual({
    error: 'temporarily_unavailable',
    error_description: expect.any(String),
  });
  expect(text).not.toContain('access_token');
  expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
  expect(res.headers.get('cache-control')).toBe('no-store');
  expect(res.headers.get('x-request-id')).toBeTruthy();
  expect(ms).toBeLessThan(boundMs);
}

/** requireBearer during an outage: 503, never 401, and nothing said against the token. */
export function expectApiUnavailable({ res, text, ms }: Timed, boundMs: number): void {
  expect(res.status, text).toBe(503);
  expect(JSON.parse(text)).toMatchObject({ error: 'temporarily_unavailable' });
  expect(res.headers.get('www-authenticate')).toBeNull();
  expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
  expect(ms).toBeLessThan(boundMs);
}

/** The authorization endpoint during an outage: a 503 page that redirects nowhere. */
export function expectPageUnavailable({ res, text, ms }: Timed, boundMs: number): void {
  expect(res.status, text).toBe(503);
  expect(res.headers.get('location')).toBeNull();
  expect(res.headers.get('content-type')).toMatch(/^text\/html/);
  expect(text).toContain('Temporarily unavailable');
  expect(text).toContain('Try again');
  expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
  expect(ms).toBeLessThan(boundMs);
}

/** Polls `check` until it holds or `timeoutMs` passes; returns whether it held. */
export async function eventually(check: () => Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return true;
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
