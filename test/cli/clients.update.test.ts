/**
 * `clients update` changes a registered client in place (the CLI used to offer only remove and
 * add again, which dropped its grants); `clients add` refuses what registerClient refuses.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { connectStorage } from '../../src/index.js';
import { runCli } from '../support/cli.js';

vi.setConfig({ testTimeout: 60_000 });
const dir = mkdtempSync(join(tmpdir(), 'oob-cli-update-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('openid-oauth-bridge clients update', () => {
  it('changes name, redirect URI, scopes and PKCE without removing the client', async () => {
    const url = `sqlite:${join(dir, 'update.db')}`;
    const cli = (...args: string[]) => runCli(['--database-url', url, ...args]);
    expect((await cli('migrate')).code).toBe(0);
    const added = await cli(
      '--json',
      'clients',
      'add',
      '--client-id',
      'printer',
      '--name',
      'Printer',
      '--redirect-uri',
      'https://printer.example/cb',
      '--scope',
      'realms',
      'profile',
    );
    expect(added.code, added.stderr).toBe(0);
    const storage = await connectStorage(url);
    try {
      const before = (await storage.clients.find('printer'))!;
      const updated = await cli(
        '--json',
        'clients',
        'update',
        'printer',
        '--name',
        'Photo printer',
        '--redirect-uri',
        'https://photos.example/cb',
        '--scope',
        'realms',
        '--require-pkce',
      );
      expect(updated.code, updated.stderr).toBe(0);
      expect(JSON.parse(updated.stdout)).toMatchObject({
        client_id: 'printer',
        application_name: 'Photo printer',
        redirect_uri: 'https://photos.example/cb',
        scope: 'realms',
        require_pkce: true,
      });
      const after = (await storage.clients.find('printer'))!;
      // The same client: its secret and creation time are kept.
      expect(after.secretHash).toBe(before.secretHash);
      expect(after.createdAt).toBe(before.createdAt);

      expect((await cli('clients', 'update', 'printer', '--no-require-pkce')).code).toBe(0);
      expect((await storage.clients.find('printer'))!.requirePkce).toBe(false);

      const refused = await cli('clients', 'update', 'printer', '--redirect-uri', 'http://photos.example/cb');
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain(
        'error: redirectUri "http://photos.example/cb" must use https; plain http is allowed only on a loopback address',
      );
      const nothing = await cli('clients', 'update', 'printer');
      expect(nothing.code).toBe(1);
      expect(nothing.stderr).toContain('error: nothing to change');
      expect((await cli('clients', 'update', 'nobody', '--name', 'X')).stderr).toContain(
        'error: no client has client_id nobody',
      );
    } finally {
      await storage.close();
    }
  });

  it('changes the grant: to implicit the secret goes, to code a new one is shown once', async () => {
    const url = `sqlite:${join(dir, 'grant.db')}`;
    const cli = (...args: string[]) => runCli(['--database-url', url, ...args]);
    expect((await cli('migrate')).code).toBe(0);
    const added = await cli(
      '--json',
      'clients',
      'add',
      '--client-id',
      'spa',
      '--name',
      'SPA',
      '--redirect-uri',
      'https://spa.example/cb',
      '--scope',
      'realms',
      '--require-pkce',
    );
    expect(added.code, added.stderr).toBe(0);
    const storage = await connectStorage(url);
    try {
      const toImplicit = await cli('--json', 'clients', 'update', 'spa', '--grant', 'implicit');
      expect(toImplicit.code, toImplicit.stderr).toBe(0);
      expect(JSON.parse(toImplicit.stdout)).toMatchObject({ grant_type: 'implicit', require_pkce: false });
      expect(JSON.parse(toImplicit.stdout).client_secret).toBeUndefined();
      expect(await storage.clients.find('spa')).toMatchObject({ grantType: 'implicit', secretHash: null });

      const toCode = await cli('--json', 'clients', 'update', 'spa', '--grant', 'code');
      expect(toCode.code, toCode.stderr).toBe(0);
      const answer = JSON.parse(toCode.stdout) as { grant_type: string; client_secret: string };
      expect(answer.grant_type).toBe('authorization_code');
      expect(answer.client_secret).toMatch(/^[\w-]{40,}$/);
      const stored = (await storage.clients.find('spa'))!;
      expect(stored.secretHash).not.toBeNull();
      expect(stored.secretHash).not.toContain(answer.client_secret);

      const again = await cli('--json', 'clients', 'update', 'spa', '--grant', 'code');
      expect(JSON.parse(again.stdout).client_secret).toBeUndefined();
      expect((await storage.clients.find('spa'))!.secretHash).toBe(stored.secretHash);
    } finally {
      await storage.close();
    }
  });

  it('clients add refuses plain http off loopback and requires a scope', async () => {
    const url = `sqlite:${join(dir, 'add.db')}`;
    const cli = (...args: string[]) => runCli(['--database-url', url, ...args]);
    await cli('migrate');
    const http = await cli(
      'clients',
      'add',
      '--name',
      'P',
      '--redirect-uri',
      'http://printer.example/cb',
      '--scope',
      'realms',
    );
    expect(http.code).toBe(1);
    expect(http.stderr).toContain('must use https');
    const loopback = await cli(
      'clients',
      'add',
      '--name',
      'P',
      '--redirect-uri',
      'http://127.0.0.1:8080/cb',
      '--scope',
      'realms',
    );
    expect(loopback.code).toBe(0);
    const noScope = await cli('clients', 'add', '--name', 'P', '--redirect-uri', 'https://p.example/cb');
    expect(noScope.code).toBe(1);
    expect(noScope.stderr).toContain("required option '--scope <scopes...>' not specified");
  });

  it('sets, replaces and clears the resources a client may use (--resource, --no-resource)', async () => {
    const url = `sqlite:${join(dir, 'resources.db')}`;
    const cli = (...args: string[]) => runCli(['--database-url', url, ...args]);
    expect((await cli('migrate')).code).toBe(0);
    const added = await cli(
      '--json',
      'clients',
      'add',
      '--client-id',
      'agent',
      '--name',
      'Agent',
      '--redirect-uri',
      'https://agent.example/cb',
      '--scope',
      'realms',
      '--resource',
      'https://api.example.com/mcp',
    );
    expect(added.code, added.stderr).toBe(0);
    expect(JSON.parse(added.stdout)).toMatchObject({
      resources: ['https://api.example.com/mcp'],
      registered_via: 'operator',
    });
    const cleared = await cli('--json', 'clients', 'update', 'agent', '--no-resource');
    expect(cleared.code, cleared.stderr).toBe(0);
    expect(JSON.parse(cleared.stdout).resources).toEqual([]);
    const refused = await cli('clients', 'update', 'agent', '--resource', '/mcp');
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('resources must list');
  });
});
