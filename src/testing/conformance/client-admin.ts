import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ClientStore } from '../../storage/types.js';
import type { ConformanceSuite } from './api.js';
import { equal, isNull, race, rejects, sameRecord } from './check.js';
import {
  SECOND,
  accessTokenRecord,
  clientRecord,
  freshHash,
  freshId,
  grantRecord,
  without,
} from './fixtures.js';

/** The operator methods, present unless the adapter declares `absent: ['clientAdmin']`. */
type ClientAdmin = Required<ClientStore>;

/** `clients.create/list/update/remove`: what the CLI and `registerClient` use. */
export function clientAdminTests(suite: ConformanceSuite): void {
  const { it, storage } = suite;
  const admin = () => storage().clients as ClientAdmin;

  /** A new client, created, with a grant of it saved. */
  const clientWithGrant = async (now: number) => {
    const client = clientRecord(now);
    await admin().create(client);
    const grant = grantRecord(now, { clientId: client.clientId });
    await storage().grants.save(grant);
    return { client, grant };
  };
  suite.part('clientAdmin')('clients: operator methods', () => {
    it('create: rejects a client_id that is taken, and keeps the registered client', async () => {
      const now = Date.now();
      const client = clientRecord(now);
      await admin().create(client);
      await rejects(
        () => admin().create(clientRecord(now, { clientId: client.clientId, applicationName: 'Impostor' })),
        'clients.create must reject a client whose clientId is taken',
      );
      sameRecord(
        await admin().find(client.clientId),
        client,
        'clients.create of a taken clientId must leave the registered client unchanged',
      );
    });

    it('list: every client, ordered by createdAt then clientId', async () => {
      const now = Date.now();
      const prefix = freshId('list');
      const at = (suffix: string, createdAt: number) =>
        clientRecord(createdAt, { clientId: `${prefix}-${suffix}`, applicationName: `App ${suffix}` });
      const inserted = [at('b', now), at('d', now + SECOND), at('a', now), at('c', now - SECOND)];
      for (const client of inserted) await admin().create(client);
      const ours = (await admin().list()).filter((client) => client.clientId.startsWith(prefix));
      assert.deepStrictEqual(
        ours.map((client) => client.clientId.slice(prefix.length + 1)),
        ['c', 'a', 'b', 'd'],
        'clients.list must order clients by createdAt, then by clientId',
      );
      for (const client of ours) {
        sameRecord(
          client,
          inserted.find((candidate) => candidate.clientId === client.clientId)!,
          'clients.list must return every field of each client',
        );
      }
    });

    it('update: applies the changes, returns the updated client, and touches nothing else', async () => {
      const now = Date.now();
      const client = clientRecord(now);
      await admin().create(client);
      const changes = {
        applicationName: 'Photo printer 2',
        redirectUri: 'https://printer.example/v2/callback',
        scopes: ['realms:read'],
        defaultScopes: null,
        contacts: ['new@printer.example'],
        disabled: true,
        requirePkce: true,
        grantType: 'implicit' as const,
        secretHash: null,
        resources: ['https://printer.example/mcp'],
        registeredVia: 'document' as const,
      };
      const updated = await admin().update(client.clientId, changes);
      const expected = { ...client, ...changes };
      const withoutDefaults = without(expected, 'defaultScopes');
      sameRecord(updated, withoutDefaults, 'clients.update must resolve the client with the changes applied');
      sameRecord(
        await admin().find(client.clientId),
        withoutDefaults,
        'clients.update must store the changes (clients.find returns them)',
      );
      const stored = await admin().find(client.clientId);
      assert.ok(
        stored?.defaultScopes === null || stored?.defaultScopes === undefined,
        `clients.update with defaultScopes: null must clear them (null or absent); received ${JSON.stringify(stored?.defaultScopes)}`,
      );
    });

    it("a member's client (the developer page): its owner, marks and previous secret are kept, changed and cleared", async () => {
      const now = Date.now();
      const ownerId = freshId('member');
      const client = clientRecord(now, {
        ownerId,
        awaitingApproval: true,
        description: 'Prints your realms',
        homepageUri: 'https://printer.example/',
        previousSecret: null,
      });
      await admin().create(client);
      const other = clientRecord(now, { ownerId: freshId('member') });
      await admin().create(other);
      const expected = without(client, 'previousSecret');
      sameRecord(
        await admin().find(client.clientId),
        expected,
        "clients.find must return a member's client as created",
      );
      const listed = (await admin().list({ ownerId })).filter((c) => c.ownerId === ownerId);
      equal(listed.length, 1, 'clients.list({ ownerId }) must include each client of that owner');
      sameRecord(listed[0], expected, 'clients.list({ ownerId }) must return every field of each client');
      const previousSecret = { hash: freshHash(), expiresAt: now + 60 * SECOND };
      const changes = { ownerId: freshId('member'), verified: true, awaitingApproval: false, previousSecret };
      sameRecord(
        await admin().update(client.clientId, changes),
        { ...expected, ...changes },
        'clients.update must change the owner, the marks and the previous secret',
      );
      const cleared = await admin().update(client.clientId, { previousSecret: null });
      assert.ok(
        cleared?.previousSecret === null || cleared?.previousSecret === undefined,
        `clients.update with previousSecret: null must clear it (null or absent); received ${JSON.stringify(cleared?.previousSecret)}`,
      );
    });

    it('update: a change set to undefined is no change (it erases nothing)', async () => {
      const client = clientRecord(Date.now());
      await admin().create(client);
      const updated = await admin().update(client.clientId, {
        applicationName: undefined,
        redirectUri: undefined,
        grantType: undefined,
        secretHash: undefined,
        scopes: undefined,
        defaultScopes: undefined,
        contacts: undefined,
        disabled: true,
        requirePkce: undefined,
      });
      const expected = { ...client, disabled: true };
      sameRecord(updated, expected, 'clients.update must ignore keys set to undefined, and apply the others');
      sameRecord(
        await admin().find(client.clientId),
        expected,
        'clients.update must not erase a field whose change is undefined',
      );
    });

    it('update: unusedExpiresAt null clears it, when the store keeps it (a self-registered client used)', async () => {
      const now = Date.now();
      const client = clientRecord(now, { secretHash: null, unusedExpiresAt: now + SECOND });
      await admin().create(client);
      const kept = (await admin().find(client.clientId))?.unusedExpiresAt;
      // A store that keeps no unusedExpiresAt prunes no client for it: nothing more to check.
      if (kept === undefined) return;
      equal(kept, client.unusedExpiresAt, 'clients.find must return unusedExpiresAt as created');
      const updated = await admin().update(client.clientId, { unusedExpiresAt: null });
      const stored = await admin().find(client.clientId);
      for (const [what, read] of [
        ['clients.update', updated],
        ['clients.find', stored],
      ] as const) {
        equal(
          read?.unusedExpiresAt ?? null,
          null,
          `${what} after an update with unusedExpiresAt: null must give it null or absent (the client was used: prune keeps it)`,
        );
      }
      sameRecord(
        stored,
        without(client, 'unusedExpiresAt'),
        'clients.update of unusedExpiresAt must touch nothing else',
      );
    });

    it('update: an unknown client gives null, and creates nothing', async () => {
      const clientId = freshId('client');
      isNull(
        await admin().update(clientId, { applicationName: 'Ghost', disabled: false }),
        'clients.update must resolve null for an unknown clientId',
      );
      isNull(await admin().find(clientId), 'clients.update of an unknown clientId must not create it');
    });

    it('remove: true for a client that existed, false for an absent one; find gives null after', async () => {
      const client = clientRecord(Date.now());
      await admin().create(client);
      equal(
        await admin().remove(client.clientId),
        true,
        'clients.remove must resolve true for an existing client',
      );
      isNull(await admin().find(client.clientId), 'clients.find must resolve null for a removed client');
      equal(
        await admin().remove(client.clientId),
        false,
        'clients.remove must resolve false for a removed client',
      );
      equal(
        await admin().remove(freshId('client')),
        false,
        'clients.remove must resolve false for an unknown client',
      );
      assert.ok(
        !(await admin().list()).some((listed) => listed.clientId === client.clientId),
        'clients.list must not list a removed client',
      );
    });

    it('remove: the tokens of a removed client come back from tokens.find with client null (or not at all)', async () => {
      const now = Date.now();
      const { client, grant } = await clientWithGrant(now);
      const token = accessTokenRecord(now, grant);
      await storage().tokens.save(token);
      equal(
        await admin().remove(client.clientId),
        true,
        'clients.remove must resolve true for an existing client',
      );
      const found = await storage().tokens.find(token.tokenHash);
      assert.ok(
        found === null || found.client === null,
        `tokens.find of a token of a removed client must give client null (or no token); ` +
          `received client ${JSON.stringify(found?.client)}`,
      );
    });

    it(`remove racing saves of a grant of the client (revocations): every call resolves, ${ROUNDS} rounds`, async () => {
      // A removal that deletes the client's grants, and saves of one of them that then all
      // insert it again at the same moment: the saves must not reject (a unique index on
      // grant_id that the upsert does not arbitrate rejects the second insert).
      for (let round = 0; round < ROUNDS; round++) {
        const now = Date.now();
        const { client, grant } = await clientWithGrant(now);
        const removal: Promise<unknown> = admin().remove(client.clientId);
        await sleep(1 + (round % 3));
        await race<unknown>(`grants.save racing clients.remove (round ${round + 1})`, 4, (index) =>
          index === 0 ? removal : storage().grants.save({ ...grant, revokedAt: now, updatedAt: now + index }),
        );
        isNull(await admin().find(client.clientId), 'clients.find must resolve null for a removed client');
      }
    });
  });
}

/** Rounds of the removal race: it strikes in a few percent of rounds, on PostgreSQL. */
const ROUNDS = 150;
