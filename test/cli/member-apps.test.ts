/**
 * The operator's commands on members' applications (issue 40): `clients list` shows who owns each
 * client and whether it works (`--owner`, `--members`), `approve`, `verify`/`unverify`, `suspend`
 * (one client, or every client of a member with `--owner`) and `transfer`. Run in-process on a real
 * SQLite file, with a connect that logs the calls made to the client store.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { createProgram } from '../../src/cli/program.js';
import { registerClient, registerWith } from '../../src/clients/register.js';
import { connectStorage } from '../../src/storage/sql/connect.js';
import type { SqlStorage } from '../../src/storage/sql/adapter.js';
import type { ClientChanges } from '../../src/storage/types.js';

const dir = mkdtempSync(join(tmpdir(), 'oob-cli-members-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let url: string;
let run = 0;

/** The member with an account in the database (a login made it), and one the CLI has never seen. */
let alice: string;
const BOB = 'bob-host-account';

/**
 * A fresh database for each test: the operator's `printer`; alice's `alice-web` (waiting for
 * approval, with a description and home page) and `alice-tool` (a device app); bob's verified
 * `bob-app`.
 */
beforeEach(async () => {
  url = `sqlite:${join(dir, `members-${++run}.db`)}`;
  const storage = await connectStorage(url, { migrate: true });
  try {
    alice = (
      await storage.users.findOrCreate(
        { identifier: 'https://alice.example/', provider: 'openid' },
        'alice-id',
        Date.now(),
      )
    ).id;
    await registerClient(storage, {
      clientId: 'printer',
      applicationName: 'Photo printer',
      redirectUri: 'https://printer.example/cb',
      scopes: ['realms'],
    });
    const member = (clientId: string, ownerId: string, extras: object, device = false) =>
      registerWith(
        storage,
        {
          clientId,
          applicationName: clientId,
          ...(device
            ? { grantType: 'device_code' as const }
            : { redirectUri: `https://${clientId}.example/cb` }),
          scopes: ['realms'],
        },
        {},
        { ownerId, ...extras },
      );
    await member('alice-web', alice, {
      awaitingApproval: true,
      description: 'Prints realms',
      homepageUri: 'https://alice-web.example/',
    });
    await member('alice-tool', alice, {}, true);
    await member('bob-app', BOB, {});
    await storage.clients.update!('bob-app', { verified: true });
  } finally {
    await storage.close();
  }
});

/** Runs one command; resolves what it printed on stdout and stderr, its error, and the client store calls. */
async function cli(...args: string[]) {
  const calls: string[] = [];
  let out = '';
  let err = '';
  const connect: typeof connectStorage = async (databaseUrl, options) => {
    const storage = await connectStorage(databaseUrl, options);
    const clients = storage.clients;
    for (const name of ['find', 'list', 'update', 'remove'] as const) {
      const method = clients[name]!.bind(clients) as (...a: unknown[]) => Promise<unknown>;
      (clients as unknown as Record<string, unknown>)[name] = (...a: unknown[]) => {
        calls.push(name);
        return method(...a);
      };
    }
    return storage;
  };
  const program = createProgram({ out: (text) => (out += text), err: (text) => (err += text) }, {}, connect);
  const error = await program
    .parseAsync(['node', 'openid-oauth-bridge', '--database-url', url, ...args])
    .then(
      () => null,
      (failure: Error) => failure.message,
    );
  return { out, err, error, calls };
}

/** Runs one command with `--json`: resolves its document (the command must succeed). */
async function json<T = Record<string, unknown>>(...args: string[]): Promise<T> {
  const result = await cli('--json', ...args);
  expect(result.error).toBeNull();
  return JSON.parse(result.out) as T;
}

/** The stored client, read in a connection of the test's own. */
async function stored(clientId: string) {
  const storage: SqlStorage = await connectStorage(url);
  try {
    return await storage.clients.find(clientId);
  } finally {
    await storage.close();
  }
}

