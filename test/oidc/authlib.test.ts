/**
 * OpenID Connect against Python's Authlib (Debian's python3-authlib 1.2), used unmodified as a
 * relying party (test/oidc/authlib-rp.py): discovery, the code flow with PKCE and a nonce, the ID
 * token validated against the JWKS with Authlib's own claim checks (`iss`, `aud`, `exp`, `nonce`),
 * UserInfo. Through the plain, Steam-shaped and Launchpad-shaped development providers (RS256 and
 * ES256), with `sub` and the provider claims checked. The
 * person's part (login, consent) is the helpers' browser. Missing Authlib is reported, and is a
 * failure when CI is set.
 */
import { execFile, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { launchpad, registerClient, steam, type ProviderOptions } from '../../src/index.js';
import { startDevelopmentProvider } from '../../src/testing/index.js';
import { CODE_REDIRECT, createTestApp, type TestApp } from '../support/app.js';
import { answerConsent, authorizeWithLogin } from '../support/flow.js';
import { PYTHON } from '../support/python-openid.js';

const execFileAsync = promisify(execFile);
const SCRIPT = fileURLToPath(new URL('./authlib-rp.py', import.meta.url));

function authlibAvailability(): { ok: true } | { ok: false; reason: string } {
  const run = spawnSync(PYTHON, ['-c', 'import authlib.jose, authlib.integrations.requests_client'], {
    encoding: 'utf8',
    timeout: 10_000,
  });
  if (run.status === 0) return { ok: true };
  const reason = `${PYTHON} cannot import Authlib (${run.error?.message ?? run.stderr.trim().split('\n').at(-1)})`;
  if (process.env.CI) throw new Error(`${reason} (CI is set: the Authlib interoperability test must run)`);
  console.warn(
    `NOT TESTED: ${reason}. Install it with: apt-get install -y --no-install-recommends python3-authlib python3-requests`,
  );
  return { ok: false, reason };
}

const authlib = authlibAvailability();

/**
 * Runs the relying party; resolves what it printed, as JSON. Asynchronously: it talks to the test
 * app, which answers from this process's event loop.
 */
async function rp(...args: string[]): Promise<Record<string, unknown>> {
  try {
    const { stdout } = await execFileAsync(PYTHON, [SCRIPT, ...args], {
      encoding: 'utf8',
      timeout: 30_000,
      env: { ...process.env, AUTHLIB_INSECURE_TRANSPORT: '1' },
    });
    return JSON.parse(stdout) as Record<string, unknown>;
  } catch (err) {
    throw new Error(`authlib-rp.py ${args[0]} failed:\n${(err as { stderr?: string }).stderr ?? err}`);
  }
}

let t: TestApp | undefined;
let op: Awaited<ReturnType<typeof startDevelopmentProvider>> | undefined;
afterEach(async () => {
  await t?.close();
  await op?.close();
  t = op = undefined;
});

describe(`Authlib as the relying party${authlib.ok ? '' : ` [NOT RUN: ${authlib.reason}]`}`, () => {
  it.skipIf(!authlib.ok).each([
    { shape: 'generic' as const, user: 'alice', alg: 'RS256' as const, expected: {} },
    {
      shape: 'steam' as const,
      user: '76561198000000042',
      alg: 'ES256' as const,
      expected: { steam_id: '76561198000000042' },
    },
    {
      shape: 'launchpad' as const,
      user: 'alice',
      alg: 'RS256' as const,
      expected: { preferred_username: 'alice', name: 'Alice' },
    },
  ])(
    '$shape-shaped provider, $alg: the ID token and UserInfo check out',
    async ({ shape, user, alg, expected }) => {
      let providers: ProviderOptions[] | undefined;
      if (shape !== 'generic') {
        op = await startDevelopmentProvider({ shape });
        providers = [(shape === 'steam' ? steam : launchpad)({ baseUrl: op.url })];
      }
      t = await createTestApp({
        oidc: { keySecret: 'an-oidc-key-secret-of-at-least-32-chars', signingAlgorithm: alg },
        ...(providers && { providers }),
      });
      const { clientId, clientSecret } = await registerClient(t.storage, {
        applicationName: 'Authlib app',
        redirectUri: CODE_REDIRECT,
        scopes: ['openid', 'profile'],
      });
      const started = (await rp('start', t.baseUrl, clientId, CODE_REDIRECT)) as {
        url: string;
        state: string;
        nonce: string;
        verifier: string;
      };
      let res = await authorizeWithLogin(t, Object.fromEntries(new URL(started.url).searchParams), user);
      if (res.status === 200) res = await answerConsent(t, res.text, 'allow');
      const callback = res.headers.location!;
      expect(callback.startsWith(CODE_REDIRECT)).toBe(true);
      const finished = (await rp(
        'finish',
        t.baseUrl,
        clientId,
        clientSecret!,
        CODE_REDIRECT,
        callback,
        started.state,
        started.nonce,
        started.verifier,
      )) as { claims: Record<string, unknown>; userinfo: Record<string, unknown> };
      expect(finished.claims).toMatchObject({
        iss: t.baseUrl,
        aud: clientId,
        nonce: started.nonce,
        ...expected,
      });
      expect(finished.userinfo).toEqual({ sub: finished.claims.sub, ...expected });
    },
  );
});
