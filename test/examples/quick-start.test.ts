import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDevelopmentProvider, type RunningDevelopmentProvider } from '../../src/testing/index.js';
import { freePort, runCodeFlow, runExample } from './run-example.js';

/*
 * The README's quick start, ESM and CommonJS (examples/quick-start.mjs and .cjs, which the README
 * includes word for word), run as the README says: a whole code flow against it, then a restart on
 * the same database, which must find the registered client and keep it instead of crashing.
 */

let op: RunningDevelopmentProvider;
let dir: string;
beforeAll(async () => {
  op = await startDevelopmentProvider({ users: ['alice'] });
  dir = mkdtempSync(join(tmpdir(), 'oob-quick-start-'));
});
afterAll(async () => {
  await op.close();
  rmSync(dir, { recursive: true, force: true });
});

describe.each(['quick-start.mjs', 'quick-start.cjs'])('examples/%s', (file) => {
  it('runs the code flow, and restarts on the same database without registering twice', async () => {
    const port = await freePort();
    const env = {
      PORT: String(port),
      DATABASE_URL: `sqlite:${join(dir, `${file}.db`)}`,
      SESSION_SECRET: 'a session secret of at least 32 characters',
      OPENID_PROVIDER: op.identifier,
    };
    const first = runExample(file, env);
    try {
      const [, clientSecret] = await first.waitFor(/secret \(shown once\): (\S+)/);
      await first.waitFor(/listening on/);
      const { body } = await runCodeFlow(
        {
          baseUrl: `http://localhost:${port}`,
          origin: `http://127.0.0.1:${port}`,
          clientId: 'photo-printer',
          clientSecret: clientSecret!,
          redirectUri: 'https://printer.example/callback',
          scope: 'realms:read',
          providerIdentifier: op.identifier,
          user: 'alice',
        },
        '/v1/realms',
      );
      expect(body).toMatchObject({ realms: ['Ravenholm'], user: expect.any(String) });
    } finally {
      await first.stop();
    }

    const second = runExample(file, env);
    try {
      await second.waitFor(/listening on/);
      expect(second.output()).not.toMatch(/registered|Error/);
    } finally {
      await second.stop();
    }
  }, 60_000);
});