async function storageUpdate(clientId: string, changes: ClientChanges) {
  const storage: SqlStorage = await connectStorage(url);
  try {
    await storage.clients.update!(clientId, changes);
  } finally {
    await storage.close();
  }
}

interface ClientRow {
  client_id: string;
  owner_id: string | null;
  verified: boolean;
  awaiting_approval: boolean;
  disabled: boolean;
  description?: string;
  homepage_uri?: string;
}

describe('clients list and show', () => {
  it('shows the owner (or operator), the status and verified in a column each', async () => {
    const { out, error } = await cli('clients', 'list');
    expect(error).toBeNull();
    const [header, ...rows] = out.trimEnd().split('\n');
    expect(header!.split(/\s{2,}/)).toEqual([
      'client_id',
      'application_name',
      'grant',
      'owner',
      'status',
      'verified',
      'redirect_uri',
    ]);
    const cells = Object.fromEntries(rows.map((row) => [row.split(/\s+/)[0], row.split(/\s{2,}/)]));
    expect(cells.printer!.slice(3, 6)).toEqual(['operator', 'active', 'no']);
    expect(cells['alice-web']!.slice(3, 6)).toEqual([alice, 'awaiting approval', 'no']);
    expect(cells['alice-tool']!.slice(3, 6)).toEqual([alice, 'active', 'no']);
    expect(cells['bob-app']!.slice(3, 6)).toEqual([BOB, 'active', 'yes']);
  });

  it("names owner_id, verified and awaiting_approval in JSON, and a member's description and home page", async () => {
    const rows = await json<ClientRow[]>('clients', 'list');
    const byId = Object.fromEntries(rows.map((row) => [row.client_id, row]));
    expect(byId.printer).toMatchObject({ owner_id: null, verified: false, awaiting_approval: false });
    expect(byId.printer).not.toHaveProperty('description');
    expect(byId.printer).not.toHaveProperty('homepage_uri');
    expect(byId['alice-web']).toMatchObject({
      owner_id: alice,
      verified: false,
      awaiting_approval: true,
      description: 'Prints realms',
      homepage_uri: 'https://alice-web.example/',
    });
    expect(byId['bob-app']).toMatchObject({ owner_id: BOB, verified: true, awaiting_approval: false });
  });

  it("--owner lists one member's clients, --owner operator the operator's, --members every member's", async () => {
    const ids = async (...args: string[]) =>
      (await json<ClientRow[]>('clients', 'list', ...args)).map((row) => row.client_id).sort();
    expect(await ids('--owner', alice)).toEqual(['alice-tool', 'alice-web']);
    expect(await ids('--owner', BOB)).toEqual(['bob-app']);
    expect(await ids('--owner', 'operator')).toEqual(['printer']);
    expect(await ids('--members')).toEqual(['alice-tool', 'alice-web', 'bob-app']);
    expect((await cli('clients', 'list', '--owner', 'nobody')).out).toBe('Member nobody has no clients.\n');
    const both = await cli('clients', 'list', '--members', '--owner', BOB);
    expect(both.error).toContain("option '--members' cannot be used with option '--owner <user_id>'");
  });

  it('show describes the owner, description, home page, verified and status', async () => {
    const { out } = await cli('clients', 'show', 'alice-web');
    expect(out).toContain(`owner             member ${alice}\n`);
    expect(out).toContain('description       Prints realms\n');
    expect(out).toContain('home page         https://alice-web.example/\n');
    expect(out).toContain('verified          no\n');
    expect(out).toContain('status            awaiting approval\n');
    const printer = (await cli('clients', 'show', 'printer')).out;
    expect(printer).toContain('owner             the operator\n');
    expect(printer).not.toContain('description');
    expect(printer).toContain('status            active\n');
    expect((await cli('clients', 'show', 'bob-app')).out).toContain('verified          yes\n');
  });
});

