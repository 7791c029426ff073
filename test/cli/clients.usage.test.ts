/**
 * `clients usage`, `clients list --unused-for` and `prune --usage-retention-days`, run as the
 * operator runs them (a real process) against a real SQLite file whose usage a server's recorder
 * wrote.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { registerClient } from '../../src/clients/register.js';
import { connectStorage } from '../../src/storage/sql/connect.js';
import { usageDay } from '../../src/storage/usage-types.js';
import { runCli } from '../support/cli.js';

const DAY = 86_400_000;
const dir = mkdtempSync(join(tmpdir(), 'oob-cli-usage-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const url = `sqlite:${join(dir, 'oauth.db')}`;

const now = Date.now();
const setup = await connectStorage(url, { migrate: true });
for (const [clientId, createdAt] of [
  ['busy', now - 90 * DAY],
  ['idle', now - 90 * DAY],
  ['never', now - 40 * DAY],
  ['new', now - DAY],
] as const) {
  await registerClient(setup, {
    clientId,
    applicationName: `App ${clientId}`,
    redirectUri: 'https://app.example/cb',
    scopes: ['realms'],
  });
  // registerClient stamps the time of now: move the creation back through a re-create.
  const client = (await setup.clients.find(clientId))!;
  await setup.clients.remove(clientId);
  await setup.clients.create({ ...client, createdAt });
}
await setup.usage.add({
  counts: [
    { clientId: 'busy', day: usageDay(now), kind: 'bearer', count: 120 },
    { clientId: 'busy', day: usageDay(now), kind: 'token', count: 2 },
    { clientId: 'busy', day: usageDay(now - 3 * DAY), kind: 'refresh', count: 5 },
    { clientId: 'busy', day: usageDay(now - 50 * DAY), kind: 'bearer', count: 9 },
    { clientId: 'idle', day: usageDay(now - 45 * DAY), kind: 'token', count: 1 },
  ],
  lastUse: [
    { clientId: 'busy', userId: null, at: now - 60_000 },
    { clientId: 'busy', userId: 'user-1', at: now - 60_000 },
    { clientId: 'idle', userId: null, at: now - 45 * DAY },
  ],
});
await setup.close();

const cli = (...args: string[]) => runCli(['--database-url', url, ...args]);

describe('clients usage', () => {
  it('shows the last use and the counts of the last 30 days, by day and in total', async () => {
    const result = await cli('clients', 'usage', 'busy');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`last used     ${new Date(now - 60_000).toISOString()}`);
    expect(result.stdout).toContain('last 30 days  2 tokens issued, 5 refreshes, 120 bearer uses');
    expect(result.stdout).toMatch(new RegExp(`${usageDay(now - 3 * DAY)}\\s+0\\s+5\\s+0`));
    expect(result.stdout).toMatch(new RegExp(`${usageDay(now)}\\s+2\\s+0\\s+120`));
    expect(result.stdout).not.toContain(usageDay(now - 50 * DAY));
  });

  it('--days and --json reach further back, for scripts', async () => {
    const result = await cli('--json', 'clients', 'usage', 'busy', '--days', '60');
    expect(result.code).toBe(0);
    const json = JSON.parse(result.stdout);
    expect(json).toMatchObject({
      client_id: 'busy',
      last_used_at: new Date(now - 60_000).toISOString(),
      days: 60,
      totals: { token: 2, refresh: 5, bearer: 129 },
    });
    expect(json.by_day.map((row: { day: string }) => row.day)).toEqual([
      usageDay(now - 50 * DAY),
      usageDay(now - 3 * DAY),
      usageDay(now),
    ]);
  });

  it('says never for a client never used, and refuses an unknown client or a bad --days', async () => {
    const never = await cli('clients', 'usage', 'never');
    expect(never.stdout).toContain(
      `last used     never (registered ${new Date(now - 40 * DAY).toISOString()}; a server writes its counts every usage.flushSeconds`,
    );
    expect(never.stdout).toContain('0 tokens issued, 0 refreshes, 0 bearer uses');
    const unknown = await cli('clients', 'usage', 'nobody');
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toMatch(/nobody/);
    const bad = await cli('clients', 'usage', 'busy', '--days', '0');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/positive integer/);
  });
});

describe('clients list --unused-for', () => {
  it('lists the clients not used for that long, those never used since their registration', async () => {
    const result = await cli('--json', 'clients', 'list', '--unused-for', '30d');
    expect(result.code).toBe(0);
    const listed = JSON.parse(result.stdout) as { client_id: string; last_used_at: string | null }[];
    expect(listed.map((c) => [c.client_id, c.last_used_at])).toEqual([
      ['idle', new Date(now - 45 * DAY).toISOString()],
      ['never', null],
    ]);
    const text = await cli('clients', 'list', '--unused-for', '41d');
    expect(text.stdout).toMatch(/idle\s+App idle\s+operator\s+active\s+\d{4}-/);
    expect(text.stdout).not.toMatch(/^never/m);
  });

  it('takes hours, and refuses another unit', async () => {
    const hours = await cli('--json', 'clients', 'list', '--unused-for', '2h');
    expect(JSON.parse(hours.stdout).map((c: { client_id: string }) => c.client_id)).toEqual([
      'idle',
      'never',
      'new',
    ]);
    const none = await cli('clients', 'list', '--unused-for', '400d');
    expect(none.stdout).toContain(
      'No client has gone unused for 400d (one never used counts from its registration).',
    );
    const bad = await cli('clients', 'list', '--unused-for', '30m');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/days or hours/);
  });
});

describe('prune --usage-retention-days', () => {
  it('deletes the usage older than the retention and keeps the rest', async () => {
    const result = await cli('--json', 'prune', '--usage-retention-days', '40');
    expect(result.code).toBe(0);
    // busy's day 50 days ago, idle's day and its last use 45 days ago.
    expect(JSON.parse(result.stdout).removed.usage).toBe(3);
    const json = JSON.parse((await cli('--json', 'clients', 'usage', 'busy', '--days', '400')).stdout);
    expect(json.totals).toEqual({ token: 2, refresh: 5, bearer: 120 });
  });
});
