/**
 * The operator's commands on members' applications (issue 40), run as real processes on the
 * database a running app uses (SQLite and PostgreSQL), with their effects proven over HTTP:
 * `clients suspend --owner` stops every token of the member's applications at once, `clients
 * approve` lets a waiting application's tokens work, and `clients transfer` keeps them working.
 */
import { afterAll, describe, expect, it, vi } from 'vitest';
import { connectStorage } from '../../src/index.js';
import { createTestApp } from '../support/app.js';
import { runCli } from '../support/cli.js';
import { sqlEngines } from '../support/databases.js';
import { obtainTokens, refreshWith } from '../support/flow.js';

// Every command is a process of its own (Node + tsx start-up each time).
vi.setConfig({ testTimeout: 90_000 });

const sql = await sqlEngines('cli_members');
afterAll(sql.cleanup);

describe.each(sql.engines)("openid-oauth-bridge on members' clients on $name", ({ skip, url }) => {
  const test = it.skipIf(skip !== null);
  const suffix = skip === null ? '' : ` (${skip})`;

  test(`suspend --owner stops the member's tokens at once; approve and transfer${suffix}`, async () => {
    const databaseUrl = url();
    const storage = await connectStorage(databaseUrl, { migrate: true });
    const t = await createTestApp({ storage });
    const cli = (...args: string[]) => runCli(['--database-url', databaseUrl, ...args]);
    try {
      const tokens = await obtainTokens(t);
      const [grant] = await storage.grants.list({ clientId: t.codeClient.clientId });
      const member = grant!.userId;
      // The code client is alice's own application, as if she had made it on the developer page.
      await storage.clients.update!(t.codeClient.clientId, { ownerId: member });
      const api = () => t.agent.get('/v1/realms').set('Authorization', `Bearer ${tokens.access_token}`);
      expect((await api()).status).toBe(200);

      const listed = await cli('clients', 'list', '--owner', member);
      expect(listed.stdout).toMatch(new RegExp(`^code-client .* ${member} +active +no `, 'm'));

      const suspended = await cli('--json', 'clients', 'suspend', '--owner', member);
      expect(suspended.code, suspended.stderr).toBe(0);
      expect(JSON.parse(suspended.stdout)).toEqual({
        owner_id: member,
        suspended: [t.codeClient.clientId],
        already_disabled: [],
      });
      expect((await api()).status).toBe(401);
      expect((await refreshWith(t, tokens.refresh_token)).status).toBe(401);
      expect((await storage.clients.find(t.codeClient.clientId))!.disabled).toBe(true);
      // The operator's client of the app is not the member's: it stays.
      expect((await storage.clients.find(t.implicitClient.clientId))!.disabled).toBe(false);

      expect((await cli('clients', 'enable', t.codeClient.clientId)).code).toBe(0);
      expect((await api()).status).toBe(200);

      // Waiting for approval, as with developerApps.requireApproval: its tokens do not work.
      await storage.clients.update!(t.codeClient.clientId, { awaitingApproval: true });
      expect((await api()).status).toBe(401);
      const approved = await cli('clients', 'approve', t.codeClient.clientId);
      expect(approved.stdout).toBe(`Client ${t.codeClient.clientId} is approved. It may be used now.\n`);
      expect((await api()).status).toBe(200);

      // Given back to the operator: its grants and tokens stay.
      const transferred = await cli(
        '--json',
        'clients',
        'transfer',
        t.codeClient.clientId,
        '--to',
        'operator',
      );
      expect(transferred.code, transferred.stderr).toBe(0);
      expect(JSON.parse(transferred.stdout)).toMatchObject({ owner_id: null, previous_owner_id: member });
      expect((await storage.clients.find(t.codeClient.clientId))!.ownerId ?? null).toBeNull();
      expect((await api()).status).toBe(200);
      expect((await cli('clients', 'suspend', '--owner', member)).stderr).toContain(
        `error: member ${member} has no clients`,
      );
    } finally {
      await t.close();
      await storage.close();
    }
  });
});