describe('clients approve', () => {
  it('clears awaiting approval, and says when the client was not awaiting it', async () => {
    const approved = await cli('clients', 'approve', 'alice-web');
    expect(approved.error).toBeNull();
    expect(approved.out).toBe('Client alice-web is approved. It may be used now.\n');
    expect(approved.calls).toEqual(['find', 'update']);
    expect((await stored('alice-web'))!.awaitingApproval).toBe(false);

    const again = await cli('--json', 'clients', 'approve', 'alice-web');
    expect(JSON.parse(again.out)).toMatchObject({
      client_id: 'alice-web',
      awaiting_approval: false,
      approved: false,
    });
    expect(again.calls).toEqual(['find']); // Nothing written.
    expect((await cli('clients', 'approve', 'printer')).out).toBe(
      'Client printer was not awaiting approval; nothing was changed.\n',
    );
  });

  it('says that a disabled client stays disabled', async () => {
    await cli('clients', 'suspend', 'alice-web');
    const approved = await cli('--json', 'clients', 'approve', 'alice-web');
    expect(JSON.parse(approved.out)).toMatchObject({
      approved: true,
      awaiting_approval: false,
      disabled: true,
    });
    await cli('clients', 'suspend', 'alice-tool');
    await storageUpdate('alice-tool', { awaitingApproval: true });
    expect((await cli('clients', 'list', '--owner', alice)).out).toMatch(
      /alice-tool .* disabled, awaiting approval /,
    );
    expect((await cli('clients', 'approve', 'alice-tool')).out).toBe(
      'Client alice-tool is approved. It stays disabled: let it work with: clients enable alice-tool\n',
    );
  });
});

describe('clients verify and unverify', () => {
  it('set verified, and say when it was so already', async () => {
    expect(await json('clients', 'verify', 'alice-tool')).toMatchObject({
      client_id: 'alice-tool',
      verified: true,
      changed: true,
    });
    expect((await stored('alice-tool'))!.verified).toBe(true);
    const again = await cli('clients', 'verify', 'alice-tool');
    expect(again.out).toBe('Client alice-tool was verified already; nothing was changed.\n');
    expect(again.calls).toEqual(['find']);

    const undone = await cli('clients', 'unverify', 'bob-app');
    expect(undone.out).toBe('Client bob-app is not verified.\n');
    expect((await stored('bob-app'))!.verified).toBe(false);
    expect((await cli('clients', 'unverify', 'bob-app')).out).toContain('not verified already');
  });
});

describe('clients suspend', () => {
  it('disables one client, as disable does, and names the member who can create no other', async () => {
    const one = await cli('clients', 'suspend', 'alice-tool');
    expect(one.error).toBeNull();
    expect(one.calls).toEqual(['update']);
    expect(one.out).toContain('Client alice-tool is suspended (disabled)');
    expect(one.out).toContain(`Member ${alice} cannot create another client while it stays disabled.`);
    expect((await stored('alice-tool'))!.disabled).toBe(true);
    expect((await stored('alice-web'))!.disabled).toBe(false);
    expect((await cli('clients', 'enable', 'alice-tool')).error).toBeNull();
    expect((await stored('alice-tool'))!.disabled).toBe(false);
  });

  it("--owner disables every client of the member and says how many; others' stay", async () => {
    await cli('clients', 'suspend', 'alice-tool');
    const all = await cli('clients', 'suspend', '--owner', alice);
    expect(all.error).toBeNull();
    expect(all.out).toContain(`Suspended 1 client of member ${alice} (alice-web)`);
    expect(all.out).toContain('1 was disabled already (alice-tool)');
    expect((await stored('alice-web'))!.disabled).toBe(true);
    expect((await stored('bob-app'))!.disabled).toBe(false);
    expect((await stored('printer'))!.disabled).toBe(false);

    expect(await json('clients', 'suspend', '--owner', BOB)).toEqual({
      owner_id: BOB,
      suspended: ['bob-app'],
      already_disabled: [],
    });
    expect((await cli('clients', 'suspend', '--owner', BOB)).out).toContain(
      `No client of member ${BOB} was active. 1 was disabled already (bob-app).`,
    );
  });

  it('refuses a member without clients, no client named, both named, and --owner operator', async () => {
    expect((await cli('clients', 'suspend', '--owner', 'nobody')).error).toBe(
      'member nobody has no clients (see: clients list --members)',
    );
    expect((await cli('clients', 'suspend')).error).toMatch(/^give a client_id or --owner <user_id>/);
    expect((await cli('clients', 'suspend', 'bob-app', '--owner', BOB)).error).toMatch(
      /^give a client_id or/,
    );
    expect((await cli('clients', 'suspend', '--owner', 'operator')).error).toContain('clients disable ID');
    expect((await stored('bob-app'))!.disabled).toBe(false);
  });
});

