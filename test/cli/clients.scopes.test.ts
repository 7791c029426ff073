/**
 * `clients add` and `clients update` refuse a scope the server does not offer when the operator
 * says which it offers (`--offered-scopes`, `OFFERED_SCOPES`: the CLI cannot read the server's
 * `scopes` option, which is in the host's code), and otherwise warn on stderr about every scope
 * they cannot check (issue 38). The CLI runs as a real process on SQLite.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { connectStorage } from '../../src/index.js';
import { runCli } from '../support/cli.js';

vi.setConfig({ testTimeout: 60_000 });
const dir = mkdtempSync(join(tmpdir(), 'oob-cli-scopes-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const url = `sqlite:${join(dir, 'scopes.db')}`;
const add = (clientId: string, ...scopes: string[]) => [
  '--database-url',
  url,
  'clients',
  'add',
  '--migrate',
  '--client-id',
  clientId,
  '--name',
  'Printer',
  '--redirect-uri',
  'https://printer.example/cb',
  '--scope',
  ...scopes,
];
// Unset whatever the machine running the tests has.
const unset = { OFFERED_SCOPES: '' };

describe('scopes the server does not offer, at the CLI', () => {
  it('are refused when OFFERED_SCOPES or --offered-scopes names what the server offers', async () => {
    const offered = { OFFERED_SCOPES: 'openid profile realms' };
    const typo = await runCli(add('typo', 'realms', 'realm', 'admin'), offered);
    expect(typo.code).toBe(1);
    expect(typo.stderr).toContain(
      'error: "realm", "admin" are not scopes your server offers (OFFERED_SCOPES: openid profile realms): correct it, or add it to the server\'s scopes option first (and to OFFERED_SCOPES); nothing was changed\n',
    );
    const option = await runCli([...add('typo', 'realms'), '--offered-scopes', 'profile'], unset);
    expect(option.code).toBe(1);
    expect(option.stderr).toContain(
      'error: "realms" is not a scope your server offers (--offered-scopes: profile)',
    );
    const defaults = await runCli([...add('typo', 'realms', '--default-scope', 'realmz')], offered);
    expect(defaults.stderr).toContain('"realmz" is not a scope your server offers');

    const ok = await runCli(add('printer', 'realms', 'openid'), offered);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stderr).not.toContain('warning');
    const update = await runCli(
      ['--database-url', url, 'clients', 'update', 'printer', '--scope', 'realms', 'admin'],
      offered,
    );
    expect(update.code).toBe(1);
    expect(update.stderr).toContain('"admin" is not a scope your server offers');

    const storage = await connectStorage(url);
    try {
      expect(await storage.clients.find('typo')).toBeNull();
      expect((await storage.clients.find('printer'))?.scopes).toEqual(['realms', 'openid']);
    } finally {
      await storage.close();
    }

    const malformed = await runCli(add('other', 'realms'), { OFFERED_SCOPES: 'realms caf\u00e9' });
    expect(malformed.code).toBe(1);
    expect(malformed.stderr).toContain(
      'error: OFFERED_SCOPES must list the scopes your server offers, separated by spaces, not "realms caf\u00e9"',
    );
  });

  it('are warned about, loudly, when the CLI cannot know what the server offers', async () => {
    const added = await runCli(add('unchecked', 'openid', 'realms', 'admin'), unset);
    expect(added.code, added.stderr).toBe(0);
    expect(added.stderr).toContain(
      'warning: not checked: realms admin. The CLI cannot know which scopes your server offers',
    );
    expect(added.stderr).toContain('Set OFFERED_SCOPES (or pass --offered-scopes)');
    // openid and profile are the server's own with OpenID Connect: nothing to warn about.
    const standard = await runCli(add('standard', 'openid', 'profile'), unset);
    expect(standard.code, standard.stderr).toBe(0);
    expect(standard.stderr).not.toContain('warning');
  });
});
