/**
 * The CLI writes the operator's changes to the audit trail (issue 41): with `--audit-file` (or
 * `AUDIT_FILE`), each command that changes a client or a signing key appends one line, in the
 * server's line format (`by: "operator"`, no `request_id`), and no secret the command printed
 * reaches the file. Real processes of the command, on a SQLite file.
 */
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProgram } from '../../src/cli/program.js';
import { registerClient, registerWith } from '../../src/clients/register.js';
import { ServerEvents } from '../../src/events/emitter.js';
import { recordConsent } from '../../src/grants/index.js';
import { connectStorage } from '../../src/storage/sql/connect.js';
import { runCli } from '../support/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'oob-cli-audit-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const url = `sqlite:${join(dir, 'oauth.db')}`;
const auditFile = join(dir, 'audit.jsonl');
const env = { OIDC_KEY_SECRET: 'a-key-secret-of-at-least-32-characters!!', AUDIT_FILE: '' };

/** Runs the command with the audit file; resolves its JSON output, failing on an error. */
async function cli(...args: string[]): Promise<Record<string, unknown> & Record<string, unknown>[]> {
  const run = await runCli(['--database-url', url, '--audit-file', auditFile, '--json', ...args], env);
  expect(run.code, run.stderr).toBe(0);
  expect(run.stderr).toContain(`audit file: ${auditFile} (from --audit-file)`);
  return JSON.parse(run.stdout) as Record<string, unknown> & Record<string, unknown>[];
}

const lines = () =>
  readFileSync(auditFile, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown>);

beforeAll(async () => {
  const storage = await connectStorage(url, { migrate: true });
  try {
    // Two applications a member made on the developer page.
    for (const clientId of ['alice-web', 'alice-tool']) {
      await registerWith(
        storage,
        { clientId, applicationName: clientId, redirectUri: 'https://alice.example/cb', scopes: ['realms'] },
        {},
        { ownerId: 'alice' },
      );
    }
  } finally {
    await storage.close();
  }
});

