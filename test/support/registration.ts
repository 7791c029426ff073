import { createHash, randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import type { TestApp } from './app.js';
import { obtainCode } from './flow.js';

/** `POST /oauth/register` with `body` as JSON (RFC 7591 3.1), and `headers` besides. */
export function register(t: TestApp, body: unknown, headers: Record<string, string> = {}) {
  return t.agent
    .post('/oauth/register')
    .set({ 'Content-Type': 'application/json', ...headers })
    .send(JSON.stringify(body));
}

/** A PKCE verifier and its S256 challenge (RFC 7636 4.1, 4.2). */
export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/**
 * A public client's whole code flow with PKCE through the test helpers: authorize, sign in at the
 * development provider, trust the application on the consent page (whose HTML is handed to
 * `sawConsent`), exchange the code. Resolves the token response.
 */
export async function publicCodeFlow(
  t: TestApp,
  client: { clientId: string; redirectUri: string; scope?: string },
  user = 'alice',
) {
  const { verifier, challenge } = pkcePair();
  const { code } = await obtainCode(
    t,
    {
      client_id: client.clientId,
      redirect_uri: client.redirectUri,
      code_challenge: challenge,
      code_challenge_method: 'S256',
      ...(client.scope === undefined ? {} : { scope: client.scope }),
    },
    user,
  );
  const res = await t.agent.post('/oauth/token').type('form').send({
    grant_type: 'authorization_code',
    code,
    client_id: client.clientId,
    redirect_uri: client.redirectUri,
    code_verifier: verifier,
  });
  expect(res.status).toBe(200);
  return res.body as { access_token: string; refresh_token: string; scope?: string };
}
