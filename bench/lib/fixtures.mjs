/**
 * What every contender serves and every workload sends: one client, one user, one access token
 * and one refresh token known by their plaintext, and numbered single-use codes. Contenders store
 * them their own way (the library hashed, the peers as they choose); the runner only sends them.
 */
import { createHash } from 'node:crypto';

export const CLIENT_ID = 'bench-client';
export const CLIENT_SECRET = 'bench-client-secret-0123456789abcdefghijklmnopqrstu';
export const REDIRECT_URI = 'https://client.example/cb';
export const SCOPE = 'realms:read';
export const USER = 'bench-user';
export const ACCESS_TOKEN = 'bench-access-token-0123456789abcdefghijklmnopqrstuv';
export const REFRESH_TOKEN = 'bench-refresh-token-0123456789abcdefghijklmnopqrstu';
export const STATE = 'af0ifjsldkj';

/** The response of `GET /v1/realms`, the same from every contender. */
export const REALMS = {
  realms: [
    { id: 'r-1', name: 'Main' },
    { id: 'r-2', name: 'Staging' },
  ],
};

/** The n-th single-use authorization code (as long as a real one: 43 characters). */
export const codeFor = (n) => `bench-code-${String(n).padStart(32, '0')}`;

/** The plaintext of the n-th extra access token stored to grow the token table. */
export const fillerTokenFor = (n) => `bench-filler-${String(n).padStart(30, '0')}`;

/** SHA-256, base64url: the form in which openid-oauth-bridge stores tokens, codes and secrets. */
export const sha256 = (value) => createHash('sha256').update(value).digest('base64url');

export const basicAuth = (id, secret) =>
  `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;

/** `?response_type=code&…`: the authorization request of the `authorize` workload. */
export const authorizeQuery = new URLSearchParams({
  response_type: 'code',
  client_id: CLIENT_ID,
  redirect_uri: REDIRECT_URI,
  scope: SCOPE,
  state: STATE,
}).toString();

/** Workloads and what counts as a right answer to each. */
export const WORKLOADS = ['realms', 'refresh', 'code', 'authorize'];