describe('openid-oauth-bridge --audit-file', () => {
  it('appends one line per change, with who and what, and no secret it printed', async () => {
    const secrets: string[] = [];
    const added = await cli(
      'clients',
      'add',
      '--name',
      'Photo printer',
      '--redirect-uri',
      'https://printer.example/cb',
      '--scope',
      'realms',
    );
    const clientId = added.client_id as string;
    secrets.push(added.client_secret as string);
    secrets.push((await cli('clients', 'rotate-secret', clientId)).client_secret as string);
    await cli('clients', 'update', clientId, '--name', 'Printer', '--scope', 'realms', 'profile');
    await cli('clients', 'disable', clientId);
    await cli('clients', 'suspend', '--owner', 'alice');
    await cli('clients', 'remove', clientId);
    const first = await cli('keys', 'rotate');
    const older = first.find((key) => key.signs)!.kid as string;
    const second = await cli('keys', 'rotate');
    const signing = second.find((key) => key.signs)!.kid as string;
    const next = second.find((key) => key.state === 'next')!.kid as string;
    await cli('keys', 'retire', older, '--force');

    const written = lines();
    expect(written.map((line) => line.type)).toEqual([
      'client.added',
      'client.secret_rotated',
      'client.updated',
      'client.disabled',
      'client.suspended',
      'client.removed',
      'signing_key.rotated',
      'signing_key.rotated',
      'signing_key.retired',
    ]);
    for (const line of written) {
      expect(line.by).toBe('operator');
      expect(line).not.toHaveProperty('request_id');
      expect(Date.now() - Date.parse(line.at as string)).toBeLessThan(120_000);
    }
    const [add, rotate, update, disable, suspend, remove, , rotation, retire] = written;
    const at = { at: expect.any(String) as unknown, by: 'operator' };
    expect(add).toEqual({
      ...at,
      type: 'client.added',
      client_id: clientId,
      application_name: 'Photo printer',
      grant_type: 'authorization_code',
      public: false,
      scopes: ['realms'],
    });
    expect(rotate).toEqual({ ...at, type: 'client.secret_rotated', client_id: clientId });
    expect(update).toEqual({
      ...at,
      type: 'client.updated',
      client_id: clientId,
      changed: ['applicationName', 'scopes'],
      secret_issued: false,
    });
    expect(disable).toEqual({ ...at, type: 'client.disabled', client_id: clientId });
    expect({ ...suspend, client_ids: (suspend!.client_ids as string[]).toSorted() }).toEqual({
      ...at,
      type: 'client.suspended',
      owner_id: 'alice',
      client_ids: ['alice-tool', 'alice-web'],
      count: 2,
    });
    expect(remove).toEqual({ ...at, type: 'client.removed', client_id: clientId });
    expect(rotation).toEqual({
      ...at,
      type: 'signing_key.rotated',
      kid: signing,
      alg: 'RS256',
      previous_kid: older,
      next_kid: next,
    });
    expect(written[6]).not.toHaveProperty('previous_kid');
    expect(retire).toEqual({ ...at, type: 'signing_key.retired', kid: older, alg: 'RS256', forced: true });

    const text = readFileSync(auditFile, 'utf8');
    expect(secrets.every((secret) => typeof secret === 'string' && secret.length > 20)).toBe(true);
    for (const secret of secrets) expect(text).not.toContain(secret);
    expect(statSync(auditFile).mode & 0o777).toBe(0o600);
  }, 120_000);

  it('reads AUDIT_FILE, writes nothing for a command that changes nothing, and refuses a path it cannot open before changing anything', async () => {
    const other = join(dir, 'from-env.jsonl');
    const listed = await runCli(['--database-url', url, 'clients', 'list'], { ...env, AUDIT_FILE: other });
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stderr).toContain(`audit file: ${other} (from AUDIT_FILE)`);
    expect(readFileSync(other, 'utf8')).toBe('');

    const missing = join(dir, 'no-such-folder', 'audit.jsonl');
    const refused = await runCli(
      [
        '--database-url',
        url,
        '--audit-file',
        missing,
        'clients',
        'add',
        '--name',
        'Late',
        '--grant',
        'device',
        '--public',
        '--scope',
        'realms',
      ],
      { ...env, AUDIT_FILE: other },
    );
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(
      `error: cannot open the audit file ${missing} (from --audit-file): ENOENT`,
    );
    expect(refused.stderr).toContain('nothing was changed');
    const storage = await connectStorage(url);
    try {
      const names = (await storage.clients.list!()).map((client) => client.applicationName);
      expect(names).not.toContain('Late');
    } finally {
      await storage.close();
    }
  }, 60_000);

  it("writes the decisions on members' clients and grants revoke's revocation; a decision that changes nothing, no line", async () => {
    const members = `sqlite:${join(dir, 'members.db')}`;
    const file = join(dir, 'members.jsonl');
    const storage = await connectStorage(members, { migrate: true });
    let grantId: string;
    try {
      await registerWith(
        storage,
        { clientId: 'alice-web', applicationName: 'Alice', redirectUri: 'https://alice.example/cb' },
        {},
        { ownerId: 'alice', awaitingApproval: true },
      );
      await registerClient(storage, {
        clientId: 'printer',
        applicationName: 'Printer',
        redirectUri: 'https://printer.example/cb',
      });
      const deps = { storage, clock: Date.now, events: new ServerEvents(() => console) };
      grantId = (await recordConsent(deps, 'user-1', 'printer', ['realms'])).grant.grantId;
    } finally {
      await storage.close();
    }
    // In process, as the other CLI tests run: the same program, its audit file closed when it returns.
    const run = (...args: string[]) =>
      createProgram({ out: () => undefined, err: () => undefined }, env).parseAsync([
        'node',
        'openid-oauth-bridge',
        '--database-url',
        members,
        '--audit-file',
        file,
        ...args,
      ]);
    await run('clients', 'approve', 'alice-web');
    await run('clients', 'approve', 'alice-web');
    await run('clients', 'verify', 'alice-web');
    await run('clients', 'unverify', 'alice-web');
    await run('clients', 'transfer', 'printer', '--to', 'alice');
    await run('clients', 'enable', 'alice-web');
    await run('grants', 'revoke', '--user', 'user-1', '--client', 'printer');

    const written = readFileSync(file, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const at = { at: expect.any(String) as unknown, by: 'operator' };
    const alice = { ...at, owner_id: 'alice', client_id: 'alice-web' };
    expect(written).toEqual([
      { ...alice, type: 'client.approved' },
      { ...alice, type: 'client.verified' },
      { ...alice, type: 'client.unverified' },
      { ...at, type: 'client.transferred', client_id: 'printer', owner_id: 'alice' },
      { ...alice, type: 'client.enabled' },
      { ...at, type: 'consent.revoked', user_id: 'user-1', client_id: 'printer', grant_id: grantId },
    ]);
  });
});