describe('clients transfer', () => {
  it("gives a member's client to another member, and back to the operator with --to operator", async () => {
    const moved = await cli('--json', 'clients', 'transfer', 'bob-app', '--to', alice);
    expect(moved.error).toBeNull();
    expect(moved.err).not.toContain('warning'); // alice has an account here.
    expect(JSON.parse(moved.out)).toMatchObject({
      client_id: 'bob-app',
      owner_id: alice,
      previous_owner_id: BOB,
    });
    expect((await stored('bob-app'))!.ownerId).toBe(alice);
    // Its marks stay: still verified.
    expect((await stored('bob-app'))!.verified).toBe(true);

    const back = await cli('clients', 'transfer', 'bob-app', '--to', 'operator');
    expect(back.out).toBe(
      `Client bob-app is the operator's again (it was member ${alice}'s): it is off their developer page.\n`,
    );
    expect((await stored('bob-app'))!.ownerId ?? null).toBeNull();
    expect(
      (await json<ClientRow[]>('clients', 'list', '--owner', 'operator')).map((c) => c.client_id).sort(),
    ).toEqual(['bob-app', 'printer']);
    expect((await cli('clients', 'transfer', 'bob-app', '--to', 'operator')).out).toBe(
      "Client bob-app is the operator's already; nothing was changed.\n",
    );
  });

  it("gives an operator's client to a member, saying so; warns, without failing, of a user it does not know", async () => {
    const given = await cli('clients', 'transfer', 'printer', '--to', alice);
    expect(given.out).toContain(`Client printer now belongs to member ${alice} (it was the operator's).`);
    expect(given.out).toContain(`It was an operator's client: member ${alice} can now change it`);

    const unknownUser = await cli('clients', 'transfer', 'alice-tool', '--to', 'someone-else');
    expect(unknownUser.error).toBeNull();
    expect(unknownUser.err).toContain('warning: no user has the id someone-else in this database');
    expect((await stored('alice-tool'))!.ownerId).toBe('someone-else');

    expect((await cli('clients', 'transfer', 'printer')).error).toContain("required option '--to <user_id>'");
    // A client made from its metadata document takes its fields from the document: no member can own it.
    const storage = await connectStorage(url, { migrate: true });
    await storage.clients.update!('printer', { registeredVia: 'document' });
    await storage.close();
    expect((await cli('clients', 'transfer', 'printer', '--to', 'operator')).error).toBeNull();
    expect((await cli('clients', 'transfer', 'alice-web', '--to', BOB)).error).toBeNull();
    const document = await cli('clients', 'transfer', 'printer', '--to', BOB);
    expect(document.error).toContain('describes itself in a client metadata document');
    expect((await cli('clients', 'transfer', 'printer', '--to', ' ')).error).toMatch(/^--to needs/);
  });
});

describe('an unknown client', () => {
  it.each([
    [['clients', 'approve', 'nobody']],
    [['clients', 'verify', 'nobody']],
    [['clients', 'unverify', 'nobody']],
    [['clients', 'suspend', 'nobody']],
    [['clients', 'transfer', 'nobody', '--to', 'operator']],
  ])('%j is refused in the usual words', async (args) => {
    const result = await cli(...args);
    expect(result.error).toBe('no client has client_id nobody (see: clients list)');
    expect(result.calls.filter((call) => call === 'find').length).toBeLessThanOrEqual(1);
  });
});
