/**
 * The device flow from Python, with Debian's Authlib 1.2 and oauthlib 3.2 used unmodified
 * (test/device/python-device-client.py): the codes, polling through `authorization_pending`, the
 * tokens once a person (the test's browser) approves, and with Authlib a refresh as a public
 * client. Missing libraries are reported, and are a failure when CI is set.
 */
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import { answerDevice, registerDeviceClient } from '../support/device.js';
import { PYTHON } from '../support/python-openid.js';

const SCRIPT = fileURLToPath(new URL('./python-device-client.py', import.meta.url));

function pythonAvailability(): { ok: true } | { ok: false; reason: string } {
  const imports = 'import requests, authlib.integrations.requests_client, oauthlib.oauth2';
  const run = spawnSync(PYTHON, ['-c', imports], { encoding: 'utf8', timeout: 10_000 });
  if (run.status === 0) return { ok: true };
  const reason = `${PYTHON} cannot import Authlib and oauthlib (${run.error?.message ?? run.stderr.trim().split('\n').at(-1)})`;
  if (process.env.CI) throw new Error(`${reason} (CI is set: the Python device clients must run)`);
  console.warn(
    `NOT TESTED: ${reason}. Install them with: apt-get install -y --no-install-recommends python3-authlib python3-oauthlib python3-requests`,
  );
  return { ok: false, reason };
}

const python = pythonAvailability();

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

/** Runs the client; resolves its first line (the codes) at once and its last line when it ends. */
function runClient(kind: 'authlib' | 'oauthlib', issuer: string) {
  const child = spawn(PYTHON, [SCRIPT, kind, issuer, 'realm-cli', 'realms'], {
    env: { ...process.env, AUTHLIB_INSECURE_TRANSPORT: '1', OAUTHLIB_INSECURE_TRANSPORT: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const lines: string[] = [];
  const first = new Promise<Record<string, unknown>>((resolve, reject) => {
    createInterface({ input: child.stdout })
      .on('line', (line) => {
        lines.push(line);
        if (lines.length === 1) resolve(JSON.parse(line) as Record<string, unknown>);
      })
      .on('close', () => reject(new Error(`the client printed nothing:\n${stderr}`)));
  });
  const last = once(child, 'exit').then(([code]) => {
    if (code !== 0) throw new Error(`python-device-client.py ${kind} exited ${code}:\n${stderr}`);
    return JSON.parse(lines.at(-1)!) as {
      token: { access_token: string; refresh_token: string };
      refreshed: { access_token: string; refresh_token: string } | null;
      polls: string[];
    };
  });
  return { first, last };
}

describe.skipIf(!python.ok)(
  `Python device clients${python.ok ? '' : ` (NOT TESTED: ${python.ok === false ? python.reason : ''})`}`,
  () => {
    it.each(['authlib', 'oauthlib'] as const)(
      '%s polls until the person approves, then gets the tokens',
      async (kind) => {
        t = await createTestApp({ device: { interval: 1 }, scopes: { realms: 'See your realms' } });
        await registerDeviceClient(t.storage);
        const run = runClient(kind, t.baseUrl);
        const device = (await run.first) as { user_code: string; interval: number };
        expect(device.interval).toBe(1);
        // The client polls at least once before the person is done.
        await new Promise((resolve) => setTimeout(resolve, 1500));
        await answerDevice(t, device.user_code, 'allow');
        const { token, refreshed, polls } = await run.last;
        expect(polls).toContain('authorization_pending');
        expect(polls).not.toContain('slow_down');
        const api = await fetch(`${t.baseUrl}/v1/realms`, {
          headers: { authorization: `Bearer ${token.access_token}` },
        });
        expect(api.status).toBe(200);
        if (kind === 'authlib') {
          expect(refreshed!.refresh_token).not.toBe(token.refresh_token);
        }
      },
      30_000,
    );
  },
);
