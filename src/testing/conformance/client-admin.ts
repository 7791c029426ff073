import assert from 'node:assert/strict';
import type { ClientRecord } from '../../storage/types.js';
import type { ConformanceSuite } from './api.js';
import { equal, isNull, race, sameRecord } from './check.js';
import {
  SECOND,
  accessToken,
  clientRecord,
  codeRecord,
  enrolledOwner,
  freshHash,
  freshId,
  refreshToken,
} from './fixtures.js';

/** `clients` beyond registration: what an operator lists, changes, disables and removes. */
export function clientAdminTests({ describe, it, storage }: ConformanceSuite): void {
  /** A client with tokens, a code and a consent of one user, to watch what a change does to them. */
  async function clientInUse(now: number) {
    const owner = await enrolledOwner(storage(), now);
    const access = accessToken(now, owner);
    const refresh = refreshToken(now, owner);
    const code = codeRecord(now, { clientId: owner.clientId, userId: owner.userId });
    await storage().tokens.saveAccessToken(access);
    await storage().tokens.saveRefreshToken(refresh);
    await storage().codes.create(code);
    await storage().consents.grant(owner.userId, owner.clientId, ['a'], now);
    return { owner, access, refresh, code };
  }
  type InUse = Awaited<ReturnType<typeof clientInUse>>;

  async function tokensFound({ access, refresh }: InUse): Promise<boolean[]> {
    return [
      (await storage().tokens.findAccessToken(access.tokenHash)) !== null,
      (await storage().tokens.findRefreshToken(refresh.tokenHash)) !== null,
    ];
  }

  describe('clients: operator changes', () => {
    it('create then find: defaultScopes and contacts round-trip', async () => {
      const client = clientRecord(Date.now(), {
        defaultScopes: ['realms:read'],
        contacts: ['dev@printer.example'],
      });
      await storage().clients.create(client);
      sameRecord(
        await storage().clients.find(client.clientId),
        client,
        'clients.find must return defaultScopes and contacts as created',
      );
    });

    it('list: every client, ordered by createdAt then clientId', async () => {
      const now = Date.now();
      const base = freshId('client');
      const later = [
        clientRecord(now + SECOND, { clientId: `${base}-b` }),
        clientRecord(now + SECOND, { clientId: `${base}-a` }),
      ];
      const first = clientRecord(now, { clientId: `${base}-c`, defaultScopes: null, contacts: [] });
      for (const client of [...later, first]) await storage().clients.create(client);
      const ours = (await storage().clients.list()).filter((client) => client.clientId.startsWith(base));
      assert.deepStrictEqual(
        ours.map((client) => client.clientId),
        [first.clientId, later[1]!.clientId, later[0]!.clientId],
        'clients.list must list every client once, ordered by createdAt, then by clientId for equal createdAt',
      );
      sameRecord(ours[0], first, 'clients.list must return each client as created');
    });

    it('update: applies the changes, keeps the rest, and resolves the client', async () => {
      const now = Date.now();
      const client = clientRecord(now, { contacts: ['old@printer.example'] });
      await storage().clients.create(client);
      const changes = {
        applicationName: 'Photo printer 2',
        scopes: ['realms:read', 'photos:read'],
        defaultScopes: ['realms:read'],
        contacts: [],
      };
      const expected: ClientRecord = { ...client, ...changes };
      sameRecord(
        await storage().clients.update(client.clientId, changes),
        expected,
        'clients.update must resolve the client with the changes applied and every other field unchanged',
      );
      sameRecord(
        await storage().clients.find(client.clientId),
        expected,
        'clients.find after clients.update',
      );
      sameRecord(
        await storage().clients.update(client.clientId, { defaultScopes: null, secretHash: null }),
        { ...expected, defaultScopes: null, secretHash: null },
        'clients.update must set a field to null when the change says null',
      );
    });

    it('update: concurrent changes of different fields are all kept', async () => {
      const client = clientRecord(Date.now());
      await storage().clients.create(client);
      const changes = [
        { applicationName: 'Renamed' },
        { redirectUri: 'https://printer.example/new-callback' },
        { secretHash: freshHash() },
        { scopes: ['photos:read'] },
        { defaultScopes: ['photos:read'] },
        { contacts: ['ops@printer.example'] },
        { disabled: true },
      ];
      await race('clients.update', changes.length, (index) =>
        storage().clients.update(client.clientId, changes[index]!),
      );
      sameRecord(
        await storage().clients.find(client.clientId),
        Object.assign({ ...client }, ...changes) as ClientRecord,
        'clients.update must apply its changes without undoing a concurrent update of other fields (write only ' +
          'the changed fields, or compare-and-set the whole client)',
      );
    });

    it('update: an unknown client gives null and is not created', async () => {
      const clientId = freshId('client');
      isNull(
        await storage().clients.update(clientId, { applicationName: 'Ghost' }),
        'clients.update must resolve null for an unknown clientId',
      );
      isNull(await storage().clients.find(clientId), 'clients.update must not create an unknown client');
    });

    it('disabled: the tokens of a disabled client are not found, and are again once it is enabled', async () => {
      const inUse = await clientInUse(Date.now());
      await storage().clients.update(inUse.owner.clientId, { disabled: true });
      assert.deepStrictEqual(
        await tokensFound(inUse),
        [false, false],
        'tokens.findAccessToken and findRefreshToken must resolve null while the client is disabled ([access, refresh] found)',
      );
      await storage().clients.update(inUse.owner.clientId, { disabled: false });
      assert.deepStrictEqual(
        await tokensFound(inUse),
        [true, true],
        'the tokens of a client must be found again once it is enabled again ([access, refresh] found)',
      );
    });

    it('remove: deletes the client and its consents, codes and tokens, and nothing of other clients', async () => {
      const now = Date.now();
      const removed = await clientInUse(now);
      const kept = await clientInUse(now);
      const { userId, clientId } = removed.owner;
      equal(
        await storage().clients.remove(clientId),
        true,
        'clients.remove must resolve true for an existing client',
      );
      isNull(await storage().clients.find(clientId), 'clients.find must resolve null after clients.remove');
      const listed = (await storage().clients.list()).some((client) => client.clientId === clientId);
      equal(listed, false, 'clients.list must not list a removed client');
      isNull(
        await storage().consents.find(userId, clientId),
        'clients.remove must delete the consents given to the client',
      );
      isNull(
        await storage().codes.consume(removed.code.codeHash, now),
        'clients.remove must delete the codes issued to the client',
      );

      await storage().clients.create(clientRecord(now, { clientId }));
      assert.deepStrictEqual(
        await tokensFound(removed),
        [false, false],
        'clients.remove must delete the tokens of the client: a new client registered under the same id must not ' +
          'find them ([access, refresh] found)',
      );

      assert.deepStrictEqual(
        await tokensFound(kept),
        [true, true],
        "clients.remove must keep other clients' tokens",
      );
      assert.ok(
        await storage().consents.find(kept.owner.userId, kept.owner.clientId),
        "clients.remove must keep other clients' consents",
      );
      equal(
        (await storage().codes.consume(kept.code.codeHash, now))?.status,
        'consumed',
        "clients.remove must keep other clients' codes",
      );
    });

    it('remove: an unknown client gives false', async () => {
      equal(
        await storage().clients.remove(freshId('client')),
        false,
        'clients.remove must resolve false when there was no such client',
      );
    });
  });
}
